#ifndef CREW_POOL_EXECUTOR_HPP
#define CREW_POOL_EXECUTOR_HPP

/// \file
/// `crew::pool_executor<Pool>`: what `basic_executor::get_executor()` returns,
/// a cheap, copyable, non-owning handle to a pool. With `<crew/asio.hpp>` it
/// is an executor for Boost.Asio; without it, a plain handle (nothing here
/// needs Asio).

#include <crew/detail/work_stealing/worker_context.hpp>
#include <crew/errors.hpp>
#include <crew/fwd.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>

namespace crew {

template <class Pool>
class pool_executor;
template <class Pool>
class tracked_pool_executor;

namespace detail {

/// A pool's outstanding work in Asio's sense: how many tracked executors
/// (`tracked_pool_executor`, `pool_executor::on_work_started`) are alive.
/// The pool's destructor waits until there are none before it shuts down,
/// as `asio::thread_pool::join()` waits for its outstanding work. Cold: the
/// pool's `execute` never touches it, only tracked executors' copies and
/// destructions, and the destructor (one uncontended lock).
///
/// Thread safety: every member may be called from any thread. The count
/// goes to zero only under the mutex, and the waiter reads it under the
/// mutex, so the waiter cannot see zero, return and destroy the pool while
/// the last `finished()` still uses the mutex or the condition variable.
class outstanding_work {
  public:
    void started() noexcept { count_.fetch_add(1, std::memory_order_relaxed); }

    void finished() noexcept {
        std::size_t n = count_.load(std::memory_order_relaxed);
        while (n > 1)
            if (count_.compare_exchange_weak(n, n - 1, std::memory_order_release, std::memory_order_relaxed)) return;
        const std::lock_guard<std::mutex> lock(mutex_);
        if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1) none_left_.notify_all();
    }

    std::size_t count() const noexcept { return count_.load(std::memory_order_acquire); }

    /// Blocks until no tracked executor is left.
    void wait_until_none() {
        std::unique_lock<std::mutex> lock(mutex_);
        waited_on_.store(true, std::memory_order_relaxed);
        none_left_.wait(lock, [this] { return count_.load(std::memory_order_acquire) == 0; });
    }

    /// True once `wait_until_none()` was called (the pool's destructor has
    /// begun to wait): for tests.
    bool waited_on() const noexcept { return waited_on_.load(std::memory_order_relaxed); }

  private:
    std::atomic<std::size_t> count_{0};
    std::atomic<bool> waited_on_{false};
    std::mutex mutex_;
    std::condition_variable none_left_;
};

// Boost.Asio without <crew/asio.hpp>: Asio asks a pool_executor for
// properties (require(ex, blocking.never) for post and defer, query(ex,
// context) for strands) that only that header answers, and would fail
// deep inside its own machinery. So pool_executor has a member require and
// query that Asio finds first, and that fail with a sentence naming the
// header, but only while that header's free functions are absent:
// asio_glue_missing asks whether require(ex, p) for a `p` that converts to
// anything picks the decoy below alone (no other require for the executor)
// or is ambiguous (<crew/asio.hpp>'s overloads take it too).
struct asio_probe_decoy {};
template <class Pool>
void require(const pool_executor<Pool>&, asio_probe_decoy); // never defined: only ever looked up
template <std::size_t>
struct asio_probe {
    template <class T>
    operator T() const; // never defined
};
template <class Executor, class Property>
concept asio_glue_missing = requires(const Executor& ex) { require(ex, asio_probe<sizeof(Property)>{}); };

template <class>
inline constexpr bool asio_glue_needed = false;

// The one error a translation unit gets: a class template, instantiated once
// per pool type however many properties Asio asks for (five for a `post`),
// where a static_assert in each decoy would fire once per property.
template <class Pool>
struct asio_header_missing {
    static_assert(asio_glue_needed<Pool>,
                  "crew: to hand a pool's get_executor() to Boost.Asio (post, defer, dispatch, strands, "
                  "co_spawn), #include <crew/asio.hpp> in this translation unit");
    using type = pool_executor<Pool>;
};
// The decoys' return type: it names asio_header_missing only where the
// decoy's constraint holds (the header is missing), because Clang 14
// substitutes a return type before it checks the constraints; and it depends
// on Property, so that it is looked at only when Asio asks for a property.
template <bool GlueMissing, class Pool>
struct asio_decoy_result_of {
    using type = pool_executor<Pool>; // never called: the constraint fails
};
template <class Pool>
struct asio_decoy_result_of<true, Pool> {
    using type = typename asio_header_missing<Pool>::type;
};
template <class Pool, class Property>
using asio_decoy_result =
    typename asio_decoy_result_of<asio_glue_missing<pool_executor<Pool>, Property>, Pool>::type;

} // namespace detail

