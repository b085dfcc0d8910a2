// crew::fixed_pool, Java's Executors.newFixedThreadPool(n): n workers over an
// unbounded FIFO queue. Tasks wait while every worker is busy; none is
// rejected while the pool runs. Here 4 workers count primes in 20 slices.
#include <crew/fixed_pool.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

static int count_primes(int from, int to) { // in [from, to)
    int n = 0;
    for (int i = from < 2 ? 2 : from; i < to; ++i) {
        bool prime = true;
        for (int d = 2; d * d <= i && prime; ++d) prime = i % d != 0;
        n += prime;
    }
    return n;
}

int main() {
    crew::fixed_pool pool(4); // core = maximum = 4

    std::vector<crew::future<int>> slices;
    for (int i = 0; i < 20; ++i)
        slices.push_back(pool.submit([i] { return count_primes(i * 10'000, (i + 1) * 10'000); }));
    int primes = 0;
    for (auto& slice : slices) primes += slice.get(); // waits; rethrows what a task threw

    pool.shutdown(); // queued tasks would still run; new ones are rejected
    const bool terminated = pool.await_termination(std::chrono::seconds(10));

    std::printf("primes below 200000: %d (20 tasks, %zu workers, %llu tasks completed)\n", primes,
                pool.largest_pool_size(), static_cast<unsigned long long>(pool.completed_task_count()));
    std::printf("terminated after shutdown: %s\n", terminated ? "yes" : "no");

    // Each of the first four tasks started a worker (below the core size);
    // the other sixteen waited in the queue for one of them.
    const bool ok = primes == count_primes(0, 200'000) && pool.largest_pool_size() == 4 &&
                    pool.completed_task_count() == 20 && terminated;
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
