#ifndef CREW_DETAIL_SPILL_QUEUE_HPP
#define CREW_DETAIL_SPILL_QUEUE_HPP

// The engine of unbounded_queue and bounded_queue: a lock-free ring for the
// hot path, a mutex-guarded overflow for a backlog longer than the ring, and
// event-count parking. FIFO across producers throughout.
//
// - While nothing has spilled (spilled_ == 0), producers and consumers meet
//   only in the ring (detail/mpmc_ring.hpp): one compare-exchange a side, no
//   lock. A producer then pays one fence and one load to learn that nobody
//   sleeps (detail/event_count.hpp).
// - A producer that finds the ring full takes spill_mutex_ and appends to the
//   overflow; while the overflow holds anything, every producer appends there
//   (so no task can overtake one that spilled before it). Consumers take from
//   the ring first (its tasks are all older), then from the overflow, moving
//   a batch of the oldest into the ring as they go; once the overflow is
//   empty, producers return to the ring.
// - close() is linearisable with offers: after it returns, no offer can
//   succeed, and every offer that succeeded is visible to drain() and size().
//   The ring's tail word carries its closed bit, so a claim comes before the
//   close or fails; close waits until every earlier claim is published. Once
//   closed, the ring takes nothing more, not even the overflow's tasks:
//   consumers then take those from the overflow directly.
// - remove_if and drain take the mutex and mark spilled_ so that producers
//   wait for them; a producer that read spilled_ == 0 just before may still
//   land in the ring meanwhile (its offer overlaps the call), and the
//   survivors of remove_if then come after it.
//
// Locking: spill_mutex_ guards overflow_ and is taken only off the hot path
// (spilling, taking spilled tasks, close, drain, remove_if); spilled_ is
// written under it and read without it.

#include <crew/detail/consumer_wait.hpp>
#include <crew/detail/event_count.hpp>
#include <crew/detail/mpmc_ring.hpp>
#include <crew/detail/task_ring.hpp>
#include <crew/detail/test_seam.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <limits>
#include <mutex>
#include <vector>

namespace crew::detail {

class spill_queue : public consumer_waits<spill_queue> {
  public:
    // Cells of the lock-free ring when the capacity allows: 80 bytes each.
    static constexpr std::size_t default_ring_cells = 1024;

    // `capacity`: the most tasks it holds (max(): unbounded).
    explicit spill_queue(std::size_t capacity, std::size_t ring_cells = default_ring_cells)
        : capacity_(capacity), ring_(std::min(capacity, ring_cells)),
          overflow_(std::numeric_limits<std::size_t>::max()) {}

    // False, leaving `t` intact, if full or closed. May throw std::bad_alloc
    // when spilling, also leaving `t` intact.
    bool offer(task&& t) {
        if (spilled_.load(std::memory_order_acquire) == 0) {
            CREW_SEAM(spill_checked);
            switch (ring_.try_push(t)) {
            case mpmc_ring::push_result::pushed: not_empty_.notify_one(); return true;
            case mpmc_ring::push_result::closed: return false;
            case mpmc_ring::push_result::full: break;
            }
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
            std::lock_guard lock(spill_mutex_);
            out = take_all_locked();
            spilled_.store(0, std::memory_order_release);
        }
        if (!out.empty()) not_full_.notify_all();
        return out;
    }

    // Removes and returns the tasks for which pred(task) holds; the others
    // stay, in order. A throwing predicate (or a failed allocation) leaves
    // every task queued, in order.
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        std::vector<task> removed;
        {
            std::lock_guard lock(spill_mutex_);
            std::vector<task> all = take_all_locked();
            std::vector<char> drop;
            try {
                drop.resize(all.size());
                std::size_t dropping = 0;
                for (std::size_t i = 0; i < all.size(); ++i) dropping += drop[i] = pred(std::as_const(all[i])) ? 1 : 0;
                removed.reserve(dropping);
            } catch (...) {
                put_back_locked(all);
                throw;
            }
            std::size_t kept = 0;
            for (std::size_t i = 0; i < all.size(); ++i) {
                if (drop[i]) removed.push_back(std::move(all[i])); // reserved
                else if (kept++ != i) all[kept - 1] = std::move(all[i]);
            }
            all.erase(all.begin() + static_cast<std::ptrdiff_t>(kept), all.end());
            put_back_locked(all);
        }
        if (!removed.empty()) not_full_.notify_all();
        return removed; // the removed tasks die outside the lock
    }

