#ifndef CREW_BASIC_EXECUTOR_HPP
#define CREW_BASIC_EXECUTOR_HPP

/// \file
/// `crew::basic_executor`, the policy-based thread pool with the semantics of
/// Java's `ThreadPoolExecutor`.

#include <crew/concepts.hpp>
#include <crew/detail/ctl.hpp>
#include <crew/detail/report.hpp>
#include <crew/detail/schedule.hpp>
#include <crew/detail/thread_name.hpp>
#include <crew/detail/time.hpp>
#include <crew/detail/worker_context.hpp>
#include <crew/errors.hpp>
#include <crew/fwd.hpp>
#include <crew/future.hpp>
#include <crew/policies/lock.hpp>
#include <crew/policies/queue.hpp>
#include <crew/policies/reject.hpp>
#include <crew/policies/thread_factory.hpp>
#include <crew/pool_options.hpp>
#include <crew/scheduled_future.hpp>
#include <crew/task.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <ranges>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace crew {

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

// An empty std::function, null function pointer or empty task.
template <class F>
bool is_empty_callable(const F& f) noexcept {
    if constexpr (std::is_pointer_v<F> || std::is_member_pointer_v<F>) return f == nullptr;
    else if constexpr (requires { f.operator bool(); }) return !static_cast<bool>(f);
    else return false;
}

} // namespace detail

/// A thread pool with the semantics of Java's `ThreadPoolExecutor`, composed
/// from four policies at compile time.
///
/// \b Policies:
/// - `QueuePolicy` (no default): where tasks wait, and how idle workers block.
///   `unbounded_queue`, `bounded_queue`, `synchronous_queue`, `priority_queue`,
///   `lockfree_queue<Capacity>` (in `<crew/policies/lockfree_queue.hpp>`),
///   `delayed_queue`; must model `crew::queue_policy`. With `delayed_queue`
///   (a `crew::scheduling_queue_policy`) the pool also schedules: see
///   `schedule` and Java's `ScheduledThreadPoolExecutor`.
/// - `RejectPolicy` (default `abort_policy`): what happens to a task the pool
///   refuses. `abort_policy`, `caller_runs_policy`, `discard_policy`,
///   `discard_oldest_policy`, `block_policy`; must model `crew::reject_policy`.
/// - `ThreadFactoryPolicy` (default `default_thread_factory`): how worker
///   threads are made and named; must model `crew::thread_factory`.
/// - `LockPolicy` (default `std::mutex`): the lock guarding the worker set and
///   statistics (not the queue); `std::mutex` or `crew::spin_lock`; must model
///   `crew::lock_policy`.
///
/// \b Behaviour (Java's): `execute` starts a new worker while fewer than
/// `core_pool_size` run; otherwise it queues the task; if the queue refuses,
/// it starts a worker up to `maximum_pool_size`; otherwise it rejects.
/// Workers beyond the core size (or all, with `allow_core_thread_timeout`)
/// exit after `keep_alive` without work.
///
/// \b Thread safety: every member may be called from any thread, including
/// from the pool's own tasks, except that the destructor must not race with
/// other calls.
template <class QueuePolicy, class RejectPolicy, class ThreadFactoryPolicy, class LockPolicy>
class basic_executor {
    static_assert(queue_policy<QueuePolicy>,
                  "crew::basic_executor: the QueuePolicy slot (1st template argument) must model "
                  "crew::queue_policy; see the unsatisfied requirement below");
    static_assert(reject_policy<RejectPolicy>,
                  "crew::basic_executor: the RejectPolicy slot (2nd template argument) must model "
                  "crew::reject_policy: movable, with a member template rejected_execution(crew::task&&, Executor&)");
    static_assert(thread_factory<ThreadFactoryPolicy>,
                  "crew::basic_executor: the ThreadFactoryPolicy slot (3rd template argument) must model "
                  "crew::thread_factory: movable, with a member std::thread new_thread(crew::task)");
    static_assert(lock_policy<LockPolicy>,
                  "crew::basic_executor: the LockPolicy slot (4th template argument) must model "
                  "crew::lock_policy: default-constructible with lock(), unlock() and try_lock()");

  public:
    using queue_type = QueuePolicy;
    using reject_policy_type = RejectPolicy;
    using thread_factory_type = ThreadFactoryPolicy;
    using lock_type = LockPolicy;

    // ---- construction ---------------------------------------------------

    /// A pool with the QueuePolicy's default options (for `synchronous_queue`:
    /// core 0, maximum unbounded, keep-alive 60 s; otherwise `pool_options{}`).
    basic_executor() : basic_executor(detail::default_options_for<QueuePolicy>()) {}

    /// A pool of exactly `threads` workers (core = maximum = `threads`).
    /// Throws `std::invalid_argument` naming `threads` if it is 0, except on
    /// a scheduled pool: there 0 is Java's `newScheduledThreadPool(0)`, core 0
    /// and maximum 1 (a worker starts when a task is queued and leaves after
    /// `keep_alive` without work).
    explicit basic_executor(std::size_t threads) : basic_executor(sized(threads)) {}

    /// The same for a signed count. Throws `std::invalid_argument` naming
    /// `threads` if it is negative, where a conversion to `std::size_t` would
    /// silently ask for 2^64 minus that many threads.
    template <std::signed_integral Count>
    explicit basic_executor(Count threads) : basic_executor(detail::checked_count(threads, "threads")) {}

    /// A pool with the given options, thread factory and reject policy.
    /// Throws `std::invalid_argument`, naming the field, when
    /// `maximum_pool_size == 0`, `core_pool_size > maximum_pool_size`,
    /// `keep_alive < 0`, `allow_core_thread_timeout` with `keep_alive == 0`,
    /// or (from `bounded_queue`) `queue_capacity == 0`.
    /// No thread starts until the first task (see `prestart_all_core_threads`).
    explicit basic_executor(pool_options options, ThreadFactoryPolicy factory = {}, RejectPolicy reject = {});

    /// Shuts down, lets queued tasks finish, and joins every worker: no thread
    /// outlives the pool. Called from one of the pool's own tasks, it runs the
    /// remaining queued tasks on that thread, waits for the other workers, and
    /// detaches the calling thread, which then ends as soon as its task returns
    /// (without calling `after_execute` for that task).
    ~basic_executor();

    basic_executor(const basic_executor&) = delete;
    basic_executor& operator=(const basic_executor&) = delete;

    // ---- running work ---------------------------------------------------

    /// Runs `f()` (or `f(stop_token)`, with a token requested by
    /// `shutdown_now()`) on the pool at some point. A callable made with
    /// `with_priority` keeps its priority. If the pool refuses the task, the
    /// RejectPolicy decides (and may throw, run it, drop it or block).
    /// An exception escaping `f` goes to `after_execute`, or to standard error.
    /// Throws `std::invalid_argument` if `f` is empty (null pointer, empty
    /// `std::function` or `task`).
    template <class F>
    void execute(F&& f) {
        task t = make_task(std::forward<F>(f));
        if (!try_execute(t)) reject(std::move(t));
    }

