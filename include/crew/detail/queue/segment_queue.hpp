#ifndef CREW_DETAIL_QUEUE_SEGMENT_QUEUE_HPP
#define CREW_DETAIL_QUEUE_SEGMENT_QUEUE_HPP

// The FIFO engine of unbounded_queue, bounded_queue and grow_first_queue
// (and of the work-stealing injector's shards and delayed_queue's due-now
// FIFO): lock-free at any backlog, a list of Vyukov rings (segments),
// linked as LCRQ links its rings, recycled through a free list.
// Linearisable as a FIFO queue with a capacity (test/unit/linearizability.cpp).
//
// Structure
// - Each segment is a ring of N cells (Vyukov's, with positions doubled in
//   the sequence numbers so that one cell can tell "free for position p"
//   (2p) from "ready at p" (2p + 1)), with a tail word (producers claim
//   there) and a head word (consumers claim there). Positions are global:
//   one counter for the whole queue, never reused. A segment covers the
//   positions from its base (where its predecessor closed) to its close.
// - Producers use only the last segment, consumers only the first. While
//   the backlog fits in one segment, that is all there is, lapped forever
//   as one Vyukov ring: one compare-exchange a side, no lock, no allocation.
// - A producer that finds the next cell of the last segment still taken
//   (full, or a consumer still moving its task out) closes the segment (a
//   bit in its tail word, set by a compare-exchange from the open word it
//   read, so exactly one producer closes it: the linker), takes a segment
//   from the free list (or allocates one), sets it up at the closing
//   position, links it behind, and opens it. Every claim in a segment comes
//   before its close, which comes before any claim in the next: FIFO by
//   construction. Other producers wait (yielding) the few instructions
//   until the new segment opens.
// - A consumer that finds the first segment closed and drained (its head
//   at the closing position) and a successor linked retires it (a bit in
//   its head word, set by a compare-exchange, so exactly one consumer
//   does), points the queue's head at the successor, lets consumers into
//   it, and pushes the retired segment on the free list.
//
// Memory safety and stale pointers: no segment is freed before the
// destructor, so any pointer a thread loaded stays valid memory; a stale
// one only points at a segment that may since have been retired or reused.
// That is harmless because claims are validated by the words themselves:
// (1) a segment's tail word is open (no closed bit) only while it is the
//     last segment, and its head word is unheld only while it is the first
//     (segments are set up closed and held; opened once linked, let in once
//     first; retired closed and held). So a claim, a compare-exchange from
//     an open (unheld) word, lands in the last (first) segment whichever
//     pointer led to it.
// (2) A word's position only grows, also across reuses: a segment is set up
//     at the position where the last segment closed, above every position
//     it covered before, and a segment never closes before its first claim
//     (its cells are all free at setup, and a close is a compare-exchange
//     from the open word of a position whose cell was found taken). So a
//     word never takes the same value twice, and a compare-exchange from a
//     value read before a reuse fails: the thread reloads. (A bit that
//     close() or a maintenance sets through a stale pointer lands on a
//     closed or held word, where it changes nothing, and setup rewrites it.)
// (3) A cell's sequence number names its position, and a reused segment's
//     cells are rewritten only once every cell is vacated (no consumer
//     still moving a task out: a taker writes the cell only after its claim
//     succeeded, a producer likewise, so nobody else writes a retired
//     segment's cells).
// (4) The free list is a stack with many pushers (retiring consumers) and
//     one popper at a time (the linker: a segment is closed by one producer
//     and the next close needs the new segment opened first; maintenance
//     pops nothing), so its compare-exchange has no ABA.
// (5) The queue's head and tail pointers are each written by one thread at a
//     time (the retirer, before it lets consumers into the successor; the
//     linker, before it opens the new segment), so they never go back.
// (6) A consumer's "none" (empty, or the oldest claim unpublished) rests on
//     reads of one segment's cell, tail and successor; it is returned only
//     if the head word, read again, is unchanged, so that those reads were
//     all of the first segment in one lap, not of a reuse of it.
// (7) A tail's closed bit means "set up, not yet opened" (a consumer can
//     reach a segment in that state: it is linked before it opens) as well
//     as "closed for good"; only the second has a successor. So "drained"
//     is decided from the successor first, then the tail's position.
//
// Capacity (bounded only): permits. A producer reserves one (space_, never
// below zero) before it claims a cell and gives it back if the queue is
// closed; a consumer gives one back after its take. Finding none, a
// producer refuses only if the queue was full at one moment (the tail read
// before the head: a lower bound on the tasks then queued); otherwise a
// reservation or a take is in flight, and it tries again.
//
// close() and the maintenances (drain, extract_if, remove_if) freeze the
// queue: see detail/queue/segment_queue_maintenance.hpp, which defines them.
//
// Stalled consumers: a consumer that finds the oldest claimed cell
// unpublished with more claimed behind it counts itself in stalled_ before
// it sleeps; the next publish wakes one more sleeper for each.
//
// Progress: no lock on the hot path or at a segment boundary, but two short
// windows make others wait, yielding: producers while a linker, having closed
// the last segment, sets up and opens the next (a free-list pop or an
// allocation, then N stores); consumers while a retirer moves the queue's head
// (three stores). A descheduled linker or retirer holds them up for its time
// slice, as a claimed but unpublished cell holds up the consumers behind it.
//
// Memory: segments are freed only by the destructor: the queue keeps and
// reuses the segments of its longest backlog (N cells of 80 bytes each).
//
// Locking: maint_mutex_ is taken only off the hot path (close, drain,
// extract_if, remove_if, and by producers or consumers turned away by
// them). The functions that need it held take the caller's lock
// (detail/sync/lock_contract.hpp).