/// A handle to a pool: copyable, two pointers' worth, never owning. The
/// pool must outlive every handle used. Two handles are equal when they
/// refer to the same pool.
///
/// Thread safety: a handle may be copied and used from any thread; each
/// call is the pool's own (see `basic_executor`).
template <class Pool>
class pool_executor {
  public:
    explicit pool_executor(Pool& pool) noexcept : pool_(std::addressof(pool)) {}

    /// The pool.
    Pool& context() const noexcept { return *pool_; }

    /// True when called on one of the pool's own workers.
    bool running_in_this_thread() const noexcept { return pool_->called_from_own_worker(); }

    /// Runs `f` on the pool: what Asio calls for `post`, `defer`, `dispatch`,
    /// strands, `co_spawn` and senders. Called on one of the pool's own
    /// workers, it runs `f` at once instead, and what `f` throws propagates,
    /// unless the handle was made with `inline_on_own_thread(false)` (what
    /// Asio's `post` and `defer` ask for). Inline by default, as Asio's own
    /// executors are (`dispatch` from Boost 1.81 uses the executor as given).
    ///
    /// `f` is invoked as an lvalue on both paths, as an Asio standard
    /// executor must (`invocable<remove_cvref_t<F>&>`): inline, on a local
    /// copy (a decay-copy, moved from `f` when it is an rvalue, destroyed
    /// before `execute` returns); queued, on the copy the task holds. So a
    /// call operator qualified `&` works, and one overloaded on `&` and `&&`
    /// gets the `&` overload either way.
    ///
    /// Otherwise `pool.execute(f)`, with one difference: a refusal never
    /// throws. The pool counts it in `rejected_task_count()` and hands it to
    /// its RejectPolicy, which does what it does to any task (run it on this
    /// thread, discard it, make room, wait for room), except that where the
    /// policy would throw `rejected_execution_error` (`abort_policy`; also
    /// `block_policy` once shut down or out of time) `f` is destroyed unrun
    /// and `execute` returns. Asio calls `execute` from places an exception
    /// cannot leave (destructors, `noexcept` functions), and treats a
    /// destroyed function object as work that will never run, as
    /// `asio::thread_pool` does with work it receives after `stop()`. (With
    /// `block_policy` or a policy of your own, a `rejected_execution_error`
    /// that `f` itself throws while the policy runs it on this thread is
    /// taken for the refusal too.) `pool.execute(f)` and `pool.submit(f)`
    /// still throw. Other exceptions propagate: `std::bad_alloc`,
    /// `std::invalid_argument` for an empty `f`, and what `f` throws when it
    /// runs on this thread.
    template <class F>
    void execute(F&& f) const {
        if (inline_ && running_in_this_thread()) {
            std::decay_t<F> local(std::forward<F>(f));
            local();
        } else {
            hand_over(std::forward<F>(f));
        }
    }

    /// A copy that runs work inline when called on the pool's own workers
    /// (`true`, the default), or always queues it (`false`).
    pool_executor inline_on_own_thread(bool runs_inline) const noexcept {
        pool_executor copy = *this;
        copy.inline_ = runs_inline;
        return copy;
    }
    bool runs_inline_on_own_thread() const noexcept { return inline_; }

    /// Asio's outstanding work, Networking TS style (as
    /// `asio::thread_pool::executor_type` has them): `on_work_started()`
    /// counts one unit of outstanding work in the pool, `on_work_finished()`
    /// ends one. While any is outstanding the pool's destructor waits (see
    /// `tracked_pool_executor`). Each `on_work_started()` needs exactly one
    /// `on_work_finished()`, on a handle to the same pool, before the pool is
    /// destroyed. Lock-free, except that the last `on_work_finished()` takes
    /// a mutex to wake the destructor.
    void on_work_started() const noexcept { crew_outstanding_work(*pool_).started(); }
    void on_work_finished() const noexcept { crew_outstanding_work(*pool_).finished(); }

    /// Not for calling: Boost.Asio finds these only where `<crew/asio.hpp>`
    /// was not included (see `detail::asio_glue_missing`), when it asks the
    /// handle for a property (`post` and `defer` require
    /// `blocking.never`, strands query `execution::context`), and they fail
    /// to compile with one sentence naming that header instead of an error
    /// deep inside Asio. With the header they do not exist.
    template <class Property>
        requires detail::asio_glue_missing<pool_executor, Property>
    detail::asio_decoy_result<Pool, Property> require(const Property&) const;
    template <class Property>
        requires detail::asio_glue_missing<pool_executor, Property>
    detail::asio_decoy_result<Pool, Property> query(const Property&) const;

