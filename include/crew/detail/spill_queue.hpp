#ifndef CREW_DETAIL_SPILL_QUEUE_HPP
#define CREW_DETAIL_SPILL_QUEUE_HPP

// The engine of unbounded_queue and bounded_queue (and of delayed_queue's
// FIFO of tasks due now): a lock-free ring for the hot path, a mutex-guarded
// overflow for a backlog longer than the ring, and event-count parking.
// Linearisable as a FIFO queue with a capacity (test/unit/linearizability.cpp).
//
// - While nothing has spilled, producers and consumers meet only in the ring
//   (detail/mpmc_ring.hpp): one compare-exchange a side, no lock. A producer
//   then pays one fence and two loads to learn that nobody sleeps.
// - A producer that finds the ring full takes spill_mutex_, diverts the ring
//   (a bit in the ring's tail word: every later claim fails, so no task can
//   overtake one that spilled, and the ring can only shrink while the
//   capacity is checked) and appends to the overflow. Consumers take from
//   the ring first; from the overflow only once the ring is empty, not while
//   an older cell is claimed and not yet published (they sleep until its
//   producer publishes). Each such take moves a batch of the oldest into the
//   ring; once the overflow is empty, the ring is undiverted.
// - remove_if, extract_if and drain take the mutex, divert the ring, hold its
//   consumers (a bit in its head word), wait for every claimed cell to be
//   published, and only then take everything out: so they are atomic with
//   respect to offers and takes, and the survivors go back first, in order.
// - close() is linearisable with offers: the ring's tail word carries its
//   closed bit, so a claim comes before the close or fails; close waits until
//   every earlier claim is published. Once closed, the ring takes nothing
//   more, not even the overflow's tasks: consumers then take those from the
//   overflow directly.
// - A consumer that finds the oldest cell claimed but not yet published, with
//   more claimed behind it, counts itself in stalled_ before it sleeps; the
//   next producer to publish sees the count and wakes one more sleeper for
//   each, so tasks published behind a slow cell do not wait for one wake-up
//   at a time.
//
// Locking: spill_mutex_ guards overflow_ and is taken only off the hot path
// (spilling, taking spilled tasks, close, drain, remove_if); spilled_,
// moving_ and moving_size_ are written under it and read without it. The
// functions that need it held take the caller's lock
// (detail/lock_contract.hpp).

#include <crew/detail/consumer_wait.hpp>
#include <crew/detail/event_count.hpp>
#include <crew/detail/lock_contract.hpp>
#include <crew/detail/mpmc_ring.hpp>
#include <crew/detail/task_ring.hpp>
#include <crew/detail/test_seam.hpp>
#include <crew/detail/sanitizers.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace crew::detail {

class spill_queue : public consumer_waits<spill_queue> {
  public:
    // Cells of the lock-free ring when the capacity allows: 80 bytes each.
    static constexpr std::size_t default_ring_cells = 1024;

    // `capacity`: the most tasks it holds (max(): unbounded).
    explicit spill_queue(std::size_t capacity, std::size_t ring_cells = default_ring_cells)
        : capacity_(capacity), ring_(std::min(capacity, ring_cells)) {}

    // False, leaving `t` intact, if full or closed. May throw std::bad_alloc
    // when spilling, also leaving `t` intact.
    bool offer(task&& t) {
        CREW_SEAM(spill_checked);
        switch (ring_.try_push(t)) {
        case mpmc_ring::push_result::pushed: published(); return true;
        case mpmc_ring::push_result::closed: return false;
        case mpmc_ring::push_result::full:
        case mpmc_ring::push_result::diverted: break;
        }
        if (!spill(t)) return false;
        not_empty_.notify_one();
        return true;
    }

    // Waits while full; false (t intact) once closed.
    bool put(task&& t) { return put_until(std::move(t), clock::time_point::max()); }

    // As put, but gives up (false, t intact) at `deadline`.
    bool put_until(task&& t, clock::time_point deadline) {
        return put_or_park(not_full_, [&] { return offer(std::move(t)); },
                           [&] { return closed_.load(std::memory_order_seq_cst); }, deadline);
    }

    bool poll(task& out) { return try_take(out); }

    void wake_consumers() { not_empty_.notify_all(); }

