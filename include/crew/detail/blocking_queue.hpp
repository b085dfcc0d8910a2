#ifndef CREW_DETAIL_BLOCKING_QUEUE_HPP
#define CREW_DETAIL_BLOCKING_QUEUE_HPP

#include <crew/concepts.hpp>
#include <crew/detail/consumer_wait.hpp>
#include <crew/detail/spin.hpp>
#include <crew/detail/time.hpp>
#include <crew/task.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace crew::detail {

// The locking and waiting shared by the buffering queues; Storage decides the
// order (task_ring: FIFO, task_heap: priority) and whether it can be full.
// Producers notify only when a consumer is actually waiting: an idle pool's
// submitter pays for a wake-up only when one is needed.
template <class Storage>
class blocking_queue : public consumer_waits<blocking_queue<Storage>> {
  public:
    template <class... Args>
    explicit blocking_queue(Args&&... storage_args) : storage_(std::forward<Args>(storage_args)...) {}

    bool offer(task&& t) {
        std::unique_lock lock = acquire();
        if (closed_ || storage_.full()) return false;
        storage_.push(std::move(t));
        notify_consumer(lock);
        return true;
    }

    bool put(task&& t) {
        std::unique_lock lock = acquire();
        while (!closed_ && storage_.full()) {
            ++waiting_producers_;
            not_full_.wait(lock);
            --waiting_producers_;
        }
        if (closed_) return false;
        storage_.push(std::move(t));
        notify_consumer(lock);
        return true;
    }

    bool poll(task& out) {
        std::unique_lock lock = acquire();
        if (storage_.empty()) return false;
        out = take_locked(lock);
        return true;
    }

    void wake_consumers() {
        { std::lock_guard lock(mutex_); } // orders the callers' flag store before our notify
        not_empty_.notify_all();
    }

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

    template <class Pred>
    std::size_t remove_if(Pred pred) {
        std::size_t removed;
        {
            std::lock_guard lock(mutex_);
            removed = storage_.remove_if(pred);
        }
        if (removed) not_full_.notify_all();
        return removed;
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

    // Requires: lock holds mutex_, !storage_.empty().
    task take_locked(std::unique_lock<std::mutex>& lock) {
        task t = storage_.pop();
        if (waiting_producers_ > 0) {
            lock.unlock();
            not_full_.notify_one();
        }
        return t;
    }

    // Requires: lock holds mutex_. Releases it. Wakes a consumer only if one
    // is waiting that no earlier notify is already waking: a woken thread
    // stays counted until it runs, and notifying again meanwhile would be a
    // futex call for nobody. (Java's signal() takes its waiter off the
    // condition at once, to the same end.) No wake-up is lost: while every
    // waiter has been notified, all of them are awake and will look at the
    // queue before they wait again.
    void notify_consumer(std::unique_lock<std::mutex>& lock) {
        const bool wake = waiting_consumers_ > notified_consumers_;
        if (wake) ++notified_consumers_;
        lock.unlock();
        if (wake) not_empty_.notify_one();
    }

    friend consumer_waits<blocking_queue>;

    // detail::wait_for_task's two steps under mutex_.
    wait_status wait_for(task& out, const interrupt_flag& interrupted, clock::time_point deadline) {
        std::unique_lock lock = acquire();
        return wait_for_task(
            interrupted, deadline,
            [&] {
                if (storage_.empty()) return false;
                out = take_locked(lock); // may release the lock: we return at once
                return true;
            },
            [&] {
                ++waiting_consumers_;
                if (deadline == clock::time_point::max()) not_empty_.wait(lock);
                else not_empty_.wait_until(lock, deadline);
                --waiting_consumers_;
                // Whichever waiter wakes takes one notify's credit: the count
                // of credits never exceeds the waiters still counted yet awake.
                if (notified_consumers_ > 0) --notified_consumers_;
                return false;
            });
    }

    mutable std::mutex mutex_;
    std::condition_variable not_empty_; // consumers wait here
    std::condition_variable not_full_;  // put() waits here
    std::size_t waiting_consumers_ = 0;
    std::size_t notified_consumers_ = 0; // of those waiting, how many a notify is waking
    std::size_t waiting_producers_ = 0;
    bool closed_ = false;
    const bool spin_on_contention_ = usable_cpu_count() > 1;
    Storage storage_;
};

} // namespace crew::detail

#endif
