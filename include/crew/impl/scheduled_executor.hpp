#ifndef CREW_IMPL_SCHEDULED_EXECUTOR_HPP
#define CREW_IMPL_SCHEDULED_EXECUTOR_HPP

// The scheduled executor of crew::basic_executor (Java's
// ScheduledThreadPoolExecutor), instantiated only when the QueuePolicy is a
// scheduling queue (delayed_queue): schedule*, delayed_execute, the shutdown
// policies, a periodic task's next run, and cancellation through pool_link.
//
// Included at the end of <crew/basic_executor.hpp>, whose class body declares
// (and documents) every member defined here; including this file alone
// includes that header first.

#include <crew/basic_executor.hpp>

#include <cassert>

namespace crew {

// The link scheduled futures keep to this pool (detail/future/pool_link.hpp): it
// forwards a cancel to scheduled_task_cancelled, and the pool cuts it as
// it dies.
template <class Q, class R, class TF, class L>
struct basic_executor<Q, R, TF, L>::cancel_link final : detail::pool_link {
    explicit cancel_link(basic_executor& p) noexcept : pool(p) {}
    basic_executor& pool;
    void on_cancelled(const std::unique_lock<std::recursive_mutex>& held, schedule_slot& slot) noexcept override {
        pool.scheduled_task_cancelled(held, slot);
    }
};
// Holds the pool's entry in the link table, and cuts the link when the
// pool dies. The last member, so it is destroyed first.
template <class Q, class R, class TF, class L>
struct basic_executor<Q, R, TF, L>::link_holder {
    explicit link_holder(basic_executor& p) : link(p), registration(link) {}
    cancel_link link;
    detail::link_registration registration; // after `link`: cut before it dies
};

// TryOnly (try_submit): a refused task is not rejected but destroyed (its
// state cancelled), and the answer is an optional, empty then.
template <class Q, class R, class TF, class L>
template <bool TryOnly, class F>
auto basic_executor<Q, R, TF, L>::schedule_once(detail::clock::time_point due, F&& f) {
    using D = std::decay_t<F>;
    static_assert(std::invocable<D&> || std::invocable<D&, std::stop_token>,
                  "crew: schedule() needs a callable as f() or f(std::stop_token)");
    using result = detail::task_result_t<D>;
    using base = detail::scheduled_state<result>;
    if (detail::is_empty_callable(f)) throw std::invalid_argument("crew: schedule() needs a non-empty callable");
    auto* state = new detail::future_state_with<result, D, base>(std::forward<F>(f), due, link_.registration.ticket());
    scheduled_future<result> handle(state);
    task t(detail::future_task<result, D, base>(state, this));
    const bool queued =
        delayed_execute([&] { return queue_.schedule(std::move(t), state->due(), &state->slot(), false); });
    if constexpr (TryOnly) {
        using answer = std::optional<scheduled_future<result>>;
        return queued ? answer(std::move(handle)) : answer(); // refused: `t` dies on return, unrun
    } else {
        if (!queued) reject(std::move(t));
        return handle;
    }
}

template <class Q, class R, class TF, class L>
template <class F>
scheduled_future<void> basic_executor<Q, R, TF, L>::schedule_periodic(detail::clock::time_point first,
                                                                      std::chrono::nanoseconds period,
                                                                      detail::period_kind kind, F&& f,
                                                                      periodic_options options) {
    using D = std::decay_t<F>;
    static_assert(std::invocable<D&> || std::invocable<D&, std::stop_token>,
                  "crew: a periodic task needs a callable as f() or f(std::stop_token)");
    if (detail::is_empty_callable(f)) throw std::invalid_argument("crew: schedule() needs a non-empty callable");
    auto* state =
        new typename detail::periodic_task<D>::state_type(std::forward<F>(f), first, link_.registration.ticket());
    scheduled_future<void> handle(state);
    task t(detail::periodic_task<D>(state, this, period, kind, options));
    if (!delayed_execute([&] { return queue_.schedule(std::move(t), state->due(), &state->slot(), true); }))
        reject(std::move(t));
    return handle;
}

// Java's delayedExecute(): queue first, then make sure a worker exists. The
// queue refuses once closed by shutdown, which then applies its policies to
// whatever got in before: so a task is either queued and handled by those
// policies, or refused here.
// `queue()` queues the task (the queue's schedule, or offer for a task due
// now: execute()), false if refused. An elastic pool (maximum above core)
// may then start one more worker, if every worker is busy.
template <class Q, class R, class TF, class L>
template <class Queue>
bool basic_executor<Q, R, TF, L>::delayed_execute(Queue queue) {
    if (!enqueue_counted([&] { return !is_shutdown() && queue(); })) return false;
    // A worker just started is not waiting yet: growing for it would be spurious.
    if (!ensure_prestart()) grow_if_all_busy();
    return true;
}

// Java's ensurePrestart(): a delayed task is never given to a new worker
// directly (it may not be due), so start one to wait for the queue.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::ensure_prestart() {
    const auto workers = detail::ctl::worker_count_of(ctl_.load());
    task none;
    if (workers < core_pool_size_.load()) return add_worker(none, true);
    if (workers == 0) return add_worker(none, false);
    return false;
}

