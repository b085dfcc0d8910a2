// The pool controls beyond Java (issue #16): grow_first_queue,
// block_policy{timeout}, pause/resume, rejected_task_count and the task
// observer.
#include "pool_mixes.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

using grow_first_mixes = each_lock<crew::grow_first_queue>;
using blocking_mixes = each_lock<crew::bounded_queue, crew::block_policy>;
using blocking_pool = crew::basic_executor<crew::bounded_queue, crew::block_policy>;

// Pausing holds for every queue, each lock, and a scheduled pool.
using pause_mixes = std::tuple<crew::fixed_pool, pool_of<crew::bounded_queue, crew::spin_lock>,
                               pool_of<crew::priority_queue>, pool_of<crew::lockfree_queue<256>>,
                               pool_of<crew::grow_first_queue>, crew::scheduled_pool>;

// A two-worker pool, its workers started, paused, then given `n` tasks that
// count themselves in `ran`: the idle workers may take some, and must hold them.
template <class Pool>
struct paused_with_tasks {
    run_counter ran; // outlives the pool
    Pool pool{2};

    explicit paused_with_tasks(int n) {
        pool.prestart_all_core_threads();
        pool.pause();
        BOOST_TEST(pool.is_paused());
        for (int i = 0; i < n; ++i) pool.execute([this] { ran.hit(); });
    }
};

// `pool` is paused and holds one task that counts itself in `ran`: the task
// must not run until resume(), and then must.
template <class Pool>
void check_runs_only_after_resume(Pool& pool, const run_counter& ran) {
    BOOST_TEST(!ran.wait_for_count(1, 50ms));
    pool.resume();
    BOOST_TEST(ran.wait_for_count(1));
}

} // namespace

BOOST_AUTO_TEST_SUITE(controls)

// ---- grow_first_queue ------------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(grow_first_starts_workers_up_to_the_maximum_before_it_queues, Pool, grow_first_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 3, .queue_capacity = 2});
    gate blocked;
    run_counter ran;
    occupy(pool, blocked, 3, &ran); // three workers, none queued (bounded_queue would have queued the second)
    BOOST_TEST(pool.pool_size() == 3u);
    BOOST_TEST(pool.queue_size() == 0u);
    execute_held(pool, blocked, ran, 2); // at the maximum: now they queue
    BOOST_TEST(pool.pool_size() == 3u);
    BOOST_TEST(pool.queue_size() == 2u);
    BOOST_CHECK_THROW(pool.execute([] {}), crew::rejected_execution_error); // queue full too
    BOOST_TEST(pool.rejected_task_count() == 1u);
    blocked.open();
    pool.wait_idle();
    BOOST_TEST(ran.count() == 5);
    BOOST_TEST(pool.largest_pool_size() == 3u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(grow_first_gives_a_task_to_an_idle_worker_rather_than_grow, Pool, grow_first_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 4});
    BOOST_TEST(pool.prestart_all_core_threads() == 1u);
    BOOST_TEST(eventually([&] { return pool.queue().has_idle_consumer(); })); // the core worker waits
    gate blocked;
    run_counter ran;
    occupy(pool, blocked, 1, &ran);
    BOOST_TEST(pool.pool_size() == 1u); // the idle worker took it: no growth
    execute_held(pool, blocked, ran, 1); // nobody idle now: a new worker
    BOOST_TEST(pool.pool_size() == 2u);
    blocked.open();
    pool.wait_idle();
    BOOST_TEST(ran.count() == 2);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(grow_first_extra_workers_leave_after_keep_alive) {
    pool_of<crew::grow_first_queue> pool(
        crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 3, .keep_alive = 20ms});
    gate blocked;
    occupy(pool, blocked, 3);
    BOOST_TEST(pool.pool_size() == 3u);
    blocked.open();
    BOOST_TEST(eventually([&] { return pool.pool_size() == 1u; }));
}

BOOST_AUTO_TEST_CASE(grow_first_needs_a_positive_queue_capacity) {
    BOOST_CHECK_EXCEPTION(pool_of<crew::grow_first_queue>(crew::pool_options{.queue_capacity = 0}),
                          std::invalid_argument, names("queue_capacity"));
}

