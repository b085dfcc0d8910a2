#ifndef CREW_WORK_STEALING_POOL_HPP
#define CREW_WORK_STEALING_POOL_HPP

/// \file
/// `crew::work_stealing_pool`: Java's `Executors.newWorkStealingPool(n)`.

#include <crew/basic_executor.hpp>
#include <crew/policies/work_stealing_queue.hpp>

namespace crew {

/// `n` workers (core = maximum = n), each with a deque of its own: a task
/// submitted from a worker goes to that worker's deque (run newest first,
/// stolen oldest first by idle workers), a task from any other thread to a
/// shared injector drained oldest first. No FIFO across workers; everything
/// else (sizing, keep-alive, hooks, statistics, `queue_size()`, `purge()`,
/// `wait_idle()`, shutdown) is as for `fixed_pool`. `task_group::wait()` and
/// `parallel_for` on one of its workers run that worker's own tasks first.
/// See `<crew/policies/work_stealing_queue.hpp>`.
using work_stealing_pool = basic_executor<work_stealing_queue>;

} // namespace crew

#endif
