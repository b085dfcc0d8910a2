#ifndef CREW_PARALLEL_REDUCE_HPP
#define CREW_PARALLEL_REDUCE_HPP

/// \file
/// `crew::parallel_reduce` and `crew::transform_reduce`: TBB's and the
/// standard library's reductions on a crew pool, with a result that does
/// not depend on timing. They run on `parallel_for`'s blocks (the calling
/// thread takes part; on one of the pool's own workers they never
/// deadlock).
///
/// How the result is formed, and why it is deterministic: the range is cut
/// into a fixed sequence of blocks (fixed for a given range, grain and
/// loop width). Each block is folded from `identity` in index order on
/// whichever thread claims it, `acc = reduce(acc, fn(i))`, and its result is
/// kept by block number; once every block is done, the calling thread folds
/// those results in block order, `result = reduce(result, block_result)`,
/// starting from `identity`. Which thread ran which block, and when, does
/// not enter. So `reduce` must be associative and `identity` its identity
/// (as for `std::reduce`), but it need not be commutative; a floating-point
/// sum gives the same bits on every run with the same pool size and grain.

#include <crew/detail/cache_line.hpp>
#include <crew/detail/work_stealing/parallel_loop.hpp>
#include <crew/parallel_for.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator> // the range concepts, without <ranges>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace crew {

namespace detail {

// One block's result, on a cache line of its own: the threads that finish
// neighbouring blocks write their results at about the same time.
template <class T>
struct alignas(detail::cache_line) reduce_slot {
    std::optional<T> value;
};

// Results kept per block at most (with a small grain over a large range,
// blocks are made larger instead: block results are memory, one cache line
// each). Above the blocks a loop cuts without a grain on any width up to 512.
inline constexpr std::size_t max_reduce_blocks = 4096;

// The body parallel_reduce runs on each block: a fold from `identity` in
// index order, in a local (a tight loop the compiler may vectorise), kept
// in the block's slot.
template <class Index, class T, class F, class R>
class reduce_body {
  public:
    using whole_blocks = void;

    reduce_body(const T& identity, F& fn, R& reduce, reduce_slot<T>* slots) noexcept
        : identity_(identity), fn_(fn), reduce_(reduce), slots_(slots) {}

    T fold(Index first, Index last) {
        T acc = identity_;
        for (; first != last; ++first) acc = std::invoke(reduce_, std::move(acc), std::invoke(fn_, first));
        return acc;
    }
    void operator()(std::size_t block, Index first, Index last) { slots_[block].value.emplace(fold(first, last)); }

