// The QueuePolicy decides when a pool grows. execute() starts a worker below
// the core size; otherwise it queues the task; only if the queue refuses does
// the pool grow towards its maximum; past that, the task is rejected.
// Each pool here has core 1 and maximum 3, and gets 6 tasks that all block.
#include <crew/crew.hpp>

#include <cstdio>
#include <latch>
#include <string>

template <class Queue>
bool fill(const char* name, std::size_t workers, std::size_t queued, int rejected, const char* why) {
    std::latch gate(1); // keeps every task busy until main has looked
    crew::basic_executor<Queue> pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 3,
                                                        .queue_capacity = 2}); // bounded_queue only
    int refused = 0;
    for (int i = 0; i < 6; ++i) {
        try {
            pool.execute([&gate] { gate.wait(); });
        } catch (const crew::rejected_execution_error&) {
            ++refused;
        }
    }
    std::printf("%-18s 6 tasks -> workers: %zu, queued: %zu, rejected: %d  (%s)\n", name, pool.pool_size(),
                pool.queue_size(), refused, why);
    const bool ok = pool.pool_size() == workers && pool.queue_size() == queued && refused == rejected;
    gate.count_down();
    return ok;
}

int main() {
    bool ok = fill<crew::unbounded_queue>("unbounded_queue", 1, 5, 0, "never full, so never past core: Java's trap");
    ok &= fill<crew::bounded_queue>("bounded_queue(2)", 3, 2, 1, "grows once 2 tasks wait");
    ok &= fill<crew::synchronous_queue>("synchronous_queue", 3, 0, 3, "holds nothing, so grows at once");

    // priority_queue: with one busy worker, the queued tasks run highest first.
    std::latch gate(1);
    std::string order; // written by the single worker only
    auto ran = [&order](const char* name) { order += order.empty() ? name : std::string(", ") + name; };
    {
        crew::basic_executor<crew::priority_queue> pool(1);
        pool.execute([&gate] { gate.wait(); });
        pool.execute([&ran] { ran("routine"); }); // priority 0
        pool.execute(crew::with_priority(10, [&ran] { ran("urgent"); }));
        pool.execute(crew::with_priority(-1, [&ran] { ran("whenever"); }));
        gate.count_down();
        pool.wait_idle();
    }
    std::printf("priority_queue     ran: %s\n", order.c_str());
    ok &= order == "urgent, routine, whenever";

    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
