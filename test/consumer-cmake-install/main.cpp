// Uses an installed crew (find_package): every policy slot of basic_executor
// filled by hand, one of them with a type of the user's own.
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <utility>

// A ThreadFactoryPolicy of our own: counts the threads it makes.
struct counting_factory {
    std::shared_ptr<std::atomic<int>> made = std::make_shared<std::atomic<int>>(0);
    crew::default_thread_factory names{"app"};

    std::thread new_thread(crew::task body) {
        ++*made;
        return names.new_thread(std::move(body));
    }
};

using app_pool = crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy, counting_factory,
                                      crew::spin_lock>;

int main() {
    counting_factory factory;
    auto made = factory.made;
    app_pool pool(crew::pool_options{.core_pool_size = 2, .queue_capacity = 16}, factory);

    crew::future<int> answer = pool.submit([] { return 6 * 7; });
    const int value = answer.get();
    pool.shutdown();
    const bool terminated = pool.await_termination(std::chrono::seconds(10));

    std::printf("consumer (find_package): answer %d, threads made %d, terminated %s\n", value, made->load(),
                terminated ? "yes" : "no");
    return value == 42 && made->load() == 1 && terminated ? 0 : 1;
}
