#ifndef CREW_FWD_HPP
#define CREW_FWD_HPP

/// \file
/// Declarations of crew's class templates and policies, with the default
/// policy arguments of `basic_executor`.

#include <cstddef>
#include <mutex>

namespace crew {

class task;
struct pool_options;

class unbounded_queue;
class bounded_queue;
class grow_first_queue;
class synchronous_queue;
class priority_queue;
class delayed_queue;
class work_stealing_queue;
class bounded_work_stealing_queue;
template <std::size_t Capacity>
class lockfree_queue;

template <class T>
class future;
template <class T>
class scheduled_future;

struct abort_policy;
struct caller_runs_policy;
struct discard_policy;
struct discard_oldest_policy;
struct block_policy;

class default_thread_factory;
class spin_lock;

template <class QueuePolicy, class RejectPolicy = abort_policy,
          class ThreadFactoryPolicy = default_thread_factory, class LockPolicy = std::mutex>
class basic_executor;

} // namespace crew

#endif
