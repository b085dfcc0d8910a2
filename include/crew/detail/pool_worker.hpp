#ifndef CREW_DETAIL_POOL_WORKER_HPP
#define CREW_DETAIL_POOL_WORKER_HPP

// basic_executor's record of one worker thread (Java's Worker), a
// cross-cutting header beside the rooms: the pool core owns it, and
// detail/work_stealing/worker_context.hpp reaches it only through a void*.

#include <crew/detail/cache_line.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <atomic>
#include <cstdint>
#include <list>
#include <stop_token>
#include <thread>

namespace crew::detail {

// One worker thread and what the pool tracks of it (Java's Worker). The
// node lives in workers_ (then exited_) under main_lock_; the fields say
// who writes them.
//
// The two fields a worker writes per task come first, on a cache line
// of their own (the node is cache-line aligned): no other thread writes that
// line while the pool runs, and readers (active_count, wait_idle) are rare.
struct alignas(cache_line) pool_worker {
    enum start_signal : int { pending, go, abandon };

    std::atomic<bool> running{false};             // written by the worker only: true while it runs a task
    std::atomic<std::uint64_t> completed_tasks{0};// written by the worker only; read under main_lock_
    alignas(cache_line) std::thread thread;               // add_worker, before start; joined by the next exiting worker
    task first_task;                              // add_worker, under main_lock_, before start = go
    interrupt_flag interrupted{false};            // set by interrupt_*workers, cleared by the worker
    std::stop_source stop;                        // requested by shutdown_now, under main_lock_
    std::atomic<int> start{pending};              // add_worker's verdict: go or abandon
    task held;                                    // taken while paused; under main_lock_
    std::list<pool_worker>::iterator self;        // its node in workers_; under main_lock_
};

} // namespace crew::detail

#endif
