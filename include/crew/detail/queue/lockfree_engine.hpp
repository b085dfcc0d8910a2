#ifndef CREW_DETAIL_QUEUE_LOCKFREE_ENGINE_HPP
#define CREW_DETAIL_QUEUE_LOCKFREE_ENGINE_HPP

// The engine of crew::lockfree_queue: Boost.Lockfree's MPMC queue carrying
// slot pointers, a free stack of slots, per-side counters and event-count
// parking (detail/sync/event_count.hpp). The public face, with what a user needs
// to know, is <crew/policies/lockfree_queue.hpp>.
//
// Who writes what, per task:
// - A producer pops a free slot (the free stack's head, a line the consumers
//   also write: inherent to recycling slots), passes the gate (`gate_`: one
//   read-modify-write to enter, one to leave, on a line only producers
//   write), moves the task in, pushes the slot on Boost's queue, and calls
//   not_empty_.notify_one(): one fence and one load while no consumer sleeps.
// - A consumer pops a slot from Boost, moves the task out, pushes the slot
//   back on the free stack, counts it in `popped_` (a line only consumers
//   write) and calls not_full_.notify_one(): one fence and one load while no
//   put sleeps.
// Nothing else is written per task: no word of consumer state that both
// sides change, no wake-up while nobody sleeps.
//
// No lost wake-up: a consumer that finds Boost's queue empty parks as every
// event-count consumer does (detail::park_consumer): it announces itself
// (prepare_wait), pops again, and only then sleeps. A producer pushes first
// and looks for sleepers after (notify_one's fence), so either it sees the
// announcement and wakes, or the consumer's second pop finds the task. A
// blocked put waits on not_full_ the same way (detail::put_or_park) against
// a consumer's release;
// close() and wake_consumers() store first, then notify_all().
//
// Spinning: before parking, one consumer at a time (`spinner_`) watches the
// queue for a few microseconds, and only where another CPU is free to run
// the producer. It never writes anything the producer reads while it spins.
//
// Counting: `gate_` counts offers entered (producers only), `popped_` counts
// tasks gone for good (consumers, drain, remove_if); size() is the
// difference, read popped_ first. A task counts from before it is pushed
// until after it is out of the queue's hands, so size() may count a task
// too many while one moves, never one too few (a pool worker that read 0
// after shutdown would exit with the task still queued).
//
// close() is linearisable with offers: the closed bit lives in the gate's
// word, so an offer entered before it (and then publishes, and close waits
// for it) or is refused. close() takes effect once the offers that entered
// before the bit have published, so a refusal waits for them too: otherwise
// a drain after a refused offer could miss a task accepted before it.

#include <crew/detail/cache_line.hpp>
#include <crew/detail/queue/consumer_wait.hpp>
#include <crew/detail/sync/event_count.hpp>
#include <crew/detail/sync/parking_word.hpp>
#include <crew/detail/sync/spin.hpp>
#include <crew/detail/sanitizers.hpp>
#include <crew/detail/test_seam.hpp>
#include <crew/pool_options.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <boost/lockfree/queue.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace crew::detail {

// Boost.Lockfree's free lists read a node's `next` index with a plain load
// that may race with its reuse; the tagged compare-and-swap that follows
// discards what it read if so. Benign on the hardware, but a data race to
// ThreadSanitizer (boostorg/lockfree#22, #78): calls into Boost run in this
// scope, so that its plain accesses are not checked while its atomics still
// synchronise the tasks handed through it.
using boost_lockfree_call = tsan_unchecked_scope;

// The largest Capacity: Boost.Lockfree indexes a compile-time sized node
// array with 16 bits, the value 65535 meaning "null", and its queue adds one
// dummy node.
inline constexpr std::size_t lockfree_queue_max_capacity = 65534;

// The queue itself, with the parking primitive as a parameter (the tests run
// both). Tasks live in a pool of Capacity slots made once, at construction.
// Boost.Lockfree (which holds only trivially copyable values) carries slot
// pointers in FIFO order (`ready_`); the unused slots form an intrusive stack
// (`free_head_`). A task moves into its slot on offer and out of it on poll;
// nothing allocates after the constructor.
template <std::size_t Capacity, class ParkingWord>
class basic_lockfree_queue : public consumer_waits<basic_lockfree_queue<Capacity, ParkingWord>> {
    static_assert(Capacity >= 1 && Capacity <= lockfree_queue_max_capacity,
                  "crew::lockfree_queue<Capacity>: Capacity must be in [1, 65534]; Boost.Lockfree's compile-time "
                  "capacity indexes its nodes with 16 bits and its queue needs one more node than it holds");

