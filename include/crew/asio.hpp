#ifndef CREW_ASIO_HPP
#define CREW_ASIO_HPP

/// \file
/// A crew pool as a Boost.Asio executor: with this header,
/// `pool.get_executor()` (a `crew::pool_executor<Pool>`) works with
/// `boost::asio::post`, `defer`, `dispatch`, `use_future`, `make_strand`,
/// `bind_executor`, `co_spawn` and Asio's senders (`execution::connect`,
/// `start`, `submit`). The only crew header that includes Boost.Asio; nothing
/// else of crew needs it.
///
/// \code
/// crew::fixed_pool pool(4);
/// auto ex = pool.get_executor();
/// boost::asio::post(ex, [] { /* on a worker */ });
/// std::future<int> r = boost::asio::post(ex, boost::asio::use_future([] { return 42; }));
/// auto strand = boost::asio::make_strand(ex);          // serialises its handlers on the pool
/// timer.async_wait(boost::asio::bind_executor(ex, h)); // the io_context does the I/O, the pool runs h
/// \endcode
///
/// \b Model: Asio's standard executors (P0443 properties), which Asio has
/// used since 1.18 (Boost 1.74) and still uses. A `pool_executor` is an
/// `execution::executor` through its own members (`execute`, `==`, nothrow
/// copy); this header adds what those members cannot say without Asio's
/// types, as free functions found by argument-dependent lookup: what Asio's
/// `query` and `require` try when neither a static answer nor a member
/// exists (`query(E, P)` / `require(E, P)` in their documentation, from
/// 1.18 to today). They must be free functions because `pool_executor`
/// lives in `<crew/pool_executor.hpp>`, which must not need Asio.
/// Asio's traits (`boost::asio::traits::query_free`, `require_free`,
/// `execute_member`, `equality_comparable`) deduce them with GCC and Clang;
/// for compilers where Asio does not deduce (MSVC with Boost 1.74), the
/// traits are specialised at the end of this file, as Asio does for its own
/// executors.
///
/// \b Properties of a `pool_executor`:
///
/// | property | answer |
/// |---|---|
/// | `execution::context` | one process-wide `execution_context&` (see `crew::detail::asio_execution_context`); `ex.context()` is still the pool |
/// | `execution::blocking` | `possibly` by default, as Asio's own executors; `never` when made with `inline_on_own_thread(false)` |
/// | `require(ex, blocking.possibly)` | `ex.inline_on_own_thread(true)`: runs inline when called on one of the pool's own workers |
/// | `require(ex, blocking.never)` | `ex.inline_on_own_thread(false)`: always queued |
/// | `execution::outstanding_work` | `untracked`; a `tracked_pool_executor` answers `tracked` |
/// | `require(ex, outstanding_work.tracked)` | a `tracked_pool_executor`: outstanding work of the pool while it exists; the pool's destructor waits until none is left before it shuts down (as `asio::thread_pool::join()` waits); `asio::make_work_guard(ex)` and `ex.on_work_started()` count too |
/// | `require(ex, outstanding_work.untracked)` | the plain `pool_executor` |
/// | `relationship`, `mapping`, `allocator` | not customised: Asio's static defaults answer (`fork`, `thread`), and `prefer` (as `defer` and `dispatch` use it) leaves the handle as it is |
/// | `blocking.always` | not supported: a pool cannot promise to finish a task before `execute` returns |
///
/// What `post`, `defer` and `dispatch` then do (Asio 1.18, Boost 1.74):
/// `post` and `defer` require `blocking.never`, so they always queue, even
/// on a worker; `dispatch` prefers `blocking.possibly`, so on one of the
/// pool's workers it runs the handler before it returns (and what the handler
/// throws reaches `dispatch`'s caller), and from any other thread it queues.
///
/// \b Invocation: `execute` calls the function object Asio gives it as an
/// lvalue, inline (on a local copy) as queued (on the task's copy), as
/// P0443's `executor_of` requires. So Asio's sender adaptation works
/// (`execution::connect(ex, r)`, `execution::start`, `execution::submit`:
/// their `as_invocable` is callable only as an lvalue), and a function
/// object overloaded on `&` and `&&` gets `&` either way.
///
/// \b Rejection: `execute` never throws a refusal; a refused function
/// object is destroyed unrun and counted in `rejected_task_count()`, and the
/// RejectPolicy decides whatever it can without throwing (Asio calls
/// `execute` from destructors and `noexcept` code). The pool's own `execute`
/// and `submit` still throw. What each Asio type then does, and the safe
/// shutdown order: doc/interop.md, "Rejection" and "Shutting down".
///
/// \b Exceptions from handlers go where the pool sends exceptions from
/// `execute` (the `after_execute` hook, or standard error); they do not end
/// a strand; with `use_future` they go to the `std::future`.
///
/// \b Threading and locking: every function here is lock-free except that
/// the first `query(ex, execution::context)` in a process builds the context
/// (a function-local static: C++ serialises its initialisation) and that
/// making a strand takes Asio's service-registry mutex; a handle may be used
/// from any thread. Submitting takes whatever the pool's `execute` takes (see
/// `basic_executor`). A strand over the pool holds one of Asio's strand
/// mutexes only while it moves handlers between its queues, never while a
/// handler runs, and it has at most one task in the pool at a time.
///
/// \b I/O objects: a timer or socket built on a pool's executor works (Asio
/// runs the reactor of the process-wide context on a thread of its own,
/// started with the first such object, and hands completions to the pool);
/// its pending operations are tracked work, so the pool's destructor waits
/// for them. Or build them on an `io_context`, bind their completions to the
/// pool, and hold a work guard on the `io_context` while such chains run:
/// doc/interop.md, "I/O objects on a pool's executor" and "An io_context's
/// work".
///
/// \b ODR: include this header in every translation unit that hands a
/// pool's executor to Asio. Without it, Asio sees an executor that cannot be
/// required to be non-blocking, and `post` does not compile; with it in one
/// unit and not another, Asio's traits would differ between the two.
///
/// \b Versions: Boost 1.74 (Asio 1.18) is the oldest Asio with this model,
/// and what Debian 12 ships; checked too with the Asio of Boost 1.81, 1.86
/// and 1.89. From Asio 1.26 (Boost 1.81) on, `dispatch` no longer prefers
/// `blocking.possibly`: it uses the executor as it is given. The default
/// handle is `blocking.possibly` (as Asio's own executors are), so `dispatch`
/// runs a handler inline on a worker with every version; a handle made with
/// `blocking.never` queues.
///
/// \b Boost 1.74 with C++20: `<boost/asio/awaitable.hpp>` (pulled in by
/// `<boost/asio.hpp>`) uses `std::exchange` without including `<utility>`.
/// This header includes `<utility>` first, so a `<boost/asio.hpp>` after it
/// compiles. A `<boost/asio.hpp>` first in a translation unit fails inside
/// Boost before this header is read (with or without crew): include
/// `<utility>` before it. This header itself works after `<boost/asio.hpp>`.

