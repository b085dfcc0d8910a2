#ifndef CREW_IMPL_THREAD_POOL_HPP
#define CREW_IMPL_THREAD_POOL_HPP

// The thread pool of crew::basic_executor (Java's ThreadPoolExecutor): the
// three steps of execute, the workers' life (add_worker, run_worker,
// get_task, process_worker_exit) and running one task. Shutdown,
// termination, the waits and destruction are in impl/lifecycle.hpp, pausing
// in impl/pause.hpp, what a scheduled pool adds in
// impl/scheduled_executor.hpp, what a queue's traits add in
// impl/queue_hooks.hpp.
// ctl (detail/ctl.hpp) packs the run state and the worker count into one
// atomic word, as Java's ctl does.
//
// Included at the end of <crew/basic_executor.hpp>, whose class body declares
// (and documents) every member defined here; including this file alone
// includes that header first.

#include <crew/basic_executor.hpp>

namespace crew {

// ---- construction -------------------------------------------------------------

template <class Q, class R, class TF, class L>
basic_executor<Q, R, TF, L>::basic_executor(pool_options options, TF factory, R reject)
    : thread_factory_(std::move(factory)), reject_policy_(std::move(reject)),
      queue_((validate(options.core_pool_size, options.maximum_pool_size, options.keep_alive,
                       options.allow_core_thread_timeout),
              options)),
      before_execute_(std::move(options.before_execute)), after_execute_(std::move(options.after_execute)),
      on_terminated_(std::move(options.on_terminated)), core_pool_size_(options.core_pool_size),
      maximum_pool_size_(options.maximum_pool_size), keep_alive_ns_(options.keep_alive.count()),
      allow_core_thread_timeout_(options.allow_core_thread_timeout) {
    if (options.task_observer) set_task_observer(std::move(options.task_observer));
}

// A pool of `threads` workers (0: size_for_no_threads decides).
template <class Q, class R, class TF, class L>
pool_options basic_executor<Q, R, TF, L>::sized(std::size_t threads) {
    pool_options options = detail::default_options_for<Q>();
    options.core_pool_size = options.maximum_pool_size = threads;
    if (threads == 0) size_for_no_threads(options);
    return options;
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::validate(std::size_t core, std::size_t maximum, std::chrono::nanoseconds keep_alive,
                                           bool core_timeout) {
    using std::to_string;
    if (maximum == 0) throw std::invalid_argument("crew: maximum_pool_size must be positive");
    if (core > maximum)
        throw std::invalid_argument("crew: core_pool_size (" + to_string(core) +
                                    ") must not exceed maximum_pool_size (" + to_string(maximum) + ")");
    if (keep_alive < std::chrono::nanoseconds::zero())
        throw std::invalid_argument("crew: keep_alive must not be negative");
    if (core_timeout && keep_alive == std::chrono::nanoseconds::zero())
        throw std::invalid_argument("crew: keep_alive must be positive when allow_core_thread_timeout is set");
}

// ---- execute ------------------------------------------------------------------

// Java's ThreadPoolExecutor.execute(): (1) below core, start a worker with the
// task; (2) else queue it; (3) else start a non-core worker; (4) else refuse.
// Where Java re-checks the state after offering and removes the task, crew's
// queues are closed by shutdown, so an offer after shutdown fails instead: a
// task is either queued before the close (and will run) or refused. A
// scheduled pool's try_execute is STPE's instead (impl/scheduled_executor.hpp);
// the queue's hooks (impl/queue_hooks.hpp) add grow_first_queue's steps.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::thread_pool_execute(task& t) {
    // Counted before it becomes visible to workers, so that the count of
    // completed tasks never overtakes it (wait_idle relies on that).
    submitted_.fetch_add(1, std::memory_order_relaxed);
    auto c = ctl_.load();
    // Paused: no worker gets the task directly; it waits in the queue (and
    // a pool below its core size gets an idle worker, after the offer).
    const bool below_core = detail::ctl::worker_count_of(c) < core_pool_size_.load();
    if (below_core) {
        if (!paused_.load() && add_worker(t, true)) return true;
        c = ctl_.load();
    } else if (hooks::before_queueing(*this, t, c)) {
        return true;
    }
    if (detail::ctl::is_running(c) && !full_counting_held() &&
        enqueue_precounted([&] { return queue_.offer(std::move(t)); })) {
        // Only a pool that was below its core size reads the flag here;
        // add_worker re-checks the count.
        if (below_core && paused_.load(std::memory_order_relaxed)) {
            task none;
            add_worker(none, true);
        }
        hooks::after_queued(*this);
        ensure_worker_for_queue();
        return true;
    }
    if (!paused_.load() && add_worker(t, false)) return true;
    count_out_unrun(1);
    return false;
}

// Runs `enqueue`, which says whether the queue took a task already counted
// in submitted_. If it throws (out of memory: the queues then leave the task
// with the caller), the count is undone.
template <class Q, class R, class TF, class L>
template <class Enqueue>
bool basic_executor<Q, R, TF, L>::enqueue_precounted(Enqueue enqueue) {
    try {
        return enqueue();
    } catch (...) {
        count_out_unrun(1);
        throw;
    }
}

// Counts a task as submitted, then enqueues it; a task the queue did not
// take (or threw on) is counted out again.
template <class Q, class R, class TF, class L>
template <class Enqueue>
bool basic_executor<Q, R, TF, L>::enqueue_counted(Enqueue enqueue) {
    submitted_.fetch_add(1, std::memory_order_relaxed);
    const bool queued = enqueue_precounted(enqueue);
    if (!queued) count_out_unrun(1);
    return queued;
}

template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::discard_oldest_queued() {
    task oldest;
    if (!remove_oldest_queued(oldest)) return false;
    oldest.reject();
    return true;
}

template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::remove_oldest_queued(task& oldest) {
    if (!queue_.poll(oldest)) return false;
    count_out_unrun(1);
    return true;
}

template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::put_until(task& t, std::chrono::steady_clock::time_point deadline) {
    if (is_shutdown()) return false;
    if (!enqueue_counted([&] { return hooks::put_in_queue(*this, t, deadline); })) return false;
    ensure_worker_for_queue();
    return true;
}

// Java's re-check after offer: a task just queued needs a worker, and the
// last one may have left meanwhile. Only while tasks are queued, so that
// resume() (which the destructor calls) starts no worker for an empty queue.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::ensure_worker_for_queue() {
    if (detail::ctl::worker_count_of(ctl_.load()) == 0 && queue_.size() != 0) {
        task none;
        add_worker(none, false);
    }
}