    /// Same pool. (Whether work may run inline does not count: both handles
    /// reach the same workers.)
    friend bool operator==(const pool_executor& a, const pool_executor& b) noexcept { return a.pool_ == b.pool_; }

  private:
    // A pool whose RejectPolicy never throws a rejection needs no handler
    // (and one would catch a rejected_execution_error that caller_runs_policy's
    // run of `f` throws).
    static constexpr bool refusals_never_throw = [] {
        if constexpr (requires { typename Pool::reject_policy_type; }) {
            using P = typename Pool::reject_policy_type;
            return std::is_same_v<P, discard_policy> || std::is_same_v<P, caller_runs_policy> ||
                   std::is_same_v<P, discard_oldest_policy>;
        } else {
            return false;
        }
    }();

    template <class F>
    void hand_over(F&& f) const {
        if constexpr (refusals_never_throw) {
            pool_->execute(std::forward<F>(f));
        } else {
            try {
                pool_->execute(std::forward<F>(f));
            } catch (const rejected_execution_error&) {
                // Refused: `f` (moved into the pool's task) is already destroyed.
            }
        }
    }

    Pool* pool_;
    bool inline_ = true;
};

/// A `pool_executor` that counts as outstanding work while it exists: what
/// `boost::asio::require(ex, execution::outstanding_work.tracked)` (and
/// `prefer`, and `asio::make_work_guard(ex)`) give for a pool's executor
/// with `<crew/asio.hpp>`, as `asio::thread_pool`'s tracked executors do.
/// While any tracked executor of a pool exists, the pool's destructor waits
/// before it shuts down, so a chain of handlers that each hold one, as
/// Asio's composed operations do, runs to its end. A `pool_executor` stays
/// untracked and costs nothing of this.
///
/// Each copy counts once; a moved-from handle counts no more and may only be
/// destroyed or assigned to (as Asio's own tracked executors). Otherwise it
/// does what a `pool_executor` does: `execute`, `context()`,
/// `running_in_this_thread()`, `inline_on_own_thread(bool)`; `untracked()`
/// gives the plain handle back. Two are equal when they refer to the same
/// pool.
///
/// Thread safety: as `pool_executor`. Copying and destroying one is an
/// atomic increment or decrement on the pool's count, except that the last
/// one of a pool takes a mutex to wake a waiting destructor. Every tracked
/// executor must be destroyed before its pool's destructor can return, and
/// a thread that holds one must not destroy the pool (it would wait for
/// itself).
template <class Pool>
class tracked_pool_executor {
  public:
    explicit tracked_pool_executor(const pool_executor<Pool>& ex) noexcept
        : pool_(&ex.context()), inline_(ex.runs_inline_on_own_thread()) {
        crew_outstanding_work(*pool_).started();
    }
    tracked_pool_executor(const tracked_pool_executor& other) noexcept : pool_(other.pool_), inline_(other.inline_) {
        if (pool_) crew_outstanding_work(*pool_).started();
    }
    tracked_pool_executor(tracked_pool_executor&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)), inline_(other.inline_) {}
    tracked_pool_executor& operator=(const tracked_pool_executor& other) noexcept {
        if (this != &other) *this = tracked_pool_executor(other);
        return *this;
    }
    tracked_pool_executor& operator=(tracked_pool_executor&& other) noexcept {
        if (this != &other) {
            release();
            pool_ = std::exchange(other.pool_, nullptr);
            inline_ = other.inline_;
        }
        return *this;
    }
    ~tracked_pool_executor() { release(); }

    /// The plain (untracked) handle.
    pool_executor<Pool> untracked() const noexcept {
        return pool_executor<Pool>(*pool_).inline_on_own_thread(inline_);
    }

    Pool& context() const noexcept { return *pool_; }
    bool running_in_this_thread() const noexcept { return pool_->called_from_own_worker(); }

    /// As `pool_executor::execute`.
    template <class F>
    void execute(F&& f) const {
        untracked().execute(std::forward<F>(f));
    }

    tracked_pool_executor inline_on_own_thread(bool runs_inline) const noexcept {
        tracked_pool_executor copy = *this;
        copy.inline_ = runs_inline;
        return copy;
    }
    bool runs_inline_on_own_thread() const noexcept { return inline_; }

    friend bool operator==(const tracked_pool_executor& a, const tracked_pool_executor& b) noexcept {
        return a.pool_ == b.pool_;
    }

  private:
    void release() noexcept {
        if (pool_) crew_outstanding_work(*std::exchange(pool_, nullptr)).finished();
    }

    Pool* pool_;
    bool inline_;
};

} // namespace crew

#endif