#include <crew/pool_executor.hpp>

// Before any Asio header: see "Boost 1.74 with C++20" above.
#include <utility>

#include <boost/asio/version.hpp>

#if BOOST_ASIO_VERSION < 101800
#error "<crew/asio.hpp> needs Boost.Asio 1.18 (Boost 1.74) or later: older Asio has only the Networking TS executor model"
#endif

#include <boost/asio/execution/blocking.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution/executor.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/require.hpp>
#include <boost/asio/traits/equality_comparable.hpp>
#include <boost/asio/traits/execute_member.hpp>
#include <boost/asio/traits/query_free.hpp>
#include <boost/asio/traits/require_free.hpp>

// What a user of this header calls next (as in the example above), so that
// `#include <crew/asio.hpp>` is enough for them.
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/defer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

namespace crew {

namespace detail {

/// The `execution_context` every pool executor reports to Asio.
///
/// Why one, and why never destroyed: Asio's strands need an
/// `execution_context` to keep their shared state in (the strand service:
/// a fixed set of mutexes that strands hash onto, and the list of live
/// strands), and they find it with `query(ex, execution::context)`. A pool
/// cannot own one (`basic_executor` must not depend on Asio), and nothing in
/// the context belongs to a pool: each strand's queues live in the strand
/// itself. So every pool shares this one; the only cost is that strands
/// over different pools hash onto the same mutexes, as all the strands of
/// one io_context do.
/// It is built on first use and deliberately never destroyed (a pointer in
/// a function-local static: still reachable, so leak checkers do not report
/// it). A strand may outlive any static object, say in a handler still
/// queued in a pool that is itself a static, or in a detached thread; a
/// context destroyed at exit would destroy the strand service under it
/// (Asio's execution_context shuts its services down in its destructor).
/// An immortal context removes that order problem for a few kilobytes.
///
/// Thread safety: the first call builds it under the C++ guard for
/// function-local statics; later calls only read a pointer. Throws
/// `std::bad_alloc` if the first call cannot allocate.
inline boost::asio::execution_context& asio_execution_context() {
    static boost::asio::execution_context* const context = new boost::asio::execution_context();
    return *context;
}

} // namespace detail

// ---- the customisation points Asio calls (found by argument-dependent lookup)

/// `boost::asio::query(ex, execution::context)`: the process-wide
/// `execution_context` of `detail::asio_execution_context`, which strands
/// (and `any_io_executor`) need. Not the pool: `ex.context()` is the pool.
/// Throws `std::bad_alloc` only on the first call in a process.
template <class Pool>
boost::asio::execution_context& query(const pool_executor<Pool>&, boost::asio::execution::context_t) {
    return detail::asio_execution_context();
}

/// `boost::asio::query(ex, execution::blocking)`: `blocking.possibly` for a
/// handle that runs work inline on the pool's own workers, else
/// `blocking.never`. A strand asks this before it runs a handler inline, so
/// `post` to a strand from inside the strand still queues.
///
/// It takes `blocking_t` by value on purpose: Asio's sub-properties
/// (`blocking.possibly`, ...) convert to it, as they do for Asio's own
/// executors' member `query(blocking_t)`, and that is what makes Asio drop
/// its static default ("every executor is possibly blocking") for this type.
template <class Pool>
boost::asio::execution::blocking_t query(const pool_executor<Pool>& ex, boost::asio::execution::blocking_t) noexcept {
    if (ex.runs_inline_on_own_thread()) return boost::asio::execution::blocking.possibly;
    return boost::asio::execution::blocking.never;
}

/// `boost::asio::require(ex, execution::blocking.possibly)`: a copy that
/// runs work inline when called on one of the pool's workers, which is what
/// `dispatch` asks for. From any other thread it still queues: only the
/// pool's own workers may run the pool's work.
template <class Pool>
pool_executor<Pool> require(const pool_executor<Pool>& ex,
                            boost::asio::execution::blocking_t::possibly_t) noexcept {
    return ex.inline_on_own_thread(true);
}

/// `boost::asio::require(ex, execution::blocking.never)`: a copy that always
/// queues, which is what `post` and `defer` ask for.
template <class Pool>
pool_executor<Pool> require(const pool_executor<Pool>& ex, boost::asio::execution::blocking_t::never_t) noexcept {
    return ex.inline_on_own_thread(false);
}

/// `boost::asio::require(ex, execution::outstanding_work.tracked)` (and
/// `prefer`, which `asio::make_work_guard(ex)`, strands, `bind_executor`'s
/// pending operations and `co_spawn` use): a `tracked_pool_executor`, which
/// counts as the pool's outstanding work while it exists, as
/// `asio::thread_pool`'s tracked executors do. The pool's destructor waits
/// until none is left before it shuts down, so a chain of operations that
/// each hold one runs to its end. The handle `ex` itself stays untracked.
template <class Pool>
tracked_pool_executor<Pool> require(const pool_executor<Pool>& ex,
                                    boost::asio::execution::outstanding_work_t::tracked_t) noexcept {
    return tracked_pool_executor<Pool>(ex);
}

/// `boost::asio::require(ex, execution::outstanding_work.untracked)`: the
/// handle unchanged (a `pool_executor` never tracks). Asio usually answers
/// this one itself from its static default; kept so that the pair is
/// complete wherever it does not.
template <class Pool>
pool_executor<Pool> require(const pool_executor<Pool>& ex,
                            boost::asio::execution::outstanding_work_t::untracked_t) noexcept {
    return ex;
}

/// `boost::asio::query(ex, execution::outstanding_work)`: `untracked`. (Asio's
/// static default says the same; this answer is explicit, so that it holds
/// beside the tracked handle's.)
template <class Pool>
constexpr boost::asio::execution::outstanding_work_t query(const pool_executor<Pool>&,
                                                           boost::asio::execution::outstanding_work_t) noexcept {
    return boost::asio::execution::outstanding_work.untracked;
}

// ---- a tracked handle: the same properties, and outstanding_work.tracked

/// As for a `pool_executor`.
template <class Pool>
boost::asio::execution_context& query(const tracked_pool_executor<Pool>&, boost::asio::execution::context_t) {
    return detail::asio_execution_context();
}

/// As for a `pool_executor`.
template <class Pool>
boost::asio::execution::blocking_t query(const tracked_pool_executor<Pool>& ex,
                                         boost::asio::execution::blocking_t) noexcept {
    if (ex.runs_inline_on_own_thread()) return boost::asio::execution::blocking.possibly;
    return boost::asio::execution::blocking.never;
}

/// `boost::asio::query(ex, execution::outstanding_work)`: `tracked`.
template <class Pool>
constexpr boost::asio::execution::outstanding_work_t query(const tracked_pool_executor<Pool>&,
                                                           boost::asio::execution::outstanding_work_t) noexcept {
    return boost::asio::execution::outstanding_work.tracked;
}

/// As for a `pool_executor`; the copy is tracked too.
template <class Pool>
tracked_pool_executor<Pool> require(const tracked_pool_executor<Pool>& ex,
                                    boost::asio::execution::blocking_t::possibly_t) noexcept {
    return ex.inline_on_own_thread(true);
}

/// As for a `pool_executor`; the copy is tracked too.
template <class Pool>
tracked_pool_executor<Pool> require(const tracked_pool_executor<Pool>& ex,
                                    boost::asio::execution::blocking_t::never_t) noexcept {
    return ex.inline_on_own_thread(false);
}

/// A tracked copy.
template <class Pool>
tracked_pool_executor<Pool> require(const tracked_pool_executor<Pool>& ex,
                                    boost::asio::execution::outstanding_work_t::tracked_t) noexcept {
    return ex;
}

/// The plain `pool_executor`: no longer counted.
template <class Pool>
pool_executor<Pool> require(const tracked_pool_executor<Pool>& ex,
                            boost::asio::execution::outstanding_work_t::untracked_t) noexcept {
    return ex.untracked();
}

} // namespace crew

