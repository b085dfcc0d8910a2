// Scheduling beyond Java (issue #16): periodic_options (missed runs,
// failures) and elastic scheduled pools.
#include "pool_mixes.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <mutex>
#include <stdexcept>
#include <tuple>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

using scheduled_mixes = each_lock<crew::delayed_queue>;

constexpr auto period = 20ms;
constexpr auto long_run = 75ms; // the second run: the next three fall due meanwhile

// The due, start and end times of a periodic task's first runs.
struct run_times {
    std::vector<clock::time_point> dues, starts, ends;
};

// One worker, a fixed-rate task every `period` whose second run takes
// `long_run`; returns the times of the first `runs` runs.
template <class Pool>
run_times times_with(crew::missed_runs missed, int runs) {
    run_log log;
    Pool pool(crew::pool_options{.core_pool_size = 1, .task_observer = std::ref(log)});
    std::atomic<int> n{0};
    auto schedule = pool.schedule_at_fixed_rate(
        0ms, period, [&] {
            if (++n == 2) std::this_thread::sleep_for(long_run); // the late-making run (timing is the behaviour)
        },
        crew::periodic_options{.missed = missed});
    BOOST_TEST(log.wait_for_runs(runs));
    schedule.cancel();
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    run_times times{log.dues(), log.starts(), log.ends()};
    for (auto* v : {&times.dues, &times.starts, &times.ends}) v->resize(static_cast<std::size_t>(runs));
    // Never early, whatever the policy.
    for (int i = 0; i < runs; ++i)
        BOOST_TEST((times.starts[static_cast<std::size_t>(i)] >= times.dues[static_cast<std::size_t>(i)]));
    return times;
}

} // namespace

BOOST_AUTO_TEST_SUITE(periodic_policies)

// ---- missed runs -------------------------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(catch_up_runs_every_missed_run, Pool, scheduled_mixes) {
    const auto dues = times_with<Pool>(crew::missed_runs::catch_up, 6).dues;
    for (std::size_t i = 1; i < dues.size(); ++i) BOOST_TEST((dues[i] - dues[i - 1] == period)); // none dropped
}

// skip: a run's successor is due at the first grid point after the moment
// the run began (read inside it, between the observer's start and end of
// it). Run 2 (due at first + 20 ms) takes 75 ms, so run 3, due at first +
// 40 ms or later, starts after first + 95 ms: skip moves run 4 to the first
// grid point after that start (first + 100 ms or later), dropping the runs
// due at 60 and 80. Checked against each run's own start and end, not
// against the nominal grid: a worker the OS holds back a period late skips a
// grid point rightly (run 2 due at first + 40, say).
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(skip_drops_missed_runs_and_keeps_the_grid, Pool, scheduled_mixes) {
    const auto [dues, starts, ends] = times_with<Pool>(crew::missed_runs::skip, 5);
    const auto first = dues[0];
    for (auto due : dues) BOOST_TEST(((due - first) % period == clock::duration::zero())); // on the grid
    for (std::size_t k = 0; k + 1 < dues.size(); ++k) {
        BOOST_TEST_CONTEXT("run " << k + 1) {
            BOOST_TEST((dues[k + 1] > starts[k]));           // after the run began...
            BOOST_TEST((dues[k + 1] - period <= ends[k]));   // ...the first grid point after it
            BOOST_TEST((dues[k + 1] - dues[k] >= period));
        }
    }
    BOOST_TEST((dues[3] - first >= 5 * period)); // catch_up would give 3 periods
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(fixed_delay_ignores_missed_runs) {
    run_log log;
    crew::scheduled_pool pool(crew::pool_options{.core_pool_size = 1, .task_observer = std::ref(log)});
    auto schedule = pool.schedule_with_fixed_delay(0ms, 5ms, [] {}, {.missed = crew::missed_runs::skip});
    BOOST_TEST(log.wait_for_runs(3));
    schedule.cancel();
    const auto dues = log.dues();
    const auto starts = log.starts();
    for (std::size_t i = 1; i < 3; ++i) BOOST_TEST((dues[i] - starts[i - 1] >= 5ms)); // a delay after each run
}

// ---- failures ----------------------------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(keep_running_goes_on_after_a_run_throws, Pool, scheduled_mixes) {
    std::mutex mutex;
    std::vector<std::string> seen; // what after_execute received
    Pool pool(crew::pool_options{.core_pool_size = 1, .after_execute = [&](std::exception_ptr e) {
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            std::lock_guard lock(mutex);
            seen.emplace_back(x.what());
        }
    }});
    std::atomic<int> runs{0};
    auto schedule = pool.schedule_at_fixed_rate(
        0ms, 2ms, [&] {
            const int n = ++runs;
            if (n == 1 || n == 3) throw std::runtime_error("run " + std::to_string(n));
        },
        {.on_failure = crew::periodic_failure::keep_running});
    BOOST_TEST(eventually([&] { return runs.load() >= 5; })); // it went on after runs 1 and 3
    BOOST_TEST(!schedule.is_done());
    schedule.cancel();
    BOOST_CHECK_THROW(schedule.get(), crew::cancellation_error); // never the runs' exceptions
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    std::lock_guard lock(mutex);
    BOOST_TEST(seen.size() == 2u);
    BOOST_TEST((seen == std::vector<std::string>{"run 1", "run 3"}));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(keep_running_reports_on_standard_error_without_a_hook) {
    crew::scheduled_pool pool(1);
    std::atomic<int> runs{0};
    stderr_capture captured;
    auto schedule = pool.schedule_with_fixed_delay(
        0ms, 1ms, [&] {
            if (++runs == 1) throw std::runtime_error("first run failed");
        },
        {.on_failure = crew::periodic_failure::keep_running});
    BOOST_TEST(eventually([&] { return runs.load() >= 3; }));
    schedule.cancel();
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(captured.text().find("first run failed") != std::string::npos);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_on_failure_ends_the_schedule_and_get_rethrows) {
    crew::scheduled_pool pool(1);
    std::atomic<int> runs{0};
    auto schedule = pool.schedule_at_fixed_rate(
        0ms, 1ms, [&] {
            if (++runs == 2) throw std::runtime_error("second run failed");
        },
        {.on_failure = crew::periodic_failure::cancel});
    BOOST_CHECK_EXCEPTION(schedule.get(), std::runtime_error,
                          [](const auto& e) { return message_contains(e, "second run failed"); });
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(runs.load() == 2);
}