// The scheduling members below are instantiated only for a scheduling queue:
// the thread pool reaches them through the hooks above, cancel() through
// pool_link.

// Java's onShutdown(): take out what the shutdown policies say must not
// run. The caller calls try_terminate(), then lets the tasks die (their
// futures then report cancellation_error) after its last use of the pool:
// one of them may own it.
template <class Q, class R, class TF, class L>
std::vector<task> basic_executor<Q, R, TF, L>::drop_after_shutdown() {
    std::vector<task> dropped = queue_.on_shutdown();
    if (!dropped.empty()) count_out_unrun(dropped.size());
    return dropped;
}

// A shutdown policy turned off after shutdown applies at once, as in Java
// (onShutdown runs again).
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::apply_shutdown_policies() {
    if (!is_shutdown()) return;
    const std::vector<task> dropped = drop_after_shutdown();
    try_terminate();
}

// Java's canRunInCurrentRunState() for a periodic task.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::periodic_may_run() const noexcept {
    const auto c = ctl_.load();
    if (detail::ctl::is_running(c)) return true;
    return detail::ctl::run_state_less_than(c, detail::ctl::stop) && queue_.continue_periodic_after_shutdown();
}

// Takes the task `slot` names out of the queue, if it is there: its future is
// cancelled, and the pool may now be able to terminate.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::drop_queued(schedule_slot& slot) noexcept {
    const task removed = queue_.remove(slot); // dies last, on return: it may own the pool
    if (!removed) return;
    count_out_unrun(1);
    try_terminate();
}

// A scheduled future was cancelled. With remove_on_cancel its task leaves the
// queue now; so it does after shutdown whatever the setting, so that a
// cancelled task far in the future cannot hold up termination.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::scheduled_task_cancelled(
    [[maybe_unused]] const std::unique_lock<std::recursive_mutex>& held, schedule_slot& slot) noexcept {
    assert(held.owns_lock() && "crew: a cancel reaches the pool under its link entry's mutex");
    if (queue_.remove_on_cancel() || is_shutdown()) drop_queued(slot);
}

// Java's reExecutePeriodic(), called by the worker that just ran `t`. A
// periodic task that asks for its next run goes back into the queue, even
// though the queue is closed after shutdown when
// continue_periodic_after_shutdown says so. The queue refuses a task whose
// future is cancelled (it checks under its lock, so a racing cancel() either
// finds the task queued or is seen). If the pool refuses, `t` stays here and
// dies in run_task, cancelling its future. If shutdown came between the check
// and the queueing, its sweep of the queue may have missed the task: sweep
// again. A failure to queue (std::bad_alloc) goes to the task's future; one
// after it is queued (starting a worker, sweeping) is reported.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::requeue_if_periodic(task& t) noexcept {
    const detail::next_run_request next = t.next_run();
    if (!next || !periodic_may_run()) return;
    try {
        if (!enqueue_counted([&] { return queue_.requeue(std::move(t), next.due, *next.slot); })) return;
    } catch (...) {
        t.abandon(std::current_exception(), true);
        return;
    }
    try {
        if (periodic_may_run()) {
            ensure_prestart();
            return;
        }
        // After shutdown_now() the queue refuses a requeue once drained, so a
        // task queued here was drained and handed back by it: nothing to do
        // (draining here would take the other tasks from its caller).
        std::vector<task> dropped; // dies last: it may own the pool
        if (!detail::ctl::run_state_at_least(ctl_.load(), detail::ctl::stop)) dropped = drop_after_shutdown();
        try_terminate();
    } catch (...) {
        detail::report_escaped_exception(std::current_exception(), "a periodic task's next run");
    }
}

