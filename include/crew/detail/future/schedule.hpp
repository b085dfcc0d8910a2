#ifndef CREW_DETAIL_FUTURE_SCHEDULE_HPP
#define CREW_DETAIL_FUTURE_SCHEDULE_HPP

// The pieces of a scheduled task that live outside the delayed queue: where
// it sits in the queue, its due time, the link back to its pool for cancel(),
// and the task that runs a periodic callable again and again.

#include <crew/detail/future/future_state.hpp>
#include <crew/detail/future/pool_link.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/periodic_options.hpp>
#include <crew/schedule_slot.hpp>
#include <crew/task.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <limits>
#include <mutex>
#include <utility>

namespace crew::detail {

// What a scheduled future's state adds to a plain one: its due time (which a
// periodic task moves on after each run), its slot in the queue, and the link
// to its pool, through which cancel() removes the queued task.
template <class T>
class scheduled_state : public future_state<T> {
  public:
    scheduled_state(typename future_state<T>::destroy_fn destroy, std::stop_source* stop, clock::time_point due,
                    link_ticket link) noexcept
        : future_state<T>(destroy, stop), due_(due.time_since_epoch().count()), link_(link) {
        this->set_cancel_hook(&on_cancel);
    }

    clock::time_point due() const noexcept { return clock::time_point(clock::duration(due_.load())); }
    void set_due(clock::time_point due) noexcept { due_.store(due.time_since_epoch().count()); }
    schedule_slot& slot() noexcept { return slot_; }

  private:
    static void on_cancel(future_state<T>* self, bool) noexcept {
        auto& state = *static_cast<scheduled_state*>(self);
        state.link_.cancelled(state.slot_);
    }

    std::atomic<clock::rep> due_;
    schedule_slot slot_;
    link_ticket link_; // two words, no count: see pool_link.hpp
};

// How a periodic task's next due time follows from the last.
enum class period_kind : unsigned char {
    fixed_rate,  // previous due time + period: no drift
    fixed_delay, // end of the run + delay
};

// The queued half of a periodic schedule: one task for the whole schedule.
// After a run it moves its due time on and asks, through next_run(), to be
// queued again; the worker that ran it does so (run_task), so a periodic task
// never overlaps itself and its next run travels one way, from the task to the
// worker. The schedule ends when a run fails (its exception goes to the
// future, and escapes the run to the worker, which reports it at once to its
// hooks; with periodic_failure::keep_running only the worker sees it, and the
// schedule goes on), when the future is found cancelled,
// when the task runs anywhere but on its pool (a task handed back by
// shutdown_now() and run by hand), or when the pool does not queue it again:
// it then dies owning the callable, which cancels the future. Small enough
// (40 bytes) to be stored inline in a crew::task.
template <class F>
class periodic_task : public state_handle<future_state_with<void, F, scheduled_state<void>>> {
    using handle = state_handle<future_state_with<void, F, scheduled_state<void>>>;

  public:
    using state_type = future_state_with<void, F, scheduled_state<void>>;

    periodic_task(state_type* state, const void* pool, std::chrono::nanoseconds period, period_kind kind,
                  periodic_options options) noexcept
        : handle(state, pool), period_(period), kind_(kind), missed_(options.missed),
          on_failure_(options.on_failure) {}

    // A run that throws lets the exception escape (whatever `heard`): the
    // caller reports it now, never the future when it is dropped.
    std::exception_ptr run_and_report(bool) {
        if (!this->alive_) return {};
        if (!this->state_->is_pending()) return this->skip(); // cancelled while queued
        // Only a schedule that skips missed runs needs to know when this one started.
        const bool skips = kind_ == period_kind::fixed_rate && missed_ == missed_runs::skip;
        const clock::time_point started = skips ? clock::now() : clock::time_point{};
        std::exception_ptr failure; // keep_running: reported after the next run is set
        try {
            (void)this->invoke();
        } catch (...) {
            if (on_failure_ == periodic_failure::cancel) {
                // The future keeps the exception for get() and will not report
                // it when dropped unread: it escapes now, to the worker, which
                // reports it at once (after_execute, or standard error).
                (void)this->fail(true);
                throw;
            }
            failure = std::current_exception();
        }
        if (!this->state_->is_pending()) { // cancelled while running
            this->skip();
        } else if (!runs_for_pool(this->pool_)) { // run by hand: no worker of its pool will queue it again
            this->skip();
            this->state_->cancel_unrun();
        } else {
            state_type& state = *this->state_;
            state.set_due(next_due(state.due(), started, skips));
            ran_ = true;
        }
        if (failure) std::rethrow_exception(failure); // to the worker's after_execute, or standard error
        return {};
    }

    // After a run that left the schedule going: queue me again at due().
    next_run_request next_run() const noexcept {
        if (!ran_ || !this->alive_ || !this->state_->is_pending()) return {};
        return {&this->state_->slot(), this->state_->due()};
    }

    // The due time of the run about to start (a task observer's `queued`).
    clock::time_point queued_at() const noexcept { return this->state_->due(); }

    void operator()() { (void)run_and_report(false); }

  private:
    // The next due time after a run due at `due`. Fixed delay: `period_`
    // from now. Fixed rate: `due` + `period_`; skipping missed runs, the
    // first due + k * period_ after `started` (k >= 1), so the schedule keeps
    // its grid. Saturates rather than overflowing.
    clock::time_point next_due(clock::time_point due, clock::time_point started, bool skips) const noexcept {
        if (kind_ == period_kind::fixed_delay) return saturating_deadline(period_);
        if (!skips || started < due) return saturating_deadline(period_, due);
        const auto late = std::chrono::duration_cast<std::chrono::nanoseconds>(started - due);
        const auto periods = late / period_ + 1; // >= 1
        if (periods > std::numeric_limits<std::chrono::nanoseconds::rep>::max() / period_.count())
            return clock::time_point::max();
        return saturating_deadline(period_ * periods, due);
    }

    std::chrono::nanoseconds period_;
    period_kind kind_;
    missed_runs missed_;
    periodic_failure on_failure_;
    bool ran_ = false; // has run at least once: next_run() has an answer
};

} // namespace crew::detail

#endif
