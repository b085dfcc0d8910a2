// The policy mixes that the lifecycle and statistics suites run over, so
// that every run-state and counting rule is checked with each lock policy
// and with every queue that holds tasks, not only with crew::fixed_pool
// (synchronous_queue holds none: cached_pool is tested on its own). The
// work-stealing pools queue from outside into their injector (FIFO per
// submitting thread), so the rules that assume FIFO hold for them too. Each
// type takes `Pool(n)` (n workers) and `Pool(pool_options)`, and queues at
// least 128 tasks without refusing one. On a scheduled pool, execute means
// "due now".
#ifndef CREW_TEST_EXECUTOR_POOL_MIXES_HPP
#define CREW_TEST_EXECUTOR_POOL_MIXES_HPP

#include <crew/crew.hpp>
#include <crew/policies/lockfree_queue.hpp>

#include <tuple>

namespace crew_test {

template <class Queue, class Lock = std::mutex>
using pool_of = crew::basic_executor<Queue, crew::abort_policy, crew::default_thread_factory, Lock>;

// One pool per lock policy, for the rules that hold whatever guards the
// worker set.
template <class Queue, class Reject = crew::abort_policy>
using each_lock = std::tuple<crew::basic_executor<Queue, Reject, crew::default_thread_factory, std::mutex>,
                             crew::basic_executor<Queue, Reject, crew::default_thread_factory, crew::spin_lock>>;

using pool_mixes = std::tuple<crew::fixed_pool,                              // unbounded_queue, std::mutex
                              pool_of<crew::unbounded_queue, crew::spin_lock>, //
                              pool_of<crew::bounded_queue, crew::spin_lock>,   // capacity 1024
                              pool_of<crew::grow_first_queue>,                 // capacity 1024
                              pool_of<crew::priority_queue>,                   //
                              pool_of<crew::lockfree_queue<256>>,              //
                              pool_of<crew::lockfree_queue<256>, crew::spin_lock>,
                              crew::scheduled_pool,                            // delayed_queue
                              crew::work_stealing_pool,                        // work_stealing_queue
                              pool_of<crew::bounded_work_stealing_queue, crew::spin_lock>>; // capacity 1024

} // namespace crew_test

#endif
