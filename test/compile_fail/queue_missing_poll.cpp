// A QueuePolicy that lacks `poll` is refused; the diagnostic names the slot,
// the concept piece that fails (task_pollable) and the missing expression.
// expect: QueuePolicy slot
// expect: task_pollable<Q>
// expect: required expression 'q\.poll\(out\)' is invalid
#include <crew/basic_executor.hpp>

#include <chrono>
#include <cstddef>
#include <vector>

// Every member of crew::queue_policy except poll().
struct queue_without_poll {
    explicit queue_without_poll(const crew::pool_options&) {}
    bool offer(crew::task&&) { return false; }
    crew::wait_status take(crew::task&, const crew::interrupt_flag&) { return crew::wait_status::interrupted; }
    crew::wait_status poll_until(crew::task&, std::chrono::steady_clock::time_point, const crew::interrupt_flag&) {
        return crew::wait_status::timed_out;
    }
    void wake_consumers() {}
    bool put(crew::task&&) { return false; }
    void close() {}
    std::vector<crew::task> drain() { return {}; }
    std::size_t size() const { return 0; }
    std::size_t capacity() const { return 0; }
    template <class Pred>
    std::size_t remove_if(Pred) { return 0; }
};

crew::basic_executor<queue_without_poll> pool;
