#ifndef CREW_FUTURE_HPP
#define CREW_FUTURE_HPP

/// \file
/// `crew::future<T>`: the result of `basic_executor::submit`, with Java's
/// `Future` semantics (cancellation, `is_done`) and C++ waiting.

#include <crew/detail/future/future_state.hpp>
#include <crew/detail/timer/time.hpp>

#include <chrono>
#include <future>
#include <optional>
#include <type_traits>
#include <utility>

namespace crew {

namespace detail {
struct future_access;
} // namespace detail

/// The eventual result of a task given to `submit`.
///
/// Move-only. `get()` may be called once, like `std::future`; a second call
/// throws `std::future_error` (`future_already_retrieved`). The future keeps
/// its state after `get()`, as Java's does: `is_done()` is then true and
/// `wait*`, `cancel` and `is_cancelled` still answer. `wait`, `wait_for`,
/// `wait_until`, `is_done`, `cancel` and `is_cancelled` may be called from any
/// thread, concurrently with each other and with `get()`. Destroying a future
/// does not cancel, block on, or otherwise affect its task.
///
/// A future never hangs: a task a reject policy discarded completes it with
/// `rejected_execution_error`; a task destroyed without running (say,
/// dropped from `shutdown_now()`'s list) cancels it. An exception the task
/// threw that no `get()` reads, and no `after_execute` hook saw, is written to
/// standard error when the last of the future and its task is gone.
template <class T>
class future {
  public:
    /// A future with no state (`valid()` is false).
    future() noexcept = default;

    future(future&& other) noexcept
        : state_(std::exchange(other.state_, nullptr)), retrieved_(std::exchange(other.retrieved_, false)) {}
    future& operator=(future&& other) noexcept {
        if (this != &other) {
            release();
            state_ = std::exchange(other.state_, nullptr);
            retrieved_ = std::exchange(other.retrieved_, false);
        }
        return *this;
    }
    future(const future&) = delete; // crew: a future is move-only: std::move it (or share the result yourself)
    future& operator=(const future&) = delete; // crew: a future is move-only: std::move it
    ~future() { release(); }

    /// True while `get()` may be called: the future has a state (it was not
    /// default-constructed or moved from) and `get()` was not called yet.
    /// `std::future`'s meaning; the other members still answer after `get()`.
    bool valid() const noexcept { return state_ != nullptr && !retrieved_; }

    /// Waits for the task and returns its result, or rethrows its exception
    /// as is. On one of a pool's workers the wait helps (runs that worker's
    /// spawns and its pool's queued tasks meanwhile, unless inside
    /// `crew::isolate`: doc/composition.md, "Helping"), so a task that gets
    /// the future of a task queued behind it cannot deadlock a pool of one. Throws `cancellation_error` if it was cancelled, and
    /// `std::future_error`: `no_state` without a state, `future_already_retrieved`
    /// on a second call. Call it from one thread.
    T get() {
        require_state();
        if (retrieved_ || !state_->claim_result()) throw std::future_error(std::future_errc::future_already_retrieved);
        retrieved_ = true;
        state_->wait_helping();
        return state_->get();
    }

    /// Waits until the task completed, failed or was cancelled; helps as
    /// `get()` does. Throws `std::future_error` (`no_state`) without a state.
    void wait() const {
        require_state();
        state_->wait_helping();
    }

    /// Waits at most `timeout`; `ready` or `timeout` (never `deferred`).
    /// Saturates: `duration::max()` waits without limit; zero or negative only
    /// checks (a finished future answers `ready`). Never returns `timeout` early.
    template <class Rep, class Period>
    std::future_status wait_for(std::chrono::duration<Rep, Period> timeout) const {
        require_state();
        return state_->wait_until(detail::saturating_deadline(timeout)) ? std::future_status::ready
                                                                         : std::future_status::timeout;
    }

    /// Waits until `deadline` (on any clock) at most. Saturates like
    /// `wait_for`: `time_point::max()` waits without limit, a past or minimal
    /// time point only checks.
    template <class Clock, class Duration>
    std::future_status wait_until(std::chrono::time_point<Clock, Duration> deadline) const {
        return wait_for(detail::saturating_time_until(deadline));
    }

    /// True once the task completed, failed or was cancelled.
    bool is_done() const noexcept { return state_ && state_->is_done(); }

