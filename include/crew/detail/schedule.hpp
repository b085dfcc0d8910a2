#ifndef CREW_DETAIL_SCHEDULE_HPP
#define CREW_DETAIL_SCHEDULE_HPP

// The pieces of a scheduled task that live outside the delayed queue: where
// it sits in the queue, its due time, the link back to its pool, and the
// task that runs a periodic callable and queues its next run.

#include <crew/detail/future_state.hpp>
#include <crew/detail/time.hpp>
#include <crew/schedule_slot.hpp>
#include <crew/task.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>

namespace crew::detail {

// The public crew::schedule_slot, under the name the detail code used first.
using schedule_slot = crew::schedule_slot;

// The link from scheduled futures and periodic tasks back to their pool. A
// future, or a task handed back by shutdown_now(), may outlive the pool, so
// the pool cuts the link before it dies, and every use of it holds the mutex.
// Recursive: the pool may run user code (on_terminated) that cancels another
// scheduled future while the link is held.
class pool_link {
  public:
    struct operations {
        // A scheduled task's future was cancelled.
        void (*cancelled)(void* pool, schedule_slot& slot) noexcept;
        // A periodic task wants its next run queued; false: the pool refuses
        // and `next` is left with the caller.
        bool (*reschedule)(void* pool, task& next, clock::time_point due, schedule_slot& slot);
    };

    pool_link(void* pool, const operations& ops) noexcept : pool_(pool), ops_(&ops) {}

    void cancelled(schedule_slot& slot) noexcept {
        std::lock_guard lock(mutex_);
        if (pool_) ops_->cancelled(pool_, slot);
    }

    bool reschedule(task& next, clock::time_point due, schedule_slot& slot) {
        std::lock_guard lock(mutex_);
        return pool_ && ops_->reschedule(pool_, next, due, slot);
    }

    // Called by the pool as it is destroyed; waits for any use in progress.
    void cut() noexcept {
        std::lock_guard lock(mutex_);
        pool_ = nullptr;
    }

  private:
    std::recursive_mutex mutex_;
    void* pool_;
    const operations* ops_;
};

// What a scheduled future's state adds to a plain one: its due time (which a
// periodic task moves on after each run), its slot in the queue, and the link
// to its pool, through which cancel() removes the queued task.
template <class T>
class scheduled_state : public future_state<T> {
  public:
    scheduled_state(typename future_state<T>::destroy_fn destroy, std::stop_source* stop, clock::time_point due,
                    std::shared_ptr<pool_link> link) noexcept
        : future_state<T>(destroy, stop), due_(due.time_since_epoch().count()), link_(std::move(link)) {
        this->set_cancel_hook(&on_cancel);
    }

    clock::time_point due() const noexcept { return clock::time_point(clock::duration(due_.load())); }
    void set_due(clock::time_point due) noexcept { due_.store(due.time_since_epoch().count()); }
    schedule_slot& slot() noexcept { return slot_; }
    pool_link& link() noexcept { return *link_; }

  private:
    static void on_cancel(future_state<T>* self) noexcept {
        auto& state = *static_cast<scheduled_state*>(self);
        state.link_->cancelled(state.slot_);
    }

    std::atomic<clock::rep> due_;
    schedule_slot slot_;
    std::shared_ptr<pool_link> link_;
};

// How a periodic task's next due time follows from the last.
enum class period_kind : unsigned char {
    fixed_rate,  // previous due time + period: no drift
    fixed_delay, // end of the run + delay
};

// The queued half of a periodic schedule. Each run's task is a fresh handle on
// the same state; the handle that ran passes the callable on to the next one
// and queues it, so a periodic task never overlaps itself. The run ends the
// schedule by failing (its exception goes to the future), by finding the
// future cancelled, or when the pool refuses the next run (the future is then
// cancelled). Small enough (40 bytes) to be stored inline in a crew::task.
template <class F>
class periodic_task : public state_handle<future_state_with<void, F, scheduled_state<void>>> {
    using handle = state_handle<future_state_with<void, F, scheduled_state<void>>>;

  public:
    using state_type = future_state_with<void, F, scheduled_state<void>>;

    periodic_task(state_type* state, const void* pool, std::chrono::nanoseconds period, period_kind kind) noexcept
        : handle(state, pool), period_(period), kind_(kind) {}

    std::exception_ptr run_and_report(bool heard) {
        if (!this->alive_) return {};
        if (!this->state_->is_pending()) { // cancelled while queued
            this->drop_function();
            return {};
        }
        try {
            (void)this->invoke();
        } catch (...) {
            this->drop_function();
            auto error = std::current_exception();
            this->state_->set_exception(error, !heard);
            return error;
        }
        if (!this->state_->is_pending()) { // cancelled while running
            this->drop_function();
            return {};
        }
        queue_next_run();
        return {};
    }

    void operator()() { (void)run_and_report(false); }

  private:
    void queue_next_run() {
        state_type& state = *this->state_;
        const auto next = kind_ == period_kind::fixed_rate ? saturating_deadline(period_, state.due())
                                                           : saturating_deadline(period_);
        state.set_due(next);
        state.add_ref();
        task successor(periodic_task(&state, this->pool_, period_, kind_));
        this->alive_ = false; // the callable now belongs to the successor
        // If the pool refuses, the successor dies here and cancels the future.
        if (!state.link().reschedule(successor, state.due(), state.slot())) return;
        // A cancel() that came while the successor was not yet queued could
        // not remove it; do what it would have done.
        if (state.is_cancelled()) state.link().cancelled(state.slot());
    }

    std::chrono::nanoseconds period_;
    period_kind kind_;
};

} // namespace crew::detail

#endif
