#ifndef CREW_DETAIL_QUEUE_BLOCKING_QUEUE_HPP
#define CREW_DETAIL_QUEUE_BLOCKING_QUEUE_HPP

#include <crew/concepts.hpp>
#include <crew/detail/queue/consumer_wait.hpp>
#include <crew/detail/sync/event_count.hpp>
#include <crew/detail/queue/locked_tasks.hpp>
#include <crew/detail/sync/spin.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/task.hpp>

#include <mutex>

namespace crew::detail {

// A mutex-guarded queue that never fills (priority_queue's heap; Storage
// decides the order), so put() never waits. The mutex guards the storage
// only: consumers park on an event count (detail/sync/event_count.hpp) outside
// it, so a producer that finds nobody asleep pays a fence and a load after
// its push, and a wake-up never makes the woken thread queue behind the
// waker's lock.
template <class Storage>
class blocking_queue : public consumer_waits<blocking_queue<Storage>>, public locked_tasks<Storage> {
    using locked = locked_tasks<Storage>;

  public:
    // Takes mutex_; wakes one parked consumer. False (t intact) once closed.
    bool offer(task&& t) {
        {
            std::unique_lock lock = acquire();
            if (this->closed_) return false;
            this->tasks_.push(std::move(t));
        }
        not_empty_.notify_one();
        return true;
    }

    // The storage never fills: as offer.
    bool put(task&& t) { return offer(std::move(t)); }
    bool put_until(task&& t, clock::time_point) { return offer(std::move(t)); }

    bool poll(task& out) { return try_take(out); }

    // The caller's flag store, then the fence in notify_all: a consumer
    // between its re-check and its sleep sees the flag or is woken.
    void wake_consumers() { not_empty_.notify_all(); }

    // Consumers announced as sleepers now: for statistics and tests only.
    std::size_t parked_consumers() const noexcept { return not_empty_.waiters(); }

    void close() { this->mark_closed(); }

  private:
    // The lock is held for a push or a pop, a few dozen instructions, but
    // producers and workers all want it at once, and blocking at the first
    // refusal costs a futex wait and a wake-up each time. So a caller first
    // retries briefly, as glibc's adaptive mutex does, unless the process
    // has only one CPU, where the holder cannot run meanwhile.
    std::unique_lock<std::mutex> acquire() {
        std::mutex& mutex = this->mutex_;
        if (mutex.try_lock()) return std::unique_lock(mutex, std::adopt_lock);
        if (spin_on_contention_ && spin_until(lock_spin_pauses, [&mutex] { return mutex.try_lock(); }))
            return std::unique_lock(mutex, std::adopt_lock);
        return std::unique_lock(mutex);
    }

    static constexpr int lock_spin_pauses = 128;

    // Takes mutex_.
    bool try_take(task& out) {
        std::unique_lock lock = acquire();
        if (this->tasks_.empty()) return false;
        out = this->tasks_.pop();
        return true;
    }

    friend consumer_waits<blocking_queue>;

    // detail::wait_for_task's two steps: take; else announce, re-check, sleep.
    wait_status wait_for(task& out, const interrupt_flag& interrupted, clock::time_point deadline) {
        return wait_for_task(interrupted, deadline, [&] { return try_take(out); },
                             [&] { return park_consumer(not_empty_, interrupted, deadline, [&] { return try_take(out); }); });
    }

    const bool spin_on_contention_ = usable_cpu_count() > 1;
    event_count<> not_empty_; // consumers park here
};

} // namespace crew::detail

#endif
