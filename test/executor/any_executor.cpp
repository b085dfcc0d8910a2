// crew::any_executor: a type-erased handle that behaves exactly as the pool
// it refers to (issue #17).
#include "pool_mixes.hpp"
#include "support.hpp"

#include <crew/any_executor.hpp>

#include <boost/test/unit_test.hpp>

#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

using handle_mixes = std::tuple<crew::fixed_pool, pool_of<crew::bounded_queue, crew::spin_lock>,
                                pool_of<crew::lockfree_queue<256>>, pool_of<crew::grow_first_queue>,
                                crew::scheduled_pool, crew::cached_pool>;

// Library code that is not a template: it takes any pool.
int sum_on(crew::any_executor ex, int n) {
    std::vector<crew::future<int>> parts;
    for (int i = 1; i <= n; ++i) parts.push_back(ex.submit([i] { return i; }));
    int sum = 0;
    for (auto& f : parts) sum += f.get();
    return sum;
}

template <class Pool>
Pool make_pool(int threads) {
    if constexpr (std::is_same_v<Pool, crew::cached_pool>) return Pool();
    else return Pool(threads);
}

// Calls `check(handle, pool)` with a handle to a one-worker pool of bounded
// queue with room for one and `Reject`, whose worker is busy and whose queue
// is full: the next task is refused.
template <class Reject, class Check>
void on_a_full_pool(Check check) {
    gate blocked; // outlives the pool
    crew::basic_executor<crew::bounded_queue, Reject> pool(one_worker_one_slot);
    crew::any_executor ex = pool;
    occupy(pool, blocked, 1);
    ex.execute([] {});
    check(ex, pool);
    blocked.open();
}

} // namespace