#include <crew/detail/cache_line.hpp>
#include <crew/detail/queue/consumer_wait.hpp>
#include <crew/detail/sync/event_count.hpp>
#include <crew/detail/sync/lock_contract.hpp>
#include <crew/detail/sanitizers.hpp>
#include <crew/detail/test_seam.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace crew::detail {

class segment_queue : public consumer_waits<segment_queue> {
  public:
    // Cells per segment when the capacity allows: 80 bytes each.
    static constexpr std::size_t default_segment_cells = 1024;

    // `capacity`: the most tasks it holds (max(): unbounded).
    explicit segment_queue(std::size_t capacity, std::size_t segment_cells = default_segment_cells)
        : capacity_(capacity), cells_(std::max<std::size_t>(1, std::min(capacity, segment_cells))),
          pow2_((cells_ & (cells_ - 1)) == 0), space_(capacity) {
        segment* first = allocate(); // base 0: open and let in
        setup(first, 0, 0);
        first->head.store(0, std::memory_order_relaxed);
        first->tail.store(0, std::memory_order_relaxed);
        head_seg_.store(first, std::memory_order_relaxed);
        tail_seg_.store(first, std::memory_order_relaxed);
    }

    segment_queue(const segment_queue&) = delete;
    segment_queue& operator=(const segment_queue&) = delete;

    // Destroys any task still queued (with the cells).
    ~segment_queue() {
        for (segment* s = all_.load(std::memory_order_acquire); s != nullptr;) delete std::exchange(s, s->all_next);
    }

    // False, leaving `t` intact, if full or closed. May throw std::bad_alloc
    // when a new segment is needed, also leaving `t` intact. Takes no lock;
    // while a maintenance or close() runs, waits for it on maint_mutex_.
    bool offer(task&& t) {
        if (bounded() && !reserve()) return false;
        push_result r;
        try {
            r = push(t);
        } catch (...) {
            give_back_permits(1);
            throw;
        }
        if (r == push_result::closed) {
            give_back_permits(1);
            return false;
        }
        published();
        return true;
    }

