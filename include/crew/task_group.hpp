#ifndef CREW_TASK_GROUP_HPP
#define CREW_TASK_GROUP_HPP

/// \file
/// `crew::task_group`: TBB's `task_group` on a crew pool. Fork tasks with
/// `run`, join them with `wait`; recursive groups never deadlock a pool,
/// even a pool of one thread.

#include <crew/any_executor.hpp>
#include <crew/detail/work_stealing/spawn.hpp>
#include <crew/detail/future/submit.hpp>
#include <crew/detail/scoped_record.hpp>
#include <crew/detail/work_stealing/group_trampoline.hpp>
#include <crew/detail/work_stealing/task_group_core.hpp>
#include <crew/fwd.hpp>

#include <concepts>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace crew {

/// A set of tasks run on an executor and waited for together (TBB's
/// `task_group`, Java's fork/join without a ForkJoinPool).
///
/// `Executor` is any `crew::basic_executor` (held by reference) or
/// `crew::any_executor` (the default; held by value, a handle): anything
/// with `execute(callable)`. Class template argument deduction picks it:
/// `crew::task_group g(pool);` is a `task_group<decltype(pool)>`; write
/// `crew::task_group<>` for a group over a type-erased handle.
///
/// \b Behaviour:
/// - `run(fn)` on the executor's worker that made the group spawns: `fn`
///   goes on that worker's spawn deque, and the pool gets at most two
///   tickets per worker that bring other workers in to steal
///   (detail/work_stealing/spawn_deque.hpp). From any other thread (the group's own
///   tasks on other workers included), or once the pool is shut down,
///   `run(fn)` hands the executor one task, which follows its RejectPolicy; the group also
///   keeps `fn` on a list of its own, so that `wait()` can run it on the
///   waiting thread if no worker has started it yet.
/// - `wait()` runs the group's tasks that no one has started yet; on one of
///   a pool's workers it also runs that worker's spawns and its pool's
///   queued tasks (doc/composition.md, "Helping"; not inside
///   `crew::isolate`); it sleeps only when there is nothing it may run, and
///   wakes when the last task finishes or a task is run or spawned that it
///   can take. A wait inside a task (recursion) never waits for work queued
///   behind itself. Tasks that `wait()` runs itself, and spawns their owner
///   runs, are not seen by the pool's hooks or statistics, as with
///   `caller_runs_policy`; they run even on a paused pool.
/// - Failures: the first exception of a task, or the reason the pool gave
///   for not running one, is rethrown by `wait()`. A task the RejectPolicy
///   discarded gives `rejected_execution_error`; one destroyed unrun (say,
///   in the list `shutdown_now()` returned) gives `cancellation_error`;
///   one `before_execute` refused gives that hook's exception. After
///   `cancel()`, dropped tasks give nothing (dropping is what was asked).
/// - `cancel()` is final, like a cancelled TBB context that is never reset:
///   later `run()` calls do nothing. Make a new group to start again.
///
/// \b Cost: one block per `run()` (the callable and its bookkeeping), from
/// a per-thread recycler (no `malloc` in steady state; a callable over 512
/// bytes is allocated). A spawn takes no shared ownership; its push is one
/// seq_cst store; a group made, forked and waited for on one worker takes no
/// lock and makes no condition variable;
/// from outside, the pool's task is 8 bytes and stored inline. A group that
/// hands out a `std::stop_token` allocates its stop state once.
///
/// \b Thread safety: every member may be called from any thread, including
/// the group's own tasks, except that `wait()` must not be called from one of
/// this group's own tasks (it would wait for itself), and no call may overlap
/// the destructor. No member takes a lock on the common paths: the group's
/// own mutex is taken only by a `wait()` that must sleep (and whoever wakes
/// it), to record a failure, and to make or reach the stop source.
/// The executor must outlive the group.
template <class Executor = any_executor>
class task_group {
    static constexpr bool by_handle = std::same_as<Executor, any_executor>;
    static_assert(requires(Executor& ex, detail::group_trampoline t) { ex.execute(std::move(t)); },
                  "crew::task_group: Executor must have execute(callable): a crew::basic_executor or crew::any_executor");

  public:
    /// The type of the executor the group's tasks run on.
    using executor_type = Executor;

    /// A group whose tasks run on `ex`, which must outlive the group.
    explicit task_group(Executor& ex) noexcept
        requires(!by_handle)
        : executor_(std::addressof(ex)) {}

    /// A group whose tasks run on the pool `ex` refers to (any pool converts
    /// to `any_executor`); the pool must outlive the group.
    explicit task_group(any_executor ex) noexcept
        requires(by_handle)
        : executor_(ex) {}

    task_group(const task_group&) = delete;
    task_group& operator=(const task_group&) = delete;

    /// Waits as `wait()` does (helping), but does not rethrow: call `wait()`
    /// first to hear of failures.
    ~task_group() { core_.wait_all(); }

