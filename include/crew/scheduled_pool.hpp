#ifndef CREW_SCHEDULED_POOL_HPP
#define CREW_SCHEDULED_POOL_HPP

/// \file
/// `crew::scheduled_pool`: Java's `Executors.newScheduledThreadPool(n)`.

#include <crew/basic_executor.hpp>
#include <crew/policies/delayed_queue.hpp>

namespace crew {

/// `n` workers (core = maximum = n) over a `delayed_queue`: tasks run at
/// their due time, periodically if asked (`schedule`, `schedule_at`,
/// `schedule_at_fixed_rate`, `schedule_with_fixed_delay`); `execute` and
/// `submit` mean "due now". `scheduled_pool()` uses the hardware concurrency.
/// Java: `ScheduledThreadPoolExecutor`, with the same shutdown policies
/// (`pool_options::continue_periodic_after_shutdown`,
/// `execute_delayed_after_shutdown`, `remove_on_cancel`).
using scheduled_pool = basic_executor<delayed_queue>;

} // namespace crew

#endif