    /// Cancels the task unless it already completed: a queued task will never
    /// run; a running task's result is discarded, and with
    /// `may_interrupt_if_running` its stop token is requested. Returns false if
    /// it had already completed (or was cancelled). Java: `Future.cancel`.
    bool cancel(bool may_interrupt_if_running = false) noexcept {
        return state_ && state_->cancel(may_interrupt_if_running);
    }

    /// True if `cancel` succeeded (or the task was destroyed unrun).
    bool is_cancelled() const noexcept { return state_ && state_->is_cancelled(); }

    /// Consumes the future: once it is done, `fn` is handed to `ex` (any
    /// pool or a `crew::any_executor`) as a task, whose RejectPolicy applies,
    /// and the returned future gets what `fn` returns or throws. No thread
    /// blocks meanwhile. Java: `thenApplyAsync`/`handleAsync`; folly:
    /// `thenValue`/`thenTry`.
    ///
    /// - `fn(T)` (`fn()` for `future<void>`) runs only on a value: a failed
    ///   source hands its exception on, a cancelled one `cancellation_error`,
    ///   and `fn` never runs (nor is anything handed to `ex`).
    /// - `fn(crew::future<T>)`, chosen when `fn` is invocable so, always runs
    ///   and receives the done source.
    /// - A continuation `ex` refuses completes the returned future with
    ///   `rejected_execution_error` (or what the policy threw); one
    ///   `caller_runs_policy` runs inline, on the thread that completed
    ///   this future.
    /// - Cancelling the returned future before `fn` starts means `fn` never
    ///   runs; this future is not cancelled (as Java).
    ///
    /// `ex` must outlive the continuation (a pool is kept by address, an
    /// `any_executor` by value). Throws `std::future_error` (`no_state`)
    /// without a state, `future_already_retrieved` after `get()`.
    ///
    /// A `fn` returning `crew::future<U>` gives a `future<U>` that is done
    /// when that inner future is done (Java: `thenCompose`; folly: a
    /// then returning a future). Cancelling the returned future with
    /// `cancel(true)` cancels what it still waits for: this future, and the
    /// inner one (folly's interrupts; `cancel(false)` cancels only it).
    template <class Executor, class F>
    auto then(Executor&& ex, F&& fn) &&;

    /// `then` consumes the future: on an lvalue it does not compile.
    template <class Executor, class F>
    void then(Executor&&, F&&) & {
        static_assert(sizeof(F) == 0, "crew: then() consumes the future: write std::move(f).then(ex, fn)");
    }
    template <class Executor, class F>
    void then(Executor&&, F&&) const& {
        static_assert(sizeof(F) == 0, "crew: then() consumes the future: write std::move(f).then(ex, fn)");
    }

    /// Consumes the future: the returned one is done with this one's
    /// outcome, or, once `timeout` elapses first, fails with `timeout_error`;
    /// this future is then cancelled (`cancel(true)`). Java: `orTimeout`;
    /// folly: `within`. The deadline is kept by a process-wide timer thread,
    /// started on first use (never keeping the process alive), which only
    /// completes the future: what resumes inline on completion (a
    /// `co_await`, a `caller_runs_policy` continuation) runs on that thread,
    /// so keep it short, or give `timers`. A deadline met in time costs one
    /// timer insert and one removal, and wakes no thread. `cancel(true)` on
    /// the result cancels this future too. Throws `std::future_error`
    /// (`no_state`, `future_already_retrieved`) as `then` does.
    template <class Rep, class Period>
    future within(std::chrono::duration<Rep, Period> timeout) &&;

    /// As `within(timeout)`, with the deadline a task of `timers`, a
    /// scheduled pool of yours (anything with `schedule(delay, fn)`
    /// returning a crew future): its RejectPolicy applies to the deadline
    /// task (a refusal throws here and leaves this future untouched); a
    /// deadline met in time cancels that task.
    template <class Rep, class Period, class Timers>
    future within(std::chrono::duration<Rep, Period> timeout, Timers& timers) &&;

