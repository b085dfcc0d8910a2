#ifndef CREW_FIXED_POOL_HPP
#define CREW_FIXED_POOL_HPP

/// \file
/// `crew::fixed_pool`: Java's `Executors.newFixedThreadPool(n)`.

#include <crew/basic_executor.hpp>
#include <crew/policies/queue.hpp>

namespace crew {

/// `n` workers (core = maximum = n) over an unbounded FIFO queue: tasks are
/// never rejected while the pool runs, and wait when all workers are busy.
/// `fixed_pool()` uses the hardware concurrency; `fixed_pool(n)` uses n.
/// As in Java, workers start with the first tasks (`prestart_all_core_threads()`
/// starts them at once). Differs from Java: an exception escaping a task does
/// not replace its thread.
using fixed_pool = basic_executor<unbounded_queue>;

} // namespace crew

#endif
