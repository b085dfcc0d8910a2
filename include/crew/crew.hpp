#ifndef CREW_CREW_HPP
#define CREW_CREW_HPP

/// \file
/// Everything in crew, Boost.Lockfree included (through
/// `<crew/policies/lockfree_queue.hpp>`, for `crew::lockfree_queue`). Each
/// part also has a header of its own: the per-pool headers
/// (`<crew/fixed_pool.hpp>`, `<crew/cached_pool.hpp>`,
/// `<crew/scheduled_pool.hpp>`, `<crew/work_stealing_pool.hpp>`) and `<crew/any_executor.hpp>` do not include
/// Boost.Lockfree, so a program that needs no `lockfree_queue` compiles
/// faster with them; `<crew/policies/lockfree_queue.hpp>` brings it in.

#include <crew/any_executor.hpp>
#include <crew/basic_executor.hpp>
#include <crew/cached_pool.hpp>
#include <crew/completion_queue.hpp>
#include <crew/concepts.hpp>
#include <crew/errors.hpp>
#include <crew/fixed_pool.hpp>
#include <crew/fwd.hpp>
#include <crew/future.hpp>
#include <crew/parallel_for.hpp>
#include <crew/parallel_reduce.hpp>
#include <crew/periodic_options.hpp>
#include <crew/pool_executor.hpp>
#include <crew/policies/delayed_queue.hpp>
#include <crew/policies/lock.hpp>
#include <crew/policies/lockfree_queue.hpp>
#include <crew/policies/queue.hpp>
#include <crew/policies/reject.hpp>
#include <crew/policies/thread_factory.hpp>
#include <crew/pool_options.hpp>
#include <crew/promise.hpp>
#include <crew/scheduled_future.hpp>
#include <crew/scheduled_pool.hpp>
#include <crew/task.hpp>
#include <crew/task_group.hpp>
#include <crew/task_timing.hpp>
#include <crew/when_all.hpp>
#include <crew/when_all_succeed.hpp>
#include <crew/when_any.hpp>
#include <crew/work_stealing_pool.hpp>

#endif