// ---- elastic scheduled pools ---------------------------------------------------------

// Every worker busy: tasks that are due get new workers, up to the maximum.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(an_elastic_pool_adds_workers_while_due_tasks_wait, Pool, scheduled_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 3, .keep_alive = 10min});
    gate blocked;
    occupy(pool, blocked, 1);
    std::latch started(2);
    auto now_task = pool.submit([&] {
        started.count_down();
        blocked.wait();
    });
    auto later_task = pool.schedule(30ms, [&] { // falls due while every worker is busy
        started.count_down();
        blocked.wait();
    });
    BOOST_TEST(eventually([&] { return started.try_wait(); })); // both run with the first still blocked
    BOOST_TEST(pool.pool_size() == 3u);
    BOOST_TEST(pool.largest_pool_size() == 3u);
    blocked.open();
    now_task.get();
    later_task.get();
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(an_elastic_pools_extra_workers_leave_after_keep_alive, Pool, scheduled_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 3, .keep_alive = 30ms});
    gate blocked;
    occupy(pool, blocked, 1);
    occupy(pool, blocked, 2);
    BOOST_TEST(pool.pool_size() == 3u);
    blocked.open();
    BOOST_TEST(eventually([&] { return pool.pool_size() == 1u; }));
    // And it still runs what comes.
    BOOST_TEST((pool.schedule(1ms, [] { return 7; }).get() == 7));
}

// Maximum = core (the default): Java's STPE, a due task waits for a worker.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_scheduled_pool_with_maximum_equal_to_core_does_not_grow) {
    crew::scheduled_pool pool(1);
    gate blocked;
    occupy(pool, blocked, 1);
    std::atomic<bool> ran{false};
    auto due = pool.schedule(1ms, [&] { ran = true; });
    BOOST_TEST((due.wait_for(50ms) == std::future_status::timeout));
    BOOST_TEST(!ran.load());
    BOOST_TEST(pool.largest_pool_size() == 1u);
    blocked.open();
    due.get();
    BOOST_TEST(ran.load());
}

// A paused elastic pool does not grow: new workers would only hold tasks.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_paused_elastic_pool_does_not_grow) {
    crew::scheduled_pool pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 3});
    gate blocked;
    occupy(pool, blocked, 1);
    pool.pause();
    run_counter ran;
    for (int i = 0; i < 3; ++i) pool.execute([&] { ran.hit(); });
    BOOST_TEST(!ran.wait_for_count(1, 50ms));
    BOOST_TEST(pool.pool_size() == 1u);
    pool.resume();
    blocked.open();
    BOOST_TEST(ran.wait_for_count(3));
}

BOOST_AUTO_TEST_SUITE_END()