    /// Runs `f()` (or `f(stop_token)`) on the pool and returns a future of its
    /// result. The token is requested by `future::cancel(true)` and by
    /// `shutdown_now()`. A callable made with `with_priority` keeps its
    /// priority. A refused task follows the RejectPolicy: `abort_policy` throws
    /// from `submit`; a discarded task's future reports
    /// `rejected_execution_error`. One allocation (the shared state, which
    /// also holds the callable); a callable taking a stop token adds its
    /// `std::stop_source`'s. Throws `std::invalid_argument` if `f` is empty.
    template <class F>
    auto submit(F&& f);

    /// Submits every callable of `tasks` and waits until all are done; returns
    /// their futures in order (an empty vector for an empty range, as Java's
    /// `invokeAll`). If a submission throws, the tasks already submitted are
    /// cancelled and the exception propagates.
    template <class Range>
    auto invoke_all(Range&& tasks);

    /// Submits every callable of `tasks` and returns the result of the first
    /// to succeed, cancelling (and interrupting) the others; if none succeeds,
    /// rethrows the last failure. Throws `std::invalid_argument` for an
    /// empty range.
    template <class Range>
    auto invoke_any(Range&& tasks);

    // ---- scheduling (QueuePolicy = delayed_queue) ---------------------------
    //
    // These exist only when the QueuePolicy models crew::scheduling_queue_policy
    // (delayed_queue, as in crew::scheduled_pool); on another pool, calling one
    // does not compile. On a scheduled pool, execute() and submit() mean
    // "due now", and submit() returns a scheduled_future.

    /// Runs `f()` (or `f(stop_token)`) once `delay` has passed, never before.
    /// `delay` saturates: `duration::max()` means never, zero or negative means
    /// now. Returns a `scheduled_future` of the result. A refused task follows
    /// the RejectPolicy (a scheduled pool refuses only once shut down).
    /// Throws `std::invalid_argument` if `f` is empty.
    template <class Rep, class Period, class F>
        requires scheduling_queue_policy<QueuePolicy>
    auto schedule(std::chrono::duration<Rep, Period> delay, F&& f) {
        return schedule_once(detail::saturating_deadline(delay), std::forward<F>(f));
    }

    /// Runs `f()` (or `f(stop_token)`) once at `when`, never before; a time in
    /// the past means now. Otherwise as `schedule`.
    template <class F>
        requires scheduling_queue_policy<QueuePolicy>
    auto schedule_at(std::chrono::steady_clock::time_point when, F&& f) {
        return schedule_once(when, std::forward<F>(f));
    }

    /// Runs `f` first after `initial_delay` (zero or negative: now, as Java's
    /// `triggerTime`, so a past start does not cause a burst of catch-up
    /// runs), then every `period` on absolute deadlines (run n is due at
    /// first + n * period, so lateness does not accumulate; a late run is
    /// followed at once by the next, never overlapping it). Ends when a run throws (`get()` rethrows it), when the
    /// future is cancelled, or at shutdown (see the shutdown policies).
    /// Throws `std::invalid_argument` if `period` is not positive (after
    /// conversion to nanoseconds) or `f` is empty. Java: `scheduleAtFixedRate`.
    template <class Rep1, class Period1, class Rep2, class Period2, class F>
        requires scheduling_queue_policy<QueuePolicy>
    scheduled_future<void> schedule_at_fixed_rate(std::chrono::duration<Rep1, Period1> initial_delay,
                                                  std::chrono::duration<Rep2, Period2> period, F&& f) {
        const auto every = positive_nanoseconds(period, "crew: schedule_at_fixed_rate() needs a positive period");
        return schedule_periodic(first_run_after(initial_delay), every, detail::period_kind::fixed_rate,
                                 std::forward<F>(f));
    }

    /// Runs `f` first after `initial_delay`, then again `delay` after each run
    /// ends. Otherwise as `schedule_at_fixed_rate`. Throws
    /// `std::invalid_argument` if `delay` is not positive. Java:
    /// `scheduleWithFixedDelay`.
    template <class Rep1, class Period1, class Rep2, class Period2, class F>
        requires scheduling_queue_policy<QueuePolicy>
    scheduled_future<void> schedule_with_fixed_delay(std::chrono::duration<Rep1, Period1> initial_delay,
                                                     std::chrono::duration<Rep2, Period2> delay, F&& f) {
        const auto gap = positive_nanoseconds(delay, "crew: schedule_with_fixed_delay() needs a positive delay");
        return schedule_periodic(first_run_after(initial_delay), gap, detail::period_kind::fixed_delay,
                                 std::forward<F>(f));
    }

    /// Whether `cancel()` removes a scheduled task from the queue at once
    /// (otherwise it stays until `purge()`, its due time, or shutdown).
    /// Java: `getRemoveOnCancelPolicy`.
    bool remove_on_cancel() const noexcept
        requires scheduling_queue_policy<QueuePolicy>
    {
        return queue_.remove_on_cancel();
    }
    void set_remove_on_cancel(bool remove)
        requires scheduling_queue_policy<QueuePolicy>
    {
        queue_.set_remove_on_cancel(remove);
    }

    /// Whether periodic tasks keep running after `shutdown()` (until
    /// `shutdown_now()` or cancelled). Default false: `shutdown()` cancels
    /// them. Setting it false after shutdown cancels them then.
    bool continue_periodic_after_shutdown() const noexcept
        requires scheduling_queue_policy<QueuePolicy>
    {
        return queue_.continue_periodic_after_shutdown();
    }
    void set_continue_periodic_after_shutdown(bool keep)
        requires scheduling_queue_policy<QueuePolicy>
    {
        queue_.set_continue_periodic_after_shutdown(keep);
        if (!keep) apply_shutdown_policies();
    }

    /// Whether delayed (non-periodic) tasks still run, at their due time,
    /// after `shutdown()`. Default true; false cancels those not yet due.
    /// Setting it false after shutdown cancels them then.
    bool execute_delayed_after_shutdown() const noexcept
        requires scheduling_queue_policy<QueuePolicy>
    {
        return queue_.execute_delayed_after_shutdown();
    }
    void set_execute_delayed_after_shutdown(bool keep)
        requires scheduling_queue_policy<QueuePolicy>
    {
        queue_.set_execute_delayed_after_shutdown(keep);
        if (!keep) apply_shutdown_policies();
    }

    // ---- the surface a RejectPolicy uses --------------------------------

    /// Java's three steps of `execute` without the rejection: returns false,
    /// leaving `t` untouched, where `execute` would reject. Precondition: `t`
    /// is not empty.
    bool try_execute(task& t);

    /// Removes the oldest queued task and rejects it (its future reports
    /// `rejected_execution_error`). Returns false if nothing was queued.
    bool discard_oldest_queued();

    /// Enqueues `t`, waiting for room. Returns false, leaving `t` untouched,
    /// if the pool is or becomes shut down first.
    bool put(task& t);

