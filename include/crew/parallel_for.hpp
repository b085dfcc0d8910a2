#ifndef CREW_PARALLEL_FOR_HPP
#define CREW_PARALLEL_FOR_HPP

/// \file
/// `crew::parallel_for`, `crew::parallel_for_each` and
/// `crew::parallel_for_blocks`: TBB's loops on a crew pool. The calling
/// thread takes part; on one of the pool's own workers a loop never
/// deadlocks, however busy the pool. The reductions are in
/// `<crew/parallel_reduce.hpp>`.

#include <crew/detail/work_stealing/parallel_loop.hpp>

#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator> // the range concepts, without <ranges>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace crew {

namespace detail {

// An index type parallel_for accepts: an integer, not bool.
template <class T>
concept loop_index = std::integral<T> && !std::same_as<std::remove_cv_t<T>, bool>;

template <class Index, loop_index Grain>
std::make_unsigned_t<Index> checked_grain(Grain grain, const char* who) {
    using size_type = std::make_unsigned_t<Index>;
    if (grain <= 0) throw std::invalid_argument(std::string(who) + ": grain must be positive");
    if (std::cmp_greater(grain, std::numeric_limits<size_type>::max())) return std::numeric_limits<size_type>::max();
    return static_cast<size_type>(grain);
}

// [first, last) as the index type (the common type of First and Last),
// checked: throws std::invalid_argument naming the bad bound, after `who`.
template <class First, class Last>
std::pair<std::common_type_t<First, Last>, std::common_type_t<First, Last>> checked_bounds(First first, Last last,
                                                                                         const char* who) {
    using Index = std::common_type_t<First, Last>;
    if (!std::in_range<Index>(first))
        throw std::invalid_argument(std::string(who) +
                                    ": first does not fit the index type (the common type of first and last)");
    if (!std::in_range<Index>(last))
        throw std::invalid_argument(std::string(who) +
                                    ": last does not fit the index type (the common type of first and last)");
    const auto from = static_cast<Index>(first);
    const auto to = static_cast<Index>(last);
    if (from > to) throw std::invalid_argument(std::string(who) + ": first must not exceed last");
    return {from, to};
}

// Checks the arguments, then runs the loop; `grain` 0: sized from the pool.
template <class First, class Last, class Executor, class F>
void checked_parallel_for(Executor& ex, First first, Last last, F& fn,
                          std::make_unsigned_t<std::common_type_t<First, Last>> grain) {
    using Index = std::common_type_t<First, Last>;
    static_assert(std::invocable<F&, Index>,
                  "crew::parallel_for: fn must be callable as fn(i), i of the common type of first and last");
    const auto [from, to] = checked_bounds(first, last, "crew::parallel_for");
    if (from == to) return;
    run_parallel_loop<Index>(ex, from, to, fn, grain);
}

// parallel_for_blocks's body: hands each block to fn as fn(first, last).
template <class Index, class F>
struct block_caller {
    using whole_blocks = void;
    F& fn;
    void operator()(std::size_t, Index first, Index last) { std::invoke(fn, first, last); }
};

template <class First, class Last, class Executor, class F>
void checked_parallel_for_blocks(Executor& ex, First first, Last last, F& fn,
                                 std::make_unsigned_t<std::common_type_t<First, Last>> grain) {
    using Index = std::common_type_t<First, Last>;
    static_assert(std::invocable<F&, Index, Index>,
                  "crew::parallel_for_blocks: fn must be callable as fn(block_first, block_last), both of the "
                  "common type of first and last");
    const auto [from, to] = checked_bounds(first, last, "crew::parallel_for_blocks");
    if (from == to) return;
    block_caller<Index, F> body{fn};
    run_parallel_loop<Index>(ex, from, to, body, grain);
}

template <class Executor, class R, class F>
void checked_parallel_for_each(Executor& ex, R& range, F& fn,
                               std::make_unsigned_t<std::ranges::range_difference_t<R>> grain) {
    using difference = std::ranges::range_difference_t<R>;
    static_assert(std::invocable<F&, std::ranges::range_reference_t<R>>,
                  "crew::parallel_for_each: fn must be callable as fn(element)");
    const auto size = static_cast<difference>(std::ranges::size(range));
    if (size == 0) return;
    const auto begin = std::ranges::begin(range);
    auto body = [&begin, &fn](difference i) { std::invoke(fn, begin[i]); };
    run_parallel_loop<difference>(ex, difference(0), size, body, grain);
}

} // namespace detail

