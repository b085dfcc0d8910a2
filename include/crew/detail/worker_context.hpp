#ifndef CREW_DETAIL_WORKER_CONTEXT_HPP
#define CREW_DETAIL_WORKER_CONTEXT_HPP

#include <stop_token>

namespace crew::detail {

// What a pool's worker thread knows about itself, reachable from the tasks it
// runs. Lives on the worker's stack for the thread's whole run.
struct worker_context {
    const void* pool = nullptr;    // the executor this thread works for
    void* worker = nullptr;        // that executor's record of this worker
    std::stop_token stop;          // requested by shutdown_now()
    bool pool_destroyed = false;   // a task destroyed the pool: touch nothing more
};

inline thread_local worker_context* current_worker = nullptr;

// The stop token of `pool`'s worker running the calling task, or a token
// that is never requested when called from any other thread.
inline std::stop_token current_stop_token(const void* pool) noexcept {
    return current_worker && current_worker->pool == pool ? current_worker->stop : std::stop_token{};
}

} // namespace crew::detail

#endif