    // ---- lifecycle --------------------------------------------------------

    /// Starts an orderly shutdown: no new tasks; queued ones still run.
    /// Idempotent; callable from the pool's own tasks.
    void shutdown();

    /// Stops at once: no new tasks, queued ones are removed and returned, the
    /// stop tokens of running tasks are requested. Idempotent; callable from
    /// the pool's own tasks. Destroying a returned future's task completes its
    /// future with `cancellation_error`.
    std::vector<task> shutdown_now();

    /// Waits until the pool is TERMINATED or `timeout` has passed; returns
    /// whether it terminated. Never returns false early; `duration::max()`
    /// waits without limit, zero or negative only checks.
    template <class Rep, class Period>
    bool await_termination(std::chrono::duration<Rep, Period> timeout);

    /// Waits until the queue is empty and no task is running; the pool stays
    /// open. Throws `std::logic_error` when called from the pool's own task
    /// (that task would wait for itself).
    void wait_idle();

    /// True after `shutdown()` or `shutdown_now()`.
    bool is_shutdown() const noexcept { return !detail::ctl::is_running(ctl_.load()); }
    /// True after shutdown but before TERMINATED.
    bool is_terminating() const noexcept {
        const auto c = ctl_.load();
        return !detail::ctl::is_running(c) && detail::ctl::run_state_less_than(c, detail::ctl::terminated);
    }
    /// True once every worker has exited after shutdown and `on_terminated` ran.
    bool is_terminated() const noexcept { return detail::ctl::run_state_at_least(ctl_.load(), detail::ctl::terminated); }

    // ---- sizing ---------------------------------------------------------

    std::size_t core_pool_size() const noexcept { return core_pool_size_.load(); }
    /// Sets the core size. Throws `std::invalid_argument` if it would exceed the
    /// maximum. Raising it starts workers for queued tasks; lowering it makes
    /// the surplus subject to keep-alive.
    void set_core_pool_size(std::size_t size);
    /// The same for a signed size; a negative one throws `std::invalid_argument`.
    template <std::signed_integral Size>
    void set_core_pool_size(Size size) {
        set_core_pool_size(detail::checked_count(size, "core_pool_size"));
    }

    std::size_t maximum_pool_size() const noexcept { return maximum_pool_size_.load(); }
    /// Sets the maximum size. Throws `std::invalid_argument` if it is 0 or below
    /// the core size. Lowering it retires surplus idle workers promptly and
    /// busy ones after their task.
    void set_maximum_pool_size(std::size_t size);
    /// The same for a signed size; a negative one throws `std::invalid_argument`.
    template <std::signed_integral Size>
    void set_maximum_pool_size(Size size) {
        set_maximum_pool_size(detail::checked_count(size, "maximum_pool_size"));
    }

    std::chrono::nanoseconds keep_alive() const noexcept { return std::chrono::nanoseconds(keep_alive_ns_.load()); }
    /// Sets the keep-alive. Throws `std::invalid_argument` if negative, or zero
    /// while core threads may time out.
    void set_keep_alive(std::chrono::nanoseconds keep_alive);
    /// The same for any duration, converted with saturation (`hours::max()`
    /// becomes `nanoseconds::max()` rather than overflowing).
    template <class Rep, class Period>
    void set_keep_alive(std::chrono::duration<Rep, Period> keep_alive) {
        set_keep_alive(detail::saturating_nanoseconds(keep_alive));
    }

    /// Lets core workers time out too. Throws `std::invalid_argument` when
    /// enabling it with a zero keep-alive.
    void allow_core_thread_timeout(bool allow);
    bool allows_core_thread_timeout() const noexcept { return allow_core_thread_timeout_.load(); }

    /// Starts one idle core worker if fewer than the core size run.
    bool prestart_core_thread();
    /// Starts idle core workers up to the core size; returns how many.
    std::size_t prestart_all_core_threads();

    // ---- statistics -----------------------------------------------------

    /// Live workers.
    std::size_t pool_size() const;
    /// Workers running a task now (a snapshot).
    std::size_t active_count() const;
    /// The most workers that were ever alive at once.
    std::size_t largest_pool_size() const;
    /// Tasks ever accepted, less those removed unrun (completed + running +
    /// queued, as Java's `getTaskCount`; approximate while tasks run).
    std::uint64_t task_count() const noexcept { return submitted_.load(); }
    /// Tasks run to completion by workers (not those run by `caller_runs_policy`).
    std::uint64_t completed_task_count() const;
    /// Tasks waiting in the queue.
    std::size_t queue_size() const { return queue_.size(); }
    /// How many tasks the queue may hold (`bounded_queue`: `queue_capacity`).
    std::size_t queue_capacity() const { return queue_.capacity(); }
    /// Drops cancelled tasks from the queue; returns how many.
    std::size_t purge();

    /// The queue, for inspection (say, `delayed_queue::wait_statistics()`).
    const QueuePolicy& queue() const noexcept { return queue_; }

  private:
    static constexpr bool is_scheduling = scheduling_queue_policy<QueuePolicy>;
    using cv_type = std::conditional_t<std::is_same_v<LockPolicy, std::mutex>, std::condition_variable,
                                       std::condition_variable_any>;
    using unique_lock = std::unique_lock<LockPolicy>;

    // One worker thread and what the pool tracks of it (Java's Worker).
    struct worker {
        enum start_signal : int { pending, go, abandon };

        std::thread thread;
        task first_task;                              // written before start = go
        spin_lock busy;                               // held while running a task
        interrupt_flag interrupted{false};            // see interrupt_idle_workers
        std::atomic<std::uint64_t> completed_tasks{0};// written by the worker only
        std::stop_source stop;                        // requested by shutdown_now
        std::atomic<int> start{pending};              // see add_worker
        typename std::list<worker>::iterator self;    // its node in workers_
    };

    static pool_options sized(std::size_t threads) {
        pool_options options = detail::default_options_for<QueuePolicy>();
        options.core_pool_size = options.maximum_pool_size = threads;
        if (threads == 0) {
            if constexpr (!is_scheduling) throw std::invalid_argument("crew: threads must be positive (got 0)");
            else options.maximum_pool_size = 1;
        }
        return options;
    }
    static void validate(std::size_t core, std::size_t maximum, std::chrono::nanoseconds keep_alive,
                         bool core_timeout);

    template <class F>
    task make_task(F&& f) const;

    void reject(task&& t) { reject_policy_.rejected_execution(std::move(t), *this); }

    template <class F>
    auto submit_with_priority(F&& f, int priority);
    template <class F>
    auto submit_now(F&& f, int priority);

    // Submits each element of `tasks`, moving from an rvalue range; on a
    // throw, cancels what was submitted. `wrap(element, index)` may decorate.
    template <class Range, class Wrap>
    auto submit_each(Range&& tasks, Wrap wrap);

