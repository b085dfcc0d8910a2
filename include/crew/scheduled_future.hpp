#ifndef CREW_SCHEDULED_FUTURE_HPP
#define CREW_SCHEDULED_FUTURE_HPP

/// \file
/// `crew::scheduled_future<T>`: a `crew::future` that also knows when its task
/// is due. Java: `ScheduledFuture`.

#include <crew/detail/future/schedule.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/future.hpp>

#include <chrono>
#include <future>

namespace crew {

/// The result of `schedule`, `schedule_at`, `schedule_at_fixed_rate`,
/// `schedule_with_fixed_delay`, and of `submit` on a scheduled pool.
///
/// Everything of `future<T>`, plus `delay()`. For a periodic task (`T` is
/// `void`), the future completes only when the schedule ends: `get()` rethrows
/// the exception of the run that failed, or throws `cancellation_error` after
/// `cancel()` (or when the pool dropped the task at shutdown). Moving it into
/// a `future<T>` keeps everything but `delay()`.
template <class T>
class scheduled_future : public future<T> {
  public:
    /// A future with no state (`valid()` is false).
    scheduled_future() noexcept = default;

    /// Time left until the task is due (for a periodic task, its next run);
    /// zero or negative once due. Saturates: a due time near the clock's
    /// limits gives `nanoseconds::max()` or `min()`, never a wrapped value.
    /// Still answers after `get()`. Throws `std::future_error` (`no_state`)
    /// without a state.
    std::chrono::nanoseconds delay() const {
        return detail::saturating_time_until(due_time());
    }

    /// When the task is (or was) due, exactly as scheduled (before the steady
    /// clock's epoch too); for a periodic task, its next run. Throws
    /// `std::future_error` (`no_state`) without a state.
    std::chrono::steady_clock::time_point due_time() const {
        this->require_state();
        return static_cast<const detail::scheduled_state<T>*>(this->state())->due();
    }

  private:
    template <class Q, class R, class TF, class L>
    friend class basic_executor;

    explicit scheduled_future(detail::scheduled_state<T>* state) noexcept : future<T>(state) {}
};

} // namespace crew

#endif
