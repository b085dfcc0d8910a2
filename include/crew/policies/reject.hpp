#ifndef CREW_POLICIES_REJECT_HPP
#define CREW_POLICIES_REJECT_HPP

/// \file
/// The reject policies for the RejectPolicy slot. A pool calls its policy's
/// `rejected_execution(task&&, Context&)` when it refuses a task: it is shut
/// down, or its queue is full and it has `maximum_pool_size` workers. The
/// context (`crew::rejection_context`, crew/rejection_context.hpp) offers
/// `is_shutdown()`, `is_paused()`, `try_execute(task&)`,
/// `discard_oldest_queued()`, `remove_oldest_queued(task&)`, `put(task&)`,
/// `put_until(task&, deadline)`, `called_from_own_worker()`, and `pool()`.
///
/// Whatever a policy does, the task is run, handed to the caller as an
/// exception, or rejected visibly: a discarded task's future reports
/// `rejected_execution_error`.

#include <crew/concepts.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/errors.hpp>
#include <crew/task.hpp>

#include <chrono>
#include <stdexcept>
#include <vector>

namespace crew {

/// Throws `rejected_execution_error` from `execute`/`submit` (the default).
/// Java: `ThreadPoolExecutor.AbortPolicy`.
struct abort_policy {
    template <class Executor>
    void rejected_execution(task&&, Executor& executor) {
        throw rejected_execution_error(executor.is_shutdown()
                                           ? "crew: task rejected: the pool is shut down"
                                           : "crew: task rejected: the queue is full and the pool at its maximum size");
    }
};

/// Runs the task on the submitting thread, which slows producers down to the
/// pool's pace; if the pool is shut down the task is discarded instead.
/// An exception from an `execute` task propagates to the submitter.
/// Java: `ThreadPoolExecutor.CallerRunsPolicy`.
struct caller_runs_policy {
    template <class Executor>
    void rejected_execution(task&& t, Executor& executor) {
        if (executor.is_shutdown()) t.reject();
        else t();
    }
};

/// Drops the task; its future, if any, reports `rejected_execution_error`.
/// Java: `ThreadPoolExecutor.DiscardPolicy`.
struct discard_policy {
    template <class Executor>
    void rejected_execution(task&& t, Executor&) {
        t.reject();
    }
};

/// Drops the oldest queued task (its future reports `rejected_execution_error`)
/// and retries; discards the new task if the pool is shut down or nothing is
/// queued to make room (where Java would recurse without end, say with a
/// synchronous queue). Java: `ThreadPoolExecutor.DiscardOldestPolicy`.
struct discard_oldest_policy {
    template <class Executor>
    void rejected_execution(task&& t, Executor& executor) {
        // The discarded tasks are rejected (and so destroyed) after the last
        // use of the pool: one of them may own it.
        rejected_on_exit discarded;
        while (!executor.is_shutdown()) {
            task oldest;
            const bool dropped = executor.remove_oldest_queued(oldest);
            if (dropped) discarded.add(oldest);
            if (executor.try_execute(t)) return;
            if (!dropped) break;
        }
        t.reject();
    }

  private:
    struct rejected_on_exit {
        std::vector<task> tasks;
        // On std::bad_alloc, `t` is rejected at once instead.
        void add(task& t) noexcept {
            try {
                tasks.push_back(std::move(t));
            } catch (...) {
                t.reject();
            }
        }
        ~rejected_on_exit() {
            for (task& t : tasks) t.reject();
        }
    };
};

/// Makes the submitter wait until the queue has room (or, with
/// `synchronous_queue`, until a worker is free): back-pressure. No Java
/// counterpart.
///
/// - `block_policy{}` waits without limit; `block_policy{timeout}` (any
///   `std::chrono::duration`) waits at most `timeout`, then throws
///   `rejected_execution_error`. A zero timeout does not wait.
/// - Throws `rejected_execution_error` at once if the pool is shut down, and
///   when it shuts down while the submitter waits.
/// - A task submitted from one of the pool's own workers runs at once on that
///   thread instead (as `caller_runs_policy` runs it): a pool whose workers
///   all wait for room in their own queue would never progress.
/// - Unless the pool is paused: then such a task is rejected
///   (`rejected_execution_error`): running it would start a task while the
///   pool is paused, and waiting for room could wait for ever (room comes
///   only after `resume()`, from workers that may all be waiting).
struct block_policy {
    /// Waits for room without limit.
    block_policy() noexcept = default;

    /// Waits for room at most `timeout` (saturating: `hours::max()` means
    /// no limit). Throws `std::invalid_argument` naming `timeout` if it is
    /// negative.
    template <class Rep, class Period>
    explicit block_policy(std::chrono::duration<Rep, Period> timeout)
        : timeout_(detail::saturating_nanoseconds(timeout)) {
        if (timeout_ < std::chrono::nanoseconds::zero())
            throw std::invalid_argument("crew::block_policy: timeout must not be negative");
    }

    /// How long a submitter waits; `nanoseconds::max()` means without limit.
    std::chrono::nanoseconds timeout() const noexcept { return timeout_; }

    template <class Executor>
    void rejected_execution(task&& t, Executor& executor) {
        if (executor.is_shutdown()) throw rejected_execution_error("crew: task rejected: the pool is shut down");
        if (executor.called_from_own_worker()) {
            // is_paused() is not part of the archetype every policy is
            // checked against; crew::rejection_context has it.
            if constexpr (requires { executor.is_paused(); }) {
                if (executor.is_paused())
                    throw rejected_execution_error(
                        "crew: task rejected: the queue is full and the pool paused (block_policy, own worker)");
            }
            t();
            return;
        }
        const auto deadline = timeout_ == std::chrono::nanoseconds::max() ? std::chrono::steady_clock::time_point::max()
                                                                          : detail::saturating_deadline(timeout_);
        if (executor.put_until(t, deadline)) return;
        throw rejected_execution_error(executor.is_shutdown()
                                           ? "crew: task rejected: the pool is shut down"
                                           : "crew: task rejected: no room in the queue within block_policy's timeout");
    }

  private:
    std::chrono::nanoseconds timeout_ = std::chrono::nanoseconds::max();
};

static_assert(reject_policy<abort_policy>);
static_assert(reject_policy<caller_runs_policy>);
static_assert(reject_policy<discard_policy>);
static_assert(reject_policy<discard_oldest_policy>);
static_assert(reject_policy<block_policy>);

} // namespace crew

#endif
