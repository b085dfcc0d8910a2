#ifndef CREW_TASK_TIMING_HPP
#define CREW_TASK_TIMING_HPP

/// \file
/// `crew::task_timing`: what a pool's task observer learns about each task
/// a worker ran (`pool_options::task_observer`, `set_task_observer`).

#include <chrono>

namespace crew {

/// The times of one task, given to the task observer on the worker after
/// the task (and after `after_execute`).
struct task_timing {
    /// When the task became ready to run: when the pool accepted it, or for a
    /// scheduled task its due time (a periodic task's: that run's). So
    /// `started - queued` is the time it waited (for a timer, its lateness).
    /// For a task accepted before the observer was set: `started`.
    std::chrono::steady_clock::time_point queued;
    /// Just before the task ran (after `before_execute`).
    std::chrono::steady_clock::time_point started;
    /// When it returned (or threw).
    std::chrono::steady_clock::time_point finished;
    /// An exception escaped the task or reached its future, or
    /// `before_execute` threw (then the task did not run, and `started` is
    /// `finished`).
    bool failed = false;
};

} // namespace crew

#endif
