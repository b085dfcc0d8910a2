#ifndef CREW_SCHEDULED_EXECUTOR_SERVICE_HPP
#define CREW_SCHEDULED_EXECUTOR_SERVICE_HPP

/// \file
/// The public members a scheduled pool adds (Java's
/// `ScheduledExecutorService` and `ScheduledThreadPoolExecutor`'s shutdown
/// switches): `schedule`, `schedule_at`, `schedule_at_fixed_rate`,
/// `schedule_with_fixed_delay`, `remove_on_cancel`,
/// `continue_periodic_after_shutdown` and `execute_delayed_after_shutdown`.
/// `crew::basic_executor` derives from `scheduled_executor_service` (CRTP),
/// so these are members of every pool; they exist only when the QueuePolicy
/// models `crew::scheduling_queue_policy` (`delayed_queue`, as in
/// `crew::scheduled_pool`), and on another pool calling one does not compile.
/// On a scheduled pool, `execute()` and `submit()` mean "due now", and
/// `submit()` returns a `scheduled_future`. What these members do is defined
/// in impl/scheduled_executor.hpp.

#include <crew/concepts.hpp>
#include <crew/detail/future/schedule.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/periodic_options.hpp>
#include <crew/scheduled_future.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

namespace crew {

/// The scheduling members of `Pool` (a `crew::basic_executor` whose queue is
/// `QueuePolicy`). Not a class to use on its own: its members reach into the
/// pool, which befriends it.
template <class Pool, class QueuePolicy>
class scheduled_executor_service {
  public:
    /// Runs `f()` (or `f(stop_token)`) once `delay` has passed, never before.
    /// `delay` saturates: `duration::max()` means never, zero or negative means
    /// now. Returns a `scheduled_future` of the result. A refused task follows
    /// the RejectPolicy (a scheduled pool refuses only once shut down).
    /// Throws `std::invalid_argument` if `f` is empty.
    template <class Rep, class Period, class F>
        requires scheduling_queue_policy<QueuePolicy>
    auto schedule(std::chrono::duration<Rep, Period> delay, F&& f) {
        return self().schedule_once(detail::saturating_deadline(delay), std::forward<F>(f));
    }

    /// Runs `f()` (or `f(stop_token)`) once at `when`, never before; a time in
    /// the past means now. Otherwise as `schedule`.
    template <class F>
        requires scheduling_queue_policy<QueuePolicy>
    auto schedule_at(std::chrono::steady_clock::time_point when, F&& f) {
        return self().schedule_once(when, std::forward<F>(f));
    }

    /// Runs `f` first after `initial_delay` (zero or negative: now, as Java's
    /// `triggerTime`, so a past start does not cause a burst of catch-up
    /// runs), then every `period` on absolute deadlines (run n is due at
    /// first + n * period, so lateness does not accumulate; a late run is
    /// followed at once by the next, never overlapping it). Ends when a run
    /// throws (`get()` rethrows it), when the future is cancelled, or at
    /// shutdown (see the shutdown policies). A run's exception is also
    /// reported at once, on its worker: to `after_execute`, or with no hook
    /// to standard error (not when the future is destroyed unread).
    /// `options` changes two of these:
    /// `missed_runs::skip` drops the runs that fell behind instead of running
    /// them back to back (the next run is due at the first first + n * period
    /// after the late run's start); `periodic_failure::keep_running` sends a
    /// run's exception to `after_execute` (or standard error) and goes on.
    /// Throws `std::invalid_argument` if `period` is not positive (after
    /// conversion to nanoseconds) or `f` is empty. Java: `scheduleAtFixedRate`.
    template <class Rep1, class Period1, class Rep2, class Period2, class F>
        requires scheduling_queue_policy<QueuePolicy>
    scheduled_future<void> schedule_at_fixed_rate(std::chrono::duration<Rep1, Period1> initial_delay,
                                                  std::chrono::duration<Rep2, Period2> period, F&& f,
                                                  periodic_options options = {}) {
        const auto every = positive_nanoseconds(period, "crew: schedule_at_fixed_rate() needs a positive period");
        return self().schedule_periodic(first_run_after(initial_delay), every, detail::period_kind::fixed_rate,
                                 std::forward<F>(f), options);
    }

