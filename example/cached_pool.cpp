// crew::cached_pool, Java's Executors.newCachedThreadPool(): no queue. A task
// goes to an idle worker, or else to a new one; idle workers leave after the
// keep-alive. crew::cached_pool(n) instead caps the pool at n workers.
#include <crew/cached_pool.hpp>

#include <chrono>
#include <cstdio>
#include <latch>
#include <thread>

using namespace std::chrono_literals;

int main() {
    bool ok = true;
    {
        // Java's settings (core 0, no maximum), with a keep-alive of 100 ms
        // instead of 60 s so that the example does not wait a minute.
        crew::pool_options options = crew::synchronous_queue::default_options();
        options.keep_alive = 100ms;
        std::latch together(3); // three tasks that wait for each other: three threads
        crew::cached_pool pool(options);
        for (int i = 0; i < 3; ++i) pool.execute([&together] { together.arrive_and_wait(); });
        pool.wait_idle();
        std::printf("3 tasks that meet each other ran on %zu threads\n", pool.largest_pool_size());
        ok &= pool.largest_pool_size() == 3;

        const auto idle_since = std::chrono::steady_clock::now();
        while (pool.pool_size() > 0 && std::chrono::steady_clock::now() - idle_since < 10s)
            std::this_thread::sleep_for(5ms);
        std::printf("after 100 ms without work: %zu threads left\n", pool.pool_size());
        ok &= pool.pool_size() == 0;
    }
    {
        std::latch gate(1); // declared first: it must outlive the pool's workers
        crew::cached_pool capped(2); // core = maximum = 2, no queue
        capped.execute([&gate] { gate.wait(); });
        capped.execute([&gate] { gate.wait(); });
        try {
            capped.execute([] {}); // both workers busy, and no queue to wait in
            ok = false;
        } catch (const crew::rejected_execution_error& e) {
            std::printf("cached_pool(2), both busy, a third task: %s\n", e.what());
        }
        gate.count_down();
    }
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