  private:
    const T& identity_;
    F& fn_;
    R& reduce_;
    reduce_slot<T>* slots_;
};

// parallel_reduce with checked arguments (first < last; grain 0: choose).
template <class Index, class T, class F, class R, class Executor>
T run_parallel_reduce(Executor& ex, Index first, Index last, const T& identity, F& fn, R& reduce,
                      std::make_unsigned_t<Index> grain) {
    using size_type = std::make_unsigned_t<Index>;
    const auto size = static_cast<size_type>(static_cast<size_type>(last) - static_cast<size_type>(first));
    const auto shape =
        shape_loop<Index>(ex, size, grain, std::max(max_reduce_blocks, loop_width(ex) * blocks_per_thread));
    T result = identity;
    if (shape.participants <= 1) { // the same blocks and the same folds, with nowhere to keep them
        reduce_body<Index, T, F, R> body(identity, fn, reduce, nullptr);
        for (std::size_t block = 0; block < shape.blocks; ++block) {
            const auto [begin, end] = block_bounds<Index>(first, size, shape.grain, block);
            result = std::invoke(reduce, std::move(result), body.fold(begin, end));
        }
        return result;
    }
    // Freed however this ends; a helper that starts after the loop returned
    // finds no block left and never touches it.
    const auto slots = std::make_unique<reduce_slot<T>[]>(shape.blocks);
    reduce_body<Index, T, F, R> body(identity, fn, reduce, slots.get());
    run_shaped_loop(ex, first, last, shape, body); // every block done, or rethrows
    for (std::size_t block = 0; block < shape.blocks; ++block)
        result = std::invoke(reduce, std::move(result), std::move(*slots[block].value));
    return result;
}

// Compile-time checks of a reduction's types; `Value`: what fn(i) returns.
template <class T, class R, class Value>
constexpr void check_reduction() {
    static_assert(std::copy_constructible<T>,
                  "crew::parallel_reduce/transform_reduce: identity must be copyable (each block starts from a copy)");
    static_assert(std::is_move_assignable_v<T>,
                  "crew::parallel_reduce/transform_reduce: the identity's type must be move-assignable (the fold "
                  "is acc = reduce(std::move(acc), x))");
    static_assert(std::is_invocable_v<R&, T&&, Value>,
                  "crew::parallel_reduce/transform_reduce: reduce must be callable as reduce(T, fn(i)) (or "
                  "reduce(T, transform(element))), T the identity's type");
    static_assert(std::is_invocable_v<R&, T&&, T&&>,
                  "crew::parallel_reduce/transform_reduce: reduce must be callable as reduce(T, T)");
    if constexpr (std::is_invocable_v<R&, T&&, Value> && std::is_invocable_v<R&, T&&, T&&>) {
        static_assert(std::is_convertible_v<std::invoke_result_t<R&, T&&, Value>, T> &&
                          std::is_convertible_v<std::invoke_result_t<R&, T&&, T&&>, T>,
                      "crew::parallel_reduce/transform_reduce: reduce must return something convertible to T, the "
                      "identity's type");
    }
}

template <class First, class Last, class Executor, class T, class F, class R>
T checked_parallel_reduce(Executor& ex, First first, Last last, T& identity, F& fn, R& reduce,
                          std::make_unsigned_t<std::common_type_t<First, Last>> grain) {
    using Index = std::common_type_t<First, Last>;
    static_assert(std::invocable<F&, Index>,
                  "crew::parallel_reduce: fn must be callable as fn(i), i of the common type of first and last");
    if constexpr (std::invocable<F&, Index>) check_reduction<T, R, std::invoke_result_t<F&, Index>>();
    const auto [from, to] = checked_bounds(first, last, "crew::parallel_reduce");
    if (from == to) return std::move(identity);
    return run_parallel_reduce<Index>(ex, from, to, identity, fn, reduce, grain);
}

template <class Executor, class Range, class T, class R, class F>
T checked_transform_reduce(Executor& ex, Range& range, T& identity, R& reduce, F& transform,
                           std::make_unsigned_t<std::ranges::range_difference_t<Range>> grain) {
    using difference = std::ranges::range_difference_t<Range>;
    static_assert(std::invocable<F&, std::ranges::range_reference_t<Range>>,
                  "crew::transform_reduce: transform must be callable as transform(element)");
    if constexpr (std::invocable<F&, std::ranges::range_reference_t<Range>>)
        check_reduction<T, R, std::invoke_result_t<F&, std::ranges::range_reference_t<Range>>>();
    const auto size = static_cast<difference>(std::ranges::size(range));
    if (size == 0) return std::move(identity);
    const auto begin = std::ranges::begin(range);
    auto at = [&begin, &transform](difference i) -> decltype(auto) { return std::invoke(transform, begin[i]); };
    return run_parallel_reduce<difference>(ex, difference(0), size, identity, at, reduce, grain);
}

} // namespace detail