    // Consumers announced as sleepers now (some may be on their way to
    // sleep, or just woken): for statistics and tests only.
    std::size_t parked_consumers() const noexcept { return not_empty_.waiters(); }

    void close() {
        std::uint64_t horizon;
        {
            std::lock_guard lock(spill_mutex_);
            closed_.store(true, std::memory_order_seq_cst);
            horizon = ring_.close();
        }
        ring_.wait_published(horizon);
        not_full_.notify_all();
    }

    std::vector<task> drain() {
        std::vector<task> out;
        {
            std::unique_lock lock(spill_mutex_);
            out = take_all(lock);
            std::vector<task> none;
            put_back(lock, none);
        }
        if (!out.empty()) not_full_.notify_all();
        return out;
    }

    // Removes and returns the tasks for which pred(task) holds; the others
    // stay, in order, ahead of any task offered meanwhile. A throwing
    // predicate (or a failed allocation) leaves every task queued, in order.
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        std::vector<task> removed;
        {
            std::unique_lock lock(spill_mutex_);
            std::vector<task> all = take_all(lock);
            std::vector<char> drop;
            try {
                drop.resize(all.size());
                std::size_t dropping = 0;
                for (std::size_t i = 0; i < all.size(); ++i) dropping += drop[i] = pred(std::as_const(all[i])) ? 1 : 0;
                removed.reserve(dropping);
            } catch (...) {
                put_back(lock, all);
                throw;
            }
            std::size_t kept = 0;
            for (std::size_t i = 0; i < all.size(); ++i) {
                if (drop[i]) removed.push_back(std::move(all[i])); // reserved
                else if (kept++ != i) all[kept - 1] = std::move(all[i]);
            }
            all.erase(all.begin() + static_cast<std::ptrdiff_t>(kept), all.end());
            put_back(lock, all);
        }
        if (!removed.empty()) not_full_.notify_all();
        return removed; // the removed tasks die outside the lock
    }

    // As extract_if, destroying what it removes; returns how many.
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return extract_if(pred).size();
    }

    // The tasks queued (never above the capacity), without a lock. Tasks
    // moving between the overflow and the ring, or in a maintenance's hands,
    // would be counted twice or not at all by two separate reads, so those
    // moves are bracketed by moving_ (a sequence lock: odd while one runs).
    // A read that overlaps none returns ring + overflow; one that finds a
    // move under way returns the count the mover recorded as it began
    // (moving_size_): a maintenance freezes the queue (producers diverted,
    // consumers held), and a batch move only loses tasks to takes that
    // overlap this call. So never too few.
    std::size_t size() const noexcept {
        for (;;) {
            const std::uint64_t before = moving_.load(std::memory_order_acquire);
            if (before & 1) return std::min(capacity_, moving_size_.load(std::memory_order_relaxed));
            const std::size_t spilled = spilled_.load(std::memory_order_acquire);
            const std::size_t in_ring = ring_.size();
            read_fence();
            if (moving_.load(std::memory_order_relaxed) == before) return std::min(capacity_, in_ring + spilled);
        }
    }

  private:
    friend consumer_waits<spill_queue>;

    // Bracket a move of tasks between the overflow, the ring and a
    // maintenance's hands (see size()); `queued` is what size() says
    // meanwhile. The release store publishes it with the odd count; the
    // fence keeps the moves after both.
    void begin_move(const std::unique_lock<std::mutex>& held, std::size_t queued) noexcept {
        assert_held(held, spill_mutex_);
        moving_size_.store(queued, std::memory_order_relaxed);
        moving_.store(moving_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        fence_unless_tsan(std::memory_order_release);
    }

    // size()'s acquire fence. ThreadSanitizer does not model fences (and
    // warns about them); the reads it orders are atomics, so it reports no
    // race without it, and on x86 loads are not reordered with loads.
    static void read_fence() noexcept { fence_unless_tsan(std::memory_order_acquire); }
    void end_move(const std::unique_lock<std::mutex>& held) noexcept {
        assert_held(held, spill_mutex_);
        moving_.store(moving_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }

    // A task was published in the ring: wake a sleeper for it, and one more
    // for each consumer that stalled behind an unpublished cell (which may be
    // this one) while tasks were published behind it: each of those tasks
    // spent its wake-up on a consumer that could not take it. The fence in
    // notify_one orders the publish before the load of stalled_, as
    // wait_for's increment comes before a stalled consumer's re-check
    // (park_consumer's fence): one of the two sees the other.
    //
    // While a wake-up is in flight, the publish wakes nobody more: the
    // consumer woken takes a task and, if more are queued, wakes the next
    // (pass_on). A burst of tasks into a pool of parked workers thus costs
    // a futex wake per worker needed, not per task (the wake storm of many
    // workers on few CPUs: doc/benchmarks.md, "Many cores").
    void published() {
        full_fence(stalled_); // the publish (or take), then the look at the sleepers
        not_empty_.notify_one_unless_pending_after_fence();
        if (stalled_.load(std::memory_order_relaxed) == 0) return;
        for (auto n = stalled_.exchange(0); n > 0; --n) not_empty_.notify_one();
    }

    // A consumer that went to sleep (or announced it would) took a task: it
    // may have taken the wake-up a publish left in flight, for which later
    // publishes woke nobody. If tasks remain, it wakes one more consumer.
    void pass_on() {
        full_fence(stalled_); // the publish (or take), then the look at the sleepers
        if (ring_.size() != 0 || spilled_.load(std::memory_order_relaxed) != 0)
            not_empty_.notify_one_unless_pending_after_fence();
    }

    // The slow path of offer. Takes spill_mutex_.
    bool spill(task& t) {
        std::unique_lock lock(spill_mutex_);
        if (closed_.load(std::memory_order_relaxed)) return false;
        if (overflow_.empty()) {
            // Not diverted (the ring is diverted only while the overflow holds
            // tasks, or under this mutex): the ring may have room again.
            switch (ring_.try_push(t)) {
            case mpmc_ring::push_result::pushed: return true;
            case mpmc_ring::push_result::closed: return false;
            default: break;
            }
            if (ring_.capacity() >= capacity_) return push_unless_full(lock, t); // the ring full is the queue full
            ring_.divert(); // from here the ring only shrinks: the check below holds
        }
        if (ring_.size() + overflow_.size() >= capacity_) {
            undivert_if_overflow_empty(lock);
            return false;
        }
        try {
            overflow_.push(std::move(t)); // may throw std::bad_alloc, t intact
        } catch (...) {
            undivert_if_overflow_empty(lock);
            throw;
        }
        spilled_.store(overflow_.size(), std::memory_order_release);
        return true;
    }

    // Requires: the overflow empty, the ring's capacity the queue's.
    // try_push said `full`: false only if the ring truly was (a refusal
    // needs a moment at capacity), else a take has claimed the oldest cell
    // and not yet freed it: wait the few instructions it needs.
    bool push_unless_full(const std::unique_lock<std::mutex>& held, task& t) noexcept {
        assert_held(held, spill_mutex_);
        for (;;) {
            if (ring_.full()) return false;
            switch (ring_.try_push(t)) {
            case mpmc_ring::push_result::pushed: return true;
            case mpmc_ring::push_result::full: std::this_thread::yield(); break;
            default: return false; // closed (the mutex keeps it undiverted)
            }
        }
    }

    // Turned away by a maintenance (consumers held), a consumer waits for it
    // on the mutex: the tasks are still queued, so "none" would be false.
    bool try_take(task& out) {
        bool taken;
        switch (ring_.try_pop_or_held(out)) {
        case mpmc_ring::pop_result::popped: taken = true; break;
        case mpmc_ring::pop_result::held: taken = take_spilled(out); break;
        default: taken = spilled_.load(std::memory_order_acquire) != 0 && take_spilled(out); break;
        }
        if (taken && capacity_ != std::numeric_limits<std::size_t>::max()) not_full_.notify_one();
        return taken;
    }

    // Takes spill_mutex_: the oldest task, then moves a batch of the next
    // into the ring for every consumer. Not while the ring holds an older
    // task, even one not yet published: FIFO.
    bool take_spilled(task& out) {
        std::unique_lock lock(spill_mutex_);
        if (ring_.try_pop(out)) return true; // another consumer moved a batch meanwhile
        if (overflow_.empty() || !ring_.empty()) return false;
        begin_move(lock, overflow_.size()); // the ring is empty, and diverted
        out = overflow_.pop();
        while (!overflow_.empty()) {
            task next = overflow_.pop();
            if (ring_.push_as_owner(next) != mpmc_ring::push_result::pushed) { // full, or closed
                overflow_.push_front(std::move(next));
                break;
            }
        }
        undivert_if_overflow_empty(lock);
        spilled_.store(overflow_.size(), std::memory_order_release);
        end_move(lock);
        return true;
    }

    // The ring stays diverted exactly while the overflow holds tasks
    // (outside a maintenance): producers may use it again once the overflow
    // is empty.
    void undivert_if_overflow_empty(const std::unique_lock<std::mutex>& held) noexcept {
        assert_held(held, spill_mutex_);
        if (overflow_.empty()) ring_.undivert();
    }

    // Empties the queue into a vector, oldest first, with producers
    // diverted and consumers held (put_back lets them go), after every
    // claimed cell is published. Reserves first, so a std::bad_alloc leaves
    // every task queued. size() keeps counting the tasks while they sit in
    // the vector (a pool whose worker saw an empty queue after shutdown()
    // would end with them queued), until put_back's end_move.
    std::vector<task> take_all(const std::unique_lock<std::mutex>& held) {
        assert_held(held, spill_mutex_);
        std::vector<task> all;
        all.reserve(ring_.capacity() + overflow_.size());
        overflow_.reserve(ring_.capacity() + overflow_.size()); // for put_back
        ring_.hold_consumers();
        ring_.wait_published(ring_.divert());
        begin_move(held, ring_.size() + overflow_.size()); // frozen: no producer, no consumer
        for (task t; ring_.pop_as_owner(t);) all.push_back(std::move(t));
        while (!overflow_.empty()) all.push_back(overflow_.pop());
        return all;
    }

    // Requires: after take_all, `all` at most what it reserved for. Queues
    // `all` again in order (the ring first, the rest in the overflow:
    // reserved, so nothing allocates), then lets producers and consumers
    // back in.
    void put_back(const std::unique_lock<std::mutex>& held, std::vector<task>& all) noexcept {
        assert_held(held, spill_mutex_);
        std::size_t i = 0;
        for (; i < all.size(); ++i)
            if (ring_.push_as_owner(all[i]) != mpmc_ring::push_result::pushed) break;
        for (; i < all.size(); ++i) overflow_.push(std::move(all[i]));
        spilled_.store(overflow_.size(), std::memory_order_release);
        end_move(held);
        undivert_if_overflow_empty(held);
        ring_.release_consumers();
        if (!all.empty()) not_empty_.notify_all();
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
                if (parked) pass_on(); // after commit_wait withdrew, with any wake-up it took
                return true;
            },
            [&] {
                parked = true;
                // Stalled: the oldest cell is claimed, not yet published, and
                // another is claimed behind it (with the oldest alone, its
                // publisher's own wake-up is the one this sleep needs; so a
                // single producer never stalls anyone). seq_cst: before
                // park_consumer's re-check.
                if (ring_.size() > 1) stalled_.fetch_add(1);
                if (!park_consumer(not_empty_, interrupted, deadline, take)) return false;
                pass_on(); // after cancel_wait withdrew, with any wake-up it took
                return true;
            });
    }

    const std::size_t capacity_;
    std::atomic<bool> closed_{false};               // set once by close(), under spill_mutex_
    alignas(64) std::atomic<std::size_t> spilled_{0}; // overflow_.size(); written under spill_mutex_
    std::atomic<std::uint64_t> moving_{0};            // size()'s sequence lock; written under spill_mutex_
    std::atomic<std::size_t> moving_size_{0};         // size() while moving_ is odd; written under spill_mutex_
    alignas(64) std::atomic<std::uint32_t> stalled_{0}; // consumers asleep behind an unpublished cell
    mpmc_ring ring_;
    event_count<> not_empty_; // consumers sleep here
    event_count<> not_full_;  // put() sleeps here (bounded only)
    std::mutex spill_mutex_;
    // Guarded by spill_mutex_. Unlimited: capacity_ is enforced by spill()
    // with the ring diverted, so it never holds more than the capacity
    // allows; unlimited all the same, so that put_back never has to
    // refuse a task it took out.
    task_ring overflow_;
};

} // namespace crew::detail

#endif
