#ifndef CREW_COROUTINE_HPP
#define CREW_COROUTINE_HPP

/// \file
/// C++20 coroutines on crew pools: `crew::coroutine<T>` (lazy),
/// `crew::spawn(pool, c)` (runs it on the pool, returns a `crew::future<T>`),
/// `co_await crew::resume_on(pool)`, `co_await future`, and
/// `co_await crew::sleep_for(scheduled_pool, d)`. No thread blocks in any
/// of them.
///
/// Ownership, which decides what happens at shutdown: a spawned coroutine
/// and the coroutines it awaits form a chain whose root frame `spawn` made.
/// While the chain is suspended on a pool (its resumption queued there, or
/// waiting for a due time), the queued task owns the chain: destroying that
/// task unrun (say, one `shutdown_now()` returned) destroys the whole chain,
/// locals included, and the spawn's future reports `cancellation_error`. A
/// resumption the RejectPolicy refuses makes the `co_await` throw
/// `rejected_execution_error` (with `abort_policy`, the policy's own).
///
/// Cancellation: `cancel(true)` on the spawn's future requests the chain's
/// stop (`co_await crew::get_stop_token()` reads it). From then on every
/// `co_await` of `resume_on`, `sleep_for` or a future in the chain throws
/// `cancellation_error` inside the coroutine: one that has not suspended yet
/// does not suspend; one suspended on `sleep_for` or a future is woken at
/// once, on the thread that called `cancel(true)` (the timer is cancelled,
/// the awaited future is left alone); one whose `resume_on` is queued throws
/// when the pool runs it. A chain not started yet never runs its body.
/// `cancel(false)` only completes the future: the chain runs on unstopped
/// and its result is discarded.

#include <crew/concepts.hpp>
#include <crew/detail/coroutine/awaiters.hpp>
#include <crew/detail/coroutine/chain.hpp>
#include <crew/detail/coroutine/driver.hpp>
#include <crew/detail/coroutine/promise.hpp>
#include <crew/detail/coroutine/spawn.hpp>
#include <crew/detail/coroutine/stop.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/errors.hpp>
#include <crew/future.hpp>

#include <chrono>
#include <coroutine>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace crew {

/// A lazy coroutine returning `T`: it starts when awaited (inline, on the
/// awaiting thread, by symmetric transfer) or spawned (`crew::spawn`), and
/// never on construction. Move-only; destroying it destroys its frame.
/// `T` is an object type or void (no references).
///
/// Thread safety: a coroutine object is owned by one thread at a time.
template <class T = void>
class coroutine {
    static_assert(!std::is_reference_v<T>, "crew::coroutine<T>: T must not be a reference");

  public:
    using promise_type = detail::coroutine_promise<T>;

    coroutine(coroutine&& other) noexcept : frame_(std::exchange(other.frame_, nullptr)) {}
    coroutine& operator=(coroutine&& other) noexcept {
        if (this != &other) {
            if (frame_) frame_.destroy();
            frame_ = std::exchange(other.frame_, nullptr);
        }
        return *this;
    }
    coroutine(const coroutine&) = delete;
    coroutine& operator=(const coroutine&) = delete;
    ~coroutine() {
        if (frame_) frame_.destroy();
    }

    /// Awaiting runs the coroutine on this thread until it suspends or ends;
    /// its result (or exception) is the `co_await`'s.
    auto operator co_await() && noexcept { return awaiter{frame_}; }
    auto operator co_await() & noexcept { return awaiter{frame_}; }

  private:
    friend promise_type;

    explicit coroutine(std::coroutine_handle<promise_type> frame) noexcept : frame_(frame) {}

    struct awaiter {
        std::coroutine_handle<promise_type> frame;
        bool await_ready() const noexcept { return false; }
        template <class Promise>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> parent) noexcept {
            frame.promise().start_as_child(parent, detail::root_of(parent));
            return detail::transfer(parent, frame);
        }
        T await_resume() { return frame.promise().result(); }
    };

    std::coroutine_handle<promise_type> frame_;
};

/// Runs `c` on one of `pool`'s threads and returns a future of its result
/// or exception; no exception escapes into a worker. The start follows the
/// pool's RejectPolicy as `submit` does (`abort_policy` throws here; a
/// discarded start's future reports `rejected_execution_error`).
template <class Pool, class T>
future<T> spawn(Pool& pool, coroutine<T> c) {
    auto* state = new detail::coroutine_state<T>();
    future<T> result = detail::future_access::make<T>(state);
    detail::spawn_root root = detail::run_spawned<T>(std::move(c), detail::spawn_owner<T>(state));
    pool.execute(detail::resume_task(root.frame, root.frame.promise().chain_root()));
    return result;
}

/// `co_await crew::get_stop_token()` gives the `std::stop_token` of the
/// spawned chain the coroutine runs in, at once (it never suspends): stop is
/// requested by `cancel(true)` on the spawn's future. In a coroutine that no
/// `spawn` started (one awaited by another library's), a token that never
/// stops (`stop_possible()` is false).
inline detail::stop_token_awaiter get_stop_token() noexcept { return {}; }

/// `co_await crew::resume_on(pool)` continues the coroutine on one of
/// `pool`'s threads. A resumption the pool refuses throws from the
/// `co_await`: `rejected_execution_error` (or what `abort_policy` throws).
/// In a stopped chain it throws `cancellation_error`, without moving if the
/// stop came first, or once the pool runs the resumption.
template <class Pool>
detail::resume_on_awaiter<Pool> resume_on(Pool& pool) noexcept {
    return detail::resume_on_awaiter<Pool>(pool);
}

/// `co_await crew::sleep_for(pool, d)` continues the coroutine on `pool` (a
/// scheduled pool) once `d` has passed; no thread blocks meanwhile. `d`
/// saturates as `schedule`'s delay does. A stop request wakes it at once
/// with `cancellation_error`, on the stopping thread, and cancels its timer.
template <class Pool, class Rep, class Period>
    requires scheduling_queue_policy<typename Pool::queue_type>
detail::sleep_awaiter<Pool> sleep_for(Pool& pool, std::chrono::duration<Rep, Period> d) noexcept {
    return detail::sleep_awaiter<Pool>(pool, detail::saturating_nanoseconds(d));
}

/// `co_await f` on a `crew::future<T>` (or `scheduled_future<T>`): suspends
/// without blocking a thread until the task completes, then resumes on the
/// thread that completed it (a worker, or the thread that cancelled), and
/// returns `f.get()`: the result, the task's exception, or
/// `cancellation_error`. An awaited lvalue future is then retrieved. A stop
/// request wakes it at once with `cancellation_error`, on the stopping
/// thread; the future is then neither cancelled nor retrieved.
template <class T>
detail::future_awaiter<T> operator co_await(future<T>& f) noexcept {
    return detail::future_awaiter<T>(f);
}
template <class T>
detail::owning_future_awaiter<T> operator co_await(future<T>&& f) noexcept {
    return detail::owning_future_awaiter<T>(std::move(f));
}

} // namespace crew

#endif
