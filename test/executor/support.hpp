// Shared helpers for the executor suite.
#ifndef CREW_TEST_EXECUTOR_SUPPORT_HPP
#define CREW_TEST_EXECUTOR_SUPPORT_HPP

#include <crew/crew.hpp>

#include "../common/stderr_capture.hpp"
#include "../common/time_factor.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>

#include <unistd.h>

namespace crew_test {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// One reading of CREW_TEST_TIME_FACTOR for both suites; the names stay
// usable here, unqualified or as crew_test::, at every call site.
using crew_test_common::eventually;
using crew_test_common::stderr_capture;
using crew_test_common::scaled;
using crew_test_common::time_factor;

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

// Blocks `n` workers of `pool` inside tasks until `g` opens; returns once all run.
template <class Pool>
void occupy(Pool& pool, gate& g, int n) {
    std::latch running(n);
    for (int i = 0; i < n; ++i)
        pool.execute([&running, &g] {
            running.count_down();
            g.wait();
        });
    running.wait();
}

// Executes `n` tasks that each wait for `g` and then count themselves in `ran`.
template <class Pool>
void execute_held(Pool& pool, gate& g, run_counter& ran, int n) {
    for (int i = 0; i < n; ++i)
        pool.execute([&g, &ran] {
            g.wait();
            ran.hit();
        });
}

// Submits a task that waits for `g` and then returns `value`.
template <class Pool>
auto submit_held(Pool& pool, gate& g, int value) {
    return pool.submit([&g, value] {
        g.wait();
        return value;
    });
}

inline bool message_contains(const std::exception& e, const std::string& needle) {
    return std::string(e.what()).find(needle) != std::string::npos;
}

// A predicate for BOOST_CHECK_EXCEPTION: the std::invalid_argument names `field`.
inline auto names(const std::string& field) {
    return [field](const std::invalid_argument& e) { return message_contains(e, field); };
}

// The rule of block_policy, on a pool with one worker and room for one
// queued task: a submitter that finds the pool saturated waits for room and
// gets in once the worker is free; one still waiting at shutdown is
// rejected, and so is every execute after it.
template <class Pool>
void check_block_policy_waits_for_room_and_gives_up_at_shutdown(Pool& pool) {
    gate blocked;
    run_counter ran;
    occupy(pool, blocked, 1);
    pool.execute([&] { ran.hit(); }); // fills the queue
    std::promise<void> submitted;
    std::thread submitter([&] {
        pool.execute([&] { ran.hit(); }); // waits for room
        submitted.set_value();
    });
    auto done = submitted.get_future();
    BOOST_TEST((done.wait_for(20ms) == std::future_status::timeout)); // still waiting: no room yet
    blocked.open();
    BOOST_TEST((done.wait_for(scaled(10s)) == std::future_status::ready));
    submitter.join();
    BOOST_TEST(ran.wait_for_count(2));

    // Saturate again, then shut down under a waiting submitter.
    gate blocked_again;
    occupy(pool, blocked_again, 1);
    pool.execute([] {});
    std::promise<bool> rejected;
    std::thread waiter([&] {
        try {
            pool.execute([] {});
            rejected.set_value(false);
        } catch (const crew::rejected_execution_error&) {
            rejected.set_value(true);
        }
    });
    auto outcome = rejected.get_future();
    BOOST_TEST((outcome.wait_for(20ms) == std::future_status::timeout)); // waiting for room
    pool.shutdown();
    BOOST_TEST((outcome.wait_for(scaled(10s)) == std::future_status::ready));
    BOOST_TEST(outcome.get());
    waiter.join();
    blocked_again.open();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_CHECK_THROW(pool.execute([] {}), crew::rejected_execution_error); // at once when shut down
}

} // namespace crew_test

#endif
