#ifndef CREW_IMPL_LIFECYCLE_HPP
#define CREW_IMPL_LIFECYCLE_HPP

// The lifecycle of crew::basic_executor (Java's ThreadPoolExecutor, its
// shutdown half): shutdown, shutdown_now, the waits (await_termination,
// wait_idle), and destruction, which joins every worker, runs what no worker
// can, and handles a pool destroyed by one of its own tasks.
//
// Included at the end of <crew/basic_executor.hpp>, whose class body declares
// (and documents) every member defined here; including this file alone
// includes that header first.

#include <crew/basic_executor.hpp>

namespace crew {

// ---- lifecycle ----------------------------------------------------------------

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::shutdown() {
    advance_run_state(detail::ctl::shutdown);
    close_queue();
    // The last to be destroyed, on return: a dropped task may own the pool.
    const std::vector<task> dropped = on_shutdown();
    // Tasks queued while the thread factory refused have no worker to drain
    // them; without one the pool could never terminate.
    ensure_worker_for_queue();
    interrupt_idle_workers(false);
    try_terminate();
}

template <class Q, class R, class TF, class L>
std::vector<task> basic_executor<Q, R, TF, L>::shutdown_now() {
    advance_run_state(detail::ctl::stop);
    close_queue();
    interrupt_workers();
    // A paused pool's workers may hold tasks: they were queued first.
    std::vector<task> tasks;
    take_held_tasks(tasks);
    std::vector<task> queued = drain_queue();
    if (tasks.empty()) tasks = std::move(queued);
    else tasks.insert(tasks.end(), std::make_move_iterator(queued.begin()), std::make_move_iterator(queued.end()));
    try_terminate();
    return tasks;
}

// Empties the queue and counts its tasks out of task_count().
template <class Q, class R, class TF, class L>
std::vector<task> basic_executor<Q, R, TF, L>::drain_queue() {
    std::vector<task> tasks = queue_.drain();
    if (!tasks.empty()) count_out_unrun(tasks.size());
    return tasks;
}

template <class Q, class R, class TF, class L>
template <class Rep, class Period>
bool basic_executor<Q, R, TF, L>::await_termination(std::chrono::duration<Rep, Period> timeout) {
    const auto deadline = detail::saturating_deadline(timeout);
    unique_lock lock(main_lock_);
    for (;;) {
        if (is_terminated()) return true;
        if (deadline == detail::clock::time_point::max()) {
            state_changed_.wait(lock);
        } else {
            if (detail::clock::now() >= deadline) return false;
            state_changed_.wait_until(lock, deadline);
        }
    }
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::wait_idle() {
    if (detail::current_worker && detail::current_worker->pool == this)
        throw std::logic_error("crew: wait_idle() called from the pool's own task would wait for itself");
    idle_waiters_.fetch_add(1);
    detail::asymmetric_fence::heavy(); // pairs with count_completed's light()
    {
        unique_lock lock(main_lock_);
        // Completed is read before submitted: a task is counted as submitted
        // before any worker can complete it, so this order never sees more
        // completed than submitted.
        state_changed_.wait(lock, [this, &lock] {
            const auto done = completed(lock);
            return done == submitted_.load();
        });
    }
    idle_waiters_.fetch_sub(1);
}

// ---- destruction --------------------------------------------------------------

// Queued tasks with no worker to run them (the thread factory refused every
// start): run them here rather than lose them.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::run_orphaned_tasks() {
    const interrupt_flag never{false};
    while (detail::ctl::worker_count_of(ctl_.load()) == 0 && queue_.size() != 0) {
        task none;
        if (add_worker(none, false)) break;
        // A delayed task may not be due yet: wait for it, retrying the
        // factory now and then.
        task orphan;
        const auto retry = detail::clock::now() + std::chrono::milliseconds(100);
        if (queue_.poll_until(orphan, retry, never) != wait_status::taken) continue;
        count_out_unrun(1);
        // This thread works for the pool for one task (it may be another
        // pool's worker: give that pool its context back afterwards).
        detail::worker_context here{this, nullptr, {}, false};
        detail::worker_context* const outer = std::exchange(detail::current_worker, &here);
        run_task(orphan, here);
        detail::current_worker = outer;
    }
    try_terminate();
}

template <class Q, class R, class TF, class L>
basic_executor<Q, R, TF, L>::~basic_executor() {
    resume(); // a paused pool's queued tasks run, as after shutdown()
    if (detail::current_worker && detail::current_worker->pool == this) {
        destroy_from_own_task(*detail::current_worker);
        return;
    }
    outstanding_work_.wait_until_none(); // tracked executors (pool_executor.hpp): Asio's outstanding work
    shutdown();
    run_orphaned_tasks();
    join_last_exited_worker();
}

// Waits until the pool is TERMINATED with no worker registered, then joins
// the last exited thread; every earlier one was joined by the one that
// exited after it.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::join_last_exited_worker() {
    std::list<worker> last;
    {
        unique_lock lock(main_lock_);
        state_changed_.wait(lock, [this] { return is_terminated() && workers_.empty(); });
        last.splice(last.end(), exited_);
    }
    if (!last.empty()) last.front().thread.join();
}

// The destructor running inside one of this pool's tasks: this thread keeps
// working as the pool's worker until the queue is drained, leaves the pool,
// waits for the others, and detaches itself; run_worker's frame below sees
// pool_destroyed and returns without touching the pool again.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::destroy_from_own_task(detail::worker_context& context) {
    worker& self = *static_cast<worker*>(context.worker);
    shutdown();
    self.running.store(false, std::memory_order_release);
    for (task t; get_task(self, t);) {
        self.running.store(true, std::memory_order_relaxed);
        run_task(t, context);
        count_completed(self);
    }
    // get_task returned false, so this worker is no longer counted.
    if constexpr (worker_local_queue_policy<Q>) queue_.detach_worker();
    {
        unique_lock lock(main_lock_);
        self.thread.detach();
        workers_.erase(self.self);
    }
    try_terminate();
    join_last_exited_worker();
    context.pool_destroyed = true;
}

} // namespace crew

#endif
