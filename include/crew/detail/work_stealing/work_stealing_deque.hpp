#ifndef CREW_DETAIL_WORK_STEALING_WORK_STEALING_DEQUE_HPP
#define CREW_DETAIL_WORK_STEALING_WORK_STEALING_DEQUE_HPP

// One worker's deque of tasks in crew::work_stealing_queue: Chase and Lev's
// design ("Dynamic circular work-stealing deque", 2005, with the C11
// orderings of Lê et al., 2013), of fixed size. Its owner pushes and pops at
// the bottom (newest first); any thread steals from the top (oldest first).
//
// Chase–Lev reads a cell before the compare-exchange that claims it and
// discards the copy if the claim fails. A crew::task cannot be copied, and
// moving it out before owning it would race with the owner, so here a thief
// claims first (compare-exchange on top) and moves the task out afterwards.
// Between the two, the owner may have wrapped around to that cell: each cell
// has a `full` flag, which the thief clears once the task is out, and the
// owner treats a cell still full as "the deque is full" (its caller then
// queues the task elsewhere). So a cell is written only while empty and read
// only by the one who claimed it.
//
// Who writes what: bottom_ only the owner; top_ anyone, by compare-exchange;
// a cell's task the owner (push) and then its claimer (pop or steal).

#include <crew/detail/cache_line.hpp>
#include <crew/task.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace crew::detail {

class work_stealing_deque {
  public:
    // Cells per deque: 256 tasks of 64 bytes, about 20 KB per worker. A
    // worker that queues more spills them to the shared injector.
    static constexpr std::size_t capacity = 256;

    work_stealing_deque() = default;
    work_stealing_deque(const work_stealing_deque&) = delete;
    work_stealing_deque& operator=(const work_stealing_deque&) = delete;

    // Owner only. False (t intact) if full, or the cell it would use is
    // still being emptied by a thief.
    bool push(task& t) noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        const std::int64_t top = top_.load(std::memory_order_acquire);
        if (b - top >= static_cast<std::int64_t>(capacity)) return false;
        cell& c = cells_[index(b)];
        if (c.full.load(std::memory_order_acquire)) return false; // a thief still moves the last task out
        c.t = std::move(t);
        c.full.store(true, std::memory_order_relaxed);
        // Release: a thief that reads this bottom (or a later one) sees the task.
        bottom_.store(b + 1, std::memory_order_release);
        return true;
    }

    // Owner only: the newest task.
    bool pop(task& out) noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        // The owner's claim of cell b (bottom lowered) against a thief's
        // (top raised): each looks at the other's index after writing its
        // own, all seq_cst (in place of Lê et al.'s fences, which
        // ThreadSanitizer cannot model), so one of them sees the other.
        bottom_.store(b, std::memory_order_seq_cst);
        std::int64_t top = top_.load(std::memory_order_seq_cst);
        if (top > b) { // empty
            bottom_.store(b + 1, std::memory_order_relaxed);
            return false;
        }
        if (top == b) { // the last task: thieves may want it too
            const bool won = top_.compare_exchange_strong(top, top + 1, std::memory_order_seq_cst,
                                                          std::memory_order_relaxed);
            bottom_.store(b + 1, std::memory_order_relaxed);
            if (!won) return false;
        }
        take_out(cells_[index(b)], out);
        return true;
    }

    // Any thread: the oldest task. False if empty or lost to another claim.
    bool steal(task& out) noexcept {
        std::int64_t top = top_.load(std::memory_order_seq_cst);
        const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        if (top >= b) return false;
        if (!top_.compare_exchange_strong(top, top + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
            return false;
        take_out(cells_[index(top)], out);
        return true;
    }

    // A snapshot: tasks pushed and not yet claimed.
    std::size_t size() const noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_acquire);
        const std::int64_t top = top_.load(std::memory_order_acquire);
        return b > top ? static_cast<std::size_t>(b - top) : 0;
    }

    bool looks_empty() const noexcept { return size() == 0; }

  private:
    struct cell {
        task t;
        std::atomic<bool> full{false};
    };

    static std::size_t index(std::int64_t i) noexcept { return static_cast<std::size_t>(i) % capacity; }

    // The claimer's move; the release lets the owner reuse the cell.
    static void take_out(cell& c, task& out) noexcept {
        out = std::move(c.t);
        c.full.store(false, std::memory_order_release);
    }

    alignas(cache_line) std::atomic<std::int64_t> top_{0};    // thieves' end
    alignas(cache_line) std::atomic<std::int64_t> bottom_{0}; // owner's end
    alignas(cache_line) std::array<cell, capacity> cells_{};
};

} // namespace crew::detail

#endif
