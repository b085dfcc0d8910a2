// schedule() exists only on a pool whose QueuePolicy orders tasks by due
// time (crew::delayed_queue, as in crew::scheduled_pool): on a fixed_pool the
// call does not compile, and the first error's "declared here" note says
// which queue it needs.
// expect: use of deleted function .*schedule
// expect: needs a scheduled pool: QueuePolicy = crew::delayed_queue
#include <crew/fixed_pool.hpp>

#include <chrono>

int main() {
    crew::fixed_pool pool(1);
    auto f = pool.schedule(std::chrono::milliseconds(5), [] {});
    (void)f;
}