// ---- block_policy{timeout} ---------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(block_policy_with_a_timeout_gives_up_after_it, Pool, blocking_mixes) {
    Pool pool(one_worker_one_slot, {}, crew::block_policy{50ms});
    gate blocked;
    occupy(pool, blocked, 1);
    pool.execute([] {}); // fills the queue
    const auto start = clock::now();
    try {
        pool.execute([] {});
        BOOST_FAIL("execute returned without room in the queue");
    } catch (const crew::rejected_execution_error& e) {
        const auto waited = clock::now() - start;
        BOOST_TEST(message_contains(e, "timeout"));
        BOOST_TEST((waited >= 50ms));        // never before the timeout
        BOOST_TEST((waited < scaled(10s))); // and not without limit
    }
    BOOST_TEST(pool.rejected_task_count() == 1u);
    blocked.open();
    pool.wait_idle();
    BOOST_TEST(pool.completed_task_count() == 2u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(block_policy_with_a_timeout_gets_in_when_room_comes) {
    blocking_pool pool(one_worker_one_slot, {}, crew::block_policy{std::chrono::minutes(10)});
    gate blocked;
    run_counter ran;
    occupy(pool, blocked, 1);
    pool.execute([&] { ran.hit(); });
    auto submitted = std::async(std::launch::async, [&] { pool.execute([&] { ran.hit(); }); });
    BOOST_TEST((submitted.wait_for(20ms) == std::future_status::timeout)); // waits for room
    blocked.open();
    BOOST_TEST((submitted.wait_for(scaled(10s)) == std::future_status::ready));
    submitted.get(); // no exception
    BOOST_TEST(ran.wait_for_count(2));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(block_policy_with_a_zero_timeout_rejects_at_once_when_full) {
    blocking_pool pool(one_worker_one_slot, {}, crew::block_policy{0s});
    gate blocked;
    occupy(pool, blocked, 1);
    pool.execute([] {});
    BOOST_CHECK_THROW(pool.execute([] {}), crew::rejected_execution_error);
    blocked.open();
}

// Without the rule, the inner execute would wait for room only this worker
// can make: here it would time out after a minute and the test would fail.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(block_policy_runs_a_task_its_own_worker_submits_to_a_full_queue, Pool, blocking_mixes) {
    Pool pool(one_worker_one_slot, {}, crew::block_policy{std::chrono::minutes(1)});
    auto outer = pool.submit([&pool] {
        pool.execute([] {}); // fills the queue
        std::thread::id inner_thread;
        pool.execute([&] { inner_thread = std::this_thread::get_id(); }); // full: runs here, at once
        return inner_thread == std::this_thread::get_id();
    });
    BOOST_TEST((outer.wait_for(scaled(30s)) == std::future_status::ready));
    BOOST_TEST(outer.get());
    BOOST_TEST(pool.rejected_task_count() == 1u);
}

BOOST_AUTO_TEST_CASE(block_policy_timeout_must_not_be_negative) {
    BOOST_CHECK_EXCEPTION(crew::block_policy{-1ms}, std::invalid_argument, names("timeout"));
    BOOST_TEST((crew::block_policy{}.timeout() == std::chrono::nanoseconds::max()));
    BOOST_TEST((crew::block_policy{std::chrono::hours::max()}.timeout() == std::chrono::nanoseconds::max()));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(block_policy_with_a_timeout_throws_at_once_after_shutdown) {
    blocking_pool pool(one_worker_one_slot, {}, crew::block_policy{std::chrono::hours(1)});
    pool.shutdown();
    BOOST_CHECK_EXCEPTION(pool.execute([] {}), crew::rejected_execution_error,
                          [](const auto& e) { return message_contains(e, "shut down"); });
}

// The waiting put gives up at shutdown as before, timeout or not.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(block_policy_with_a_timeout_waits_for_room_and_gives_up_at_shutdown) {
    blocking_pool pool(one_worker_one_slot, {}, crew::block_policy{std::chrono::hours(1)});
    check_block_policy_waits_for_room_and_gives_up_at_shutdown(pool);
}

// ---- pause and resume -------------------------------------------------------

// Idle workers already wait in the queue when the pool pauses: each may take
// a task offered after pause(), and must hold it, not start it.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_paused_pool_starts_no_task_until_resumed, Pool, pause_mixes) {
    paused_with_tasks<Pool> paused(6);
    auto& [ran, pool] = paused;
    BOOST_TEST(!ran.wait_for_count(1, 50ms)); // none starts (the workers could take two)
    BOOST_TEST(pool.queue_size() == 6u);      // held ones included
    pool.resume();
    BOOST_TEST(!pool.is_paused());
    BOOST_TEST(ran.wait_for_count(6));
    pool.wait_idle();
    BOOST_TEST(pool.queue_size() == 0u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(pausing_lets_running_tasks_finish, Pool, pause_mixes) {
    Pool pool(1);
    gate blocked;
    run_counter ran;
    occupy(pool, blocked, 1, &ran);
    pool.pause();
    pool.execute([&] { ran.hit(); });
    blocked.open();
    BOOST_TEST(ran.wait_for_count(1)); // the running one finished
    BOOST_TEST(!ran.wait_for_count(2, 50ms)); // the queued one waits
    pool.resume();
    BOOST_TEST(ran.wait_for_count(2));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(shutdown_keeps_a_paused_pools_tasks_until_resume, Pool, pause_mixes) {
    paused_with_tasks<Pool> paused(5);
    auto& [ran, pool] = paused;
    pool.shutdown();
    BOOST_TEST(!pool.await_termination(50ms));
    BOOST_TEST(ran.count() == 0);
    pool.resume();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(ran.count() == 5);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(shutdown_now_returns_a_paused_pools_tasks_held_ones_included, Pool, pause_mixes) {
    paused_with_tasks<Pool> paused(5);
    auto& [ran, pool] = paused;
    // Let the idle workers take (and hold) what they can first.
    BOOST_TEST(!ran.wait_for_count(1, 50ms));
    auto returned = pool.shutdown_now();
    BOOST_TEST(returned.size() == 5u);
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(ran.count() == 0);
    BOOST_TEST(pool.queue_size() == 0u);
    for (auto& t : returned) t();
    BOOST_TEST(ran.count() == 5);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(wait_idle_on_a_paused_pool_waits_for_resume, Pool, pause_mixes) {
    Pool pool(1);
    pool.pause();
    run_counter ran;
    pool.execute([&] { ran.hit(); });
    auto idle = std::async(std::launch::async, [&] { pool.wait_idle(); });
    BOOST_TEST((idle.wait_for(50ms) == std::future_status::timeout));
    pool.resume();
    BOOST_TEST((idle.wait_for(scaled(10s)) == std::future_status::ready));
    BOOST_TEST(ran.count() == 1);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(destroying_a_paused_pool_runs_its_queued_tasks, Pool, pause_mixes) {
    run_counter ran;
    {
        Pool pool(2);
        pool.prestart_all_core_threads();
        pool.pause();
        pool.pause(); // idempotent: one resume (the destructor's) undoes both
        for (int i = 0; i < 5; ++i) pool.execute([&] { ran.hit(); });
    }
    BOOST_TEST(ran.count() == 5);
}

// Paused, a pool with a full queue rejects rather than grow: a new worker
// given the task would start it.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_paused_pool_with_a_full_queue_rejects_without_growing) {
    pool_of<crew::bounded_queue> pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 3, .queue_capacity = 1});
    gate blocked;
    occupy(pool, blocked, 1);
    pool.pause();
    run_counter ran;
    pool.execute([&] { ran.hit(); });
    BOOST_CHECK_THROW(pool.execute([&] { ran.hit(); }), crew::rejected_execution_error);
    BOOST_TEST(pool.pool_size() == 1u);
    BOOST_TEST(pool.rejected_task_count() == 1u);
    blocked.open();
    pool.resume();
    BOOST_TEST(ran.wait_for_count(1));
}

// Below its core size a paused pool still starts workers, idle ones: the
// first task is queued, not handed to the new worker.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_paused_pool_below_core_starts_idle_workers) {
    run_counter ran;
    crew::fixed_pool pool(2);
    pool.pause();
    pool.execute([&] { ran.hit(); });
    BOOST_TEST(pool.pool_size() == 1u);
    check_runs_only_after_resume(pool, ran);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_paused_scheduled_pool_runs_no_due_task_until_resumed) {
    run_counter ran;
    crew::scheduled_pool pool(1);
    pool.pause();
    auto due = pool.schedule(1ms, [&] { ran.hit(); });
    check_runs_only_after_resume(pool, ran);
    BOOST_TEST((due.wait_for(scaled(10s)) == std::future_status::ready));
    BOOST_TEST(ran.count() == 1);
}

// ---- rejected_task_count ------------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(rejected_task_count_counts_what_each_policy_was_handed) {
    const auto options = one_worker_one_slot;
    gate blocked;
    {
        pool_of<crew::bounded_queue> pool(options);
        BOOST_TEST(pool.rejected_task_count() == 0u);
        occupy(pool, blocked, 1);
        pool.execute([] {});
        BOOST_CHECK_THROW(pool.execute([] {}), crew::rejected_execution_error);
        BOOST_CHECK_THROW(pool.execute([] {}), crew::rejected_execution_error);
        BOOST_TEST(pool.rejected_task_count() == 2u);
        blocked.open();
        pool.shutdown();
        BOOST_CHECK_THROW(pool.execute([] {}), crew::rejected_execution_error); // after shutdown too
        BOOST_TEST(pool.rejected_task_count() == 3u);
    }
    gate blocked_again;
    {
        crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> pool(options);
        occupy(pool, blocked_again, 1);
        pool.execute([] {});
        bool ran_here = false;
        pool.execute([&] { ran_here = true; });
        BOOST_TEST(ran_here);
        BOOST_TEST(pool.rejected_task_count() == 1u); // run by the policy, still counted
        blocked_again.open();
    }
}

// ---- the task observer --------------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(the_task_observer_sees_every_task_with_ordered_times, Pool, pool_mixes) {
    timing_log log;
    crew::pool_options options{.core_pool_size = 2, .maximum_pool_size = 2};
    options.task_observer = std::ref(log);
    Pool pool(options);
    const auto before = clock::now();
    stderr_capture quiet; // the escaping exception's report
    for (int i = 0; i < 10; ++i) pool.execute([] {});
    pool.execute([] { throw std::runtime_error("escapes"); });
    auto failed = pool.submit([]() -> int { throw std::runtime_error("to the future"); });
    pool.wait_idle(); // the observer runs before a task counts as completed
    const auto after = clock::now();
    const auto timings = log.timings();
    BOOST_TEST(timings.size() == 12u);
    int failures = 0;
    for (const auto& t : timings) {
        BOOST_TEST((before <= t.queued && t.queued <= t.started && t.started <= t.finished && t.finished <= after));
        failures += t.failed ? 1 : 0;
    }
    BOOST_TEST(failures == 2);
    BOOST_CHECK_THROW(failed.get(), std::runtime_error);
}

