#ifndef CREW_CACHED_POOL_HPP
#define CREW_CACHED_POOL_HPP

/// \file
/// `crew::cached_pool`: Java's `Executors.newCachedThreadPool()`.

#include <crew/basic_executor.hpp>
#include <crew/policies/queue.hpp>

namespace crew {

/// Direct hand-off to an idle worker, or a new worker when none is idle
/// (core 0, maximum unbounded); workers idle for 60 s exit. Good for many
/// short-lived tasks; unbounded growth is the price of never queueing.
/// `cached_pool()` has Java's settings; `cached_pool(n)` caps it at n workers
/// (core = maximum = n), rejecting when all n are busy.
using cached_pool = basic_executor<synchronous_queue>;

} // namespace crew

#endif
