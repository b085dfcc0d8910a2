#ifndef CREW_DETAIL_BLOCKING_QUEUE_HPP
#define CREW_DETAIL_BLOCKING_QUEUE_HPP

#include <crew/concepts.hpp>
#include <crew/detail/consumer_wait.hpp>
#include <crew/detail/event_count.hpp>
#include <crew/detail/spin.hpp>
#include <crew/detail/time.hpp>
#include <crew/task.hpp>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <vector>

namespace crew::detail {

// The locking and waiting shared by the mutex-guarded queues (today
// priority_queue's heap; Storage decides the order and whether it can be
// full). The mutex guards the storage only: consumers and blocked put()s
// park on event counts (detail/event_count.hpp) outside it, so a producer
// that finds nobody asleep pays a fence and a load after its push, and a
// wake-up never makes the woken thread queue behind the waker's lock.
template <class Storage>
class blocking_queue : public consumer_waits<blocking_queue<Storage>> {
  public:
    template <class... Args>
    explicit blocking_queue(Args&&... storage_args) : storage_(std::forward<Args>(storage_args)...) {}

    // Takes mutex_; wakes one parked consumer.
    bool offer(task&& t) {
        {
            std::unique_lock lock = acquire();
            if (closed_ || storage_.full()) return false;
            storage_.push(std::move(t));
        }
        not_empty_.notify_one();
        return true;
    }

    // Parks on not_full_ while full; false (t intact) once closed.
    bool put(task&& t) { return put_until(std::move(t), clock::time_point::max()); }

    // As put, but gives up (false, t intact) at `deadline`.
    bool put_until(task&& t, clock::time_point deadline) {
        return put_or_park(not_full_, [&] { return offer(std::move(t)); }, [&] { return is_closed(); }, deadline);
    }

    bool poll(task& out) { return try_take(out); }

    // The caller's flag store, then the fence in notify_all: a consumer
    // between its re-check and its sleep sees the flag or is woken.
    void wake_consumers() { not_empty_.notify_all(); }

    void close() {
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
        }
        not_full_.notify_all();
    }

    std::vector<task> drain() {
        std::vector<task> out;
        {
            std::lock_guard lock(mutex_);
            storage_.drain_into(out);
        }
        not_full_.notify_all();
        return out;
    }

    // Removes and returns the tasks for which pred(task) holds, in queue
    // order; the others stay. The predicate runs under mutex_; the removed
    // tasks are the caller's, to destroy outside it.
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        std::vector<task> removed;
        {
            std::lock_guard lock(mutex_);
            storage_.extract_into(pred, removed);
        }
        if (!removed.empty()) not_full_.notify_all();
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
        return storage_.size();
    }

  protected:
    Storage& storage() noexcept { return storage_; }

  private:
    // The lock is held for a push or a pop, a few dozen instructions, but
    // producers and workers all want it at once: blocking at the first
    // refusal costs a futex wait and a wake-up each time (more than half a
    // system call per task with one producer and two workers). So a caller
    // first retries briefly, as glibc's adaptive mutex does, unless the
    // process has only one CPU, where the holder cannot run meanwhile.
    std::unique_lock<std::mutex> acquire() {
        if (mutex_.try_lock()) return std::unique_lock(mutex_, std::adopt_lock);
        if (spin_on_contention_ &&
            spin_until(lock_spin_pauses, [this] { return mutex_.try_lock(); }))
            return std::unique_lock(mutex_, std::adopt_lock);
        return std::unique_lock(mutex_);
    }

    static constexpr int lock_spin_pauses = 128;

    bool is_closed() const {
        std::lock_guard lock(mutex_);
        return closed_;
    }

    // Takes mutex_; wakes a parked put() if the storage can fill.
    bool try_take(task& out) {
        {
            std::unique_lock lock = acquire();
            if (storage_.empty()) return false;
            out = storage_.pop();
        }
        if constexpr (Storage::can_fill) not_full_.notify_one();
        return true;
    }

    friend consumer_waits<blocking_queue>;

    // detail::wait_for_task's two steps: take; else announce, re-check, sleep.
    wait_status wait_for(task& out, const interrupt_flag& interrupted, clock::time_point deadline) {
        return wait_for_task(interrupted, deadline, [&] { return try_take(out); },
                             [&] { return park_consumer(not_empty_, interrupted, deadline, [&] { return try_take(out); }); });
    }

    mutable std::mutex mutex_;
    bool closed_ = false; // guarded by mutex_
    const bool spin_on_contention_ = usable_cpu_count() > 1;
    Storage storage_;     // guarded by mutex_
    event_count<> not_empty_; // consumers park here
    event_count<> not_full_;  // put() parks here
};

} // namespace crew::detail

#endif