// `queued` is when the pool accepted the task, not when a worker took it.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(the_task_observer_measures_the_wait_in_the_queue) {
    timing_log log;
    crew::fixed_pool pool(crew::pool_options{.core_pool_size = 1, .task_observer = std::ref(log)});
    gate blocked;
    occupy(pool, blocked, 1);
    pool.execute([] {});
    std::this_thread::sleep_for(30ms); // the wait being measured
    blocked.open();
    pool.wait_idle();
    const auto timings = log.timings();
    BOOST_REQUIRE(timings.size() == 2u);
    BOOST_TEST((timings[1].started - timings[1].queued >= 30ms));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(the_task_observer_of_a_scheduled_task_is_queued_at_its_due_time) {
    timing_log log;
    crew::scheduled_pool pool(crew::pool_options{.core_pool_size = 1, .task_observer = std::ref(log)});
    const auto due = clock::now() + 30ms;
    pool.schedule_at(due, [] {}).get();
    pool.wait_idle();
    const auto timings = log.timings();
    BOOST_REQUIRE(timings.size() == 1u);
    BOOST_TEST((timings[0].queued == due));
    BOOST_TEST((timings[0].started >= due));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_before_execute_failure_is_observed_as_failed) {
    timing_log log;
    crew::fixed_pool pool(crew::pool_options{
        .core_pool_size = 1, .before_execute = [] { throw std::runtime_error("refused"); }, .task_observer = std::ref(log)});
    bool ran = false;
    auto f = pool.submit([&] { ran = true; });
    BOOST_CHECK_THROW(f.get(), std::runtime_error);
    pool.wait_idle();
    const auto timings = log.timings();
    BOOST_REQUIRE(timings.size() == 1u);
    BOOST_TEST(timings[0].failed);
    BOOST_TEST((timings[0].started == timings[0].finished));
    BOOST_TEST(!ran);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(set_task_observer_replaces_and_removes_the_observer) {
    crew::fixed_pool pool(1);
    timing_log first, second;
    pool.execute([] {}); // no observer: nobody sees it
    pool.wait_idle();
    pool.set_task_observer(std::ref(first));
    pool.execute([] {});
    pool.wait_idle();
    pool.set_task_observer(std::ref(second));
    pool.execute([] {});
    pool.wait_idle();
    pool.set_task_observer({});
    pool.execute([] {});
    pool.wait_idle();
    BOOST_TEST(first.timings().size() == 1u);
    BOOST_TEST(second.timings().size() == 1u);
}

// A task accepted before the observer was set carries no stamp: its wait
// reads as zero rather than as a time nobody measured.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_task_accepted_before_the_observer_was_set_reports_no_wait) {
    crew::fixed_pool pool(1);
    gate blocked;
    occupy(pool, blocked, 1);
    pool.execute([] {}); // queued unstamped
    timing_log log;
    pool.set_task_observer(std::ref(log));
    blocked.open();
    pool.wait_idle();
    const auto timings = log.timings();
    BOOST_REQUIRE(timings.size() == 1u); // the queued one (the running one had started with no observer)
    BOOST_TEST((timings[0].queued == timings[0].started));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(an_exception_from_the_observer_is_reported_and_the_pool_goes_on) {
    crew::fixed_pool pool(crew::pool_options{
        .core_pool_size = 1, .task_observer = [](const crew::task_timing&) { throw std::runtime_error("observer broke"); }});
    run_counter ran;
    stderr_capture captured;
    pool.execute([&] { ran.hit(); });
    pool.execute([&] { ran.hit(); });
    pool.wait_idle();
    const auto text = captured.text();
    BOOST_TEST(ran.count() == 2);
    BOOST_TEST(text.find("observer broke") != std::string::npos);
    BOOST_TEST(pool.pool_size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
