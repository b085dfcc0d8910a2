#ifndef CREW_POOL_OPTIONS_HPP
#define CREW_POOL_OPTIONS_HPP

/// \file
/// `crew::pool_options`: the run-time settings of a `basic_executor`.

#include <crew/task_timing.hpp>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

namespace crew {

/// `std::thread::hardware_concurrency()`, or 1 where the platform cannot tell.
inline std::size_t default_thread_count() noexcept {
    return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

/// Sizing, keep-alive, hooks and scheduling switches of a pool.
/// Designated initializers work, naming fields in their declared order:
/// `crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 8}`.
/// The constructor of `basic_executor` validates them (see there).
struct pool_options {
    /// Workers kept even when idle (unless `allow_core_thread_timeout`).
    std::size_t core_pool_size = default_thread_count();
    /// Upper bound on workers; defaults to the core size (a fixed pool).
    std::size_t maximum_pool_size = core_pool_size;
    /// How long a surplus idle worker waits for work before it exits.
    std::chrono::nanoseconds keep_alive = std::chrono::seconds(60);
    /// Let core workers time out too; needs a positive `keep_alive`.
    bool allow_core_thread_timeout = false;
    /// Capacity of `bounded_queue`; ignored by the other queues.
    std::size_t queue_capacity = 1024;

    /// Runs on the worker before each task; if it throws, the task does not run
    /// and its future (if any) rethrows that exception.
    std::function<void()> before_execute{};
    /// Runs on the worker after each task with what escaped it, or null.
    std::function<void(std::exception_ptr)> after_execute{};
    /// Runs once when the pool reaches TERMINATED.
    std::function<void()> on_terminated{};

    /// delayed_queue only: remove a task from the queue as soon as it is cancelled.
    bool remove_on_cancel = false;
    /// delayed_queue only: keep running periodic tasks after `shutdown()`.
    bool continue_periodic_after_shutdown = false;
    /// delayed_queue only: still run delayed tasks that are queued at `shutdown()`.
    bool execute_delayed_after_shutdown = true;

    /// delayed_queue only, Linux only: the timer slack of a thread while it
    /// waits as the leader for the next due time (`prctl(PR_SET_TIMERSLACK)`).
    /// 10 µs by default, chosen from a measured sweep of lateness against
    /// CPU time (doc/benchmarks.md, W4 and its `--slack-sweep`). Zero keeps
    /// the system's (50 µs unless configured). Only the leader's timer is
    /// armed, so the setting costs one thread's wake-ups, not every
    /// worker's. The slack stays set on the thread afterwards, for the tasks
    /// it runs too. Negative is invalid.
    std::chrono::nanoseconds timer_slack{std::chrono::microseconds(10)};

    /// Called on the worker after each task a worker runs (after
    /// `after_execute`), with when the task was queued, started and finished,
    /// and whether it failed (see `crew::task_timing`). Unset by default:
    /// then the pool reads no clock and stores nothing per task. Also
    /// `basic_executor::set_task_observer`.
    std::function<void(const task_timing&)> task_observer{};
};

namespace detail {

// A queue policy may say what its pool looks like when built with no
// arguments (synchronous_queue: Java's newCachedThreadPool).
template <class Q>
pool_options default_options_for() {
    if constexpr (requires { { Q::default_options() } -> std::convertible_to<pool_options>; })
        return Q::default_options();
    else
        return pool_options{};
}

// A signed count as a size; `name` is the argument named when it is negative.
template <std::signed_integral Count>
std::size_t checked_count(Count count, const char* name) {
    if (count < 0)
        throw std::invalid_argument(std::string("crew: ") + name + " must not be negative (got " +
                                    std::to_string(count) + ")");
    return static_cast<std::size_t>(count);
}

} // namespace detail

} // namespace crew

#endif