    template <class Enqueue>
    bool enqueue_precounted(Enqueue enqueue);
    template <class Enqueue>
    bool enqueue_counted(Enqueue enqueue);
    bool add_worker(task& first_task, bool core);
    void add_worker_failed();
    void worker_main(worker& w);
    void run_worker(worker& w);
    bool get_task(worker& w, task& out);
    bool run_task(task& t, const detail::worker_context& context);
    void count_completed(worker& w);
    void process_worker_exit(worker& w, bool completed_abruptly);
    void try_terminate();
    void advance_run_state(detail::ctl::word target);
    void close_queue();
    void interrupt_idle_workers(bool only_one);
    void interrupt_workers();
    void decrement_worker_count() noexcept { ctl_.fetch_sub(1); }
    void tasks_left_unrun(std::uint64_t n);
    void notify_idle_waiters();
    std::uint64_t completed_locked() const; // Requires: main_lock_ held
    void run_orphaned_tasks();
    void ensure_worker_for_queue();
    std::size_t live_worker_count() const;  // Requires: main_lock_ held
    void join_last_exited_worker();
    void destroy_from_own_task(detail::worker_context& context);

    // ---- scheduling internals (delayed_queue only) ----
    template <class Rep, class Period>
    static std::chrono::nanoseconds positive_nanoseconds(std::chrono::duration<Rep, Period> d, const char* message);
    template <class Rep, class Period>
    static detail::clock::time_point first_run_after(std::chrono::duration<Rep, Period> initial_delay);
    template <class F>
    auto schedule_once(detail::clock::time_point due, F&& f);
    template <class F>
    scheduled_future<void> schedule_periodic(detail::clock::time_point first, std::chrono::nanoseconds period,
                                             detail::period_kind kind, F&& f);
    bool delayed_execute(task& t, detail::clock::time_point due, detail::schedule_slot* slot, bool periodic);
    void ensure_prestart();
    void drop_after_shutdown();
    void apply_shutdown_policies();
    void drop_queued(detail::schedule_slot& slot) noexcept;
    bool periodic_may_run() const noexcept;
    void scheduled_task_cancelled(detail::schedule_slot& slot) noexcept;
    bool reschedule_periodic(task& next, detail::clock::time_point due, detail::schedule_slot& slot);
    static const detail::pool_link::operations& link_operations() noexcept;

    // Holds the link scheduled futures keep to this pool, and cuts it when the
    // pool dies. The last member, so it is destroyed first.
    struct link_holder {
        std::shared_ptr<detail::pool_link> link;
        ~link_holder() {
            if (link) link->cut();
        }
    };
    struct no_link {};
    auto make_link() {
        if constexpr (is_scheduling) return link_holder{std::make_shared<detail::pool_link>(this, link_operations())};
        else return no_link{};
    }

    [[no_unique_address]] ThreadFactoryPolicy thread_factory_;
    [[no_unique_address]] RejectPolicy reject_policy_;
    QueuePolicy queue_;
    const std::function<void()> before_execute_;
    const std::function<void(std::exception_ptr)> after_execute_;
    const std::function<void()> on_terminated_;

    // Read by every execute and every worker's get_task, written rarely: a
    // cache line of its own, away from the queue's and submitted_'s writes.
    // (64, not std::hardware_destructive_interference_size, whose value GCC
    // warns may differ between translation units.)
    alignas(64) std::atomic<detail::ctl::word> ctl_{detail::ctl::of(detail::ctl::running, 0)};
    std::atomic<std::size_t> core_pool_size_;
    std::atomic<std::size_t> maximum_pool_size_;
    std::atomic<std::int64_t> keep_alive_ns_;
    std::atomic<bool> allow_core_thread_timeout_;
    std::atomic<bool> queue_closed_{false};     // set once close_queue() is done
    std::atomic<std::uint32_t> idle_waiters_{0};// threads inside wait_idle

    // Written by every execute.
    alignas(64) std::atomic<std::uint64_t> submitted_{0}; // accepted, less removed unrun

    alignas(64) mutable LockPolicy main_lock_;
    cv_type state_changed_;                     // TERMINATED, workers_ empty, idle
    std::list<worker> workers_;                 // guarded by main_lock_
    std::list<worker> exited_;                  // guarded by main_lock_; at most one
    std::size_t largest_pool_size_ = 0;         // guarded by main_lock_
    std::uint64_t completed_by_exited_ = 0;     // guarded by main_lock_

    [[no_unique_address]] std::conditional_t<is_scheduling, link_holder, no_link> link_ = make_link();
};

// ===========================================================================
// Definitions
// ===========================================================================

#define CREW_EXECUTOR_TEMPLATE template <class Q, class R, class TF, class L>
#define CREW_EXECUTOR basic_executor<Q, R, TF, L>