    /// As `within`, but at the deadline the returned future takes `value`
    /// instead of failing (Java: `completeOnTimeout`); this future is then
    /// cancelled (`cancel(true)`) as well, its result being no longer
    /// wanted. For `future<void>`: `on_timeout(timeout)`.
    template <class Rep, class Period, class U = T>
        requires(!std::is_void_v<U> && !std::is_reference_v<U>)
    future on_timeout(std::chrono::duration<Rep, Period> timeout, U value) &&;
    template <class Rep, class Period, class U = T>
        requires std::is_void_v<U>
    future on_timeout(std::chrono::duration<Rep, Period> timeout) &&;

  protected:
    explicit future(detail::future_state<T>* state) noexcept : state_(state) {}
    detail::future_state<T>* state() const noexcept { return state_; }

  private:
    template <class Q, class R, class TF, class L>
    friend class basic_executor;
    friend struct detail::future_access;

  protected:
    void require_state() const {
        if (!state_) throw std::future_error(std::future_errc::no_state);
    }

  private:
    void release() noexcept {
        if (state_) std::exchange(state_, nullptr)->release();
    }

    detail::future_state<T>* state_ = nullptr;
    bool retrieved_ = false; // get() was called; touched only by get()'s thread
};

namespace detail {
template <class>
inline constexpr bool coroutine_header_included = false;
// What the co_await below gives the compiler, so that its static_assert is
// the only error: an awaiter in shape, never defined.
template <class T>
struct awaiter_without_coroutine_header {
    bool await_ready() const noexcept;
    template <class Handle>
    void await_suspend(Handle) const noexcept;
    T await_resume() const;
};
} // namespace detail

/// `co_await` on a `crew::future` is defined in `<crew/coroutine.hpp>`, whose
/// overloads (on `future<T>&` and `future<T>&&`) are better matches; without
/// that header this one is chosen, and says so.
template <class T>
auto operator co_await(const future<T>&) noexcept {
    static_assert(detail::coroutine_header_included<T>,
                  "crew: co_await on a crew::future needs #include <crew/coroutine.hpp> (and a non-const future)");
    return detail::awaiter_without_coroutine_header<T>{};
}

namespace detail {

// Makes and opens futures for crew's own code outside basic_executor
// (any_executor, coroutines), which the public interface does not allow.
struct future_access {
    template <class T>
    static future<T> make(future_state<T>* state) noexcept {
        return future<T>(state);
    }
    template <class T>
    static future_state<T>* state(const future<T>& f) noexcept {
        return f.state_;
    }
    // Takes the state and its reference out of `f`, which is left empty.
    template <class T>
    static future_state<T>* take(future<T>& f) noexcept {
        f.retrieved_ = false;
        return std::exchange(f.state_, nullptr);
    }
};

} // namespace detail

} // namespace crew

#include <crew/detail/future/continuation.hpp> // future::then
#include <crew/detail/future/deadline.hpp>     // future::within, future::on_timeout

namespace crew {

template <class T>
template <class Rep, class Period>
future<T> future<T>::within(std::chrono::duration<Rep, Period> timeout) && {
    require_state();
    if (retrieved_) throw std::future_error(std::future_errc::future_already_retrieved);
    return detail::make_deadline(std::move(*this), {}, false, [&](auto& state) { state.arm(timeout); });
}

template <class T>
template <class Rep, class Period, class Timers>
future<T> future<T>::within(std::chrono::duration<Rep, Period> timeout, Timers& timers) && {
    require_state();
    if (retrieved_) throw std::future_error(std::future_errc::future_already_retrieved);
    return detail::make_deadline(std::move(*this), {}, false, [&](auto& state) { state.arm(timeout, timers); });
}

template <class T>
template <class Rep, class Period, class U>
    requires(!std::is_void_v<U> && !std::is_reference_v<U>)
future<T> future<T>::on_timeout(std::chrono::duration<Rep, Period> timeout, U value) && {
    require_state();
    if (retrieved_) throw std::future_error(std::future_errc::future_already_retrieved);
    return detail::make_deadline(std::move(*this), std::optional<T>(std::move(value)), true,
                                 [&](auto& state) { state.arm(timeout); });
}

template <class T>
template <class Rep, class Period, class U>
    requires std::is_void_v<U>
future<T> future<T>::on_timeout(std::chrono::duration<Rep, Period> timeout) && {
    require_state();
    if (retrieved_) throw std::future_error(std::future_errc::future_already_retrieved);
    return detail::make_deadline(std::move(*this), {}, true, [&](auto& state) { state.arm(timeout); });
}

} // namespace crew

#endif
