// Uses crew from a b2 project (use-project /crew): a hand-off pool whose
// submitters wait for a free worker instead of being refused.
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

using app_pool = crew::basic_executor<crew::synchronous_queue, crew::block_policy>;

int main() {
    app_pool pool(2); // two workers, no queue: a third task waits for one of them
    std::atomic<int> sum{0};
    std::vector<crew::future<int>> squares;
    for (int i = 1; i <= 10; ++i) squares.push_back(pool.submit([i, &sum] { sum += i; return i * i; }));
    int total = 0;
    for (auto& f : squares) total += f.get();
    pool.shutdown();
    const bool terminated = pool.await_termination(std::chrono::seconds(10));

    std::printf("consumer (b2 use-project): sum of squares 1..10 = %d, largest pool %zu\n", total,
                pool.largest_pool_size());
    return total == 385 && sum == 55 && pool.largest_pool_size() <= 2 && terminated ? 0 : 1;
}