  public:
    explicit basic_lockfree_queue(const pool_options& = {})
        : slots_(std::make_unique<slot[]>(Capacity)),
          next_free_(std::make_unique<std::atomic<std::uint32_t>[]>(Capacity)),
          held_(std::make_unique<std::uint32_t[]>(Capacity)),
          ready_(std::make_unique<ready_list>()) {
        // Slot i links to i + 1, so that the first offers take the first slots.
        for (std::uint32_t i = 0; i < Capacity; ++i) next_free_[i].store(i + 1, std::memory_order_relaxed);
        free_head_.store(0, std::memory_order_release);
    }

    basic_lockfree_queue(const basic_lockfree_queue&) = delete;
    basic_lockfree_queue& operator=(const basic_lockfree_queue&) = delete;

    // Any thread. False, leaving t intact, if full or closed.
    bool offer(task&& t) { return try_offer(t) == offer_result::offered; }

    // Any thread. Waits on not_full_ while full; false (t intact) once closed.
    bool put(task&& t) { return put_until(std::move(t), clock::time_point::max()); }

    // Any thread. As put, but gives up (false, t intact) at `deadline`.
    bool put_until(task&& t, clock::time_point deadline) {
        return put_or_park(not_full_, [&](bool) { return try_offer(t); }, deadline);
    }

    // Any thread; never blocks.
    bool poll(task& out) { return try_take(out); }

    // Any thread, after setting the consumers' interrupt flag (a seq_cst
    // store): notify_all's fence orders the flag before its look for sleepers.
    void wake_consumers() { not_empty_.notify_all(); }

    // Consumers announced as sleepers now (some may be on their way to
    // sleep, or just woken): for statistics and tests only.
    std::size_t parked_consumers() const noexcept { return not_empty_.waiters(); }

    // Any thread; idempotent. After it returns no offer succeeds, and every
    // offer that succeeded is in Boost's queue (visible to drain and size).
    void close() {
        gate_.fetch_or(closed_bit, std::memory_order_seq_cst);
        CREW_SEAM(lockfree_close_marked);
        not_full_.notify_all(); // blocked puts fail now
        wait_for_entered_offers();
    }

    // Any thread; one drain or remove_if at a time (maintenance_). Each task
    // counts in size() until it is in the vector.
    std::vector<task> drain() {
        std::lock_guard lock(maintenance_);
        std::vector<task> out;
        for (;;) {
            // Reserve before popping: a failing push_back must not lose a task.
            if (out.size() == out.capacity()) out.reserve(out.size() + size() + 1);
            slot* s;
            if (!pop_ready(s)) break;
            out.push_back(std::move(s->job));
            push_free(s);
            popped_.fetch_add(1, std::memory_order_release);
        }
        if (!out.empty()) not_full_.notify_all();
        return out;
    }

