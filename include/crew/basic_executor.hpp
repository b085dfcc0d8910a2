#ifndef CREW_BASIC_EXECUTOR_HPP
#define CREW_BASIC_EXECUTOR_HPP

/// \file
/// `crew::basic_executor`, the policy-based thread pool with the semantics of
/// Java's `ThreadPoolExecutor`.

#include <crew/concepts.hpp>
#include <crew/detail/cache_line.hpp>
#include <crew/detail/sync/asymmetric_fence.hpp>
#include <crew/detail/future/bound_call.hpp>
#include <crew/detail/ctl.hpp>
#include <crew/detail/sync/lock_contract.hpp>
#include <crew/detail/report.hpp>
#include <crew/detail/sanitizers.hpp>
#include <crew/detail/future/schedule.hpp>
#include <crew/detail/future/submit.hpp>
#include <crew/detail/pool_worker.hpp>
#include <crew/detail/test_seam.hpp>
#include <crew/detail/thread_name.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/detail/work_stealing/spawn.hpp>
#include <crew/detail/work_stealing/worker_context.hpp>
#include <crew/errors.hpp>
#include <crew/fwd.hpp>
#include <crew/future.hpp>
#include <crew/periodic_options.hpp>
#include <crew/pool_executor.hpp>
#include <crew/policies/lock.hpp>
#include <crew/policies/reject.hpp>
#include <crew/policies/thread_factory.hpp>
#include <crew/pool_options.hpp>
#include <crew/rejection_context.hpp>
#include <crew/scheduled_executor_service.hpp>
#include <crew/scheduled_future.hpp>
#include <crew/task.hpp>
#include <crew/task_timing.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator> // std::ranges::size, empty, sized_range (not <ranges>: no views needed)
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace crew {


/// A thread pool with the semantics of Java's `ThreadPoolExecutor`, composed
/// from four policies at compile time.
///
/// \b Policies (each slot's concept in concepts.hpp; the shipped policies
/// and how to choose, doc/policies.md): `QueuePolicy` (no default: where
/// tasks wait, and how idle workers block; with `delayed_queue` the pool also
/// schedules, as Java's `ScheduledThreadPoolExecutor`), `RejectPolicy`
/// (default `abort_policy`: what happens to a refused task),
/// `ThreadFactoryPolicy` (default `default_thread_factory`: how workers are
/// made and named), `LockPolicy` (default `std::mutex`: the lock guarding the
/// worker set and statistics, not the queue).
///
/// \b Behaviour (Java's): `execute` starts a new worker while fewer than
/// `core_pool_size` run; otherwise it queues the task; if the queue refuses,
/// it starts a worker up to `maximum_pool_size`; otherwise it rejects.
/// Workers beyond the core size (or all, with `allow_core_thread_timeout`)
/// exit after `keep_alive` without work.
///
/// \b Beyond Java: with `grow_first_queue` the pool starts workers up to the
/// maximum before it queues; a scheduled pool whose maximum exceeds its core
/// size starts workers while every worker is busy and tasks wait (elastic);
/// `pause()`/`resume()` hold back the start of tasks; a task observer
/// (`pool_options::task_observer`, `set_task_observer`) sees each task's
/// queue wait and run time; `rejected_task_count()` counts refusals;
/// `try_execute`/`try_submit` answer "busy" instead of calling the
/// RejectPolicy.
///
/// \b Thread safety: every member may be called from any thread, including
/// from the pool's own tasks, except that the destructor must not race with
/// other calls.
namespace detail {
template <class Pool>
struct queue_hooks; // impl/queue_hooks.hpp
} // namespace detail

template <class QueuePolicy, class RejectPolicy, class ThreadFactoryPolicy, class LockPolicy>
class basic_executor
    : public scheduled_executor_service<basic_executor<QueuePolicy, RejectPolicy, ThreadFactoryPolicy, LockPolicy>,
                                        QueuePolicy> {
    static_assert(detail::policy_slots_checked<QueuePolicy, RejectPolicy, ThreadFactoryPolicy, LockPolicy>());

  public:
    using queue_type = QueuePolicy;
    using reject_policy_type = RejectPolicy;
    using thread_factory_type = ThreadFactoryPolicy;
    using lock_type = LockPolicy;
    /// What `get_executor()` returns.
    using executor_type = pool_executor<basic_executor>;

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

    /// A pool with the given options and reject policy, and a default thread
    /// factory: a policy with state needs no factory placeholder, as in
    /// `basic_executor<bounded_queue, block_policy> pool(options, block_policy{1s});`.
    /// `reject` must be a `RejectPolicy` (not merely convert to one). Throws
    /// as the constructor above.
    template <class Reject>
        requires std::same_as<std::remove_cvref_t<Reject>, RejectPolicy> &&
                 (!std::same_as<RejectPolicy, ThreadFactoryPolicy>) && std::default_initializable<ThreadFactoryPolicy>
    explicit basic_executor(pool_options options, Reject&& reject)
        : basic_executor(std::move(options), ThreadFactoryPolicy{}, RejectPolicy(std::forward<Reject>(reject))) {}

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
    /// What `f` returns is discarded, silently: use `submit` for a result
    /// (or an error code) someone must see. A `f` that returns a
    /// `crew::coroutine` does not compile: a coroutine is lazy, and dropped
    /// it would never start (use `crew::spawn`).
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
    /// `rejected_execution_error`. The shared state (which also holds the
    /// callable) comes from a recycler: no allocation in steady state, one
    /// when the thread has no block to reuse or the state is over 512 bytes;
    /// a callable taking a stop token adds its `std::stop_source`'s, every
    /// time. Throws `std::invalid_argument` if `f` is empty.
    template <class F>
    auto submit(F&& f);

    /// `submit` and `execute` of `std::invoke(f, args...)`, with `f` and
    /// the arguments decay-copied (as `std::async` and `std::thread`: a
    /// reference needs `std::ref`) and moved into the call.
    template <class F, class A, class... Args>
    auto submit(F&& f, A&& a, Args&&... args) {
        return submit(detail::bind_call(std::forward<F>(f), std::forward<A>(a), std::forward<Args>(args)...));
    }
    template <class F, class A, class... Args>
    void execute(F&& f, A&& a, Args&&... args) {
        execute(detail::bind_call(std::forward<F>(f), std::forward<A>(a), std::forward<Args>(args)...));
    }

    /// As `execute`, except where `execute` would hand the task to the
    /// RejectPolicy (the queue is full and the pool at its maximum, the pool
    /// is paused with a full queue, or it is shut down): then it returns
    /// false and `f` is destroyed unrun. The RejectPolicy is not consulted
    /// at all (nothing runs on the calling thread, nothing waits for room,
    /// nothing queued is discarded) and the refusal is not counted in
    /// `rejected_task_count()`. Accepts what `execute` accepts
    /// (`with_priority`, a stop-token callable, a `crew::task` by
    /// `std::move`); on a scheduled pool the task is due now. Costs what
    /// `execute` costs: no allocation for a small callable, no pool lock.
    /// Throws `std::invalid_argument` if `f` is empty. (A `crew::task`
    /// lvalue goes to the overload below, which leaves it with the caller
    /// when refused.)
    template <class F>
    bool try_execute(F&& f) {
        task t = make_task(std::forward<F>(f));
        return try_execute(t); // refused: `t` dies here, unrun
    }

    /// As `submit`, except where `submit` would hand the task to the
    /// RejectPolicy: then it returns an empty `std::optional`, `f` is
    /// destroyed unrun, the RejectPolicy is not consulted, and the refusal
    /// is not counted in `rejected_task_count()` (see `try_execute`).
    /// Otherwise the optional holds what `submit` returns (a
    /// `scheduled_future`, due now, on a scheduled pool). Allocates as
    /// `submit` does, refused or not; no pool lock. Throws
    /// `std::invalid_argument` if `f` is empty.
    template <class F>
    auto try_submit(F&& f);

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

    /// A cheap, copyable, non-owning handle to this pool; with
    /// `<crew/asio.hpp>`, an executor for Boost.Asio. No lock.
    executor_type get_executor() noexcept { return executor_type(*this); }

    /// `try_execute` for a `crew::task` lvalue: false, `t` untouched, where
    /// `execute` would reject (accepted, `t` is moved from). Neither checks
    /// nor stamps `t` (`rejection_context::try_execute`'s retry). No pool lock.
    bool try_execute(task& t);

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

    /// Pauses the pool: from now until `resume()`, no worker starts a task.
    /// Running tasks finish; `execute`/`submit`/`schedule` only queue (a pool
    /// below its core size starts idle workers; with the queue full, the task
    /// goes to the RejectPolicy, and the pool does not grow). A worker that
    /// took a task as the pool paused holds it until `resume()`, counted in
    /// `queue_size()` and against `queue_capacity()`. `shutdown()` keeps the
    /// queued tasks until `resume()`; `shutdown_now()` returns them, held
    /// ones and ones a worker is just taking included (none of them runs);
    /// the destructor resumes first; `wait_idle()` waits for `resume()`.
    /// `block_policy` rejects what the pool's own task submits to its full
    /// queue. Idempotent. Atomic store only.
    void pause() noexcept { paused_.store(true); }

    /// Lets workers start tasks again, held ones first; everything the
    /// caller did before `resume()` happens-before each task it releases.
    /// A `grow_first_queue` pool starts workers for the tasks queued while
    /// paused, up to its maximum. Idempotent. Takes main_lock_ to wake the
    /// workers that hold a task.
    void resume();

    /// True between `pause()` and `resume()`.
    bool is_paused() const noexcept { return paused_.load(); }

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
    /// Tasks waiting in the queue, and those workers of a paused pool hold.
    std::size_t queue_size() const { return queue_.size() + held_count_.load(std::memory_order_relaxed); }
    /// How many tasks the queue may hold (`bounded_queue`: `queue_capacity`).
    std::size_t queue_capacity() const { return queue_.capacity(); }
    /// Drops cancelled tasks from the queue; returns how many.
    std::size_t purge();
    /// Tasks handed to the RejectPolicy, whatever it then did (threw,
    /// discarded, ran or waited to queue them). A refusal of `try_execute`
    /// or `try_submit` is not counted: no policy saw it.
    std::uint64_t rejected_task_count() const noexcept { return rejected_.load(std::memory_order_relaxed); }

    // ---- observing tasks ------------------------------------------------

    /// Calls `observer` on the worker after each task a worker runs (after
    /// `after_execute`), with its `task_timing`; an empty function removes
    /// it. Tasks accepted from now on are stamped with the time; with no
    /// observer, the pool reads no clock and stores nothing per task. A task
    /// already running may report to the previous observer; each observer
    /// given is kept until the pool is destroyed. Takes main_lock_. An
    /// exception from the observer is written to standard error.
    void set_task_observer(std::function<void(const task_timing&)> observer);

    /// The queue, for inspection (say, `delayed_queue::wait_statistics()`).
    const QueuePolicy& queue() const noexcept { return queue_; }

  private:
    // any_executor's submit on a scheduled pool is this pool's schedule_once.
    friend class any_executor;
    // The scheduling members (crew/scheduled_executor_service.hpp) reach into the pool.
    friend class scheduled_executor_service<basic_executor, QueuePolicy>;
    static constexpr bool is_scheduling = scheduling_queue_policy<QueuePolicy>;
    using cv_type = std::conditional_t<std::is_same_v<LockPolicy, std::mutex>, std::condition_variable,
                                       std::condition_variable_any>;
    using unique_lock = std::unique_lock<LockPolicy>;

    using worker = detail::pool_worker; // Java's Worker (detail/pool_worker.hpp)

    static pool_options sized(std::size_t threads);
    static void validate(std::size_t core, std::size_t maximum, std::chrono::nanoseconds keep_alive,
                         bool core_timeout);

    // Locking contract. main_lock_ guards the worker lists and the counts
    // marked "under main_lock_"; the queue has its own lock. The order is
    // main_lock_, then the queue's (add_worker reads queue_.size() while it
    // registers a worker); nothing takes main_lock_ while holding the queue's,
    // and the queue never calls back into the pool. A function that needs
    // main_lock_ held takes its holder (`const unique_lock& held`, checked in
    // debug builds: detail/sync/lock_contract.hpp); every other one is called
    // without it, and its note says which lock it takes, if any.

    // ---- the rest of the surface a RejectPolicy uses, through
    // rejection_context (crew/rejection_context.hpp documents each)
    friend class rejection_context<basic_executor>;
    bool discard_oldest_queued();             // the queue's lock only
    bool remove_oldest_queued(task& oldest);  // the queue's lock only
    bool put(task& t) { return put_until(t, detail::clock::time_point::max()); } // the queue's lock only
    bool put_until(task& t, std::chrono::steady_clock::time_point deadline);    // the queue's lock only
    bool called_from_own_worker() const noexcept { // no lock
        return detail::current_worker && detail::current_worker->pool == this;
    }
    template <class> friend class pool_executor;         // the handles get_executor() returns
    template <class> friend class tracked_pool_executor; // reach the pool through these members

    // ---- the executor service (impl/executor_service.hpp): no pool lock
    template <class F>
    task make_task(F&& f) const;
    void reject(task&& t); // no pool lock; the RejectPolicy may block on the queue's
    template <class F>
    task stamped_if_observed(F&& f) const; // one load without a task observer
    template <class F>
    static task stamped(F&& f);
    // TryOnly: a refused task is destroyed and the answer is an empty
    // optional (try_submit); otherwise the RejectPolicy has it (submit).
    template <bool TryOnly, class F>
    auto submit_tagged(F&& f);
    template <bool TryOnly, class F>
    auto submit_with_priority(F&& f, int priority);
    template <bool TryOnly, class F>
    auto submit_now(F&& f, int priority);
    template <class Range, class Wrap>
    auto submit_each(Range&& tasks, Wrap wrap);

    // ---- the thread pool (impl/thread_pool.hpp, pause.hpp, lifecycle.hpp, pool_sizing.hpp)
    template <class Enqueue>
    bool enqueue_precounted(Enqueue enqueue); // no pool lock; `enqueue` takes the queue's
    template <class Enqueue>
    bool enqueue_counted(Enqueue enqueue);    // no pool lock; `enqueue` takes the queue's
    // Takes main_lock_ (and the queue's inside it) to register the worker;
    // makes, and may join, a thread with no lock held.
    bool add_worker(task& first_task, bool core);
    void add_worker_failed();                 // then try_terminate (takes main_lock_)
    void worker_main(worker& w);              // no lock
    void run_worker(worker& w);               // never takes main_lock_
    bool get_task(worker& w, task& out);      // the queue's lock only
    void hold_while_paused(worker& w, task& t); // takes main_lock_, waits on state_changed_
    bool full_counting_held() const;          // atomics only
    static void observe(const std::function<void(const task_timing&)>& observer, task_timing& timing, bool ran,
                        bool failed) noexcept;                  // no lock
    bool thread_pool_execute(task& t);        // TPE's execute (try_execute's); no pool lock
    enum spawns_rule { with_own_spawns, without_own_spawns };
    bool run_one(worker& w, task& t, detail::worker_context& context, spawns_rule spawns); // no pool lock
    bool run_task(task& t, const detail::worker_context& context); // no pool lock
    // worker_context::help_one: one queued task, taken and run by a waiting
    // worker as run_worker would (detail/work_stealing/help.hpp).
    static bool help_one(detail::worker_context& context); // no pool lock
    // worker_context::post_ticket (detail/work_stealing/spawn.hpp).
    static bool post_spawn_ticket(const void* pool, detail::spawn_deque& deque);
    void count_completed(worker& w);          // main_lock_ briefly, only if a wait_idle() waits
    void process_worker_exit(worker& w, bool completed_abruptly); // takes main_lock_
    void try_terminate();                     // takes main_lock_; never call it with main_lock_ held
    void advance_run_state(detail::ctl::word target); // CAS on ctl_ only
    void close_queue();                       // the queue's lock only
    void interrupt_idle_workers(bool only_one); // takes main_lock_, then wakes the queue without it
    void interrupt_workers();                 // takes main_lock_, then wakes the queue without it
    void decrement_worker_count() noexcept { ctl_.fetch_sub(1); } // atomic only
    void count_out_unrun(std::uint64_t n);    // main_lock_ briefly, only if a wait_idle() waits
    std::vector<task> drain_queue();          // the queue's lock
    void notify_idle_waiters();               // takes main_lock_ briefly
    void take_held_tasks(std::vector<task>& out); // takes main_lock_; requires STOP
    std::uint64_t completed(const unique_lock& held) const;
    std::size_t live_worker_count(const unique_lock& held) const;
    void run_orphaned_tasks();                // the queue's lock, add_worker's, try_terminate's
    void ensure_worker_for_queue();           // add_worker's locks
    void join_last_exited_worker();           // takes main_lock_, waits for TERMINATED
    void destroy_from_own_task(detail::worker_context& context); // takes main_lock_

    // ---- the scheduled executor (impl/scheduled_executor.hpp; delayed_queue only)
    template <bool TryOnly = false, class F>
    auto schedule_once(detail::clock::time_point due, F&& f); // no pool lock
    template <class F>
    scheduled_future<void> schedule_periodic(detail::clock::time_point first, std::chrono::nanoseconds period,
                                             detail::period_kind kind, F&& f, periodic_options options);
    template <class Queue>
    bool delayed_execute(Queue queue);        // no pool lock
    bool ensure_prestart();                   // add_worker's locks
    void grow_if_all_busy();                  // atomics; takes main_lock_ only when it may grow
    std::vector<task> drop_after_shutdown();  // the queue's lock only
    void apply_shutdown_policies();           // then try_terminate (takes main_lock_)
    // Called with the link entry's mutex held (from a cancel), never with main_lock_.
    void drop_queued(schedule_slot& slot) noexcept;
    bool periodic_may_run() const noexcept;   // atomics only
    // `held`: the link entry's mutex (its only caller is the link).
    void scheduled_task_cancelled(const std::unique_lock<std::recursive_mutex>& held, schedule_slot& slot) noexcept;
    void requeue_if_periodic(task& t) noexcept; // the queue's lock; try_terminate's if shut down

    // What a scheduled pool adds to the thread pool's steps, as Java's STPE
    // overrides TPE's hooks: defined beside the STPE code, no-ops (or the
    // thread pool's default) for any other queue.
    bool schedule_now(task& t);               // try_execute: STPE's execute; no pool lock
    void on_task_taken();                     // get_task took a task: grow_if_all_busy
    void after_run(task& t) noexcept;         // run_task ran `t`: requeue_if_periodic
    std::vector<task> on_shutdown();          // Java's onShutdown: drop_after_shutdown
    bool may_leave_waiters() const noexcept;  // atomics only
    static void size_for_no_threads(pool_options& options); // sized(0): STPE's 0 is core 0, maximum 1

    // What a QueuePolicy's optional traits add to the thread pool's steps
    // (impl/queue_hooks.hpp): no-ops for a queue without the trait.
    friend struct detail::queue_hooks<basic_executor>;
    using hooks = detail::queue_hooks<basic_executor>;

    // The link scheduled futures keep to this pool (impl/scheduled_executor.hpp).
    struct cancel_link;
    struct link_holder;
    struct no_link { explicit no_link(basic_executor&) noexcept {} };

    [[no_unique_address]] ThreadFactoryPolicy thread_factory_;
    [[no_unique_address]] RejectPolicy reject_policy_;
    QueuePolicy queue_;
    const std::function<void()> before_execute_;
    const std::function<void(std::exception_ptr)> after_execute_;
    const std::function<void()> on_terminated_;

    // Read by every execute and every worker's get_task, written rarely: a
    // cache line of its own, away from the queue's and submitted_'s writes.
    // ctl_: run state + worker count; changed by CAS from any thread
    // (add_worker, get_task, the run-state transitions), never under a lock
    // except try_terminate's TIDYING/TERMINATED stores.
    alignas(detail::cache_line) std::atomic<detail::ctl::word> ctl_{detail::ctl::of(detail::ctl::running, 0)};
    // The sizing fields: written by the setters under main_lock_ (so that
    // validation sees a consistent set), read anywhere without a lock.
    std::atomic<std::size_t> core_pool_size_;
    std::atomic<std::size_t> maximum_pool_size_;
    std::atomic<std::int64_t> keep_alive_ns_;
    std::atomic<bool> allow_core_thread_timeout_;
    std::atomic<bool> queue_closed_{false};     // set (never cleared) by close_queue(), no lock
    std::atomic<bool> paused_{false};           // pause()/resume(), no lock; read by workers before each task
    // The task observer: null, or one of observers_ (which keeps every one
    // given, so a worker may finish calling the previous). Written under
    // main_lock_, read without it.
    std::atomic<const std::function<void(const task_timing&)>*> observer_{nullptr};
    std::atomic<std::uint32_t> idle_waiters_{0};// threads inside wait_idle; changed by them, no lock

    // Written by every execute, no lock.
    alignas(detail::cache_line) std::atomic<std::uint64_t> submitted_{0}; // accepted, less removed unrun
    std::atomic<std::uint64_t> rejected_{0};              // handed to the RejectPolicy; no lock
    std::atomic<std::size_t> held_count_{0};              // tasks in workers' `held`; changed under main_lock_
    bool held_collected_ = false;                         // shutdown_now took the held tasks; under main_lock_

    alignas(detail::cache_line) mutable LockPolicy main_lock_;
    cv_type state_changed_;                     // TERMINATED, workers_ empty, idle
    std::list<worker> workers_;                 // guarded by main_lock_
    std::list<worker> exited_;                  // guarded by main_lock_; at most one
    std::size_t largest_pool_size_ = 0;         // guarded by main_lock_
    std::uint64_t completed_by_exited_ = 0;     // guarded by main_lock_
    std::list<std::function<void(const task_timing&)>> observers_; // guarded by main_lock_; nodes never move

    [[no_unique_address]] std::conditional_t<is_scheduling, link_holder, no_link> link_{*this};

    // Asio's outstanding work: the tracked executors alive (pool_executor.hpp).
    // Never touched by execute; the destructor waits for it to be none.
    detail::outstanding_work outstanding_work_;
    friend detail::outstanding_work& crew_outstanding_work(basic_executor& pool) noexcept {
        return pool.outstanding_work_;
    }
};

} // namespace crew

// The members' definitions, one file per part of Java's class hierarchy.
#include <crew/impl/executor_service.hpp>
#include <crew/impl/thread_pool.hpp>
#include <crew/impl/pause.hpp>
#include <crew/impl/lifecycle.hpp>
#include <crew/impl/pool_sizing.hpp>
#include <crew/impl/scheduled_executor.hpp>
#include <crew/impl/queue_hooks.hpp>

#endif
