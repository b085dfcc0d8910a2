// Shared helpers for the executor suite.
#ifndef CREW_TEST_EXECUTOR_SUPPORT_HPP
#define CREW_TEST_EXECUTOR_SUPPORT_HPP

#include <crew/crew.hpp>

#include "../common/escaped_message.hpp"
#include "../common/stderr_capture.hpp"
#include "../common/time_factor.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <latch>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace crew_test {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// One reading of CREW_TEST_TIME_FACTOR for both suites; the names stay
// usable here, unqualified or as crew_test::, at every call site.
using crew_test_common::escaped_message;
using crew_test_common::eventually;
using crew_test_common::stderr_capture;
using crew_test_common::scaled;
using crew_test_common::time_factor;

// One worker and room for one queued task: the second task fills the queue,
// the third is refused (or waits, or runs on the caller: the RejectPolicy's choice).
inline const crew::pool_options one_worker_one_slot{.core_pool_size = 1, .maximum_pool_size = 1, .queue_capacity = 1};

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

// The ids of tasks in the order they ran, under a lock: workers append, the
// test reads.
class id_log {
  public:
    // A task that appends `id` when it runs.
    auto note(int id) {
        return [this, id] {
            std::lock_guard lock(mutex_);
            ids_.push_back(id);
        };
    }
    std::vector<int> ids() const {
        std::lock_guard lock(mutex_);
        return ids_;
    }

  private:
    mutable std::mutex mutex_;
    std::vector<int> ids_;
};

// The timings a task observer was given, for the test thread to inspect.
class timing_log {
  public:
    void operator()(const crew::task_timing& timing) {
        std::lock_guard lock(mutex_);
        timings_.push_back(timing);
    }
    std::vector<crew::task_timing> timings() const {
        std::lock_guard lock(mutex_);
        return timings_;
    }

  private:
    mutable std::mutex mutex_;
    std::vector<crew::task_timing> timings_;
};

// The due, start and end times of a periodic task's runs: each run records
// one (directly, or through the task observer, whose `queued` is that run's
// due time); the test reads them. A run recorded directly, from inside
// itself, has not ended: its end reads as its start.
class run_log {
  public:
    void record(clock::time_point due, clock::time_point started = clock::now()) { record(due, started, started); }
    void record(clock::time_point due, clock::time_point started, clock::time_point finished) {
        {
            std::lock_guard lock(mutex_);
            dues_.push_back(due);
            starts_.push_back(started);
            ends_.push_back(finished);
        }
        count_.fetch_add(1);
    }
    void operator()(const crew::task_timing& t) { record(t.queued, t.started, t.finished); }
    int count() const { return count_.load(); }
    bool wait_for_runs(int n) const {
        return eventually([&] { return count_.load() >= n; });
    }
    std::vector<clock::time_point> dues() const {
        std::lock_guard lock(mutex_);
        return dues_;
    }
    std::vector<clock::time_point> starts() const {
        std::lock_guard lock(mutex_);
        return starts_;
    }
    std::vector<clock::time_point> ends() const {
        std::lock_guard lock(mutex_);
        return ends_;
    }

  private:
    mutable std::mutex mutex_;
    std::vector<clock::time_point> dues_, starts_, ends_;
    std::atomic<int> count_{0};
};

// Blocks `n` workers of `pool` inside tasks until `g` opens; returns once all
// run. Each task counts itself in `ran`, where given, as it ends.
template <class Pool>
void occupy(Pool& pool, gate& g, int n, run_counter* ran = nullptr) {
    std::latch running(n);
    for (int i = 0; i < n; ++i)
        pool.execute([&running, &g, ran] {
            running.count_down();
            g.wait();
            if (ran) ran->hit();
        });
    running.wait();
}

// A one-worker fixed_pool whose task observer is `log`, its worker held
// inside a task (the observer's first) until `held` opens.
struct observed_busy_pool {
    timing_log log;
    gate held; // outlives the pool: its worker waits on it
    crew::fixed_pool pool{crew::pool_options{.core_pool_size = 1, .task_observer = std::ref(log)}};
    observed_busy_pool() { occupy(pool, held, 1); }
};

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

// An exception with a payload, to check that a failure arrives as thrown.
struct custom_error : std::runtime_error {
    int code;
    explicit custom_error(int c) : std::runtime_error("custom"), code(c) {}
};

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