    /// Runs `f` first after `initial_delay`, then again `delay` after each run
    /// ends. Otherwise as `schedule_at_fixed_rate` (`options.missed` does not
    /// apply: a fixed delay never falls behind). Throws
    /// `std::invalid_argument` if `delay` is not positive. Java:
    /// `scheduleWithFixedDelay`.
    template <class Rep1, class Period1, class Rep2, class Period2, class F>
        requires scheduling_queue_policy<QueuePolicy>
    scheduled_future<void> schedule_with_fixed_delay(std::chrono::duration<Rep1, Period1> initial_delay,
                                                     std::chrono::duration<Rep2, Period2> delay, F&& f,
                                                     periodic_options options = {}) {
        const auto gap = positive_nanoseconds(delay, "crew: schedule_with_fixed_delay() needs a positive delay");
        return self().schedule_periodic(first_run_after(initial_delay), gap, detail::period_kind::fixed_delay,
                                 std::forward<F>(f), options);
    }

    // On a pool whose queue is not a delayed_queue the schedule* members are
    // deleted (and so still undetectable by a requires-expression). The
    // compiler's "declared here" note quotes these lines, comments included.
    template <class... Args>
        requires(!scheduling_queue_policy<QueuePolicy>)
    void schedule(Args&&...) = delete; // crew: needs a scheduled pool: QueuePolicy = crew::delayed_queue
    template <class... Args>
        requires(!scheduling_queue_policy<QueuePolicy>)
    void schedule_at(Args&&...) = delete; // crew: needs a scheduled pool: QueuePolicy = crew::delayed_queue
    template <class... Args>
        requires(!scheduling_queue_policy<QueuePolicy>)
    void schedule_at_fixed_rate(Args&&...) = delete; // crew: needs QueuePolicy = crew::delayed_queue
    template <class... Args>
        requires(!scheduling_queue_policy<QueuePolicy>)
    void schedule_with_fixed_delay(Args&&...) = delete; // crew: needs QueuePolicy = crew::delayed_queue

    /// Whether `cancel()` removes a scheduled task from the queue at once
    /// (otherwise it stays until `purge()`, its due time, or shutdown).
    /// Java: `getRemoveOnCancelPolicy`.
    bool remove_on_cancel() const noexcept
        requires scheduling_queue_policy<QueuePolicy>
    {
        return self().queue_.remove_on_cancel();
    }
    void set_remove_on_cancel(bool remove)
        requires scheduling_queue_policy<QueuePolicy>
    {
        self().queue_.set_remove_on_cancel(remove);
    }

    /// Whether periodic tasks keep running after `shutdown()` (until
    /// `shutdown_now()` or cancelled). Default false: `shutdown()` cancels
    /// them. Setting it false after shutdown cancels them then.
    bool continue_periodic_after_shutdown() const noexcept
        requires scheduling_queue_policy<QueuePolicy>
    {
        return self().queue_.continue_periodic_after_shutdown();
    }
    void set_continue_periodic_after_shutdown(bool keep)
        requires scheduling_queue_policy<QueuePolicy>
    {
        self().queue_.set_continue_periodic_after_shutdown(keep);
        if (!keep) self().apply_shutdown_policies();
    }

    /// Whether delayed (non-periodic) tasks still run, at their due time,
    /// after `shutdown()`. Default true; false cancels those not yet due.
    /// Setting it false after shutdown cancels them then.
    bool execute_delayed_after_shutdown() const noexcept
        requires scheduling_queue_policy<QueuePolicy>
    {
        return self().queue_.execute_delayed_after_shutdown();
    }
    void set_execute_delayed_after_shutdown(bool keep)
        requires scheduling_queue_policy<QueuePolicy>
    {
        self().queue_.set_execute_delayed_after_shutdown(keep);
        if (!keep) self().apply_shutdown_policies();
    }

  protected:
    scheduled_executor_service() = default;
    ~scheduled_executor_service() = default;

  private:
    Pool& self() noexcept { return static_cast<Pool&>(*this); }

    // A period or delay in nanoseconds, saturated; std::invalid_argument
    // with `message` unless positive.
    template <class Rep, class Period>
    static std::chrono::nanoseconds positive_nanoseconds(std::chrono::duration<Rep, Period> d, const char* message) {
        const auto ns = detail::saturating_nanoseconds(d);
        if (ns <= std::chrono::nanoseconds::zero()) throw std::invalid_argument(message);
        return ns;
    }

    // A periodic schedule's first due time: now + initial_delay, saturated,
    // but never in the past (Java's triggerTime treats a negative delay as zero).
    template <class Rep, class Period>
    static detail::clock::time_point first_run_after(std::chrono::duration<Rep, Period> initial_delay) {
        return detail::saturating_deadline(
            std::max(detail::saturating_nanoseconds(initial_delay), std::chrono::nanoseconds::zero()));
    }
    const Pool& self() const noexcept { return static_cast<const Pool&>(*this); }
};

} // namespace crew

#endif
