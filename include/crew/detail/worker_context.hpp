#ifndef CREW_DETAIL_WORKER_CONTEXT_HPP
#define CREW_DETAIL_WORKER_CONTEXT_HPP

#include <functional>
#include <stop_token>
#include <type_traits>

namespace crew::detail {

// What a pool's worker thread knows about itself, reachable from the tasks it
// runs. Lives on the worker's stack for the thread's whole run.
struct worker_context {
    const void* pool = nullptr;    // the executor this thread works for
    void* worker = nullptr;        // that executor's record of this worker
    std::stop_token stop;          // requested by shutdown_now()
    bool pool_destroyed = false;   // a task destroyed the pool: touch nothing more
    // Runs one task of this worker's own queue (a work-stealing pool's
    // deque), as the worker loop would; false if there was none (or the
    // pool is paused). Null for every other queue. task_group::wait() and
    // parallel_for call it while they wait (run_local_task).
    bool (*run_local)(worker_context&) = nullptr;
};

inline thread_local worker_context* current_worker = nullptr;

// Whether the calling thread is a worker of a pool whose queue has a part
// of its own for it (run_local_task may find work).
inline bool can_run_local_task() noexcept {
    return current_worker && current_worker->run_local && !current_worker->pool_destroyed;
}

// On a worker whose pool's queue has a part of its own for it: runs one of
// its tasks; false if none (or on any other thread).
inline bool run_local_task() { return can_run_local_task() && current_worker->run_local(*current_worker); }

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