    // Waits while full; false (t intact) once closed.
    bool put(task&& t) { return put_until(std::move(t), clock::time_point::max()); }

    // As put, but gives up (false, t intact) at `deadline`.
    bool put_until(task&& t, clock::time_point deadline) {
        return put_or_park(not_full_, [&] { return offer(std::move(t)); },
                           [&] { return closed_.load(std::memory_order_seq_cst); }, deadline);
    }

    // The oldest task, or false if empty or its cell is claimed and not yet
    // published. Takes no lock; while a maintenance or close() runs, waits
    // for it on maint_mutex_ (the tasks are queued still: not "empty").
    bool poll(task& out) { return try_take(out); }

    void wake_consumers() { not_empty_.notify_all(); }

    // Consumers announced as sleepers now (some may be on their way to
    // sleep, or just woken): for statistics and tests only.
    std::size_t parked_consumers() const noexcept { return not_empty_.waiters(); }

    // Takes maint_mutex_.
    void close();

    // Takes maint_mutex_.
    std::vector<task> drain();

    // Removes and returns the tasks for which pred(task) holds; the others
    // stay, in order, ahead of any task offered meanwhile. A throwing
    // predicate (or a failed allocation) leaves every task queued, in order.
    // Takes maint_mutex_.
    template <class Pred>
    std::vector<task> extract_if(Pred pred);

