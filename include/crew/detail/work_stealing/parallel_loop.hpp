#ifndef CREW_DETAIL_WORK_STEALING_PARALLEL_LOOP_HPP
#define CREW_DETAIL_WORK_STEALING_PARALLEL_LOOP_HPP

// The machinery behind crew::parallel_for, parallel_for_blocks and
// parallel_reduce.
//
// The index range is cut into blocks of `grain` indices. Every participant
// (the calling thread, and helper tasks on the pool) claims the next block
// with one fetch_add on a shared counter and runs it as a plain loop, so a
// slow block never idles the others. The loop's state is on the heap and
// counted: a helper may start after parallel_for has returned (it then
// claims a block number past the end and leaves without touching the body);
// the caller waits only for blocks that someone claimed, never for a helper
// that has not started, so a pool whose every worker is busy (or a pool of
// one, nested) cannot deadlock it.
//
// A failing block stops the loop: the claim counter jumps past the end
// (exchange), so no block starts afterwards, and `remaining` (blocks not
// yet finished or skipped) drops by the blocks skipped. The caller helps
// and sleeps (detail/work_stealing/help.hpp) until it reaches zero; whoever takes it there
// wakes the caller, holding a reference, so the state outlives the wake-up.
//
// The partition depends only on the range, the grain and the loop's width
// (block k is always the same indices, whoever runs it): parallel_reduce
// relies on it for a result that does not depend on timing.

#include <crew/detail/cache_line.hpp>
#include <crew/detail/work_stealing/help.hpp>
#include <crew/detail/sync/parking_word.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <type_traits>
#include <utility>

namespace crew::detail {

// Threads a loop on `ex` may use, the caller included: the pool's maximum
// size where the executor tells it, at most the hardware's threads (a loop
// is CPU-bound: more only take turns on the cores, and a cached pool's
// maximum is unbounded).
template <class Executor>
std::size_t loop_width(const Executor& ex) {
    // Asked once: the standard library reads /sys or the affinity mask.
    static const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
    if constexpr (requires { { ex.maximum_pool_size() } -> std::convertible_to<std::size_t>; })
        return std::clamp<std::size_t>(static_cast<std::size_t>(ex.maximum_pool_size()), 1, hardware);
    else return hardware;
}

// Blocks per thread when no grain is given: enough that a thread slowed
// down (preempted, a slow block) is made up for by the others; few enough
// that claiming costs nothing next to a block.
inline constexpr std::size_t blocks_per_thread = 8;

// A body that takes a whole block at once, as `body(block, first, last)`
// (`block`: its number, from 0 in index order), marked by a member type
// `whole_blocks`: parallel_for_blocks's and parallel_reduce's. Any other
// body is called once per index, `body(i)`, the loop inlined around it.
template <class Body>
concept whole_block_body = requires { typename Body::whole_blocks; };

// How a loop is cut: `blocks` blocks of `grain` indices (the last may be
// shorter), shared among `participants` threads, the caller included.
template <class Index>
struct loop_shape {
    std::make_unsigned_t<Index> grain;
    std::size_t blocks;
    std::size_t participants;
};

// Cuts `size` > 0 indices in blocks of `grain` (0: about blocks_per_thread
// per thread of `ex`), at most `max_blocks` of them (a larger grain if
// needed: a reduction keeps one result per block).
template <class Index, class Executor>
loop_shape<Index> shape_loop(const Executor& ex, std::make_unsigned_t<Index> size, std::make_unsigned_t<Index> grain,
                             std::size_t max_blocks = static_cast<std::size_t>(-1)) {
    using size_type = std::make_unsigned_t<Index>;
    const auto ceil_div = [](std::uintmax_t n, std::uintmax_t d) { return n / d + (n % d != 0 ? 1 : 0); };
    const std::size_t width = loop_width(ex);
    if (grain == 0)
        grain = static_cast<size_type>(std::max<std::uintmax_t>(1, ceil_div(size, width * blocks_per_thread)));
    if (ceil_div(size, grain) > max_blocks) grain = static_cast<size_type>(ceil_div(size, max_blocks));
    const auto blocks = static_cast<std::size_t>(ceil_div(size, grain));
    return {grain, blocks, std::min(blocks, width)};
}

// The indices of block `block` of [first, first + size) cut in blocks of
// `grain`: [begin, end). Modular conversions (C++20): exact, since the
// block lies in the range.
template <class Index>
std::pair<Index, Index> block_bounds(Index first, std::make_unsigned_t<Index> size, std::make_unsigned_t<Index> grain,
                                     std::size_t block) noexcept {
    using size_type = std::make_unsigned_t<Index>;
    const size_type begin = static_cast<size_type>(static_cast<size_type>(block) * grain); // < size
    const size_type count = std::min<size_type>(grain, static_cast<size_type>(size - begin));
    const Index i = static_cast<Index>(static_cast<size_type>(static_cast<size_type>(first) + begin));
    return {i, static_cast<Index>(static_cast<size_type>(static_cast<size_type>(i) + count))};
}

// The shared state of one parallel_for: indices [first, first + size) in
// blocks of `grain`, the body, the claim counter, what is left, the first
// failure.
template <class Index, class Body>
class parallel_loop {
  public:
    using size_type = std::make_unsigned_t<Index>;

    parallel_loop(Index first, size_type size, size_type grain, std::size_t blocks, Body& body) noexcept
        : remaining_(blocks), refs_(1), first_(first), size_(size), grain_(grain), blocks_(blocks),
          body_(std::addressof(body)) {}
    parallel_loop(const parallel_loop&) = delete;
    parallel_loop& operator=(const parallel_loop&) = delete;