// ---- workers ------------------------------------------------------------------

// Java's addWorker(). The count is raised first by CAS (so that concurrent
// callers respect the bounds), then the thread is made. A std::thread runs as
// soon as it exists, so the new thread waits on `start` until the worker is
// registered, or is told to abandon if the pool shut down meanwhile. On every
// failure `first_task` is left with the caller.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::add_worker(task& first_task, bool core) {
    for (auto c = ctl_.load();;) {
        if (detail::ctl::run_state_at_least(c, detail::ctl::shutdown) &&
            (detail::ctl::run_state_at_least(c, detail::ctl::stop) || first_task || queue_.size() == 0))
            return false;
        const auto limit = std::min<std::uint64_t>(core ? core_pool_size_.load() : maximum_pool_size_.load(),
                                                    detail::ctl::count_mask);
        if (detail::ctl::worker_count_of(c) >= limit) return false;
        if (ctl_.compare_exchange_weak(c, c + 1)) break;
        // c was reloaded; loop re-checks both the run state and the count.
    }

    std::list<worker> fresh;
    worker* w = nullptr;
    try {
        w = &fresh.emplace_back();
        w->thread = thread_factory_.new_thread(task([this, w] { worker_main(*w); }));
    } catch (...) {
        // The factory refused (or memory ran out): as Java's thread == null.
    }
    if (!w || !w->thread.joinable()) {
        add_worker_failed();
        return false;
    }

    bool registered = false, took_task = false;
    {
        unique_lock lock(main_lock_);
        const auto c = ctl_.load();
        // Java registers the worker only if it may run its first task. But if
        // the pool shut down since the count was raised, tasks may have queued
        // behind this worker; dropping it could leave them with no worker at
        // all. So in SHUTDOWN it is kept without the task (which goes back to
        // the caller, to be rejected) as long as there is something to drain.
        if (detail::ctl::is_running(c) || (detail::ctl::run_state_less_than(c, detail::ctl::stop) &&
                                          (!first_task || queue_.size() != 0))) {
            took_task = detail::ctl::is_running(c) || !first_task;
            if (took_task) w->first_task = std::move(first_task);
            workers_.splice(workers_.end(), fresh);
            w->self = std::prev(workers_.end());
            largest_pool_size_ = std::max(largest_pool_size_, live_worker_count(lock));
            registered = true;
        }
    }
    w->start.store(registered ? worker::go : worker::abandon, std::memory_order_release);
    w->start.notify_one();
    if (!registered) {
        w->thread.join();
        add_worker_failed();
    }
    return took_task;
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::add_worker_failed() {
    decrement_worker_count();
    try_terminate();
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::worker_main(worker& w) {
    int signal;
    while ((signal = w.start.load(std::memory_order_acquire)) == worker::pending)
        w.start.wait(worker::pending, std::memory_order_acquire);
    if (signal == worker::go) run_worker(w);
}

// Java's runWorker(). Unlike Java, an exception escaping a task does not kill
// the worker: the pool keeps its size without replacing threads.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::run_worker(worker& w) {
    detail::worker_context context{this, &w, w.stop.get_token()};
    context.help_one = &help_one;
    context.post_ticket = &post_spawn_ticket;
    detail::current_worker = &context;
    task t = std::move(w.first_task);
    bool completed_abruptly = true;
    try {
        hooks::on_worker_start(*this);
        while (t || get_task(w, t)) {
            CREW_SEAM(worker_took_task);
            // Acquire (free on x86): a task offered after pause() is taken
            // through the queue's acquire, which brings pause()'s store, so a
            // false read here is resume()'s store, and this acquire makes
            // whatever resume()'s caller did before it visible to the task
            // (resume() happens-before every task it releases; a held task
            // gets the same through main_lock_).
            if (paused_.load(std::memory_order_acquire)) {
                hold_while_paused(w, t);
                if (!t) continue; // shutdown_now() took it
            }
            if (!run_one(w, t, context, with_own_spawns)) { // the task, or a spawn, destroyed the pool
                detail::retire_spawns(context);
                detail::current_worker = nullptr;
                return;
            }
        }
        completed_abruptly = false;
    } catch (...) {
        // Only the pool's own machinery can get here (say, a queue that ran
        // out of memory); the worker leaves and process_worker_exit replaces it.
        detail::report_escaped_exception(std::current_exception(), "a worker");
    }
    detail::retire_spawns(context);
    detail::current_worker = nullptr;
    hooks::on_worker_exit(*this);
    process_worker_exit(w, completed_abruptly);
}