    // As extract_if, destroying what it removes; returns how many.
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return extract_if(pred).size();
    }

    // The tasks queued (never above the capacity), without a lock: the
    // first segment's head, then the tail, so never too few, and too many
    // only by the takes that overlap the call. While a maintenance or
    // close() has the queue frozen, the count it recorded (moving_size_).
    std::size_t size() const noexcept {
        for (;;) {
            const std::uint64_t before = moving_.load(std::memory_order_acquire);
            if (before & 1) return std::min(capacity_, moving_size_.load(std::memory_order_relaxed));
            std::size_t n = 0;
            const bool read = queued_estimate(n);
            read_fence();
            if (read && moving_.load(std::memory_order_relaxed) == before) return std::min(capacity_, n);
            std::this_thread::yield(); // a retirement or a maintenance is starting
        }
    }

    // Segments allocated so far (all kept until the destructor): for tests
    // and statistics. Constant once the backlog stops growing.
    std::size_t segment_count() const noexcept { return allocated_.load(std::memory_order_relaxed); }

  private:
    friend consumer_waits<segment_queue>;

    struct cell {
        std::atomic<std::uint64_t> seq{0};
        task job;
    };

    struct segment {
        explicit segment(std::size_t n) : cells(new cell[n]) {}
        alignas(cache_line) std::atomic<std::uint64_t> tail{0}; // position | closed_bit, shut_bit, diverted_bit
        alignas(cache_line) std::atomic<std::uint64_t> head{0}; // position | held_bit
        std::atomic<segment*> next{nullptr};             // the successor; reset at setup
        segment* free_next = nullptr;                    // the free list's link (its pusher writes it, then publishes)
        segment* all_next = nullptr;                     // every segment, for the destructor
        std::unique_ptr<cell[]> cells;
    };

    enum class push_result { pushed, closed };
    enum class pop_result { popped, none, held };

    static constexpr std::uint64_t closed_bit = std::uint64_t(1) << 63;   // tail: closed for good (full), or not yet opened
    static constexpr std::uint64_t shut_bit = std::uint64_t(1) << 62;     // tail: close()
    static constexpr std::uint64_t diverted_bit = std::uint64_t(1) << 61; // tail: a maintenance has the producers out
    static constexpr std::uint64_t held_bit = std::uint64_t(1) << 63;     // head: not the first, retired, or held
    static constexpr std::uint64_t position_mask = diverted_bit - 1;
    static constexpr std::uint64_t free_for(std::uint64_t pos) noexcept { return 2 * pos; }
    static constexpr std::uint64_t ready_at(std::uint64_t pos) noexcept { return 2 * pos + 1; }

    bool bounded() const noexcept { return capacity_ != std::numeric_limits<std::size_t>::max(); }

    cell& at(segment* s, std::uint64_t pos) const noexcept {
        return s->cells[pow2_ ? pos & (cells_ - 1) : pos % cells_];
    }

    // ---- producers ----------------------------------------------------------

    // Claims the next position of the last segment and fills it; links a new
    // segment when the last is full. `t` intact unless pushed.
    push_result push(task& t) {
        for (;;) {
            segment* s = tail_seg_.load(std::memory_order_acquire);
            std::uint64_t word = s->tail.load(std::memory_order_acquire);
            if (word & closed_bit) { // a linker is at work (or s is already stale)
                std::this_thread::yield();
                continue;
            }
            if (word & shut_bit) return push_result::closed;
            if (word & diverted_bit) {
                wait_for_maintenance();
                continue;
            }
            const std::uint64_t pos = word & position_mask;
            cell& c = at(s, pos);
            const std::uint64_t seq = c.seq.load(std::memory_order_acquire);
            if (seq == free_for(pos)) {
                if (s->tail.compare_exchange_strong(word, word + 1, std::memory_order_seq_cst,
                                                    std::memory_order_relaxed)) {
                    CREW_SEAM(ring_claimed);
                    c.job = std::move(t);
                    c.seq.store(ready_at(pos), std::memory_order_release);
                    return push_result::pushed;
                }
            } else if (seq < free_for(pos)) {
                // Taken still: close it (from the very word read, so that the
                // cell was found taken in this lap), and link the next.
                if (s->tail.compare_exchange_strong(word, word | closed_bit, std::memory_order_seq_cst,
                                                    std::memory_order_relaxed))
                    link_after(s, pos);
            }
        }
    }

    // Requires: the caller closed `last` at `pos` (so it alone links). On
    // std::bad_alloc, reopens `last` and rethrows.
    void link_after(segment* last, std::uint64_t pos) {
        segment* next;
        try {
            next = take_segment();
        } catch (...) {
            last->tail.fetch_and(~closed_bit, std::memory_order_seq_cst);
            throw;
        }
        setup(next, pos, 0);
        CREW_SEAM(segment_linking);
        last->next.store(next, std::memory_order_release);
        tail_seg_.store(next, std::memory_order_release); // before it opens: see (5)
        CREW_SEAM(segment_linked); // consumers may reach `next` now, closed as set up
        next->tail.fetch_and(~closed_bit, std::memory_order_seq_cst);
    }

    // Sets `s` up, unreachable yet, to cover positions from `base`: cells
    // free for their positions, closed and held (`extra`: more tail bits).
    void setup(segment* s, std::uint64_t base, std::uint64_t extra) noexcept {
        for (std::uint64_t p = base; p < base + cells_; ++p) at(s, p).seq.store(free_for(p), std::memory_order_relaxed);
        s->next.store(nullptr, std::memory_order_relaxed);
        s->head.store(base | held_bit, std::memory_order_relaxed);
        s->tail.store(base | closed_bit | extra, std::memory_order_release);
    }

    // For the linker alone: a vacated segment from the free list, else a new
    // one. A segment whose cells a slow taker still moves out of is put back.
    segment* take_segment() {
        segment* skipped = nullptr;
        segment* found = nullptr;
        while (segment* s = pop_free()) {
            if (vacated(s)) {
                found = s;
                break;
            }
            s->free_next = skipped;
            skipped = s;
        }
        while (skipped != nullptr) push_free(std::exchange(skipped, skipped->free_next));
        return found != nullptr ? found : allocate();
    }

    bool vacated(segment* s) const noexcept {
        for (std::size_t i = 0; i < cells_; ++i)
            if (s->cells[i].seq.load(std::memory_order_acquire) & 1) return false; // a taker moving out
        return true;
    }

    segment* allocate() {
        auto* s = new segment(cells_); // may throw std::bad_alloc
        s->all_next = all_.load(std::memory_order_relaxed);
        while (!all_.compare_exchange_weak(s->all_next, s, std::memory_order_release, std::memory_order_relaxed)) {
        }
        allocated_.fetch_add(1, std::memory_order_relaxed);
        return s;
    }

    void push_free(segment* s) noexcept {
        s->free_next = free_.load(std::memory_order_relaxed);
        while (!free_.compare_exchange_weak(s->free_next, s, std::memory_order_release, std::memory_order_relaxed)) {
        }
    }

    // One popper at a time (see (4)).
    segment* pop_free() noexcept {
        segment* top = free_.load(std::memory_order_acquire);
        while (top != nullptr &&
               !free_.compare_exchange_weak(top, top->free_next, std::memory_order_acquire, std::memory_order_acquire)) {
        }
        return top;
    }

    // A permit, or false if the queue was full at one moment during the call.
    bool reserve() {
        std::size_t left = space_.load(std::memory_order_relaxed);
        for (;;) {
            if (left != 0) {
                if (space_.compare_exchange_weak(left, left - 1, std::memory_order_acquire, std::memory_order_relaxed))
                    return true;
                continue;
            }
            switch (full_now()) {
            case fullness::full: return false;
            case fullness::frozen: wait_for_maintenance(); break;
            case fullness::room: std::this_thread::yield(); break; // a reservation or a take in flight
            }
            left = space_.load(std::memory_order_relaxed);
        }
    }

    enum class fullness { full, room, frozen };

    // The tail, then the head: no position is above the queue's tail, and
    // the first segment's head (unheld) is the queue's head, so the
    // difference is at most what was queued when the tail was read.
    fullness full_now() const noexcept {
        const std::uint64_t tail = tail_seg_.load(std::memory_order_seq_cst)->tail.load(std::memory_order_seq_cst) & position_mask;
        const std::uint64_t head = head_seg_.load(std::memory_order_seq_cst)->head.load(std::memory_order_seq_cst);
        if (head & held_bit) return maintaining_.load(std::memory_order_seq_cst) ? fullness::frozen : fullness::room;
        return tail >= head && tail - head >= capacity_ ? fullness::full : fullness::room;
    }

    void give_back_permits(std::size_t n) {
        if (!bounded() || n == 0) return;
        space_.fetch_add(n, std::memory_order_release);
        not_full_.notify_one();
    }

    // Turned away by a maintenance (or close()): wait for it to finish.
    void wait_for_maintenance() { std::lock_guard lock(maint_mutex_); }

    // ---- consumers ----------------------------------------------------------

    // Takes the oldest task; `none` if empty or its cell claimed and not yet
    // published; `held` while a maintenance has the tasks.
    pop_result pop(task& out) noexcept {
        for (;;) {
            segment* s = head_seg_.load(std::memory_order_acquire);
            std::uint64_t word = s->head.load(std::memory_order_acquire);
            if (word & held_bit) {
                if (maintaining_.load(std::memory_order_seq_cst)) return pop_result::held;
                std::this_thread::yield(); // a retirement between two segments
                continue;
            }
            const std::uint64_t pos = word;
            cell& c = at(s, pos);
            const std::uint64_t seq = c.seq.load(std::memory_order_acquire);
            if (seq == ready_at(pos)) {
                if (s->head.compare_exchange_strong(word, word + 1, std::memory_order_seq_cst,
                                                    std::memory_order_relaxed)) {
                    CREW_SEAM(ring_pop_claimed);
                    out = std::move(c.job);
                    c.seq.store(free_for(pos + cells_), std::memory_order_release);
                    return pop_result::popped;
                }
                continue;
            }
            if (seq > ready_at(pos)) continue; // taken meanwhile
            // Nothing ready at the head: empty, unpublished, or the segment
            // closed and drained, to be retired if its successor is linked.
            // The successor first: it is linked only once the segment has
            // closed for good, so the tail read after it holds the final
            // position. Read the other way round, the closed bit could be
            // the one a segment is set up with (linked, not yet opened, at
            // its base), and the successor one linked after it was opened,
            // filled and closed meanwhile: the consumer retired it with a
            // task in it (test "a consumer does not retire a segment that
            // was not yet open").
            segment* next = s->next.load(std::memory_order_acquire);
            if (next != nullptr) {
                const std::uint64_t tail = s->tail.load(std::memory_order_seq_cst);
                if ((tail & closed_bit) == 0 || (tail & position_mask) != pos) next = nullptr; // not drained
                else CREW_SEAM(segment_drained);
            }
            if (next == nullptr) {
                // "None" only if the head word is unchanged: then s was the
                // first segment, at `pos`, from the first read to this one,
                // so the tail and the successor read are this lap's, not
                // those of a reuse of s (the fuzzer found a stale "no
                // successor" read after a maintenance had reused s).
                if (s->head.load(std::memory_order_seq_cst) != word) continue;
                return pop_result::none; // empty, or unpublished, or nothing claimed after the close yet
            }
            if (s->head.compare_exchange_strong(word, word | held_bit, std::memory_order_seq_cst,
                                                std::memory_order_relaxed))
                retire(s, next);
        }
    }

    // The caller held `first`, closed and drained, whose successor is `next`.
    void retire(segment* first, segment* next) noexcept {
        CREW_SEAM(segment_retiring);
        head_seg_.store(next, std::memory_order_release); // before consumers get in: see (5)
        next->head.fetch_and(~held_bit, std::memory_order_seq_cst);
        push_free(first);
    }

    bool try_take(task& out) {
        for (;;) {
            switch (pop(out)) {
            case pop_result::popped: give_back_permits(1); return true;
            case pop_result::none: return false;
            case pop_result::held: wait_for_maintenance(); break; // the tasks are queued still: not "none"
            }
        }
    }

    // Head first, then tail (see size()); false while the first segment is held.
    bool queued_estimate(std::size_t& n) const noexcept {
        const std::uint64_t head = head_seg_.load(std::memory_order_seq_cst)->head.load(std::memory_order_seq_cst);
        if (head & held_bit) return false;
        const std::uint64_t tail = tail_seg_.load(std::memory_order_seq_cst)->tail.load(std::memory_order_seq_cst) & position_mask;
        n = tail > head ? static_cast<std::size_t>(tail - head) : 0;
        return true;
    }

    std::size_t queued_or_zero() const noexcept {
        std::size_t n = 0;
        return queued_estimate(n) ? n : 0;
    }

    // A task was published: wake one sleeper unless a wake-up younger than
    // the age bound is in flight (event_count), and one more for each
    // consumer stalled behind an unpublished cell (each of those spent its
    // wake-up on a task it could not take). The fence orders the publish
    // before the look at stalled_, as a stalled consumer's increment comes
    // before its re-check (park_consumer's fence): one sees the other.
    void published() {
        full_fence(stalled_); // the publish (or take), then the look at the sleepers
        not_empty_.notify_one_unless_pending_after_fence();
        if (stalled_.load(std::memory_order_relaxed) == 0) return;
        for (auto n = stalled_.exchange(0); n > 0; --n) not_empty_.notify_one();
    }

    // A consumer that went to sleep (or announced it would) took a task: it
    // may have taken the wake-up a publish left in flight, for which later
    // publishes woke nobody. If tasks remain, it wakes one more consumer.
    //
    // A count it cannot read (a retirement or a maintenance holds the
    // head) counts as "tasks remain": taken for "none", it dropped the
    // wake-up, and a task waited while a consumer slept until the retirer
    // (a consumer that never slept, which passes nothing on) came back for
    // more (the adversarial review's finding; test "a take during a
    // retirement passes its wake-up on").
    void pass_on() {
        full_fence(stalled_);
        std::size_t queued = 0;
        if (!queued_estimate(queued) || queued != 0) not_empty_.notify_one_unless_pending_after_fence();
    }

    // detail::wait_for_task's two steps: take; else announce, re-check,
    // sleep. Stalled behind an unpublished cell, a consumer says so first.
    wait_status wait_for(task& out, const interrupt_flag& interrupted, std::chrono::steady_clock::time_point deadline) {
        bool parked = false; // announced as a sleeper at least once: may hold a wake-up to pass on
        const auto take = [&] { return try_take(out); };
        return wait_for_task(
            interrupted, deadline,
            [&] {
                if (!take()) return false;
                if (parked) pass_on();
                return true;
            },
            [&] {
                parked = true;
                // Stalled: the oldest claimed cell unpublished with another
                // claimed behind it. seq_cst: before park_consumer's re-check.
                if (queued_or_zero() > 1) stalled_.fetch_add(1);
                if (!park_consumer(not_empty_, interrupted, deadline, take)) return false;
                pass_on();
                return true;
            });
    }

    // ---- maintenance (maint_mutex_ held; detail/queue/segment_queue_maintenance.hpp)

    segment* divert_last(const std::unique_lock<std::mutex>& held) noexcept;
    segment* hold_first() noexcept;
    std::size_t queued_frozen(segment* first) const noexcept;
    void wait_published(const std::unique_lock<std::mutex>& held, segment* first) const noexcept;
    std::vector<task> take_all(const std::unique_lock<std::mutex>& held);
    void put_back(const std::unique_lock<std::mutex>& held, std::vector<task>& all) noexcept;
    void push_as_owner(const std::unique_lock<std::mutex>& held, task& t) noexcept;
    void thaw(const std::unique_lock<std::mutex>& held) noexcept;
    void begin_move(const std::unique_lock<std::mutex>& held, std::size_t queued) noexcept;
    void end_move(const std::unique_lock<std::mutex>& held) noexcept;
    static void read_fence() noexcept {
        fence_unless_tsan(std::memory_order_acquire);
    }

    const std::size_t capacity_;
    const std::size_t cells_; // per segment
    const bool pow2_;         // cells_ a power of two: a mask instead of %
    alignas(cache_line) std::atomic<segment*> tail_seg_{nullptr}; // the last segment; written by the linker
    alignas(cache_line) std::atomic<segment*> head_seg_{nullptr}; // the first segment; written by the retirer
    alignas(cache_line) std::atomic<std::size_t> space_;           // permits (bounded only)
    alignas(cache_line) std::atomic<std::uint32_t> stalled_{0};    // consumers asleep behind an unpublished cell
    std::atomic<segment*> free_{nullptr};                  // retired segments: many pushers, one popper
    std::atomic<segment*> all_{nullptr};                   // every segment, for the destructor
    std::atomic<std::size_t> allocated_{0};
    std::atomic<bool> closed_{false};      // set once by close(), under maint_mutex_
    std::atomic<bool> maintaining_{false}; // a freeze under way; written under maint_mutex_
    std::atomic<std::uint64_t> moving_{0};    // size()'s sequence lock; written under maint_mutex_
    std::atomic<std::size_t> moving_size_{0}; // size() while moving_ is odd; written under maint_mutex_
    event_count<> not_empty_; // consumers sleep here
    event_count<> not_full_;  // put() sleeps here (bounded only)
    std::mutex maint_mutex_;
    std::vector<segment*> kept_; // guarded by maint_mutex_: emptied by take_all, for put_back
};

} // namespace crew::detail

#include <crew/detail/queue/segment_queue_maintenance.hpp>

#endif
