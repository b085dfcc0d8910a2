#ifndef CREW_IMPL_THREAD_POOL_HPP
#define CREW_IMPL_THREAD_POOL_HPP

// The thread pool of crew::basic_executor (Java's ThreadPoolExecutor): the
// three steps of execute, the workers' life (add_worker, run_worker,
// get_task, process_worker_exit) and termination (try_terminate). Shutdown,
// the waits and destruction are in impl/lifecycle.hpp, pausing in
// impl/pause.hpp, what a scheduled pool adds in impl/scheduled_executor.hpp.
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

// A pool of `threads` workers; a scheduled pool of 0 is Java's
// newScheduledThreadPool(0): core 0, maximum 1.
template <class Q, class R, class TF, class L>
pool_options basic_executor<Q, R, TF, L>::sized(std::size_t threads) {
    pool_options options = detail::default_options_for<Q>();
    options.core_pool_size = options.maximum_pool_size = threads;
    if (threads == 0) {
        if constexpr (!is_scheduling) throw std::invalid_argument("crew: threads must be positive (got 0)");
        else options.maximum_pool_size = 1;
    }
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

// Java's execute(): (1) below core, start a worker with the task; (2) else
// queue it; (3) else start a non-core worker; (4) else refuse. Where Java
// re-checks the state after offering and removes the task, crew's queues are
// closed by shutdown, so an offer after shutdown fails instead: a task is
// either queued before the close (and will run) or refused.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::try_execute(task& t) {
    if constexpr (is_scheduling) return schedule_now(t); // STPE's execute is schedule(t, 0)
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
    } else if constexpr (grow_first_queue_policy<Q>) {
        // grow_first_queue: a new worker, unless an idle one will take it.
        if (!paused_.load() && !queue_.has_idle_consumer() && add_worker(t, false)) return true;
        c = ctl_.load();
    }
    if (detail::ctl::is_running(c) && !full_counting_held() &&
        enqueue_precounted([&] { return queue_.offer(std::move(t)); })) {
        if constexpr (grow_first_queue_policy<Q>) CREW_SEAM(grow_first_checked);
        // Only a pool that was below its core size reads the flag here;
        // add_worker re-checks the count.
        if (below_core && paused_.load(std::memory_order_relaxed)) {
            task none;
            add_worker(none, true);
        }
        // grow_first_queue: the idle worker seen above may have been claimed
        // by another task meanwhile; a queued task must not wait while the
        // pool may still grow.
        if constexpr (grow_first_queue_policy<Q>) {
            if (!paused_.load(std::memory_order_relaxed) && queue_.has_unclaimed_task()) {
                task none;
                add_worker(none, false);
            }
        }
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
    const auto enqueue = [&] {
        if constexpr (task_puttable_until<Q>) return queue_.put_until(std::move(t), deadline);
        else if (deadline == detail::clock::time_point::max()) return queue_.put(std::move(t));
        else throw std::logic_error("crew::block_policy: a timeout needs a QueuePolicy with put_until(task&&, deadline)");
    };
    if (!enqueue_counted(enqueue)) return false;
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
        if constexpr (worker_local_queue_policy<Q>) queue_.attach_worker();
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
            w.running.store(true, std::memory_order_relaxed); // seen through whatever the task publishes
            if (!run_task(t, context)) {
                detail::retire_spawns(context);
                detail::current_worker = nullptr; // the task destroyed the pool
                return;
            }
            // What the task spawned and no ticket took (detail/work_stealing/spawn.hpp),
            // while the worker still counts as running it.
            if (context.spawns) [[unlikely]] {
                detail::run_own_spawns(context);
                if (context.pool_destroyed) { // a spawn destroyed the pool
                    detail::retire_spawns(context);
                    detail::current_worker = nullptr;
                    return;
                }
            }
            count_completed(w);
        }
        completed_abruptly = false;
    } catch (...) {
        // Only the pool's own machinery can get here (say, a queue that ran
        // out of memory); the worker leaves and process_worker_exit replaces it.
        detail::report_escaped_exception(std::current_exception(), "a worker");
    }
    detail::retire_spawns(context);
    detail::current_worker = nullptr;
    if constexpr (worker_local_queue_policy<Q>) queue_.detach_worker();
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
    bool taken = false;
    if constexpr (worker_local_queue_policy<Q>) taken = pool.queue_.poll_local(t); // its own part, newest first
    if (!taken && !pool.queue_.poll(t)) return false;
    pool.on_task_taken();
    if (!pool.run_task(t, context)) return true; // the task destroyed the pool: context says so
    pool.count_completed(w);
    w.running.store(true, std::memory_order_relaxed);
    return true;
}

// worker_context::post_ticket: one spawn ticket into this pool, through
// try_execute (never the RejectPolicy; a refusal costs nothing but the help
// it would have brought: detail/work_stealing/spawn.hpp).
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::post_spawn_ticket(const void* pool, detail::spawn_deque& deque) {
    return static_cast<basic_executor*>(const_cast<void*>(pool))->try_execute(detail::spawn_ticket(deque));
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

// grow_first_queue: whether a queued task lacks a waiting consumer, after a
// full fence (false for every other queue). Asked twice: by may_leave, before
// a timed-out worker's count goes down, and by process_worker_exit, after.
// A task queued while this worker was leaving (after its may_leave look,
// before its count went down) may have found the pool at its maximum, this
// worker still counted, and started nobody: it would wait for a busy worker
// while the pool is below its maximum (issue #31: 2 runs in 6 of a
// keep-alive probe). The count's decrement (a seq_cst RMW), the fence, then
// this look; the producer's offer, then its look at the count in
// add_worker: either it saw this worker gone and started one, or this sees
// its task, and the exit starts a replacement.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::task_left_without_worker() {
    if constexpr (grow_first_queue_policy<Q>) {
        detail::full_fence(ctl_);
        return queue_.has_unclaimed_task();
    } else {
        return false;
    }
}

// Whether a worker that timed out (or is over the maximum) may leave.
// Java: the queue is empty, or another worker remains to drain it. With
// grow_first_queue "another worker remains" is not enough: the others may
// all be busy, and a producer that counted this worker as idle (it was
// still inside its poll) neither started a worker nor will: its task would
// wait for a busy worker while the pool is below its maximum. So a
// grow_first worker leaves only while no queued task lacks a waiting
// consumer. This worker is no longer counted as waiting (its poll returned);
// the fence pairs with the seq_cst RMW of the producer's offer and its
// seq_cst load of the waiting count (has_unclaimed_task): either the producer
// sees this worker gone and starts one, or this worker sees its task and stays.
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::may_leave(std::uint64_t wc, bool over_maximum) {
    if constexpr (grow_first_queue_policy<Q>) {
        if (!over_maximum) return !task_left_without_worker();
    }
    return queue_.size() == 0 || (wc > 1 && (over_maximum || may_leave_waiters()));
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
        if ((over_maximum || (timed && timed_out)) && may_leave(wc, over_maximum)) {
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
            if (detail::ctl::worker_count_of(c) >= min && !task_left_without_worker()) return;
        }
        task none;
        add_worker(none, false);
    }
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
