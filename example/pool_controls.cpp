// The pool controls beyond Java: a pool that grows before it queues
// (grow_first_queue), back-pressure with a limit (block_policy{timeout}),
// pause and resume, the count of rejected tasks, and a task observer that
// measures how long each task waited in the queue.
#include <crew/crew.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <latch>
#include <mutex>
#include <vector>

using namespace std::chrono_literals;

int main() {
    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        std::printf("%-4s %s\n", condition ? "ok" : "FAIL", what);
        ok &= condition;
    };

    // 1. grow_first_queue: with core 1 and maximum 4, four slow tasks get
    //    four workers at once (bounded_queue would queue three of them
    //    behind one worker until its queue filled up).
    {
        std::latch release(1);
        std::latch running(4);
        crew::basic_executor<crew::grow_first_queue> pool(
            crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 4, .keep_alive = 1s, .queue_capacity = 16});
        for (int i = 0; i < 4; ++i)
            pool.execute([&] {
                running.count_down();
                release.wait();
            });
        running.wait(); // all four run together
        check(pool.pool_size() == 4 && pool.queue_size() == 0, "grow_first_queue: 4 workers, nothing queued");
        pool.execute([] {}); // at the maximum: now it queues
        check(pool.queue_size() == 1, "grow_first_queue: at its maximum, the fifth task queues");
        release.count_down();
        pool.wait_idle();
    }

    // 2. block_policy{50ms}: a producer facing a full pool waits at most
    //    50 ms for room, then gets rejected_execution_error.
    {
        std::latch release(1);
        crew::basic_executor<crew::bounded_queue, crew::block_policy> pool(
            crew::pool_options{.core_pool_size = 1, .queue_capacity = 1}, {}, crew::block_policy{50ms});
        pool.execute([&] { release.wait(); });
        pool.execute([] {}); // fills the queue
        const auto start = std::chrono::steady_clock::now();
        bool rejected = false;
        try {
            pool.execute([] {});
        } catch (const crew::rejected_execution_error& e) {
            rejected = true;
            std::printf("     rejected after %lld ms: %s\n",
                        static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                   std::chrono::steady_clock::now() - start)
                                                   .count()),
                        e.what());
        }
        check(rejected && std::chrono::steady_clock::now() - start >= 50ms,
              "block_policy{50ms}: gave up after the timeout");
        check(pool.rejected_task_count() == 1, "rejected_task_count() counts it");
        release.count_down();
    }

    // 3. pause() and resume(): tasks queue while paused, none starts, and
    //    they all run after resume(). The observer sees their wait.
    {
        std::mutex mutex;
        std::vector<std::chrono::nanoseconds> waits;
        crew::fixed_pool pool(crew::pool_options{
            .core_pool_size = 2,
            .task_observer = [&](const crew::task_timing& t) {
                std::lock_guard lock(mutex);
                waits.push_back(t.started - t.queued);
            }});
        std::atomic<int> ran{0};
        pool.pause();
        for (int i = 0; i < 8; ++i) pool.execute([&] { ++ran; });
        std::this_thread::sleep_for(20ms); // paused: nothing may start meanwhile
        check(ran == 0 && pool.queue_size() == 8, "pause(): 8 tasks queued, none started");
        pool.resume();
        pool.wait_idle();
        check(ran == 8, "resume(): all 8 ran");
        std::lock_guard lock(mutex);
        const auto shortest = *std::min_element(waits.begin(), waits.end());
        std::printf("     the observer saw %zu tasks; the shortest wait was %lld ms\n", waits.size(),
                    static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(shortest).count()));
        check(waits.size() == 8 && shortest >= 20ms, "task_observer: each waited through the pause");
    }

    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
