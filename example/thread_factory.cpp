// A ThreadFactoryPolicy is any type with `std::thread new_thread(crew::task)`.
// This one labels its threads "io-<n>" (per-thread set-up goes inside the
// new thread, before the body) and refuses to make more than two. The pool
// asks for a thread for each task while below its core size (4); when the
// factory refuses, the pool counts no worker and queues the task instead.
#include <crew/crew.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

thread_local std::string thread_label = "not a pool thread";

struct two_io_threads {
    std::shared_ptr<std::atomic<int>> made = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> refused = std::make_shared<std::atomic<int>>(0);

    std::thread new_thread(crew::task body) { // may be called from several threads at once
        const int n = ++*made;
        if (n > 2) {
            --*made;
            ++*refused;
            throw std::runtime_error("two io threads are enough");
        }
        return std::thread([n, body = std::move(body)]() mutable {
            thread_label = "io-" + std::to_string(n);
            body();
        });
    }
};

int main() {
    two_io_threads factory;
    std::mutex mutex;
    std::set<std::string> labels; // guarded by mutex
    int ran = 0;                  // guarded by mutex
    {
        crew::basic_executor<crew::unbounded_queue, crew::abort_policy, two_io_threads> pool(
            crew::pool_options{.core_pool_size = 4}, factory);
        for (int i = 0; i < 8; ++i)
            pool.execute([&] {
                std::lock_guard lock(mutex);
                labels.insert(thread_label);
                ++ran;
            });
        pool.wait_idle();
        std::printf("8 tasks ran on %zu workers:", pool.pool_size());
        for (const auto& label : labels) std::printf(" %s", label.c_str());
        std::printf("\nthe factory made %d threads and refused %d requests\n", factory.made->load(),
                    factory.refused->load());
    } // the destructor joins both threads

    // Tasks 1 and 2 got new threads; tasks 3 to 8 each asked for one (the
    // pool was below its core size of 4), were refused, and were queued.
    const bool ok = ran == 8 && labels == std::set<std::string>{"io-1", "io-2"} && factory.made->load() == 2 &&
                    factory.refused->load() == 6;
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
