#ifndef CREW_DETAIL_QUEUE_DUE_NOW_FIFO_HPP
#define CREW_DETAIL_QUEUE_DUE_NOW_FIFO_HPP

// delayed_queue's tasks due now (offer, put): a lock-free FIFO (the
// segment queue of unbounded_queue) and two counts: the tasks that entered it
// (counted by producers after the push) and the takes claimed from it plus
// the tasks removed (counted by consumers before the poll). Their difference
// is what it holds, a moment behind either way (it may read below zero). The
// first count, read when a heap task is scheduled, is that task's mark, and
// take() can be limited to the first `limit` tasks ever to enter: so a due
// heap task goes before the FIFO tasks that entered after it was scheduled.
// The two counts share a line, as a single count would: a producer writes it
// once per task, a consumer once per take.
//
// Thread-safe, lock-free but for what the segment queue's maintenance locks. The counts are
// seq_cst where the owner's protocol orders them against its wake rule.

#include <crew/detail/queue/segment_queue.hpp>
#include <crew/task.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace crew::detail {

class due_now_fifo {
  public:
    static constexpr std::uint64_t no_limit = std::numeric_limits<std::uint64_t>::max();

    // Queues `t`; false (and `t` untouched) once closed. May throw
    // std::bad_alloc, leaving `t` untouched.
    bool offer(task&& t) {
        if (!tasks_.offer(std::move(t))) return false;
        // Counted once published: a consumer that saw the count finds the
        // task (unless an older cell is still unpublished: it then sleeps
        // until that producer counts its own). seq_cst: the owner's producer
        // reads its wake rule next; a sleeper stores the rule, then reads this.
        in_.fetch_add(1);
        return true;
    }

    // The tasks ever counted in (seq_cst).
    std::uint64_t entered() const noexcept { return in_.load(); }

    // The tasks it holds by the counts (seq_cst both).
    std::int64_t pending() const noexcept {
        const std::uint64_t in = in_.load();
        return static_cast<std::int64_t>(in - out_.load());
    }

    // Whether, by the counts, a task may be there; `seen_in` is set to the
    // entries counted (seq_cst; the claims are read relaxed: a hint).
    bool any_counted(std::uint64_t& seen_in) const noexcept {
        seen_in = in_.load();
        return static_cast<std::int64_t>(seen_in - out_.load(std::memory_order_relaxed)) > 0;
    }

    // Takes the next task if one is counted in and it is among the first
    // `limit` ever to enter. The claim (out) comes before the poll, so that a
    // consumer weighing a mark counts every take under way; a poll that finds
    // nothing to take (an older cell claimed by a producer but not yet
    // filled) gives the claim back. `seen_in` is set to the entries counted
    // before the look: a consumer that found nothing sleeps only while that
    // count stands, as each producer counts its task after publishing it and
    // then wakes by the owner's rule (so it does not spin while a cell is
    // unpublished, nor miss the task once it is).
    bool take(task& out, std::uint64_t& seen_in, std::uint64_t limit = no_limit) {
        seen_in = in_.load();
        const std::uint64_t bound = std::min(seen_in, limit);
        if (limit == no_limit) {
            if (out_.load(std::memory_order_relaxed) >= bound) return false;
            if (out_.fetch_add(1) >= bound) {
                out_.fetch_sub(1, std::memory_order_relaxed);
                return false;
            }
        } else {
            std::uint64_t claimed = out_.load();
            do {
                if (claimed >= bound) return false;
            } while (!out_.compare_exchange_weak(claimed, claimed + 1));
        }
        if (tasks_.poll(out)) return true;
        out_.fetch_sub(1, std::memory_order_relaxed);
        return false;
    }

    // Removes and returns the tasks for which pred(task) holds, counted out.
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        std::vector<task> removed = tasks_.extract_if(pred);
        out_.fetch_add(removed.size());
        return removed;
    }

    // Removes and returns every task, counted out.
    std::vector<task> drain() {
        std::vector<task> all = tasks_.drain();
        out_.fetch_add(all.size());
        return all;
    }

    std::size_t size() const noexcept { return tasks_.size(); }
    void close() { tasks_.close(); }

  private:
    segment_queue tasks_{std::numeric_limits<std::size_t>::max()};
    std::atomic<std::uint64_t> in_{0};
    std::atomic<std::uint64_t> out_{0};
};

} // namespace crew::detail

#endif