CREW_EXECUTOR_TEMPLATE
CREW_EXECUTOR::basic_executor(pool_options options, TF factory, R reject)
    : thread_factory_(std::move(factory)), reject_policy_(std::move(reject)),
      queue_((validate(options.core_pool_size, options.maximum_pool_size, options.keep_alive,
                       options.allow_core_thread_timeout),
              options)),
      before_execute_(std::move(options.before_execute)), after_execute_(std::move(options.after_execute)),
      on_terminated_(std::move(options.on_terminated)), core_pool_size_(options.core_pool_size),
      maximum_pool_size_(options.maximum_pool_size), keep_alive_ns_(options.keep_alive.count()),
      allow_core_thread_timeout_(options.allow_core_thread_timeout) {}

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::validate(std::size_t core, std::size_t maximum, std::chrono::nanoseconds keep_alive,
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

CREW_EXECUTOR_TEMPLATE
template <class F>
task CREW_EXECUTOR::make_task(F&& f) const {
    using D = std::remove_cvref_t<F>;
    if constexpr (std::same_as<D, task>) {
        static_assert(!std::is_lvalue_reference_v<F>, "crew: pass a crew::task by std::move: tasks are move-only");
        if (!f) throw std::invalid_argument("crew: execute() needs a non-empty callable");
        return std::move(f);
    } else if constexpr (detail::is_prioritized<D>) {
        return task(prioritized<task>{f.priority, make_task(std::forward<F>(f).function)});
    } else {
        if constexpr (std::invocable<D&>) {
            if (detail::is_empty_callable(f)) throw std::invalid_argument("crew: execute() needs a non-empty callable");
            return task(std::forward<F>(f));
        } else if constexpr (std::invocable<D&, std::stop_token>) {
            if (detail::is_empty_callable(f)) throw std::invalid_argument("crew: execute() needs a non-empty callable");
            // The token of *this* pool's worker: run elsewhere (caller_runs on
            // another pool's worker) the task must not see that pool's stop.
            return task([fn = D(std::forward<F>(f)), pool = static_cast<const void*>(this)]() mutable {
                fn(detail::current_stop_token(pool));
            });
        } else {
            static_assert(sizeof(D) == 0, "crew: execute() needs a callable as f() or f(std::stop_token)");
            return task();
        }
    }
}

CREW_EXECUTOR_TEMPLATE
template <class F>
auto CREW_EXECUTOR::submit(F&& f) {
    if constexpr (detail::is_prioritized<std::remove_cvref_t<F>>) {
        const int priority = f.priority;
        return submit_with_priority(std::forward<F>(f).function, priority);
    } else {
        return submit_with_priority(std::forward<F>(f), 0);
    }
}

CREW_EXECUTOR_TEMPLATE
template <class F>
auto CREW_EXECUTOR::submit_with_priority(F&& f, int priority) {
    using D = std::decay_t<F>;
    static_assert(std::invocable<D&> || std::invocable<D&, std::stop_token>,
                  "crew: submit() needs a callable as f() or f(std::stop_token)");
    if constexpr (is_scheduling) {
        (void)priority; // a delayed queue orders by due time only
        return schedule_once(detail::clock::now(), std::forward<F>(f));
    } else {
        return submit_now(std::forward<F>(f), priority);
    }
}

CREW_EXECUTOR_TEMPLATE
template <class F>
auto CREW_EXECUTOR::submit_now(F&& f, int priority) {
    using D = std::decay_t<F>;
    using result = detail::task_result_t<D>;
    if (detail::is_empty_callable(f)) throw std::invalid_argument("crew: submit() needs a non-empty callable");
    auto* state = new detail::future_state_with<result, D>(std::forward<F>(f));
    future<result> handle(state);
    task t(prioritized<task>{priority, task(detail::future_task<result, D>(state, this))});
    if (!try_execute(t)) reject(std::move(t));
    return handle;
}

CREW_EXECUTOR_TEMPLATE
template <class Range, class Wrap>
auto CREW_EXECUTOR::submit_each(Range&& tasks, Wrap wrap) {
    // Elements are moved from an rvalue range, so that move-only callables work.
    using reference = std::ranges::range_reference_t<Range>;
    using element = std::conditional_t<std::is_lvalue_reference_v<Range>, reference,
                                       std::remove_reference_t<reference>&&>;
    using handle = decltype(submit(wrap(std::declval<element>(), std::size_t{})));
    std::vector<handle> futures;
    if constexpr (std::ranges::sized_range<Range>) futures.reserve(std::ranges::size(tasks));
    // A future that cannot be stored (out of memory) cancels its task first.
    auto keep = [&futures](handle&& submitted) {
        try {
            futures.push_back(std::move(submitted));
        } catch (...) {
            submitted.cancel(true);
            throw;
        }
    };
    try {
        for (auto&& f : tasks) {
            if constexpr (std::is_lvalue_reference_v<Range>) keep(submit(wrap(f, futures.size())));
            else keep(submit(wrap(std::move(f), futures.size())));
        }
    } catch (...) {
        for (auto& f : futures) f.cancel(true);
        throw;
    }
    return futures;
}

CREW_EXECUTOR_TEMPLATE
template <class Range>
auto CREW_EXECUTOR::invoke_all(Range&& tasks) {
    auto futures = submit_each(std::forward<Range>(tasks), [](auto&& f, std::size_t) -> decltype(auto) {
        return std::forward<decltype(f)>(f);
    });
    for (auto& f : futures) f.wait();
    return futures;
}

CREW_EXECUTOR_TEMPLATE
template <class Range>
auto CREW_EXECUTOR::invoke_any(Range&& tasks) {
    if (std::ranges::empty(tasks)) throw std::invalid_argument("crew: invoke_any() needs at least one task");
    auto tracker = std::make_shared<detail::completion_tracker>(std::ranges::size(tasks));
    auto futures = submit_each(std::forward<Range>(tasks), [&tracker](auto&& f, std::size_t index) {
        using F = std::decay_t<decltype(f)>;
        return detail::tracked_callable<F>(std::forward<decltype(f)>(f), tracker, index);
    });
    // The losers' outcomes are deliberately ignored: a failure among them is
    // not an exception that vanished.
    auto cancel_others = [&futures] {
        for (auto& f : futures) {
            if (!f.valid()) continue;
            f.cancel(true);
            f.state()->forget_error();
        }
    };
    std::exception_ptr last_failure;
    for (std::size_t finished = 0; finished < futures.size(); ++finished) {
        auto& candidate = futures[tracker->next()];
        try {
            using result = decltype(candidate.get());
            if constexpr (std::is_void_v<result>) {
                candidate.get();
                cancel_others();
                return;
            } else {
                result value = candidate.get();
                cancel_others();
                return value;
            }
        } catch (...) {
            last_failure = std::current_exception();
        }
    }
    std::rethrow_exception(last_failure);
}

// Java's execute(): (1) below core, start a worker with the task; (2) else
// queue it; (3) else start a non-core worker; (4) else refuse. Where Java
// re-checks the state after offering and removes the task, crew's queues are
// closed by shutdown, so an offer after shutdown fails instead: a task is
// either queued before the close (and will run) or refused.
CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::try_execute(task& t) {
    // A scheduled pool queues even "due now" tasks, so that they run in due
    // order behind those already due (Java: execute is schedule(0)).
    if constexpr (is_scheduling) return delayed_execute(t, detail::clock::now(), nullptr, false);
    // Counted before it becomes visible to workers, so that the count of
    // completed tasks never overtakes it (wait_idle relies on that).
    submitted_.fetch_add(1, std::memory_order_relaxed);
    auto c = ctl_.load();
    if (detail::ctl::worker_count_of(c) < core_pool_size_.load()) {
        if (add_worker(t, true)) return true;
        c = ctl_.load();
    }
    if (detail::ctl::is_running(c) && enqueue_precounted([&] { return queue_.offer(std::move(t)); })) {
        ensure_worker_for_queue();
        return true;
    }
    if (add_worker(t, false)) return true;
    tasks_left_unrun(1);
    return false;
}

// Runs `enqueue`, which says whether the queue took a task already counted
// in submitted_. If it throws (out of memory: the queues then leave the task
// with the caller), the count is undone.
CREW_EXECUTOR_TEMPLATE
template <class Enqueue>
bool CREW_EXECUTOR::enqueue_precounted(Enqueue enqueue) {
    try {
        return enqueue();
    } catch (...) {
        tasks_left_unrun(1);
        throw;
    }
}

// Counts a task as submitted, then enqueues it; a task the queue did not
// take (or threw on) is counted out again.
CREW_EXECUTOR_TEMPLATE
template <class Enqueue>
bool CREW_EXECUTOR::enqueue_counted(Enqueue enqueue) {
    submitted_.fetch_add(1, std::memory_order_relaxed);
    const bool queued = enqueue_precounted(enqueue);
    if (!queued) tasks_left_unrun(1);
    return queued;
}

CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::discard_oldest_queued() {
    task oldest;
    if (!queue_.poll(oldest)) return false;
    tasks_left_unrun(1);
    oldest.reject();
    return true;
}

CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::put(task& t) {
    if (is_shutdown()) return false;
    if (!enqueue_counted([&] { return queue_.put(std::move(t)); })) return false;
    ensure_worker_for_queue();
    return true;
}

// Java's re-check after offer: a task just queued needs a worker, and the
// last one may have left meanwhile.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::ensure_worker_for_queue() {
    if (detail::ctl::worker_count_of(ctl_.load()) == 0) {
        task none;
        add_worker(none, false);
    }
}