/// Calls `fn(i)` for every integer `i` in `[first, last)`, on the calling
/// thread and on helper tasks of `ex`; returns when every call has returned.
///
/// - `i` has the common type of `First` and `Last` (usually both are the
///   same). `fn` is called concurrently from several threads, through one
///   reference: a mutable body's state is shared.
/// - Blocks: `[first, last)` is cut into about 8 blocks per thread of
///   `ex`'s maximum size (at most the hardware's threads; for an executor
///   that does not tell its size, the hardware's threads). Each block is a
///   plain loop on one thread. Threads claim blocks one at a time, so a slow
///   block does not hold the others back.
/// - The calling thread runs blocks too. Helpers are tasks of `ex`, at most
///   one fewer than the threads the loop may use; a helper the executor
///   refuses is harmless (whatever its RejectPolicy does: discarded, thrown,
///   run by the caller), since the caller does the blocks nobody claims.
///   It never waits for a helper that has not started: on one of the pool's
///   own workers, with every other worker busy (or in a nested loop on a
///   pool of one), it simply runs every block itself. With `block_policy` on
///   a full queue, submitting a helper waits for room as the policy says.
/// - Failures: the first exception escaping `fn` is rethrown once the blocks
///   already running have finished; blocks not yet started are skipped.
/// - Throws `std::invalid_argument` naming the argument if `first > last` or
///   a bound does not fit the index type. An empty range calls nothing.
/// - Cost: one allocation (the loop's state) when the loop is shared; none,
///   and no helper, when it fits one block or the executor has one thread.
///
/// Thread safety: may be called from any thread, including the pool's own
/// tasks and from inside another loop's `fn`. Takes no lock of its own.
template <class Executor, detail::loop_index First, detail::loop_index Last, class F>
void parallel_for(Executor&& ex, First first, Last last, F&& fn) {
    detail::checked_parallel_for(ex, first, last, fn, 0);
}

/// As `parallel_for(ex, first, last, fn)`, in blocks of `grain` indices (the
/// last block may be shorter). Throws `std::invalid_argument` naming `grain`
/// if it is not positive.
template <class Executor, detail::loop_index First, detail::loop_index Last, class F, detail::loop_index Grain>
void parallel_for(Executor&& ex, First first, Last last, F&& fn, Grain grain) {
    using Index = std::common_type_t<First, Last>;
    detail::checked_parallel_for(ex, first, last, fn, detail::checked_grain<Index>(grain, "crew::parallel_for"));
}

/// Calls `fn(block_first, block_last)` for consecutive blocks that together
/// cover `[first, last)` once, as `parallel_for` cuts it: for a body that
/// does better with a whole block at hand (a local accumulator, a buffer
/// per block, a vectorised inner loop) than one index at a time.
///
/// - Both bounds have the common type of `First` and `Last`. Blocks do not
///   overlap, are never empty, and are cut the same way whoever runs them:
///   block k is `[first + k * grain, first + (k + 1) * grain)`, the last one
///   ending at `last`. Without a grain, it is sized as `parallel_for`'s.
/// - Everything else is `parallel_for`'s: the caller runs blocks too and
///   never waits for a helper that has not started (no deadlock on the
///   pool's own workers, even a pool of one); the first exception escaping
///   `fn` is rethrown once the blocks already running have finished, blocks
///   not yet started are skipped; `first > last` or a bound that does not
///   fit throws `std::invalid_argument` naming it; an empty range calls
///   nothing; `fn` is shared by every thread.
///
/// Thread safety: as `parallel_for`. Takes no lock of its own.
template <class Executor, detail::loop_index First, detail::loop_index Last, class F>
void parallel_for_blocks(Executor&& ex, First first, Last last, F&& fn) {
    detail::checked_parallel_for_blocks(ex, first, last, fn, 0);
}

/// As `parallel_for_blocks(ex, first, last, fn)`, in blocks of exactly
/// `grain` indices (the last may be shorter). Throws `std::invalid_argument`
/// naming `grain` if it is not positive.
template <class Executor, detail::loop_index First, detail::loop_index Last, class F, detail::loop_index Grain>
void parallel_for_blocks(Executor&& ex, First first, Last last, F&& fn, Grain grain) {
    using Index = std::common_type_t<First, Last>;
    detail::checked_parallel_for_blocks(ex, first, last, fn,
                                        detail::checked_grain<Index>(grain, "crew::parallel_for_blocks"));
}

/// Calls `fn(element)` for every element of the random-access `range` (a
/// reference: `fn` may change it), as `parallel_for` over its positions.
/// The range must not change size meanwhile.
template <class Executor, std::ranges::random_access_range R, class F>
    requires std::ranges::sized_range<R>
void parallel_for_each(Executor&& ex, R&& range, F&& fn) {
    detail::checked_parallel_for_each(ex, range, fn, 0);
}

/// As `parallel_for_each(ex, range, fn)`, in blocks of `grain` elements.
/// Throws `std::invalid_argument` naming `grain` if it is not positive.
template <class Executor, std::ranges::random_access_range R, class F, detail::loop_index Grain>
    requires std::ranges::sized_range<R>
void parallel_for_each(Executor&& ex, R&& range, F&& fn, Grain grain) {
    using difference = std::ranges::range_difference_t<R>;
    detail::checked_parallel_for_each(ex, range, fn,
                                      detail::checked_grain<difference>(grain, "crew::parallel_for_each"));
}

} // namespace crew

#endif