    // As extract_if, destroying what it removes; returns how many.
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return extract_if(pred).size();
    }

    // Never above the capacity, even while a batch moves from the overflow
    // into the ring (both counted until spilled_ is updated).
    std::size_t size() const noexcept {
        return std::min(capacity_, ring_.size() + (spilled_.load(std::memory_order_acquire) & ~maintenance));
    }

  private:
    friend consumer_waits<spill_queue>;

    // spilled_ while remove_if or drain holds the mutex: producers wait.
    static constexpr std::size_t maintenance = std::size_t(1) << (std::numeric_limits<std::size_t>::digits - 1);

    // The slow path of offer. Takes spill_mutex_.
    bool spill(task& t) {
        std::lock_guard lock(spill_mutex_);
        if (closed_.load(std::memory_order_relaxed)) return false;
        if (overflow_.empty()) { // the ring may have room again
            if (ring_.try_push(t) == mpmc_ring::push_result::pushed) return true;
        }
        if (ring_.size() + overflow_.size() >= capacity_) return false;
        overflow_.push(std::move(t)); // may throw, t intact
        spilled_.store(overflow_.size(), std::memory_order_release);
        return true;
    }

    bool try_take(task& out) {
        if (ring_.try_pop(out) || (spilled_.load(std::memory_order_acquire) != 0 && take_spilled(out))) {
            if (capacity_ != std::numeric_limits<std::size_t>::max()) not_full_.notify_one();
            return true;
        }
        return false;
    }

    // Takes spill_mutex_: the oldest task, then moves a batch of the next
    // into the ring for every consumer.
    bool take_spilled(task& out) {
        std::lock_guard lock(spill_mutex_);
        if (ring_.try_pop(out)) return true; // another consumer moved a batch meanwhile
        if (overflow_.empty()) return false;
        out = overflow_.pop();
        while (!overflow_.empty()) {
            task next = overflow_.pop();
            if (ring_.try_push(next) != mpmc_ring::push_result::pushed) { // full, or closed
                overflow_.push_front(std::move(next));
                break;
            }
        }
        spilled_.store(overflow_.size(), std::memory_order_release);
        return true;
    }

    // Requires: spill_mutex_ held. Empties the queue into a vector, oldest
    // first, marking spilled_ so that producers wait. Reserves first, so a
    // std::bad_alloc leaves every task queued.
    //
    // size() keeps counting the tasks while they sit in the vector: a pool
    // whose worker saw an empty queue after shutdown() would end with them
    // queued. So the mark counts one task more than the vector and the
    // overflow hold *before* each pop from the ring (whose release, seen by
    // size()'s read of the ring, carries the mark with it); it over-counts
    // by one until put_back_locked or drain sets it.
    std::vector<task> take_all_locked() {
        std::vector<task> all;
        all.reserve(ring_.capacity() + overflow_.size());
        overflow_.reserve(ring_.capacity() + overflow_.size()); // for put_back_locked
        const auto mark = [&] {
            spilled_.store((all.size() + overflow_.size() + 1) | maintenance, std::memory_order_release);
        };
        mark();
        for (task t; ring_.try_pop(t); mark()) all.push_back(std::move(t));
        while (!overflow_.empty()) all.push_back(overflow_.pop());
        return all;
    }

    // Requires: spill_mutex_ held, `all` at most what take_all_locked
    // reserved for. Queues `all` again in order: the ring first, the rest in
    // the overflow (reserved, so nothing allocates).
    void put_back_locked(std::vector<task>& all) noexcept {
        std::size_t i = 0;
        for (; i < all.size(); ++i)
            if (ring_.try_push(all[i]) != mpmc_ring::push_result::pushed) break;
        for (; i < all.size(); ++i) overflow_.push(std::move(all[i]));
        spilled_.store(overflow_.size(), std::memory_order_release);
        if (!all.empty()) not_empty_.notify_all();
    }

    // detail::wait_for_task's two steps: take; else announce, re-check, sleep.
    wait_status wait_for(task& out, const interrupt_flag& interrupted, std::chrono::steady_clock::time_point deadline) {
        return wait_for_task(interrupted, deadline, [&] { return try_take(out); },
                             [&] { return park_consumer(not_empty_, interrupted, deadline, [&] { return try_take(out); }); });
    }

    const std::size_t capacity_;
    std::atomic<bool> closed_{false};               // set once by close(), under spill_mutex_
    alignas(64) std::atomic<std::size_t> spilled_{0}; // overflow_.size() (| maintenance); written under spill_mutex_
    mpmc_ring ring_;
    event_count<> not_empty_; // consumers sleep here
    event_count<> not_full_;  // put() sleeps here (bounded only)
    std::mutex spill_mutex_;
    // Guarded by spill_mutex_. Unlimited: capacity_ is enforced by spill(),
    // and put_back_locked may have to hold, for a moment, more than the
    // capacity (producers that read spilled_ == 0 just before remove_if's
    // mark refill the ring behind it). With the capacity as its limit, that
    // push broke task_ring's "not full" precondition, and its next growth
    // wrote past its end (the executor fuzzer, under ASan).
    task_ring overflow_;
};

} // namespace crew::detail

#endif