// Java's addWorker(). The count is raised first by CAS (so that concurrent
// callers respect the bounds), then the thread is made. A std::thread runs as
// soon as it exists, so the new thread waits on `start` until the worker is
// registered, or is told to abandon if the pool shut down meanwhile. On every
// failure `first_task` is left with the caller.
CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::add_worker(task& first_task, bool core) {
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
            largest_pool_size_ = std::max(largest_pool_size_, live_worker_count());
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

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::add_worker_failed() {
    decrement_worker_count();
    try_terminate();
}

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::worker_main(worker& w) {
    int signal;
    while ((signal = w.start.load(std::memory_order_acquire)) == worker::pending)
        w.start.wait(worker::pending, std::memory_order_acquire);
    if (signal == worker::go) run_worker(w);
}

// Java's runWorker(). Unlike Java, an exception escaping a task does not kill
// the worker: the pool keeps its size without replacing threads.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::run_worker(worker& w) {
    detail::worker_context context{this, &w, w.stop.get_token()};
    detail::current_worker = &context;
    task t = std::move(w.first_task);
    bool completed_abruptly = true;
    try {
        while (t || get_task(w, t)) {
            w.busy.lock();
            if (!run_task(t, context)) {
                detail::current_worker = nullptr; // the task destroyed the pool
                return;
            }
            w.busy.unlock();
            count_completed(w);
        }
        completed_abruptly = false;
    } catch (...) {
        // Only the pool's own machinery can get here (say, a queue that ran
        // out of memory); the worker leaves and process_worker_exit replaces it.
        detail::report_escaped_exception(std::current_exception(), "a worker");
    }
    detail::current_worker = nullptr;
    process_worker_exit(w, completed_abruptly);
}

// Runs one task with the hooks. Requires: the worker's busy lock held. Returns false if the
// task destroyed the pool, in which case nothing of the pool may be touched.
CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::run_task(task& t, const detail::worker_context& context) {
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
        try {
            error = t.run(static_cast<bool>(after_execute_));
            delivered = error != nullptr;
        } catch (...) {
            error = std::current_exception();
        }
        if (context.pool_destroyed) return false;
        t.reset();
    }
    if (after_execute_) {
        try {
            after_execute_(error);
        } catch (...) {
            detail::report_escaped_exception(std::current_exception(), "after_execute");
        }
    } else if (error && !delivered) {
        detail::report_escaped_exception(error, before_ok ? "a task" : "before_execute");
    }
    return true;
}

// Counted after the busy lock is released, so that a wait_idle() that sees
// the count also sees the worker idle.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::count_completed(worker& w) {
    w.completed_tasks.store(w.completed_tasks.load(std::memory_order_relaxed) + 1);
    if (idle_waiters_.load() != 0) notify_idle_waiters();
}

// Java's getTask(): false means "exit", and the worker count has then
// already been decremented.
CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::get_task(worker& w, task& out) {
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
        // Never let the last worker go while tasks are queued.
        if ((wc > maximum_pool_size_.load() || (timed && timed_out)) && (wc > 1 || queue_.size() == 0)) {
            if (ctl_.compare_exchange_strong(c, c - 1)) return false;
            continue;
        }
        const wait_status status = timed
                                       ? queue_.poll_until(out, detail::saturating_deadline(keep_alive()), w.interrupted)
                                       : queue_.take(out, w.interrupted);
        if (status == wait_status::taken) return true;
        timed_out = status == wait_status::timed_out;
        if (status == wait_status::interrupted) w.interrupted.store(false);
    }
}

// Java's processWorkerExit(). The exiting worker parks its own std::thread in
// exited_ and joins the one parked there before it, so at most one finished
// thread awaits a join at any time; the destructor joins the last.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::process_worker_exit(worker& w, bool completed_abruptly) {
    if (completed_abruptly) decrement_worker_count();
    std::list<worker> previous;
    {
        unique_lock lock(main_lock_);
        completed_by_exited_ += w.completed_tasks.load();
        previous.splice(previous.end(), exited_);
        exited_.splice(exited_.end(), workers_, w.self);
        if (workers_.empty()) state_changed_.notify_all();
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
            if (detail::ctl::worker_count_of(c) >= min) return;
        }
        task none;
        add_worker(none, false);
    }
}

// Java's tryTerminate(): moves to TERMINATED once shut down with no workers
// (and, unless stopped, an empty queue). While workers remain, it wakes one
// idle worker so that the shutdown signal propagates.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::try_terminate() {
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
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::close_queue() {
    queue_.close();
    queue_closed_.store(true);
}

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::advance_run_state(detail::ctl::word target) {
    for (auto c = ctl_.load();;) {
        if (detail::ctl::run_state_at_least(c, target) ||
            ctl_.compare_exchange_weak(c, detail::ctl::of(target, detail::ctl::worker_count_of(c))))
            return;
    }
}

// Java's interruptIdleWorkers(): a worker whose busy lock can be taken is
// between tasks, so flagging it cannot disturb a running task. Only waiting
// workers sleep on the queue, so the wake-up reaches idle workers only.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::interrupt_idle_workers(bool only_one) {
    {
        unique_lock lock(main_lock_);
        for (worker& w : workers_) {
            if (!w.interrupted.load() && w.busy.try_lock()) {
                w.interrupted.store(true);
                w.busy.unlock();
            }
            if (only_one) break;
        }
    }
    queue_.wake_consumers();
}

// Java's interruptWorkers(), for shutdown_now(): every worker, busy or not;
// running tasks see their stop token requested.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::interrupt_workers() {
    {
        unique_lock lock(main_lock_);
        for (worker& w : workers_) {
            w.interrupted.store(true);
            w.stop.request_stop();
        }
    }
    queue_.wake_consumers();
}

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::tasks_left_unrun(std::uint64_t n) {
    submitted_.fetch_sub(n);
    if (idle_waiters_.load() != 0) notify_idle_waiters();
}

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::notify_idle_waiters() {
    { unique_lock lock(main_lock_); }
    state_changed_.notify_all();
}

CREW_EXECUTOR_TEMPLATE
std::uint64_t CREW_EXECUTOR::completed_locked() const {
    std::uint64_t total = completed_by_exited_;
    for (const worker& w : workers_) total += w.completed_tasks.load();
    return total;
}

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::shutdown() {
    advance_run_state(detail::ctl::shutdown);
    close_queue();
    if constexpr (is_scheduling) drop_after_shutdown();
    // Tasks queued while the thread factory refused have no worker to drain
    // them; without one the pool could never terminate.
    ensure_worker_for_queue();
    interrupt_idle_workers(false);
    try_terminate();
}