// ---- hooks: what a scheduled pool adds to the thread pool's steps ----------------
//
// The thread pool (impl/thread_pool.hpp, lifecycle.hpp) calls these where
// Java's ScheduledThreadPoolExecutor overrides a ThreadPoolExecutor method or
// hook; for any other queue they are no-ops (or the thread pool's default),
// and compile to nothing.

// Java's ScheduledThreadPoolExecutor.execute(): schedule(t, 0). A scheduled
// pool queues even "due now" tasks, so that they run in due order behind
// those already due: its queue's offer() means "due now" (delayed_queue keeps
// such tasks in a FIFO beside the heap, taken after any heap task already due).
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::schedule_now(task& t) {
    return delayed_execute([&] { return queue_.offer(std::move(t)); });
}

// Java's STPE overrides execute as schedule(t, 0); any other pool runs
// ThreadPoolExecutor's (impl/thread_pool.hpp).
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::try_execute(task& t) {
    if constexpr (is_scheduling) return schedule_now(t);
    else return thread_pool_execute(t);
}

// sized(0): a scheduled pool of 0 is Java's newScheduledThreadPool(0), core
// 0 and maximum 1; any other pool needs a thread.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::size_for_no_threads(pool_options& options) {
    if constexpr (is_scheduling) options.maximum_pool_size = 1;
    else throw std::invalid_argument("crew: threads must be positive (got 0)");
}

// get_task took a task.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::on_task_taken() {
    if constexpr (is_scheduling) grow_if_all_busy();
}

// run_task ran `t` (Java: ScheduledFutureTask.run() calls reExecutePeriodic).
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::after_run([[maybe_unused]] task& t) noexcept {
    if constexpr (is_scheduling) requeue_if_periodic(t);
}

// Java's onShutdown(): the tasks the shutdown policies drop, for shutdown()
// to destroy after its last use of the pool.
template <class Q, class R, class TF, class L>
std::vector<task> basic_executor<Q, R, TF, L>::on_shutdown() {
    if constexpr (is_scheduling) return drop_after_shutdown();
    else return {};
}

// get_task's keep-alive exit with tasks queued (may_leave): another worker
// waits for them. A scheduled pool must keep one waiting, or nobody would
// notice the head falling due while the others are busy; any other pool: true.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::may_leave_waiters() const noexcept {
    if constexpr (is_scheduling) return queue_.has_idle_consumer();
    else return true;
}

// An elastic scheduled pool starts one more worker, up to its maximum, when
// tasks wait and no worker waits for them: a task falling due while every
// worker is busy then runs on time. With maximum == core (Java's STPE) this
// is two loads. Not while paused: workers would only hold tasks.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::grow_if_all_busy() {
    const auto workers = detail::ctl::worker_count_of(ctl_.load());
    if (workers >= maximum_pool_size_.load() || workers < core_pool_size_.load()) return;
    if (paused_.load() || queue_.size() == 0 || queue_.has_idle_consumer()) return;
    // "No worker is idle": none waits in the queue (above), and none is
    // between tasks or just started and not yet waiting (it will take the
    // task, or watch the clock for it). The caller, if it is a worker of this
    // pool, has just taken a task: it does not count. Only elastic pools
    // below their maximum with nobody waiting get here.
    {
        const void* self = detail::current_worker && detail::current_worker->pool == this
                               ? detail::current_worker->worker
                               : nullptr;
        unique_lock lock(main_lock_);
        for (const worker& w : workers_)
            if (&w != self && !w.running.load()) return;
    }
    task none;
    add_worker(none, false);
}

} // namespace crew

#endif