    /// Runs `fn()`, or `fn(token)` with the group's `std::stop_token`, as a
    /// task of the executor. A task may `run` more tasks in its own group.
    /// Throws `std::invalid_argument` if `fn` is empty (null pointer, empty
    /// `std::function`); whatever the executor's `execute` throws
    /// (`abort_policy`: `rejected_execution_error`), with the group left as
    /// if `fn` had never been run. Does nothing once the group is cancelled.
    /// Lock-free (apart from the executor's own `execute`).
    template <class F>
    void run(F&& fn) {
        using D = std::decay_t<F>;
        static_assert(std::invocable<D&> || std::invocable<D&, std::stop_token>,
                      "crew::task_group::run: fn must be callable as fn() or fn(std::stop_token)");
        if (detail::is_empty_callable(fn)) throw std::invalid_argument("crew::task_group::run: fn is empty");
        if (core_.is_cancelled()) return;
        if (detail::worker_context* const w = spawning_worker()) {
            detail::spawn_deque& d = detail::spawns_of(*w);
            if (core_.knows_deque(d)) {
                auto* e = new detail::group_entry_with<D>(core_, detail::entry_route::spawned, std::forward<F>(fn));
                core_.add_spawned();
                bool ticket_out;
                try {
                    ticket_out = detail::spawn(d, e);
                } catch (...) { // out of memory growing the deque: as if never run
                    core_.drop_claimed(*e, nullptr);
                    e->release();
                    throw;
                }
                if (ticket_out || d.pop() != e) { // on its deque with a ticket out, or taken already
                    core_.spawned();
                    return;
                }
                // The pool had no room for a ticket: through the pool after
                // all, its RejectPolicy deciding (detail/work_stealing/spawn.hpp, spawn).
                core_.readd_as_trampoline(e);
                submit(e);
                return;
            }
        }
        auto* e = new detail::group_entry_with<D>(core_, detail::entry_route::trampoline, std::forward<F>(fn));
        core_.add(e);
        submit(e);
    }

    /// Returns once every task `run` so far has finished or been dropped:
    /// runs the ones no one has started yet on this thread, helps on a pool's
    /// worker (see the class comment), and sleeps until the rest finish. Rethrows the first failure since the previous
    /// `wait()` (see the class comment), once. Must not be called from one of
    /// this group's own tasks. Concurrent calls are allowed.
    void wait() {
        core_.wait_all();
        if (std::exception_ptr error = core_.take_error()) std::rethrow_exception(error);
    }

    /// Tasks not yet started never run (the group drops them; the pool's
    /// trampolines for them find nothing to do); running ones see stop
    /// requested on the token they were given; later `run()` calls do
    /// nothing. Idempotent. Lock-free apart from one short lock to reach the
    /// stop source, which is released before stop callbacks run.
    void cancel() { core_.cancel(); }

    /// True after `cancel()`. Lock-free.
    bool is_cancelled() const noexcept { return core_.is_cancelled(); }

    /// Tasks run but neither finished nor dropped yet. Lock-free; a snapshot.
    std::size_t pending() const noexcept { return core_.pending(); }

    /// Tasks that ran to the end (returned or threw); dropped ones are not
    /// counted. Lock-free; a snapshot, exact once `wait()` has returned.
    std::size_t completed() const noexcept { return core_.completed(); }

    /// The executor the group's tasks run on.
    Executor& executor() noexcept {
        if constexpr (by_handle) return executor_;
        else return *executor_;
    }

  private:
    // The calling thread's worker record if it is the worker of the
    // executor's that made this group (fork-join: a task forks, then
    // waits) and the executor still takes tasks: then run() spawns
    // (detail/work_stealing/spawn.hpp). Otherwise null: run() goes through execute().
    detail::worker_context* spawning_worker() const noexcept {
        detail::worker_context* const w = detail::current_worker;
        if (w == nullptr || w != core_.home() || w->post_ticket == nullptr || w->pool_destroyed) return nullptr;
        if constexpr (by_handle) {
            if (w->pool != executor_.pool_address() || executor_.is_shutdown()) return nullptr;
        } else if constexpr (requires { executor_->is_shutdown(); }) {
            if (w->pool != static_cast<const void*>(executor_) || executor_->is_shutdown()) return nullptr;
        } else {
            return nullptr;
        }
        return w;
    }

    // Hands `e`'s trampoline to the executor. A trampoline that dies unrun
    // inside this very call tells us so (entry_being_submitted becomes null)
    // instead of recording cancellation_error: if execute() threw, the throw
    // is the answer; if it returned, the pool dropped the task silently.
    void submit(detail::group_entry* e) {
        bool dropped;
        {
            const detail::scoped_record<detail::group_entry*> being_submitted(detail::entry_being_submitted, e);
            executor().execute(detail::group_trampoline(e));
            dropped = detail::entry_being_submitted == nullptr;
        }
        if (dropped)
            core_.report(detail::group_trampoline::make_error<cancellation_error>(
                "crew: task_group task destroyed unrun by the executor"));
    }

    std::conditional_t<by_handle, any_executor, Executor*> executor_;
    detail::task_group_core core_;
};

/// Runs `fn()` on the calling thread and returns what it returns (TBB's
/// `this_task_arena::isolate`). While `fn` runs, a wait inside it
/// (`task_group::wait()`, `parallel_for`, `future::get()` and `wait()` on a
/// pool's worker) runs only task_group tasks that this thread spawned inside
/// `fn`: never a queued task of the pool, nor one spawned before or around
/// it. So a task nested in such a wait cannot be one that blocks until the
/// waiter goes on (see doc/composition.md, "Helping"). Regions nest; tasks
/// spawned inside `fn` still run on other workers as usual.
template <class F>
decltype(auto) isolate(F&& fn) {
    static_assert(std::invocable<F&&>, "crew::isolate: fn must be callable with no arguments");
    const char region = 0; // its address names the region
    const detail::scoped_record<const void*> inside(detail::current_isolation, &region);
    return std::invoke(std::forward<F>(fn));
}

/// `crew::task_group g(pool)` holds `pool` by reference.
template <class Executor>
task_group(Executor&) -> task_group<Executor>;
/// `crew::task_group g(handle)` holds the handle by value.
task_group(any_executor) -> task_group<any_executor>;

} // namespace crew

#endif