CREW_EXECUTOR_TEMPLATE
std::vector<task> CREW_EXECUTOR::shutdown_now() {
    advance_run_state(detail::ctl::stop);
    close_queue();
    interrupt_workers();
    std::vector<task> tasks = queue_.drain();
    if (!tasks.empty()) tasks_left_unrun(tasks.size());
    try_terminate();
    return tasks;
}

CREW_EXECUTOR_TEMPLATE
template <class Rep, class Period>
bool CREW_EXECUTOR::await_termination(std::chrono::duration<Rep, Period> timeout) {
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

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::wait_idle() {
    if (detail::current_worker && detail::current_worker->pool == this)
        throw std::logic_error("crew: wait_idle() called from the pool's own task would wait for itself");
    idle_waiters_.fetch_add(1);
    {
        unique_lock lock(main_lock_);
        // Completed is read before submitted: a task is counted as submitted
        // before any worker can complete it, so this order never sees more
        // completed than submitted.
        state_changed_.wait(lock, [this] {
            const auto completed = completed_locked();
            return completed == submitted_.load();
        });
    }
    idle_waiters_.fetch_sub(1);
}

// ---- sizing ---------------------------------------------------------------

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::set_core_pool_size(std::size_t size) {
    std::size_t old;
    {
        unique_lock lock(main_lock_);
        validate(size, maximum_pool_size_.load(), keep_alive(), allows_core_thread_timeout());
        old = core_pool_size_.exchange(size);
    }
    if (detail::ctl::worker_count_of(ctl_.load()) > size) {
        interrupt_idle_workers(false);
    } else if (size > old) {
        // Start as many new workers as there are queued tasks, but no more.
        for (auto k = std::min(size - old, queue_.size()); k > 0; --k) {
            task none;
            if (!add_worker(none, true) || queue_.size() == 0) break;
        }
    }
}

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::set_maximum_pool_size(std::size_t size) {
    {
        unique_lock lock(main_lock_);
        validate(core_pool_size_.load(), size, keep_alive(), allows_core_thread_timeout());
        maximum_pool_size_.store(size);
    }
    if (detail::ctl::worker_count_of(ctl_.load()) > size) interrupt_idle_workers(false);
}

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::set_keep_alive(std::chrono::nanoseconds keep_alive) {
    std::int64_t old;
    {
        unique_lock lock(main_lock_);
        validate(core_pool_size_.load(), maximum_pool_size_.load(), keep_alive, allows_core_thread_timeout());
        old = keep_alive_ns_.exchange(keep_alive.count());
    }
    if (keep_alive.count() < old) interrupt_idle_workers(false); // waiting workers re-arm their timers
}

CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::allow_core_thread_timeout(bool allow) {
    bool old;
    {
        unique_lock lock(main_lock_);
        validate(core_pool_size_.load(), maximum_pool_size_.load(), keep_alive(), allow);
        old = allow_core_thread_timeout_.exchange(allow);
    }
    if (allow && !old) interrupt_idle_workers(false);
}

CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::prestart_core_thread() {
    task none;
    return detail::ctl::worker_count_of(ctl_.load()) < core_pool_size_.load() && add_worker(none, true);
}

CREW_EXECUTOR_TEMPLATE
std::size_t CREW_EXECUTOR::prestart_all_core_threads() {
    std::size_t started = 0;
    for (task none; add_worker(none, true);) ++started;
    return started;
}

// ---- statistics -----------------------------------------------------------

CREW_EXECUTOR_TEMPLATE
std::size_t CREW_EXECUTOR::pool_size() const {
    unique_lock lock(main_lock_);
    return detail::ctl::run_state_at_least(ctl_.load(), detail::ctl::tidying) ? 0 : live_worker_count();
}

// workers_ still lists a worker that has left the count (it timed out and is
// on its way to process_worker_exit); the count already includes one that
// add_worker has yet to register. Neither is a thread the pool can use, and
// the smaller of the two never exceeds maximum_pool_size.
CREW_EXECUTOR_TEMPLATE
std::size_t CREW_EXECUTOR::live_worker_count() const {
    return std::min<std::size_t>(workers_.size(), detail::ctl::worker_count_of(ctl_.load()));
}

CREW_EXECUTOR_TEMPLATE
std::size_t CREW_EXECUTOR::active_count() const {
    unique_lock lock(main_lock_);
    return static_cast<std::size_t>(
        std::count_if(workers_.begin(), workers_.end(), [](const worker& w) { return w.busy.is_locked(); }));
}

CREW_EXECUTOR_TEMPLATE
std::size_t CREW_EXECUTOR::largest_pool_size() const {
    unique_lock lock(main_lock_);
    // The count may have risen since the last registration (see live_worker_count).
    return std::max(largest_pool_size_, live_worker_count());
}

CREW_EXECUTOR_TEMPLATE
std::uint64_t CREW_EXECUTOR::completed_task_count() const {
    unique_lock lock(main_lock_);
    return completed_locked();
}

CREW_EXECUTOR_TEMPLATE
std::size_t CREW_EXECUTOR::purge() {
    const std::size_t removed = queue_.remove_if([](const task& t) { return t.is_cancelled(); });
    if (removed) tasks_left_unrun(removed);
    try_terminate(); // the queue may have emptied after shutdown
    return removed;
}

// ---- destruction ----------------------------------------------------------

// Queued tasks with no worker to run them (the thread factory refused every
// start): run them here rather than lose them.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::run_orphaned_tasks() {
    const interrupt_flag never{false};
    while (detail::ctl::worker_count_of(ctl_.load()) == 0 && queue_.size() != 0) {
        task none;
        if (add_worker(none, false)) break;
        // A delayed task may not be due yet: wait for it, retrying the
        // factory now and then.
        task orphan;
        const auto retry = detail::clock::now() + std::chrono::milliseconds(100);
        if (queue_.poll_until(orphan, retry, never) != wait_status::taken) continue;
        tasks_left_unrun(1);
        const detail::worker_context here{this, nullptr, {}, false};
        run_task(orphan, here);
    }
    try_terminate();
}

CREW_EXECUTOR_TEMPLATE
CREW_EXECUTOR::~basic_executor() {
    if (detail::current_worker && detail::current_worker->pool == this) {
        destroy_from_own_task(*detail::current_worker);
        return;
    }
    shutdown();
    run_orphaned_tasks();
    join_last_exited_worker();
}

// Waits until the pool is TERMINATED with no worker registered, then joins
// the last exited thread; every earlier one was joined by the one that
// exited after it.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::join_last_exited_worker() {
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
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::destroy_from_own_task(detail::worker_context& context) {
    worker& self = *static_cast<worker*>(context.worker);
    shutdown();
    self.busy.unlock();
    for (task t; get_task(self, t);) {
        self.busy.lock();
        run_task(t, context);
        self.busy.unlock();
        count_completed(self);
    }
    // get_task returned false, so this worker is no longer counted.
    {
        unique_lock lock(main_lock_);
        self.thread.detach();
        workers_.erase(self.self);
    }
    try_terminate();
    join_last_exited_worker();
    context.pool_destroyed = true;
}