    void acquire() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

    // True once every block has been claimed (or the loop stopped).
    bool all_claimed() const noexcept { return next_.load(std::memory_order_relaxed) >= blocks_; }

    // Claims and runs blocks until none is left. Never throws: a failure is
    // kept for the caller and stops the loop.
    void work() noexcept {
        for (;;) {
            const std::size_t block = next_.fetch_add(1, std::memory_order_relaxed);
            if (block >= blocks_) return;
            std::size_t done = 1;
            try {
                run_block(block);
            } catch (...) {
                done += stop(std::current_exception());
            }
            // The body's effects (and error_) are released to the caller here.
            if (remaining_.fetch_sub(done, std::memory_order_acq_rel) == done) finished_.bump_and_wake(wake_all_parked);
        }
    }

    // The caller, after its own work(): until every claimed block has
    // finished, helps (detail/work_stealing/help.hpp: on a pool's worker, its spawns and
    // the pool's queued tasks, among them the helpers nobody took, which
    // find no block and end), else sleeps; then rethrows the first failure.
    void wait_and_rethrow() {
        const auto finished = [this] { return remaining_.load(std::memory_order_acquire) == 0; };
        help_until(finished, nothing_own, [&](std::chrono::microseconds nap) {
            const std::uint32_t seen = finished_.load();
            if (finished()) return;
            finished_.wait(seen, nap_deadline(nap));
        });
        if (error_) std::rethrow_exception(error_);
    }

  private:
    // The hot loop: a plain loop over the block, the body called inline
    // (or handed the whole block).
    void run_block(std::size_t block) {
        auto [i, end] = block_bounds<Index>(first_, size_, grain_, block);
        Body& body = *body_;
        if constexpr (whole_block_body<Body>) body(block, i, end);
        else
            for (; i != end; ++i) body(i);
    }

    // Keeps the first failure; skips every block not yet claimed. Returns
    // how many were skipped.
    std::size_t stop(std::exception_ptr e) noexcept {
        if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::move(e);
        const std::size_t claimed = next_.exchange(blocks_, std::memory_order_relaxed);
        return blocks_ - std::min(claimed, blocks_);
    }

    alignas(cache_line) std::atomic<std::size_t> next_{0}; // the next block to claim
    alignas(cache_line) std::atomic<std::size_t> remaining_; // blocks neither finished nor skipped
    default_parking_word finished_;                  // bumped when remaining_ reaches zero
    std::atomic<std::uint32_t> refs_;                // the caller's and each helper's
    std::atomic<bool> failed_{false};
    std::exception_ptr error_; // written once, by the first to fail, before its remaining_ release
    alignas(cache_line) const Index first_;
    const size_type size_;
    const size_type grain_;
    const std::size_t blocks_;
    Body* const body_;
};

// A helper: a pool task that claims blocks; holds one reference. A plain
// callable: if the pool discards or drops it, it just lets go of its
// reference (the caller does the work). 8 bytes, stored inline in a task.
template <class Loop>
class loop_helper {
  public:
    explicit loop_helper(Loop* loop) noexcept : loop_(loop) {}
    loop_helper(loop_helper&& other) noexcept : loop_(std::exchange(other.loop_, nullptr)) {}
    loop_helper& operator=(loop_helper&&) = delete;
    ~loop_helper() {
        if (loop_) loop_->release();
    }
    void operator()() { loop_->work(); }

  private:
    Loop* loop_;
};

// The caller's reference, let go however parallel_for leaves.
template <class Loop>
struct loop_reference {
    Loop* loop;
    ~loop_reference() { loop->release(); }
};

// Runs the loop cut as `shape` says: on the caller alone when nobody is
// there to share with (no state, no helper), else shared with helpers.
template <class Index, class Body, class Executor>
void run_shaped_loop(Executor& ex, Index first, Index last, const loop_shape<Index>& shape, Body& body) {
    using size_type = std::make_unsigned_t<Index>;
    const auto size = static_cast<size_type>(static_cast<size_type>(last) - static_cast<size_type>(first));
    if (shape.participants <= 1) {
        if constexpr (whole_block_body<Body>) {
            for (std::size_t block = 0; block < shape.blocks; ++block) {
                const auto [begin, end] = block_bounds<Index>(first, size, shape.grain, block);
                body(block, begin, end);
            }
        } else {
            for (Index i = first; i != last; ++i) body(i);
        }
        return;
    }
    using loop = parallel_loop<Index, Body>;
    auto* state = new loop(first, size, shape.grain, shape.blocks, body);
    const loop_reference<loop> mine{state};
    for (std::size_t k = 1; k < shape.participants && !state->all_claimed(); ++k) {
        state->acquire(); // the helper's, let go by the helper however it ends
        try {
            ex.execute(loop_helper<loop>(state));
        } catch (...) {
            break; // refused (abort_policy, shut down): the caller does the work
        }
    }
    state->work();
    state->wait_and_rethrow();
}

// parallel_for with checked arguments: size > 0, grain > 0 or 0 for "choose".
template <class Index, class Body, class Executor>
void run_parallel_loop(Executor& ex, Index first, Index last, Body& body, std::make_unsigned_t<Index> grain) {
    using size_type = std::make_unsigned_t<Index>;
    const auto size = static_cast<size_type>(static_cast<size_type>(last) - static_cast<size_type>(first));
    run_shaped_loop(ex, first, last, shape_loop<Index>(ex, size, grain), body);
}

} // namespace crew::detail

#endif
