// Recipe: a bounded pipeline with progress (doc/recipes.md).
//
// A producer feeds 2,000 items to a pool whose queue holds 16 tasks. With
// block_policy a full queue makes the producer wait (back-pressure) instead
// of throwing or queueing without limit. A completion_queue hands the
// results back in the order they finish, so the consumer reports progress
// as it goes. The completion queue itself has no limit: a semaphore bounds
// the items in flight, finished but not yet taken included.
//
// Part 2 does the same on one thread with try_submit: when the pool is
// full, the producer collects a finished result instead of waiting.
#include <crew/completion_queue.hpp>
#include <crew/crew.hpp>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <semaphore>
#include <thread>

namespace {

constexpr long items = 2000;
constexpr long expected_sum = (items - 1) * items * (2 * items - 1) / 6; // the sum of i * i below items

long square(long i) { return i * i; }

} // namespace

int main() {
    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        std::printf("%-4s %s\n", condition ? "ok" : "FAIL", what);
        ok &= condition;
    };

    // Part 1: block_policy for back-pressure, a completion_queue for progress.
    {
        crew::basic_executor<crew::bounded_queue, crew::block_policy> pool(
            crew::pool_options{.core_pool_size = 2, .queue_capacity = 16});
        crew::completion_queue<long> results(pool);
        std::counting_semaphore<64> in_flight(64); // queued, running, or done and not yet taken
        std::size_t most_queued = 0;

        std::jthread producer([&] {
            for (long i = 0; i < items; ++i) {
                in_flight.acquire();
                (void)results.submit([i] { return square(i); }); // waits while 16 tasks are queued
                most_queued = std::max(most_queued, pool.queue_size());
            }
        });
        long sum = 0;
        for (long taken = 1; taken <= items; ++taken) {
            sum += results.take().get(); // the next to finish, whichever it is
            in_flight.release();
            if (taken % 500 == 0) std::printf("     progress: %ld/%ld\n", taken, items);
        }
        producer.join();
        std::printf("     the producer waited for room %llu times\n",
                    static_cast<unsigned long long>(pool.rejected_task_count()));
        check(sum == expected_sum, "block_policy: every item's result came back once");
        check(most_queued <= 16, "block_policy: the queue never held more than its 16 tasks");
    }

    // Part 2: try_submit on one thread. A refusal destroys the callable
    // unrun and calls no RejectPolicy; the loop makes a new one and retries
    // after collecting the oldest result.
    {
        crew::basic_executor<crew::bounded_queue> pool(crew::pool_options{.core_pool_size = 2, .queue_capacity = 16});
        std::deque<crew::future<long>> pending;
        long sum = 0;
        long refusals = 0;
        auto collect_oldest = [&] {
            sum += pending.front().get();
            pending.pop_front();
        };
        for (long i = 0; i < items; ++i) {
            for (;;) {
                if (auto f = pool.try_submit([i] { return square(i); })) {
                    pending.push_back(std::move(*f));
                    break;
                }
                ++refusals;       // the queue is full of our own tasks, so `pending` is not empty
                collect_oldest(); // do something useful meanwhile
            }
        }
        while (!pending.empty()) collect_oldest();
        std::printf("     try_submit was refused %ld times\n", refusals);
        check(sum == expected_sum, "try_submit: every item's result came back once");
        check(pool.rejected_task_count() == 0, "try_submit: the RejectPolicy never saw a refusal");
    }

    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
