#ifndef CREW_DETAIL_WORK_STEALING_HELP_HPP
#define CREW_DETAIL_WORK_STEALING_HELP_HPP

// The one helping loop (issue #32): what a thread does while it waits for
// something a pool computes (task_group::wait, parallel_for, future::get and
// wait). Taskflow's corun_until and TBB's local_wait_for_all answer the same
// question.
//
// On one of a pool's workers, until `done()`:
//   1. its own newest spawn (task_group tasks it spawned: detail/work_stealing/spawn.hpp),
//      only of the current isolation inside crew::isolate;
//   2. the waiter's own work (`own()`: a task_group's entries that outside
//      threads ran, which no worker has claimed);
//   3. any queued task of the pool (the worker's deque, another's, the
//      injector, the FIFO queue: whatever the worker loop would take, with
//      its hooks and statistics), unless isolated or max_help_depth loops
//      are open on this stack already (TBB's stack overflow avoidance);
//   4. nothing to do: `park(nap)` sleeps until the awaited thing is done or
//      `nap` passes (new queued work wakes no one parked here, so it looks
//      again), first_nap at first, doubling to longest_nap.
// So no worker sleeps in a wait while its pool has queued work it may take.
// On any other thread only 2 and 4, with `park(0)`: sleep until done.
//
// The price (as in TBB): a task run nested in a wait holds the waiter's
// stack until it returns; if it blocks until the waiter goes on, the worker
// waits for itself. crew::isolate keeps a region's waits to its own spawns.

#include <crew/detail/work_stealing/spawn.hpp>
#include <crew/detail/work_stealing/worker_context.hpp>

#include <algorithm>
#include <chrono>

namespace crew::detail {

// Helping loops one thread may nest before it stops taking the pool's
// queued tasks (it still runs its own spawns, which are the program's own
// recursion, and parks): bounds the stack that unrelated tasks can stack up.
inline constexpr int max_help_depth = 32;

inline constexpr std::chrono::microseconds first_nap{20};
inline constexpr std::chrono::microseconds longest_nap{5000};

// Whether the calling thread, a worker of some pool, may take that pool's
// queued tasks in a wait now.
inline bool may_help_pool(const worker_context& w) noexcept {
    return w.help_one != nullptr && !w.pool_destroyed && current_isolation == nullptr &&
           w.help_depth < max_help_depth;
}

// See the file comment. `done()`: the awaited thing is finished. `own()`:
// runs some of the waiter's own work, true if it did. `park(nap)`: sleeps
// until done or `nap` passes (zero: no limit). All three may be called
// many times.
template <class Done, class Own, class Park>
void help_until(Done done, Own own, Park park) {
    worker_context* const w = current_worker;
    if (w == nullptr || w->help_one == nullptr) {
        while (!done())
            if (!own()) park(std::chrono::microseconds{0});
        return;
    }
    struct depth_scope {
        worker_context& w;
        explicit depth_scope(worker_context& c) noexcept : w(c) { ++w.help_depth; }
        ~depth_scope() { --w.help_depth; }
        depth_scope(const depth_scope&) = delete;
        depth_scope& operator=(const depth_scope&) = delete;
    } const depth(*w);
    std::chrono::microseconds nap{0};
    while (!done()) {
        if (run_own_spawn(*w) || own() || (may_help_pool(*w) && w->help_one(*w))) {
            nap = std::chrono::microseconds{0};
            continue;
        }
        nap = std::min(std::max(2 * nap, first_nap), longest_nap);
        park(nap);
    }
}

// When a park(nap) ends at the latest: never for a nap of zero.
inline std::chrono::steady_clock::time_point nap_deadline(std::chrono::microseconds nap) {
    return nap.count() == 0 ? std::chrono::steady_clock::time_point::max() : std::chrono::steady_clock::now() + nap;
}

// Nothing of the waiter's own to run.
inline constexpr auto nothing_own = [] { return false; };

} // namespace crew::detail

#endif