BOOST_AUTO_TEST_SUITE(any_executor)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_handle_runs_execute_and_submit_on_its_pool, Pool, handle_mixes) {
    auto pool = make_pool<Pool>(2);
    crew::any_executor ex = pool;
    run_counter ran;
    for (int i = 0; i < 10; ++i) ex.execute([&] { ran.hit(); });
    BOOST_TEST(sum_on(ex, 10) == 55);
    BOOST_TEST(ran.wait_for_count(10));
    auto failing = ex.submit([]() -> int { throw std::runtime_error("from the task"); });
    BOOST_CHECK_EXCEPTION(failing.get(), std::runtime_error,
                          [](const auto& e) { return message_contains(e, "from the task"); });
    pool.wait_idle();
    BOOST_TEST(pool.completed_task_count() == 21u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_handle_shuts_the_pool_down_as_the_pool_would, Pool, handle_mixes) {
    auto pool = make_pool<Pool>(1);
    crew::any_executor ex = pool;
    BOOST_TEST(!ex.is_shutdown());
    gate blocked;
    std::latch running(1);
    auto stoppable = ex.submit([&](std::stop_token token) {
        running.count_down();
        blocked.wait();
        return token.stop_requested();
    });
    running.wait();
    ex.execute([] {}); // queued behind the running task (cached_pool: a second worker runs it)
    auto left = ex.shutdown_now();
    BOOST_TEST(ex.is_shutdown());
    BOOST_TEST(pool.is_shutdown());
    blocked.open();
    BOOST_TEST(stoppable.get()); // the handle's shutdown_now reached the task's stop token
    BOOST_TEST(ex.await_termination(scaled(10s)));
    BOOST_TEST(ex.is_terminated());
    BOOST_CHECK_THROW(ex.execute([] {}), crew::rejected_execution_error);
    BOOST_TEST(left.size() <= 1u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(await_termination_through_a_handle_waits_and_times_out) {
    crew::fixed_pool pool(1);
    crew::any_executor ex = pool;
    gate blocked;
    occupy(pool, blocked, 1);
    ex.shutdown();
    BOOST_TEST(!ex.await_termination(20ms));
    blocked.open();
    BOOST_TEST(ex.await_termination(std::chrono::hours::max())); // saturates: waits without limit
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_handle_follows_the_pools_reject_policy) {
    on_a_full_pool<crew::abort_policy>([](crew::any_executor& ex, auto& aborting) {
        BOOST_CHECK_THROW(ex.execute([] {}), crew::rejected_execution_error);
        BOOST_CHECK_THROW((void)ex.submit([] { return 1; }), crew::rejected_execution_error);
        BOOST_TEST(aborting.rejected_task_count() == 2u);
    });
    on_a_full_pool<crew::discard_policy>([](crew::any_executor& ex, auto&) {
        auto dropped = ex.submit([] { return 1; });
        BOOST_CHECK_THROW(dropped.get(), crew::rejected_execution_error); // never hangs
    });
    on_a_full_pool<crew::caller_runs_policy>([](crew::any_executor& ex, auto&) {
        auto here = ex.submit([] { return std::this_thread::get_id(); });
        BOOST_TEST((here.get() == std::this_thread::get_id()));
    });
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_handle_keeps_with_priority) {
    pool_of<crew::priority_queue> pool(1);
    crew::any_executor ex = pool;
    gate blocked;
    occupy(pool, blocked, 1);
    std::mutex mutex;
    std::vector<int> order;
    auto record = [&](int v) {
        std::lock_guard lock(mutex);
        order.push_back(v);
    };
    ex.execute(crew::with_priority(1, [&] { record(1); }));
    auto high = ex.submit(crew::with_priority(9, [&] { record(9); }));
    ex.execute([&] { record(0); });
    blocked.open();
    high.get();
    pool.wait_idle();
    BOOST_TEST((order == std::vector<int>{9, 1, 0}));
}

BOOST_AUTO_TEST_CASE(handles_are_equal_when_they_refer_to_the_same_pool) {
    crew::fixed_pool a(1), b(1);
    crew::any_executor x = a, y = a, z = b;
    crew::any_executor copy = z;
    BOOST_TEST((x == y));
    BOOST_TEST(!(x == z));
    BOOST_TEST((copy == z));
    BOOST_TEST((a.get_executor() == a.get_executor()));
    BOOST_TEST(!(a.get_executor() == b.get_executor()));
}

BOOST_AUTO_TEST_CASE(a_handle_rejects_an_empty_callable) {
    crew::fixed_pool pool(1);
    crew::any_executor ex = pool;
    BOOST_CHECK_THROW(ex.execute(std::function<void()>{}), std::invalid_argument);
    BOOST_CHECK_THROW((void)ex.submit(std::function<int()>{}), std::invalid_argument);
    BOOST_CHECK_THROW(ex.execute(crew::task{}), std::invalid_argument);
}

// A task observer sees tasks given through a handle, with their wait.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_handles_tasks_are_observed_as_the_pools_own) {
    observed_busy_pool busy;
    crew::any_executor ex = busy.pool;
    ex.execute([] {});
    auto f = ex.submit([] { return 1; });
    std::this_thread::sleep_for(20ms); // the wait being measured
    busy.held.open();
    BOOST_TEST(f.get() == 1);
    busy.pool.wait_idle();
    const auto seen = busy.log.timings();
    BOOST_REQUIRE(seen.size() == 3u);
    BOOST_TEST((seen[1].started - seen[1].queued >= 20ms));
    BOOST_TEST((seen[2].started - seen[2].queued >= 20ms));
}

// pool_executor, the handle Asio sees: execute follows the pool; with
// inline_on_own_thread it runs inline on the pool's own workers only.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(pool_executor_runs_inline_only_on_its_own_workers_when_asked) {
    crew::fixed_pool pool(1);
    auto ex = pool.get_executor();
    BOOST_TEST(ex.runs_inline_on_own_thread()); // the default, as Asio's executors
    BOOST_TEST(!ex.inline_on_own_thread(false).runs_inline_on_own_thread());
    BOOST_TEST((&ex.context() == &pool));
    BOOST_TEST(!ex.running_in_this_thread());
    bool ran_inline_outside = false;
    ex.inline_on_own_thread(true).execute([&] { ran_inline_outside = true; }); // not a worker: queued
    pool.wait_idle();
    BOOST_TEST(ran_inline_outside);
    auto inside = pool.submit([&] {
        bool inline_ran = false;
        ex.inline_on_own_thread(true).execute([&] { inline_ran = true; });
        const bool ran_before_return = inline_ran;
        return ran_before_return && ex.running_in_this_thread();
    });
    BOOST_TEST(inside.get());
}

BOOST_AUTO_TEST_SUITE_END()
