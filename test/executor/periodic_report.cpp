// A periodic task whose run throws is reported at once (issue #25), whatever
// its periodic_failure: to after_execute, or with no hook to standard error,
// on the worker that ran it; never (again) when its future is destroyed.
#include "pool_mixes.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

using scheduled_mixes = each_lock<crew::delayed_queue>;

constexpr const char* failure_text = "periodic run failed";

// How many times `needle` occurs in `text`.
std::size_t occurrences(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

// Every combination a periodic schedule can fail in.
struct failing_schedule {
    bool fixed_rate;
    crew::periodic_failure on_failure;
};
const failing_schedule every_schedule[] = {
    {true, crew::periodic_failure::cancel},
    {false, crew::periodic_failure::cancel},
    {true, crew::periodic_failure::keep_running},
    {false, crew::periodic_failure::keep_running},
};

// Schedules a task on `pool` whose first run counts `ran` down and throws;
// later runs (keep_running) do nothing. The period is long: there is one run.
template <class Pool>
crew::scheduled_future<void> schedule_failing(Pool& pool, failing_schedule how, std::latch& ran) {
    auto run = [&ran, first = std::make_shared<std::atomic<bool>>(true)] {
        if (!first->exchange(false)) return;
        ran.count_down();
        throw std::runtime_error(failure_text);
    };
    const crew::periodic_options options{.on_failure = how.on_failure};
    if (how.fixed_rate) return pool.schedule_at_fixed_rate(0ms, 1h, run, options);
    return pool.schedule_with_fixed_delay(0ms, 1h, run, options);
}

// Lets the pool finish what its worker is doing (the run, then its report):
// after this, whatever the run reported has been written.
template <class Pool>
void finish(Pool& pool) {
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

} // namespace

BOOST_AUTO_TEST_SUITE(periodic_report)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(without_a_hook_a_failed_run_is_written_to_standard_error_while_its_future_lives, Pool,
                              scheduled_mixes) {
    for (const auto how : every_schedule) {
        BOOST_TEST_CONTEXT("fixed_rate " << how.fixed_rate << ", keep_running "
                                         << (how.on_failure == crew::periodic_failure::keep_running)) {
            Pool pool(1);
            std::latch ran(1);
            std::string at_once, at_destruction;
            {
                stderr_capture captured;
                auto schedule = schedule_failing(pool, how, ran);
                ran.wait();
                finish(pool);
                at_once = captured.text(); // `schedule` still alive, never read
                stderr_capture later;
                { auto dropped = std::move(schedule); } // destroyed unread
                at_destruction = later.text();
            }
            BOOST_TEST(occurrences(at_once, failure_text) == 1u);
            BOOST_TEST(at_once.find("crew: exception escaped a task on thread crew-") != std::string::npos);
            BOOST_TEST(at_destruction.empty()); // reported once, not twice
        }
    }
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(with_a_hook_a_failed_run_reaches_after_execute_while_its_future_lives, Pool,
                              scheduled_mixes) {
    for (const auto how : every_schedule) {
        BOOST_TEST_CONTEXT("fixed_rate " << how.fixed_rate << ", keep_running "
                                         << (how.on_failure == crew::periodic_failure::keep_running)) {
            escaped_message escaped; // before the pool: its hook uses it
            std::atomic<int> failures{0};
            auto hook = escaped.hook();
            stderr_capture captured;
            {
                Pool pool(crew::pool_options{.core_pool_size = 1, .after_execute = [&](std::exception_ptr e) {
                                                 if (e) ++failures;
                                                 hook(e);
                                             }});
                std::latch ran(1);
                auto schedule = schedule_failing(pool, how, ran);
                BOOST_TEST((escaped.future().wait_for(scaled(10s)) == std::future_status::ready));
                BOOST_TEST(escaped.future().get() == failure_text);
                finish(pool);
                BOOST_TEST(failures.load() == 1);
            } // the future dies unread here
            BOOST_TEST(captured.text().empty()); // the hook had it: nothing on standard error, then or later
        }
    }
}

// Java's get() still rethrows the failure that ended the schedule, after it
// was reported.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_cancelled_schedules_get_rethrows_the_reported_failure) {
    stderr_capture captured;
    crew::scheduled_pool pool(1);
    std::latch ran(1);
    auto schedule = schedule_failing(pool, {true, crew::periodic_failure::cancel}, ran);
    BOOST_CHECK_EXCEPTION(schedule.get(), std::runtime_error,
                          [](const auto& e) { return message_contains(e, failure_text); });
    finish(pool);
    BOOST_TEST(occurrences(captured.text(), failure_text) == 1u);
}

// The task observer sees the failed run as failed, whatever the policy.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(the_task_observer_sees_a_failed_periodic_run_as_failed) {
    for (const auto how : every_schedule) {
        std::mutex mutex;
        std::vector<bool> failed;
        stderr_capture captured;
        {
            crew::scheduled_pool pool(crew::pool_options{.core_pool_size = 1,
                                                         .task_observer = [&](const crew::task_timing& t) {
                                                             std::lock_guard lock(mutex);
                                                             failed.push_back(t.failed);
                                                         }});
            std::latch ran(1);
            auto schedule = schedule_failing(pool, how, ran);
            ran.wait();
            finish(pool);
        }
        std::lock_guard lock(mutex);
        BOOST_TEST((failed == std::vector<bool>{true}));
    }
}

// Only periodic tasks report at once: a one-shot task's exception is its
// future's, reported only if the future dies unread.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_one_shot_scheduled_failure_still_belongs_to_its_future) {
    crew::scheduled_pool pool(1);
    std::string at_once, at_destruction;
    {
        stderr_capture captured;
        auto once = pool.schedule(0ms, [] { throw std::runtime_error(failure_text); });
        once.wait();
        finish(pool);
        at_once = captured.text();
        stderr_capture later;
        { auto dropped = std::move(once); }
        at_destruction = later.text();
    }
    BOOST_TEST(at_once.empty());
    BOOST_TEST(occurrences(at_destruction, failure_text) == 1u);
}

// A periodic task handed back by shutdown_now() and run by hand has no
// worker to report to: its failure escapes to the caller, and its future
// holds it (cancel) or is cancelled (keep_running), reporting nothing later.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_periodic_task_run_by_hand_lets_its_failure_escape_to_the_caller) {
    for (const auto on_failure : {crew::periodic_failure::cancel, crew::periodic_failure::keep_running}) {
        stderr_capture captured;
        {
            crew::scheduled_pool pool(1);
            auto schedule = pool.schedule_at_fixed_rate(
                1h, 1h, [] { throw std::runtime_error(failure_text); }, {.on_failure = on_failure});
            auto left = pool.shutdown_now();
            BOOST_REQUIRE(left.size() == 1u);
            BOOST_CHECK_EXCEPTION(left[0](), std::runtime_error,
                                  [](const auto& e) { return message_contains(e, failure_text); });
            BOOST_TEST(schedule.is_done());
            if (on_failure == crew::periodic_failure::cancel)
                BOOST_CHECK_THROW(schedule.get(), std::runtime_error);
            else
                BOOST_CHECK_THROW(schedule.get(), crew::cancellation_error);
        }
        BOOST_TEST(captured.text().empty());
    }
}

BOOST_AUTO_TEST_SUITE_END()
