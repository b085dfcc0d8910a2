// Boost.Lockfree caps a fixed-size queue below 65535 nodes (one is its
// dummy), so a larger Capacity is refused at compile time, naming the bound.
// expect: crew::lockfree_queue<Capacity>: Capacity must be in \[1, 65534\]
#include <crew/basic_executor.hpp>
#include <crew/policies/lockfree_queue.hpp>

crew::basic_executor<crew::lockfree_queue<70000>> pool;
