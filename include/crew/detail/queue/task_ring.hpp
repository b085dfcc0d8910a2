#ifndef CREW_DETAIL_QUEUE_TASK_RING_HPP
#define CREW_DETAIL_QUEUE_TASK_RING_HPP

#include <crew/task.hpp>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace crew::detail {

// FIFO ring of tasks that grows by doubling and never shrinks, so a queue in
// steady state allocates nothing per task (std::deque would allocate a block
// every 8 tasks). Unbounded: its owner enforces any capacity.
class task_ring {
  public:
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }

    // May throw std::bad_alloc when growing; t is then intact.
    void push(task&& t) {
        if (size_ == slots_.size()) grow();
        slots_[index(size_)] = std::move(t);
        ++size_;
    }

    // Requires: !empty().
    task pop() noexcept {
        task t = std::move(slots_[head_]);
        head_ = index(1);
        --size_;
        return t;
    }

    // Puts back at the front a task just popped. Requires: a pop since the
    // last push (so a slot is free there). Never allocates.
    void push_front(task&& t) noexcept {
        head_ = head_ == 0 ? slots_.size() - 1 : head_ - 1;
        slots_[head_] = std::move(t);
        ++size_;
    }

    // Makes room for `n` tasks in all, so that pushes up to that many do not
    // allocate. May throw std::bad_alloc, changing nothing.
    void reserve(std::size_t n) {
        if (n > slots_.size()) grow_to(n);
    }

    // Moves the tasks for which pred(task) holds to the end of `out`; the
    // others stay, in order. The caller destroys them, outside its lock (a
    // task's destructor may call back into the pool). Every predicate runs
    // before anything moves, so a throwing one changes nothing; may throw
    // std::bad_alloc, changing nothing.
    template <class Pred>
    void extract_into(Pred pred, std::vector<task>& out) {
        std::vector<char> drop(size_);
        std::size_t dropping = 0;
        for (std::size_t i = 0; i < size_; ++i) dropping += drop[i] = pred(std::as_const(slots_[index(i)])) ? 1 : 0;
        out.reserve(out.size() + dropping);
        std::size_t kept = 0;
        for (std::size_t i = 0; i < size_; ++i) {
            task& t = slots_[index(i)];
            if (drop[i]) out.push_back(std::move(t)); // reserved
            else if (kept++ != i) slots_[index(kept - 1)] = std::move(t);
        }
        size_ = kept;
    }

    void drain_into(std::vector<task>& out) {
        out.reserve(out.size() + size_);
        while (!empty()) out.push_back(pop());
    }

  private:
    std::size_t index(std::size_t offset) const noexcept {
        std::size_t i = head_ + offset;
        return i >= slots_.size() ? i - slots_.size() : i;
    }

    // The first allocation's slots: enough that a short burst does not regrow.
    static constexpr std::size_t first_slots = 16;

    void grow() { grow_to(std::max(first_slots, slots_.size() * 2)); }

    void grow_to(std::size_t bigger) {
        std::vector<task> next(bigger);
        for (std::size_t i = 0; i < size_; ++i) next[i] = std::move(slots_[index(i)]);
        slots_.swap(next);
        head_ = 0;
    }

    std::vector<task> slots_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

} // namespace crew::detail

#endif