/// Reduces `fn(i)` over every integer `i` in `[first, last)` with `reduce`,
/// starting from `identity` (TBB's `parallel_reduce`, one index at a time):
/// `reduce(...reduce(reduce(identity, fn(first)), fn(first + 1))..., fn(last - 1))`
/// as far as an associative `reduce` can tell, computed on the calling
/// thread and helper tasks of `ex`. Returns `identity` for an empty range.
///
/// - `T` is `identity`'s type. `reduce` is called as `reduce(T, fn(i))` and
///   `reduce(T, T)`, with rvalues (a string concatenation appends in place),
///   and must return something convertible to `T`. It must be associative
///   and `identity` its identity; it need not be commutative.
/// - Deterministic: the result depends on the range, the grain and the
///   loop's width (the executor's maximum size, at most the hardware's
///   threads), never on timing: see the file comment. With a grain given,
///   not even on the width (unless the range has more than 4,096 blocks of
///   it on a machine of over 512 threads).
/// - Blocks: as `parallel_for`'s (about 8 per thread without a grain), but at
///   most 4,096 (or 8 per thread, if more): a small grain over a large range
///   gets larger blocks, since each block's result is kept until the end.
/// - `fn` and `reduce` are called concurrently from several threads, each
///   through one shared reference. The caller runs blocks too and never
///   waits for a helper that has not started (no deadlock on the pool's own
///   workers, even a pool of one). The first exception escaping `fn` or
///   `reduce` is rethrown once the blocks already running have finished;
///   blocks not yet started are skipped.
/// - Throws `std::invalid_argument` naming the argument if `first > last` or
///   a bound does not fit the index type (the common type of `First` and
///   `Last`).
/// - Cost: `parallel_for`'s, plus one allocation holding a cache line per
///   block for the block results; no allocation, no helper, when the range
///   fits one block or the executor has one thread.
///
/// Thread safety: may be called from any thread, including the pool's own
/// tasks and inside another loop. Takes no lock of its own.
template <class Executor, detail::loop_index First, detail::loop_index Last, class T, class F, class R>
std::decay_t<T> parallel_reduce(Executor&& ex, First first, Last last, T&& identity, F&& fn, R&& reduce) {
    std::decay_t<T> init(std::forward<T>(identity));
    return detail::checked_parallel_reduce(ex, first, last, init, fn, reduce, 0);
}

/// As `parallel_reduce(ex, first, last, identity, fn, reduce)`, in blocks of
/// `grain` indices (the last may be shorter; larger if the range would have
/// more than 4,096 blocks). Throws `std::invalid_argument` naming `grain` if
/// it is not positive.
template <class Executor, detail::loop_index First, detail::loop_index Last, class T, class F, class R,
          detail::loop_index Grain>
std::decay_t<T> parallel_reduce(Executor&& ex, First first, Last last, T&& identity, F&& fn, R&& reduce,
                                Grain grain) {
    using Index = std::common_type_t<First, Last>;
    const auto checked = detail::checked_grain<Index>(grain, "crew::parallel_reduce");
    std::decay_t<T> init(std::forward<T>(identity));
    return detail::checked_parallel_reduce(ex, first, last, init, fn, reduce, checked);
}

/// `std::transform_reduce(begin, end, identity, reduce, transform)` over the
/// sized random-access `range`, on the calling thread and helper tasks of
/// `ex`: `parallel_reduce` over the positions, `fn(i)` being
/// `transform(range[i])`. The same rules: `reduce` associative (called as
/// `reduce(T, transform(element))` and `reduce(T, T)`), deterministic for a
/// given pool size, the first exception rethrown. The range is taken by
/// reference and must not change size meanwhile.
template <class Executor, std::ranges::random_access_range Range, class T, class R, class F>
    requires std::ranges::sized_range<Range>
std::decay_t<T> transform_reduce(Executor&& ex, Range&& range, T&& identity, R&& reduce, F&& transform) {
    std::decay_t<T> init(std::forward<T>(identity));
    return detail::checked_transform_reduce(ex, range, init, reduce, transform, 0);
}

/// As `transform_reduce(ex, range, identity, reduce, transform)`, in blocks
/// of `grain` elements. Throws `std::invalid_argument` naming `grain` if it
/// is not positive.
template <class Executor, std::ranges::random_access_range Range, class T, class R, class F, detail::loop_index Grain>
    requires std::ranges::sized_range<Range>
std::decay_t<T> transform_reduce(Executor&& ex, Range&& range, T&& identity, R&& reduce, F&& transform,
                                 Grain grain) {
    using difference = std::ranges::range_difference_t<Range>;
    const auto checked = detail::checked_grain<difference>(grain, "crew::transform_reduce");
    std::decay_t<T> init(std::forward<T>(identity));
    return detail::checked_transform_reduce(ex, range, init, reduce, transform, checked);
}

} // namespace crew

#endif
