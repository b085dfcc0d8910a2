#ifndef CREW_DETAIL_WORK_STEALING_WORKER_CONTEXT_HPP
#define CREW_DETAIL_WORK_STEALING_WORKER_CONTEXT_HPP

// Room detail/work_stealing/ (README): a pool worker's record of itself
// (this header), the Chase–Lev deques of work_stealing_queue and of
// fork-join spawns, the one helping loop every wait runs, task_group's core
// and parallel_for's loop. It may include detail/sync/ only: the pools and
// queues reach it, not the other way round.

#include <functional>
#include <stop_token>
#include <type_traits>

namespace crew::detail {

class spawn_deque;

// What a pool's worker thread knows about itself, reachable from the tasks it
// runs: the one record of the worker that code outside the pool reads.
// Lives on the worker's stack for the thread's whole run.
struct worker_context {
    const void* pool = nullptr;    // the executor this thread works for
    void* worker = nullptr;        // that executor's record of this worker
    std::stop_token stop;          // requested by shutdown_now()
    bool pool_destroyed = false;   // a task destroyed the pool: touch nothing more
    // Runs one queued task of the pool, as the worker loop would (hooks,
    // statistics); false if there was none or the pool is paused. Null
    // outside a worker (the destructor's orphan runs). The helping loop
    // (detail/work_stealing/help.hpp) calls it while the worker waits.
    bool (*help_one)(worker_context&) = nullptr;
    // Posts one spawn ticket to the pool (detail/work_stealing/spawn.hpp); false if the
    // pool had no room for it.
    bool (*post_ticket)(const void* pool, spawn_deque& deque) = nullptr;
    // task_group tasks this worker spawned and no one has taken yet; made on
    // the first spawn, kept until the worker leaves (detail/work_stealing/spawn.hpp).
    spawn_deque* spawns = nullptr;
    // Helping loops open on this thread's stack (detail/work_stealing/help.hpp).
    int help_depth = 0;
};

inline thread_local worker_context* current_worker = nullptr;

// True on a thread that is running a task for `pool` (its worker, or its
// destructor running tasks no worker is left for).
inline bool runs_for_pool(const void* pool) noexcept { return current_worker && current_worker->pool == pool; }

// The stop token of `pool`'s worker running the calling task, or a token
// that is never requested when called from any other thread.
inline std::stop_token current_stop_token(const void* pool) noexcept {
    return runs_for_pool(pool) ? current_worker->stop : std::stop_token{};
}

// Relays a worker's stop request (shutdown_now) to a task's own stop source.
struct stop_relay {
    std::stop_source* target;
    void operator()() const noexcept { target->request_stop(); }
};

// A callable that crew calls with a std::stop_token (it cannot be called
// without one), and what it returns either way.
template <class F>
inline constexpr bool takes_stop_token = !std::is_invocable_v<F&> && std::is_invocable_v<F&, std::stop_token>;

template <class F>
using task_result_t =
    typename std::conditional_t<takes_stop_token<F>, std::invoke_result<F&, std::stop_token>, std::invoke_result<F&>>::type;

// The one way a task of `pool` receives its std::stop_token: calls f(token).
// Without a stop source of its own (an execute task), the token is that of
// the pool's worker running it, requested by shutdown_now(). With one (a
// future's, requested by cancel(true)), it is that source's token, which also
// follows the worker's stop request while the call runs. Run anywhere but on
// one of `pool`'s workers (caller_runs_policy on another pool's worker), the
// task sees no pool's stop request but its own.
template <class F>
decltype(auto) invoke_with_stop_token(F& f, const void* pool, std::stop_source* own = nullptr) {
    if (own == nullptr) return std::invoke(f, current_stop_token(pool));
    std::stop_callback relay(current_stop_token(pool), stop_relay{own});
    return std::invoke(f, own->get_token());
}

} // namespace crew::detail

#endif
