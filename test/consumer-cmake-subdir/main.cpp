// Uses crew through add_subdirectory: a pool with a RejectPolicy of our own.
#include <crew/crew.hpp>

#include <cstdio>
#include <latch>
#include <memory>

// A RejectPolicy of our own: counts the tasks the pool refused, then drops
// them (a future's task would report rejected_execution_error).
struct counting_reject_policy {
    std::shared_ptr<int> rejected = std::make_shared<int>(0); // only the submitting thread writes

    template <class Executor>
    void rejected_execution(crew::task&& t, Executor&) {
        ++*rejected;
        t.reject();
    }
};

using app_pool = crew::basic_executor<crew::bounded_queue, counting_reject_policy>;

int main() {
    counting_reject_policy policy;
    auto rejected = policy.rejected;
    // One worker and room for one waiting task.
    app_pool pool(crew::pool_options{.core_pool_size = 1, .queue_capacity = 1}, {}, policy);

    std::latch gate(1);
    int ran = 0; // written by the single worker only
    pool.execute([&] { gate.wait(); ++ran; });   // the worker holds this one
    pool.execute([&] { ++ran; });                // waits in the queue
    for (int i = 0; i < 3; ++i) pool.execute([&] { ++ran; }); // refused: queue full, pool at maximum
    gate.count_down();
    pool.wait_idle();

    std::printf("consumer (add_subdirectory): %d tasks ran, %d rejected\n", ran, *rejected);
    return ran == 2 && *rejected == 3 ? 0 : 1;
}