// A task waiting on this worker (detail/work_stealing/help.hpp: task_group::wait(),
// parallel_for, future::get) runs one queued task of the pool (the worker's
// own part of the queue first, where it has one), with the hooks and counts
// of run_worker's loop; the waiting task is still running afterwards.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::help_one(detail::worker_context& context) {
    auto& pool = *static_cast<basic_executor*>(const_cast<void*>(context.pool));
    worker& w = *static_cast<worker*>(context.worker);
    // Paused: take nothing (the waiter runs its own spawns, which run even
    // on a paused pool, or sleeps). Holding a task here, as run_worker does,
    // would block the waiting task until resume(). A task taken just as
    // pause() comes runs, as one a worker took before the pause does.
    if (pool.paused_.load(std::memory_order_acquire)) return false;
    task t;
    if (!hooks::poll_for_helper(pool, t)) return false;
    pool.on_task_taken();
    if (!pool.run_one(w, t, context, without_own_spawns)) return true; // the task destroyed the pool: context says so
    w.running.store(true, std::memory_order_relaxed); // the waiting task still runs
    return true;
}

// worker_context::post_ticket: one spawn ticket into this pool, through
// try_execute (never the RejectPolicy; a refusal costs nothing but the help
// it would have brought: detail/work_stealing/spawn.hpp).
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::post_spawn_ticket(const void* pool, detail::spawn_deque& deque) {
    return static_cast<basic_executor*>(const_cast<void*>(pool))->try_execute(detail::spawn_ticket(deque));
}