// ---- Asio's traits, for compilers where Asio cannot deduce them ------------
//
// Where Asio trusts the compiler's expression SFINAE
// (BOOST_ASIO_HAS_WORKING_EXPRESSION_SFINAE: GCC and Clang always; MSVC only
// from Boost 1.77, with VS 2019 16.10 and /std:c++20) it deduces each trait
// from the expressions above, and these specialisations are compiled out.
// Elsewhere (MSVC with Boost 1.74, say) Asio reads these instead, as for its
// own executors (thread_pool.hpp, io_context.hpp).
// test/asio/traits_without_deduction/ turns the deduction off to check them.
// Specialised on the decayed types: Asio forwards `const T&` to `T` itself.

namespace boost {
namespace asio {
namespace traits {

#if !defined(BOOST_ASIO_HAS_DEDUCED_EXECUTE_MEMBER_TRAIT)
template <class Pool, class Function>
struct execute_member<crew::pool_executor<Pool>, Function> {
    static constexpr bool is_valid = true;
    static constexpr bool is_noexcept = false; // a handler run inline, std::bad_alloc
    typedef void result_type;
};
#endif

#if !defined(BOOST_ASIO_HAS_DEDUCED_EXECUTE_MEMBER_TRAIT)
template <class Pool, class Function>
struct execute_member<crew::tracked_pool_executor<Pool>, Function>
    : execute_member<crew::pool_executor<Pool>, Function> {};
#endif

#if !defined(BOOST_ASIO_HAS_DEDUCED_EQUALITY_COMPARABLE_TRAIT)
template <class Pool>
struct equality_comparable<crew::pool_executor<Pool>> {
    static constexpr bool is_valid = true;
    static constexpr bool is_noexcept = true;
};
template <class Pool>
struct equality_comparable<crew::tracked_pool_executor<Pool>> : equality_comparable<crew::pool_executor<Pool>> {};
#endif

#if !defined(BOOST_ASIO_HAS_DEDUCED_QUERY_FREE_TRAIT)
template <class Pool>
struct query_free<crew::pool_executor<Pool>, execution::context_t> {
    static constexpr bool is_valid = true;
    static constexpr bool is_noexcept = false;
    typedef execution_context& result_type;
};

// blocking_t and its sub-properties, which convert to it (see crew::query).
template <class Pool>
struct query_free<crew::pool_executor<Pool>, execution::blocking_t> {
    static constexpr bool is_valid = true;
    static constexpr bool is_noexcept = true;
    typedef execution::blocking_t result_type;
};
template <class Pool>
struct query_free<crew::pool_executor<Pool>, execution::blocking_t::possibly_t>
    : query_free<crew::pool_executor<Pool>, execution::blocking_t> {};
template <class Pool>
struct query_free<crew::pool_executor<Pool>, execution::blocking_t::never_t>
    : query_free<crew::pool_executor<Pool>, execution::blocking_t> {};

// outstanding_work_t and its sub-properties, for both handles.
template <class Pool>
struct query_free<crew::pool_executor<Pool>, execution::outstanding_work_t> {
    static constexpr bool is_valid = true;
    static constexpr bool is_noexcept = true;
    typedef execution::outstanding_work_t result_type;
};
template <class Pool>
struct query_free<crew::pool_executor<Pool>, execution::outstanding_work_t::tracked_t>
    : query_free<crew::pool_executor<Pool>, execution::outstanding_work_t> {};
template <class Pool>
struct query_free<crew::pool_executor<Pool>, execution::outstanding_work_t::untracked_t>
    : query_free<crew::pool_executor<Pool>, execution::outstanding_work_t> {};

template <class Pool, class Property>
    requires(query_free<crew::pool_executor<Pool>, Property>::is_valid)
struct query_free<crew::tracked_pool_executor<Pool>, Property> : query_free<crew::pool_executor<Pool>, Property> {};
#endif

#if !defined(BOOST_ASIO_HAS_DEDUCED_REQUIRE_FREE_TRAIT)
template <class Pool>
struct require_free<crew::pool_executor<Pool>, execution::blocking_t::possibly_t> {
    static constexpr bool is_valid = true;
    static constexpr bool is_noexcept = true;
    typedef crew::pool_executor<Pool> result_type;
};
template <class Pool>
struct require_free<crew::pool_executor<Pool>, execution::blocking_t::never_t>
    : require_free<crew::pool_executor<Pool>, execution::blocking_t::possibly_t> {};
template <class Pool>
struct require_free<crew::pool_executor<Pool>, execution::outstanding_work_t::tracked_t> {
    static constexpr bool is_valid = true;
    static constexpr bool is_noexcept = true;
    typedef crew::tracked_pool_executor<Pool> result_type;
};
template <class Pool>
struct require_free<crew::pool_executor<Pool>, execution::outstanding_work_t::untracked_t>
    : require_free<crew::pool_executor<Pool>, execution::blocking_t::possibly_t> {};

template <class Pool>
struct require_free<crew::tracked_pool_executor<Pool>, execution::blocking_t::possibly_t>
    : require_free<crew::pool_executor<Pool>, execution::outstanding_work_t::tracked_t> {};
template <class Pool>
struct require_free<crew::tracked_pool_executor<Pool>, execution::blocking_t::never_t>
    : require_free<crew::pool_executor<Pool>, execution::outstanding_work_t::tracked_t> {};
template <class Pool>
struct require_free<crew::tracked_pool_executor<Pool>, execution::outstanding_work_t::tracked_t>
    : require_free<crew::pool_executor<Pool>, execution::outstanding_work_t::tracked_t> {};
template <class Pool>
struct require_free<crew::tracked_pool_executor<Pool>, execution::outstanding_work_t::untracked_t>
    : require_free<crew::pool_executor<Pool>, execution::blocking_t::possibly_t> {};
#endif

} // namespace traits
} // namespace asio
} // namespace boost

#endif
