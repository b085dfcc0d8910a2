// Helpers shared by the queue unit tests (queues.cpp, lockfree_queue.cpp).
#ifndef CREW_TEST_UNIT_SUPPORT_HPP
#define CREW_TEST_UNIT_SUPPORT_HPP

#include <crew/task.hpp>

#include <chrono>
#include <cstdlib>
#include <future>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

namespace crew_unit_test {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// CREW_TEST_TIME_FACTOR scales the generous upper bounds (sanitizers are slow).
inline double time_factor() {
    static const double factor = [] {
        const char* text = std::getenv("CREW_TEST_TIME_FACTOR");
        if (text == nullptr) return 1.0;
        char* end = nullptr;
        const double value = std::strtod(text, &end);
        return end != text && value >= 1.0 ? value : 1.0;
    }();
    return factor;
}

template <class Rep, class Period>
steady::duration scaled(std::chrono::duration<Rep, Period> d) {
    return std::chrono::duration_cast<steady::duration>(d * time_factor());
}

// A bound on every wait that only a broken queue can reach.
inline steady::duration generous() { return scaled(30s); }

// Not synchronisation: gives a thread that ought to be blocked a chance to
// run (and to misbehave), so that a queue which does not block is likely
// caught. A correct queue passes whatever the scheduling.
template <class Pred>
void give_a_chance(Pred done) {
    for (int i = 0; i < 5000 && !done(); ++i) std::this_thread::yield();
}

// Runs `f` when the scope ends: releases threads a failed REQUIRE would
// otherwise leave blocked, before their futures join them.
template <class F>
class scope_guard {
  public:
    explicit scope_guard(F f) : f_(std::move(f)) {}
    scope_guard(const scope_guard&) = delete;
    scope_guard& operator=(const scope_guard&) = delete;
    ~scope_guard() { f_(); }

  private:
    F f_;
};

template <class F>
auto run_async(F f) {
    return std::async(std::launch::async, std::move(f));
}

template <class Future>
bool ready_in_time(Future& f) {
    return f.wait_for(generous()) == std::future_status::ready;
}

// A task that appends `id` to `log` when run.
inline crew::task logged(std::vector<int>& log, int id) {
    return crew::task([&log, id] { log.push_back(id); });
}
inline crew::task logged(std::vector<int>& log, int id, int priority) {
    return crew::task(crew::with_priority(priority, [&log, id] { log.push_back(id); }));
}

// Polls until the queue is empty, running each task; returns the log.
template <class Q>
std::vector<int> poll_and_run_all(Q& q, std::vector<int>& log) {
    crew::task t;
    while (q.poll(t)) {
        t();
        t.reset();
    }
    return log;
}

inline std::vector<int> iota_vector(int n, int first = 0) {
    std::vector<int> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), first);
    return v;
}

} // namespace crew_unit_test

#endif