    // Any thread; one drain or remove_if at a time (maintenance_). Takes the
    // tasks queued when it starts out of Boost's queue into held_ (slots and
    // all: they keep counting in size(), popped_ is not told), tests every
    // one, then frees the matches and pushes the survivors back, in order.
    // A throwing predicate pushes every one back, in order. Tasks offered
    // during the call get ahead of those it holds. Returns the removed
    // tasks, for the caller to destroy after its last use of the pool.
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        std::lock_guard lock(maintenance_);
        const std::size_t n = size();
        std::vector<task> removed;
        removed.reserve(n); // before anything moves: a std::bad_alloc changes nothing
        std::size_t held = 0;
        for (; held < n; ++held) {
            slot* s;
            if (!pop_ready(s)) break;
            held_[held] = index_of(s);
        }
        try {
            for (std::size_t i = 0; i < held; ++i)
                if (pred(std::as_const(slots_[held_[i]].job))) held_[i] |= drop_bit;
        } catch (...) {
            for (std::size_t i = 0; i < held; ++i) push_ready(&slots_[held_[i] & ~drop_bit]);
            if (held != 0) not_empty_.notify_all();
            throw;
        }
        for (std::size_t i = 0; i < held; ++i) {
            slot& s = slots_[held_[i] & ~drop_bit];
            if (held_[i] & drop_bit) {
                removed.push_back(std::move(s.job)); // reserved
                push_free(&s);
            } else {
                push_ready(&s);
            }
        }
        if (!removed.empty()) {
            popped_.fetch_add(removed.size(), std::memory_order_release);
            not_full_.notify_all();
        }
        if (held != removed.size()) not_empty_.notify_all(); // consumers may have parked meanwhile
        return removed;
    }

    // As extract_if, destroying what it removes; returns how many.
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return extract_if(std::move(pred)).size();
    }

    std::size_t size() const noexcept {
        // popped_ first: every task it counts entered the gate before, so the
        // difference never falls short.
        const std::uint64_t out = popped_.load(std::memory_order_acquire);
        const std::uint64_t in = gate_.load(std::memory_order_acquire) >> count_shift;
        const std::uint64_t n = (in - out) & count_mask;
        return static_cast<std::size_t>(std::min<std::uint64_t>(n, Capacity));
    }

    std::size_t capacity() const noexcept { return Capacity; }

  private:
    friend consumer_waits<basic_lockfree_queue>;


    // gate_: closed bit | offers entered (modulo 2^43) | offers in flight.
    static constexpr std::uint64_t closed_bit = std::uint64_t{1} << 63;
    static constexpr int count_shift = 20;
    static constexpr std::uint64_t in_flight_one = 1;
    static constexpr std::uint64_t in_flight_mask = (std::uint64_t{1} << count_shift) - 1;
    static constexpr std::uint64_t count_one = std::uint64_t{1} << count_shift;
    static constexpr std::uint64_t count_mask = (std::uint64_t{1} << (63 - count_shift)) - 1;

    static constexpr std::uint32_t no_slot = static_cast<std::uint32_t>(Capacity);
    static constexpr std::uint32_t drop_bit = std::uint32_t{1} << 31; // in held_: remove_if's match

    // How long the spinning consumer watches before parking, in pauses: some
    // microseconds, enough to bridge a steady producer's gaps.
    static constexpr int spin_pauses = 512;

    struct alignas(cache_line) slot {
        task job;
    };
    using ready_list = boost::lockfree::queue<slot*, boost::lockfree::capacity<Capacity>>;

    // ---- the free stack: a Treiber stack of slot indices whose head carries
    // a 32-bit tag against ABA. The links are atomic, so reading a link that
    // a concurrent push rewrites (the failing CAS then discards it) is no
    // data race.

    static std::uint64_t retagged(std::uint64_t head, std::uint64_t index) noexcept {
        return (((head >> 32) + 1) << 32) | index;
    }

    std::uint32_t index_of(const slot* s) const noexcept { return static_cast<std::uint32_t>(s - slots_.get()); }

    slot* pop_free() noexcept {
        std::uint64_t head = free_head_.load(std::memory_order_acquire);
        for (;;) {
            const auto index = static_cast<std::uint32_t>(head);
            if (index == no_slot) return nullptr;
            const std::uint64_t next = next_free_[index].load(std::memory_order_relaxed);
            if (free_head_.compare_exchange_weak(head, retagged(head, next), std::memory_order_acquire,
                                                 std::memory_order_acquire))
                return &slots_[index];
        }
    }

    void push_free(slot* s) noexcept {
        const std::uint64_t index = index_of(s);
        std::uint64_t head = free_head_.load(std::memory_order_relaxed);
        do {
            next_free_[index].store(static_cast<std::uint32_t>(head), std::memory_order_relaxed);
        } while (!free_head_.compare_exchange_weak(head, retagged(head, index), std::memory_order_release,
                                                   std::memory_order_relaxed));
    }

    // ---- Boost: every call goes through these.

    bool pop_ready(slot*& s) noexcept {
        [[maybe_unused]] const boost_lockfree_call scope;
        return ready_->pop(s);
    }
    void push_ready(slot* s) noexcept {
        [[maybe_unused]] const boost_lockfree_call scope;
        // Never fails: Capacity + 1 nodes, and every node in use belongs to
        // a slot that is not free, plus the dummy. The loop is only a guard.
        while (!ready_->bounded_push(s)) cpu_relax();
    }
    bool looks_empty() const noexcept {
        [[maybe_unused]] const boost_lockfree_call scope;
        return ready_->empty();
    }

    // ---- producers

    // Offers that entered the gate before the closed bit publish (a move and
    // a push: a few instructions, unless the thread is preempted).
    void wait_for_entered_offers() const noexcept {
        while ((gate_.load(std::memory_order_acquire) & in_flight_mask) != 0) std::this_thread::yield();
    }

    // An offer refused because the queue is closed: it returns only after
    // close() has taken effect, every offer accepted before it published.
    offer_result refused_as_closed() const noexcept {
        wait_for_entered_offers();
        return offer_result::closed;
    }

    offer_result try_offer(task& t) {
        if (gate_.load(std::memory_order_seq_cst) & closed_bit) return refused_as_closed();
        slot* s = pop_free();
        if (!s) return offer_result::full;
        // Enter: counted in size() from here, before anyone can take it. A
        // CAS, not an add: an offer that finds the queue closed must never
        // count, even for a moment, or size() moves after close() returned.
        std::uint64_t g = gate_.load(std::memory_order_relaxed);
        do {
            if (g & closed_bit) {
                release(s);
                return refused_as_closed();
            }
        } while (!gate_.compare_exchange_weak(g, g + count_one + in_flight_one, std::memory_order_acquire,
                                              std::memory_order_relaxed));
        CREW_SEAM(lockfree_offer_entered);
        s->job = std::move(t);
        push_ready(s);
        gate_.fetch_sub(in_flight_one, std::memory_order_release); // close() may return now
        // As segment_queue's publish: nobody more is woken while a wake-up is
        // in flight; the consumer that takes it passes it on (pass_on).
        full_fence(popped_); // the push (or take), then the look at the sleepers
        not_empty_.notify_one_unless_pending_after_fence();
        return offer_result::offered;
    }

    // ---- consumers

    // Returns s to the free stack; wakes a put waiting for it.
    void release(slot* s) {
        push_free(s);
        not_full_.notify_one();
    }

    bool try_take(task& out) {
        slot* s;
        if (!pop_ready(s)) return false;
        out = std::move(s->job);
        push_free(s);
        popped_.fetch_add(1, std::memory_order_release);
        not_full_.notify_one();
        return true;
    }

    // detail::wait_for_task's two steps: take; else spin briefly (one
    // consumer at a time, with a CPU to spare), then park.
    wait_status wait_for(task& out, const interrupt_flag& interrupted,
                         std::chrono::steady_clock::time_point deadline) {
        bool parked = false; // announced as a sleeper: may hold a wake-up to pass on
        return wait_for_task(
            interrupted, deadline,
            [&] {
                if (!try_take(out)) return false;
                if (parked) pass_on();
                return true;
            },
            [&] {
                if (spin_then_park(out, interrupted, deadline, parked)) {
                    if (parked) pass_on();
                    return true;
                }
                return false;
            });
    }

    // A consumer that announced itself as a sleeper took a task: it may
    // have taken the wake-up an offer left in flight, for which later offers
    // woke nobody. If tasks remain, it wakes one more consumer.
    void pass_on() {
        full_fence(popped_); // the push (or take), then the look at the sleepers
        if (!looks_empty()) not_empty_.notify_one_unless_pending_after_fence();
    }

    // The spinner only reads Boost's head and tail, a few times a
    // microsecond; it writes nothing a producer reads. Producers notify
    // regardless (a spinner may give up at any moment), so spinning is
    // purely an optimisation: park_consumer alone keeps every wake-up.
    bool spin_then_park(task& out, const interrupt_flag& interrupted, std::chrono::steady_clock::time_point deadline,
                        bool& parked) {
        if (spin_allowed_ && !spinner_.load(std::memory_order_relaxed) &&
            !spinner_.exchange(true, std::memory_order_relaxed)) {
            const bool seen = spin_until(spin_pauses, [&] {
                return !looks_empty() || interrupted.load(std::memory_order_relaxed);
            });
            spinner_.store(false, std::memory_order_relaxed);
            // Something came: wait_for_task takes it, or returns interrupted.
            if (seen) return try_take(out);
        }
        parked = true;
        return park_consumer(not_empty_, interrupted, deadline, [&] { return try_take(out); });
    }

    // Producers' line: closed bit | entered | in flight.
    alignas(cache_line) std::atomic<std::uint64_t> gate_{0};
    // Consumers' line: tasks gone for good (taken, drained, removed).
    alignas(cache_line) std::atomic<std::uint64_t> popped_{0};
    // Both sides: tag << 32 | index (no_slot: empty).
    alignas(cache_line) std::atomic<std::uint64_t> free_head_{0};
    // The consumer spinning now, if any (consumers only, off the hot path).
    alignas(cache_line) std::atomic<bool> spinner_{false};
    event_count<ParkingWord> not_empty_; // consumers park here
    event_count<ParkingWord> not_full_;  // puts park here
    std::unique_ptr<slot[]> slots_;
    std::unique_ptr<std::atomic<std::uint32_t>[]> next_free_; // the free stack's links
    std::unique_ptr<std::uint32_t[]> held_;                   // remove_if's slots in hand (| drop_bit); under maintenance_
    std::unique_ptr<ready_list> ready_; // heap: a compile-time sized Boost queue holds its nodes inline
    std::mutex maintenance_;             // one drain or remove_if at a time
    // A spinner holds a CPU the producer may need: on one CPU nobody spins.
    const bool spin_allowed_ = usable_cpu_count() > 1;
};

} // namespace crew::detail

#endif
