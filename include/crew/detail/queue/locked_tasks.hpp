#ifndef CREW_DETAIL_QUEUE_LOCKED_TASKS_HPP
#define CREW_DETAIL_QUEUE_LOCKED_TASKS_HPP

#include <crew/task.hpp>

#include <cstddef>
#include <mutex>
#include <vector>

namespace crew::detail {

// A task container behind a mutex, with a closed flag, and the QueuePolicy
// members that only lock, act and return: what the mutex-guarded queues
// (priority_queue's blocking_queue, synchronous_queue) share. Storage is
// task_ring or task_heap. A queue that must wake someone after one of these
// wraps it.
template <class Storage>
class locked_tasks {
  public:
    std::vector<task> drain() {
        std::vector<task> out;
        std::lock_guard lock(mutex_);
        tasks_.drain_into(out);
        return out;
    }

    // Removes and returns the tasks for which pred(task) holds, in queue
    // order; the others stay. The predicate runs under mutex_; the removed
    // tasks are the caller's, to destroy outside it.
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        std::vector<task> removed;
        std::lock_guard lock(mutex_);
        tasks_.extract_into(pred, removed);
        return removed;
    }

    // As extract_if, destroying what it removes after releasing mutex_ (a
    // task's destructor may call back into the pool); returns how many.
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return extract_if(pred).size();
    }

    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return tasks_.size();
    }

  protected:
    // Takes mutex_.
    void mark_closed() {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }

    // Takes mutex_.
    bool is_closed() const {
        std::lock_guard lock(mutex_);
        return closed_;
    }

    mutable std::mutex mutex_;
    bool closed_ = false; // guarded by mutex_
    Storage tasks_;       // guarded by mutex_
};

} // namespace crew::detail

#endif