// Runs one task taken by worker `w`, as every path that runs a queued task
// does (run_worker's loop, help_one, destroy_from_own_task): marked running
// (seen through whatever the task publishes), run with the hooks
// (run_task), then, on the worker's own level only, what the task spawned
// and no ticket took (detail/work_stealing/spawn.hpp) while the worker
// still counts as running it, then counted. Returns false if the task or a
// spawn destroyed the pool, in which case nothing of the pool may be touched.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::run_one(worker& w, task& t, detail::worker_context& context, spawns_rule spawns) {
    w.running.store(true, std::memory_order_relaxed);
    if (!run_task(t, context)) return false;
    if (spawns == with_own_spawns && context.spawns) [[unlikely]] {
        detail::run_own_spawns(context);
        if (context.pool_destroyed) return false;
    }
    count_completed(w);
    return true;
}

// Runs one task with the hooks. Requires: the worker marked running. Returns false if the
// task destroyed the pool, in which case nothing of the pool may be touched.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::run_task(task& t, const detail::worker_context& context) {
    // Read once per task: with none set, no clock is read below.
    const auto* const observer = observer_.load(std::memory_order_acquire);
    task_timing timing;
    if (observer) [[unlikely]]
        timing.queued = t.queued_at(); // before the run moves a periodic task's due time
    std::exception_ptr error;
    bool delivered = false; // error already reached a future
    bool before_ok = true;
    if (before_execute_) {
        try {
            before_execute_();
        } catch (...) {
            error = std::current_exception();
            delivered = t.abandon(error, !after_execute_);
            before_ok = false;
        }
    }
    if (before_ok) {
        if (observer) [[unlikely]]
            timing.started = detail::clock::now();
        try {
            error = t.run(static_cast<bool>(after_execute_));
            delivered = error != nullptr;
        } catch (...) {
            error = std::current_exception();
        }
        if (observer) [[unlikely]]
            timing.finished = detail::clock::now();
        if (context.pool_destroyed) return false;
        after_run(t);
    }
    CREW_SEAM(task_ran);
    // The task may own the last reference to the pool: destroying it (here,
    // on every path, never later inside the queue) may run ~basic_executor
    // on this thread, which then sets pool_destroyed; nothing of the pool may
    // be read after that.
    t.reset();
    if (context.pool_destroyed) return false;
    CREW_SEAM(task_destroyed);
    if (after_execute_) {
        try {
            after_execute_(error);
        } catch (...) {
            detail::report_escaped_exception(std::current_exception(), "after_execute");
        }
    } else if (error && !delivered) {
        detail::report_escaped_exception(error, before_ok ? "a task" : "before_execute");
    }
    if (observer) [[unlikely]]
        observe(*observer, timing, before_ok, error != nullptr);
    return true;
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::observe(const std::function<void(const task_timing&)>& observer,
                                          task_timing& timing, bool ran, bool failed) noexcept {
    if (!ran) timing.started = timing.finished = detail::clock::now();
    if (timing.queued == detail::clock::time_point::min()) timing.queued = timing.started; // accepted unstamped
    timing.failed = failed;
    try {
        observer(timing);
    } catch (...) {
        detail::report_escaped_exception(std::current_exception(), "the task observer");
    }
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::set_task_observer(std::function<void(const task_timing&)> observer) {
    unique_lock lock(main_lock_);
    if (!observer) {
        observer_.store(nullptr, std::memory_order_release);
        return;
    }
    observers_.push_front(std::move(observer));
    observer_.store(&observers_.front(), std::memory_order_release);
}

// The worker is marked idle before its count rises, so that a wait_idle()
// that sees the count also sees the worker idle. Both are plain stores to the
// worker's own line; asymmetric_fence::light() (free on Linux) orders them
// before the look for wait_idle() callers, whose heavy() fence pairs with it.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::count_completed(worker& w) {
    w.running.store(false, std::memory_order_release);
    w.completed_tasks.store(w.completed_tasks.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    detail::asymmetric_fence::light();
    if (idle_waiters_.load(std::memory_order_relaxed) != 0) notify_idle_waiters();
}

// Java's getTask(): false means "exit", and the worker count has then
// already been decremented.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::get_task(worker& w, task& out) {
    bool timed_out = false;
    for (;;) {
        auto c = ctl_.load();
        if (detail::ctl::run_state_at_least(c, detail::ctl::shutdown) &&
            (detail::ctl::run_state_at_least(c, detail::ctl::stop) || queue_.size() == 0)) {
            decrement_worker_count();
            return false;
        }
        const auto wc = detail::ctl::worker_count_of(c);
        const bool timed = allow_core_thread_timeout_.load() || wc > core_pool_size_.load();
        // Never let the last worker go while tasks are queued. On a
        // scheduled pool, nor the last one waiting for them while the others
        // are busy: nobody else would notice the head falling due.
        const bool over_maximum = wc > maximum_pool_size_.load();
        if ((over_maximum || (timed && timed_out)) && hooks::may_leave(*this, wc, over_maximum)) {
            CREW_SEAM(worker_may_leave);
            if (ctl_.compare_exchange_strong(c, c - 1)) return false;
            continue;
        }
        const wait_status status = timed
                                       ? queue_.poll_until(out, detail::saturating_deadline(keep_alive()), w.interrupted)
                                       : queue_.take(out, w.interrupted);
        if (status == wait_status::taken) {
            on_task_taken();
            return true;
        }
        timed_out = status == wait_status::timed_out;
        if (timed_out) CREW_SEAM(consumer_timed_out);
        if (status == wait_status::interrupted) w.interrupted.store(false);
    }
}

