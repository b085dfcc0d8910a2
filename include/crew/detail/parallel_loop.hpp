#ifndef CREW_DETAIL_PARALLEL_LOOP_HPP
#define CREW_DETAIL_PARALLEL_LOOP_HPP

// The machinery behind crew::parallel_for.
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
// and sleeps (detail/help.hpp) until it reaches zero; whoever takes it there
// wakes the caller, holding a reference, so the state outlives the wake-up.

#include <crew/detail/help.hpp>
#include <crew/detail/parking_word.hpp>

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
    // finished, helps (detail/help.hpp: on a pool's worker, its spawns and
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
    // The hot loop: a plain loop over the block, the body called inline.
    void run_block(std::size_t block) {
        const size_type begin = static_cast<size_type>(static_cast<size_type>(block) * grain_); // < size_
        const size_type count = std::min<size_type>(grain_, static_cast<size_type>(size_ - begin));
        // Modular conversions (C++20): exact, since the block lies in [first, last).
        Index i = static_cast<Index>(static_cast<size_type>(static_cast<size_type>(first_) + begin));
        const Index end = static_cast<Index>(static_cast<size_type>(static_cast<size_type>(i) + count));
        Body& body = *body_;
        for (; i != end; ++i) body(i);
    }

    // Keeps the first failure; skips every block not yet claimed. Returns
    // how many were skipped.
    std::size_t stop(std::exception_ptr e) noexcept {
        if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::move(e);
        const std::size_t claimed = next_.exchange(blocks_, std::memory_order_relaxed);
        return blocks_ - std::min(claimed, blocks_);
    }

    alignas(64) std::atomic<std::size_t> next_{0}; // the next block to claim
    alignas(64) std::atomic<std::size_t> remaining_; // blocks neither finished nor skipped
    default_parking_word finished_;                  // bumped when remaining_ reaches zero
    std::atomic<std::uint32_t> refs_;                // the caller's and each helper's
    std::atomic<bool> failed_{false};
    std::exception_ptr error_; // written once, by the first to fail, before its remaining_ release
    alignas(64) const Index first_;
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

// parallel_for with checked arguments: size > 0, grain > 0 or 0 for "choose".
template <class Index, class Body, class Executor>
void run_parallel_loop(Executor& ex, Index first, Index last, Body& body, std::make_unsigned_t<Index> grain) {
    using size_type = std::make_unsigned_t<Index>;
    const auto size = static_cast<size_type>(static_cast<size_type>(last) - static_cast<size_type>(first));
    const std::size_t width = loop_width(ex);
    if (grain == 0) {
        const auto target = static_cast<std::uintmax_t>(width) * blocks_per_thread;
        grain = static_cast<size_type>(std::max<std::uintmax_t>(1, size / target + (size % target != 0 ? 1 : 0)));
    }
    const auto blocks = static_cast<std::size_t>(size / grain + (size % grain != 0 ? 1 : 0));
    const std::size_t participants = std::min(blocks, width);
    if (participants <= 1) { // nobody to share with: no state, no helper
        for (Index i = first; i != last; ++i) body(i);
        return;
    }
    using loop = parallel_loop<Index, Body>;
    auto* state = new loop(first, size, grain, blocks, body);
    const loop_reference<loop> mine{state};
    for (std::size_t k = 1; k < participants && !state->all_claimed(); ++k) {
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

} // namespace crew::detail

#endif
