// schedule() exists only on a pool whose QueuePolicy orders tasks by due
// time (crew::delayed_queue, as in crew::scheduled_pool): on a fixed_pool the
// call does not compile, and the diagnostic names the concept and the queue.
// expect: no matching function for call to .*schedule
// expect: scheduling_queue_policy<QueuePolicy>
// expect: QueuePolicy = crew::unbounded_queue
#include <crew/fixed_pool.hpp>

#include <chrono>

int main() {
    crew::fixed_pool pool(1);
    auto f = pool.schedule(std::chrono::milliseconds(5), [] {});
    (void)f;
}