// Java's processWorkerExit(). The exiting worker parks its own std::thread in
// exited_ and joins the one parked there before it, so at most one finished
// thread awaits a join at any time; the destructor joins the last.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::process_worker_exit(worker& w, bool completed_abruptly) {
    if (completed_abruptly) decrement_worker_count();
    std::list<worker> previous;
    {
        unique_lock lock(main_lock_);
        completed_by_exited_ += w.completed_tasks.load();
        previous.splice(previous.end(), exited_);
        exited_.splice(exited_.end(), workers_, w.self);
        // Also for a shutdown_now() waiting for the workers to settle.
        state_changed_.notify_all();
    }
    // From here on `w` may be joined and freed by the next exiting worker or
    // the destructor, but not before this thread ends.
    if (!previous.empty()) previous.front().thread.join();
    try_terminate();

    const auto c = ctl_.load();
    if (detail::ctl::run_state_less_than(c, detail::ctl::stop)) {
        if (!completed_abruptly) {
            std::size_t min = allow_core_thread_timeout_.load() ? 0 : core_pool_size_.load();
            if (min == 0 && queue_.size() != 0) min = 1; // a task slipped in as we left
            if (detail::ctl::worker_count_of(c) >= min && !hooks::task_left_without_worker(*this)) return;
        }
        task none;
        add_worker(none, false);
    }
}

// ---- counting --------------------------------------------------------------------

// `n` tasks counted in submitted_ leave without running (refused, removed,
// drained, dropped): they come off task_count(), and a wait_idle() may be done.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::count_out_unrun(std::uint64_t n) {
    submitted_.fetch_sub(n);
    if (idle_waiters_.load() != 0) notify_idle_waiters();
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::notify_idle_waiters() {
    { unique_lock lock(main_lock_); }
    state_changed_.notify_all();
}

template <class Q, class R, class TF, class L>
std::uint64_t basic_executor<Q, R, TF, L>::completed(const unique_lock& held) const {
    detail::assert_held(held, main_lock_);
    std::uint64_t total = completed_by_exited_;
    for (const worker& w : workers_) total += w.completed_tasks.load();
    return total;
}

} // namespace crew

#endif