// ---- scheduling (delayed_queue) ---------------------------------------------

CREW_EXECUTOR_TEMPLATE
template <class Rep, class Period>
std::chrono::nanoseconds CREW_EXECUTOR::positive_nanoseconds(std::chrono::duration<Rep, Period> d,
                                                             const char* message) {
    const auto ns = detail::saturating_nanoseconds(d);
    if (ns <= std::chrono::nanoseconds::zero()) throw std::invalid_argument(message);
    return ns;
}

// A periodic schedule's first due time: now + initial_delay, saturated, but
// never in the past (Java's triggerTime treats a negative delay as zero).
CREW_EXECUTOR_TEMPLATE
template <class Rep, class Period>
detail::clock::time_point CREW_EXECUTOR::first_run_after(std::chrono::duration<Rep, Period> initial_delay) {
    return detail::saturating_deadline(std::max(detail::saturating_nanoseconds(initial_delay),
                                                std::chrono::nanoseconds::zero()));
}

CREW_EXECUTOR_TEMPLATE
template <class F>
auto CREW_EXECUTOR::schedule_once(detail::clock::time_point due, F&& f) {
    using D = std::decay_t<F>;
    static_assert(std::invocable<D&> || std::invocable<D&, std::stop_token>,
                  "crew: schedule() needs a callable as f() or f(std::stop_token)");
    using result = detail::task_result_t<D>;
    using base = detail::scheduled_state<result>;
    if (detail::is_empty_callable(f)) throw std::invalid_argument("crew: schedule() needs a non-empty callable");
    auto* state = new detail::future_state_with<result, D, base>(std::forward<F>(f), due, link_.link);
    scheduled_future<result> handle(state);
    task t(detail::future_task<result, D, base>(state, this));
    if (!delayed_execute(t, state->due(), &state->slot(), false)) reject(std::move(t));
    return handle;
}

CREW_EXECUTOR_TEMPLATE
template <class F>
scheduled_future<void> CREW_EXECUTOR::schedule_periodic(detail::clock::time_point first,
                                                        std::chrono::nanoseconds period, detail::period_kind kind,
                                                        F&& f) {
    using D = std::decay_t<F>;
    static_assert(std::invocable<D&> || std::invocable<D&, std::stop_token>,
                  "crew: a periodic task needs a callable as f() or f(std::stop_token)");
    if (detail::is_empty_callable(f)) throw std::invalid_argument("crew: schedule() needs a non-empty callable");
    auto* state = new typename detail::periodic_task<D>::state_type(std::forward<F>(f), first, link_.link);
    scheduled_future<void> handle(state);
    task t(detail::periodic_task<D>(state, this, period, kind));
    if (!delayed_execute(t, state->due(), &state->slot(), true)) reject(std::move(t));
    return handle;
}

// Java's delayedExecute(): queue first, then make sure a worker exists. The
// queue refuses once closed by shutdown, which then applies its policies to
// whatever got in before: so a task is either queued and handled by those
// policies, or refused here.
CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::delayed_execute(task& t, detail::clock::time_point due, detail::schedule_slot* slot,
                                    bool periodic) {
    if (!enqueue_counted([&] { return !is_shutdown() && queue_.schedule(std::move(t), due, slot, periodic); }))
        return false;
    ensure_prestart();
    return true;
}

// Java's ensurePrestart(): a delayed task is never given to a new worker
// directly (it may not be due), so start one to wait for the queue.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::ensure_prestart() {
    const auto workers = detail::ctl::worker_count_of(ctl_.load());
    task none;
    if (workers < core_pool_size_.load()) add_worker(none, true);
    else if (workers == 0) add_worker(none, false);
}

// The scheduling members below are instantiated only for a scheduling queue:
// shutdown() reaches them under `if constexpr`, the rest through pool_link.

// Java's onShutdown(): drop what the shutdown policies say must not run.
// Dropped tasks die here, so their futures report cancellation_error. The
// caller then calls try_terminate().
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::drop_after_shutdown() {
    std::vector<task> dropped = queue_.on_shutdown();
    if (!dropped.empty()) tasks_left_unrun(dropped.size());
}

// A shutdown policy turned off after shutdown applies at once, as in Java
// (onShutdown runs again).
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::apply_shutdown_policies() {
    if (!is_shutdown()) return;
    drop_after_shutdown();
    try_terminate();
}

// Java's canRunInCurrentRunState() for a periodic task.
CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::periodic_may_run() const noexcept {
    const auto c = ctl_.load();
    if (detail::ctl::is_running(c)) return true;
    return detail::ctl::run_state_less_than(c, detail::ctl::stop) && queue_.continue_periodic_after_shutdown();
}

// Takes the task `slot` names out of the queue, if it is there: its future is
// cancelled, and the pool may now be able to terminate.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::drop_queued(detail::schedule_slot& slot) noexcept {
    task removed = queue_.remove(slot);
    if (!removed) return;
    tasks_left_unrun(1);
    removed.reset();
    try_terminate();
}

// A scheduled future was cancelled. With remove_on_cancel its task leaves the
// queue now; so it does after shutdown whatever the setting, so that a
// cancelled task far in the future cannot hold up termination.
CREW_EXECUTOR_TEMPLATE
void CREW_EXECUTOR::scheduled_task_cancelled(detail::schedule_slot& slot) noexcept {
    if (queue_.remove_on_cancel() || is_shutdown()) drop_queued(slot);
}

// Java's reExecutePeriodic(). Queues a periodic task's next run, even though
// the queue is closed after shutdown when continue_periodic_after_shutdown
// says so; false if the pool refuses (next stays with the caller). If
// shutdown came between the check and the queueing, on_shutdown may have
// missed the task: take it back out.
CREW_EXECUTOR_TEMPLATE
bool CREW_EXECUTOR::reschedule_periodic(task& next, detail::clock::time_point due, detail::schedule_slot& slot) {
    if (!periodic_may_run()) return false;
    enqueue_counted([&] {
        queue_.requeue(std::move(next), due, slot);
        return true;
    });
    if (periodic_may_run()) ensure_prestart();
    else drop_queued(slot);
    return true;
}

CREW_EXECUTOR_TEMPLATE
const detail::pool_link::operations& CREW_EXECUTOR::link_operations() noexcept {
    static constexpr detail::pool_link::operations operations{
        [](void* pool, detail::schedule_slot& slot) noexcept {
            static_cast<basic_executor*>(pool)->scheduled_task_cancelled(slot);
        },
        [](void* pool, task& next, detail::clock::time_point due, detail::schedule_slot& slot) {
            return static_cast<basic_executor*>(pool)->reschedule_periodic(next, due, slot);
        },
    };
    return operations;
}

#undef CREW_EXECUTOR
#undef CREW_EXECUTOR_TEMPLATE

} // namespace crew

#endif
