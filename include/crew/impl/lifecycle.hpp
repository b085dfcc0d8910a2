#ifndef CREW_IMPL_LIFECYCLE_HPP
#define CREW_IMPL_LIFECYCLE_HPP

// The lifecycle of crew::basic_executor (Java's ThreadPoolExecutor, its
// shutdown half): shutdown, shutdown_now, the waits (await_termination,
// wait_idle), termination (try_terminate, closing the queue, interrupting
// workers), and destruction, which joins every worker, runs what no worker
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

// ---- termination --------------------------------------------------------------

// Java's tryTerminate(): moves to TERMINATED once shut down with no workers
// (and, unless stopped, an empty queue). While workers remain, it wakes one
// idle worker so that the shutdown signal propagates.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::try_terminate() {
    for (;;) {
        auto c = ctl_.load();
        if (detail::ctl::is_running(c) || detail::ctl::run_state_at_least(c, detail::ctl::tidying) ||
            (detail::ctl::run_state_less_than(c, detail::ctl::stop) && (!queue_closed_.load() || queue_.size() != 0)))
            return;
        if (detail::ctl::worker_count_of(c) != 0) {
            interrupt_idle_workers(true);
            return;
        }
        {
            unique_lock lock(main_lock_);
            if (!ctl_.compare_exchange_strong(c, detail::ctl::of(detail::ctl::tidying, 0))) continue;
        }
        // Outside the lock, so that the hook may query the pool.
        if (on_terminated_) {
            try {
                on_terminated_();
            } catch (...) {
                detail::report_escaped_exception(std::current_exception(), "on_terminated");
            }
        }
        {
            unique_lock lock(main_lock_);
            ctl_.store(detail::ctl::of(detail::ctl::terminated, 0));
        }
        state_changed_.notify_all();
        return;
    }
}

// A producer that read RUNNING may still offer after the state changed, until
// the queue is closed; try_terminate() waits for queue_closed_ so that "the
// queue is empty" cannot be undone behind its back.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::close_queue() {
    queue_.close();
    queue_closed_.store(true);
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::advance_run_state(detail::ctl::word target) {
    for (auto c = ctl_.load();;) {
        if (detail::ctl::run_state_at_least(c, target) ||
            ctl_.compare_exchange_weak(c, detail::ctl::of(target, detail::ctl::worker_count_of(c))))
            return;
    }
}

// Java's interruptIdleWorkers(). Java flags only the workers whose lock it
// can take, because its interrupt reaches the running task's thread. crew's
// flag is read by get_task alone (a task sees only its stop token, which
// shutdown_now requests), so flagging a busy worker disturbs nothing: it
// loops once more in get_task after its task. So every worker is flagged
// (only_one: an idle one if any). Choosing by w.running instead would race
// with a worker that has just finished: its store of `running` and its read
// of the run state against our run-state change and our read of `running`,
// each could miss the other's, and the worker would sleep through shutdown.
// Only waiting workers sleep on the queue, so the wake-up reaches idle
// workers only.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::interrupt_idle_workers(bool only_one) {
    {
        unique_lock lock(main_lock_);
        if (only_one) {
            if (!workers_.empty()) {
                auto idle = std::find_if(workers_.begin(), workers_.end(),
                                         [](const worker& w) { return !w.running.load(); });
                (idle != workers_.end() ? *idle : workers_.front()).interrupted.store(true);
            }
        } else {
            for (worker& w : workers_) w.interrupted.store(true);
        }
    }
    queue_.wake_consumers();
}

// Java's interruptWorkers(), for shutdown_now(): every worker, busy or not;
// running tasks see their stop token requested.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::interrupt_workers() {
    {
        unique_lock lock(main_lock_);
        for (worker& w : workers_) {
            w.interrupted.store(true);
            w.stop.request_stop();
        }
    }
    queue_.wake_consumers();
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
    for (task t; get_task(self, t);) run_one(self, t, context, without_own_spawns);
    // get_task returned false, so this worker is no longer counted.
    hooks::on_worker_exit(*this);
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
