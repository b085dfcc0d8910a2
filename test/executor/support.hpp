// Shared helpers for the executor suite.
#ifndef CREW_TEST_EXECUTOR_SUPPORT_HPP
#define CREW_TEST_EXECUTOR_SUPPORT_HPP

#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <latch>
#include <string>
#include <thread>

namespace crew_test {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// Sanitizer builds run slower; upper time bounds are multiplied by this.
inline double time_factor() {
    static const double factor = [] {
        const char* text = std::getenv("CREW_TEST_TIME_FACTOR");
        const double value = text ? std::atof(text) : 1.0;
        return value > 0 ? value : 1.0;
    }();
    return factor;
}

template <class Duration>
std::chrono::nanoseconds scaled(Duration d) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(d * time_factor());
}

// Polls `done` until it holds or a generous, scaled limit passes. Only for
// states no event announces (a worker culled by keep-alive); everything else
// synchronises on latches and futures.
template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit = 10s) {
    const auto deadline = clock::now() + scaled(limit);
    while (!done()) {
        if (clock::now() > deadline) return done();
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

// Tasks block on a gate until the test opens it.
class gate {
  public:
    void open() { latch_.count_down(); }
    void wait() { latch_.wait(); }

  private:
    std::latch latch_{1};
};

// Counts the tasks that ran, and lets the test wait for a number of them
// with a deadline, so that a lost task fails the test instead of hanging it.
class run_counter {
  public:
    void hit() {
        ran_.fetch_add(1);
        ran_.notify_all();
    }
    int count() const { return ran_.load(); }
    bool wait_for_count(int expected, std::chrono::milliseconds limit = 10s) const {
        return eventually([&] { return ran_.load() >= expected; }, limit);
    }

  private:
    std::atomic<int> ran_{0};
};

inline bool message_contains(const std::exception& e, const std::string& needle) {
    return std::string(e.what()).find(needle) != std::string::npos;
}

} // namespace crew_test

#endif
