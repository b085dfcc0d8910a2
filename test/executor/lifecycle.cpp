// RUNNING -> SHUTDOWN/STOP -> TIDYING -> TERMINATED, await_termination,
// wait_idle, on_terminated, and the destructor.
#include "pool_mixes.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <future>
#include <memory>
#include <mutex>
#include <stop_token>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

// Counts threads that have touched it and not yet exited: a thread_local's
// destructor runs as its thread ends.
std::atomic<int> live_probed_threads{0};
struct exit_probe {
    exit_probe() { live_probed_threads.fetch_add(1); }
    ~exit_probe() { live_probed_threads.fetch_sub(1); }
};
void touch_exit_probe() {
    thread_local exit_probe probe;
    (void)probe;
}

} // namespace

BOOST_AUTO_TEST_SUITE(lifecycle)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(shutdown_runs_queued_tasks_and_refuses_new_ones, Pool, pool_mixes) {
    Pool pool(1);
    gate blocked;
    run_counter ran;
    pool.execute([&] {
        blocked.wait();
        ran.hit();
    });
    pool.execute([&] { ran.hit(); });
    pool.execute([&] { ran.hit(); });
    BOOST_TEST(!pool.is_shutdown());

    pool.shutdown();
    BOOST_TEST(pool.is_shutdown());
    BOOST_TEST(pool.is_terminating());
    BOOST_TEST(!pool.is_terminated());
    BOOST_CHECK_THROW(pool.execute([&] { ran.hit(); }), crew::rejected_execution_error);

    blocked.open();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(ran.count() == 3);
    BOOST_TEST(pool.is_terminated());
    BOOST_TEST(!pool.is_terminating());
    BOOST_TEST(pool.pool_size() == 0u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(shutdown_now_returns_unstarted_tasks_and_stops_running_ones, Pool, pool_mixes) {
    Pool pool(1);
    std::promise<void> started;
    std::promise<bool> saw_stop;
    pool.execute([&](std::stop_token token) {
        started.set_value();
        const auto deadline = clock::now() + scaled(10s);
        while (!token.stop_requested() && clock::now() < deadline) std::this_thread::yield();
        saw_stop.set_value(token.stop_requested());
    });
    started.get_future().wait();
    std::vector<int> order;
    pool.execute([&] { order.push_back(1); });
    pool.execute([&] { order.push_back(2); });

    std::vector<crew::task> unstarted = pool.shutdown_now();
    BOOST_TEST(saw_stop.get_future().get());
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(order.empty()); // never started
    BOOST_REQUIRE(unstarted.size() == 2u);
    for (auto& t : unstarted) t(); // handed back in queue order, still runnable
    BOOST_TEST((order == std::vector<int>{1, 2}));
    BOOST_TEST(pool.queue_size() == 0u);
    BOOST_CHECK_THROW(pool.execute([] {}), crew::rejected_execution_error);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(shutdown_and_shutdown_now_are_idempotent, Pool, pool_mixes) {
    int terminated = 0;
    Pool pool(crew::pool_options{.core_pool_size = 2, .on_terminated = [&] { ++terminated; }});
    pool.execute([] {});
    pool.wait_idle(); // ran, not queued: a scheduled pool queues every task first
    pool.shutdown();
    pool.shutdown();
    BOOST_TEST(pool.shutdown_now().empty());
    BOOST_TEST(pool.shutdown_now().empty());
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(terminated == 1);
}

BOOST_TEST_DECORATOR(*utf::timeout(30))
BOOST_AUTO_TEST_CASE_TEMPLATE(on_terminated_runs_inside_shutdown_when_no_worker_exists, Pool, pool_mixes) {
    bool terminated = false;
    Pool pool(crew::pool_options{.core_pool_size = 2, .on_terminated = [&] { terminated = true; }});
    pool.shutdown();
    BOOST_TEST(terminated);
    BOOST_TEST(pool.is_terminated());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(on_terminated_has_run_when_await_termination_returns_true, Pool, pool_mixes) {
    std::atomic<bool> terminated{false};
    Pool pool(crew::pool_options{.core_pool_size = 2, .on_terminated = [&] { terminated = true; }});
    for (int i = 0; i < 10; ++i) pool.execute([] {});
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(terminated.load());
}

BOOST_TEST_DECORATOR(*utf::timeout(30))
BOOST_AUTO_TEST_CASE_TEMPLATE(an_on_terminated_hook_that_throws_still_terminates_the_pool, Pool, pool_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 1, .on_terminated = [] { throw 42; }});
    pool.execute([] {});
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(await_termination_never_returns_early_and_saturates, Pool, pool_mixes) {
    Pool pool(1);
    pool.execute([] {});
    BOOST_TEST(!pool.await_termination(0s));
    BOOST_TEST(!pool.await_termination(-5s));
    BOOST_TEST(!pool.await_termination(std::chrono::nanoseconds::min()));
    BOOST_TEST(!pool.await_termination(std::chrono::hours::min()));
    BOOST_TEST(!pool.await_termination(std::chrono::duration<double>(-1e300)));

    const auto wait = 30ms;
    const auto start = clock::now();
    BOOST_TEST(!pool.await_termination(wait));
    BOOST_TEST((clock::now() - start >= wait));

    const auto sub_microsecond = clock::now();
    BOOST_TEST(!pool.await_termination(std::chrono::duration<double, std::micro>(0.5)));
    BOOST_TEST((clock::now() - sub_microsecond >= 500ns));

    pool.shutdown();
    BOOST_TEST(pool.await_termination(std::chrono::hours::max()));
    BOOST_TEST(pool.await_termination(0s));
    BOOST_TEST(pool.await_termination(std::chrono::nanoseconds::min()));
    BOOST_TEST(pool.await_termination(std::chrono::duration<double>(1e300)));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(wait_idle_waits_for_queued_and_running_tasks_and_keeps_the_pool_open, Pool, pool_mixes) {
    Pool pool(2);
    pool.wait_idle(); // nothing to wait for
    run_counter ran;
    for (int i = 0; i < 200; ++i) pool.execute([&] { ran.hit(); });
    pool.wait_idle();
    BOOST_TEST(ran.count() == 200);
    BOOST_TEST(pool.queue_size() == 0u);
    BOOST_TEST(pool.active_count() == 0u);
    BOOST_TEST(!pool.is_shutdown());
    pool.execute([&] { ran.hit(); });
    pool.wait_idle();
    BOOST_TEST(ran.count() == 201);
}

BOOST_TEST_DECORATOR(*utf::timeout(30))
BOOST_AUTO_TEST_CASE_TEMPLATE(wait_idle_from_the_pools_own_task_throws_logic_error, Pool, pool_mixes) {
    Pool pool(1);
    std::promise<bool> threw;
    pool.execute([&] {
        try {
            pool.wait_idle();
            threw.set_value(false);
        } catch (const std::logic_error&) {
            threw.set_value(true);
        }
    });
    BOOST_TEST(threw.get_future().get());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(shutdown_from_inside_a_task_terminates_after_it, Pool, pool_mixes) {
    Pool pool(2);
    run_counter ran;
    pool.execute([&] {
        pool.shutdown();
        pool.shutdown_now();
        ran.hit();
    });
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(ran.count() == 1);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(the_destructor_runs_queued_tasks_and_joins_every_worker, Pool, pool_mixes) {
    run_counter ran;
    {
        Pool pool(
            crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 2});
        for (int i = 0; i < 100; ++i)
            pool.execute([&] {
                touch_exit_probe();
                ran.hit();
            });
    }
    BOOST_TEST(ran.count() == 100);
    // Joined, not detached: the workers' thread_local destructors have run.
    BOOST_TEST(live_probed_threads.load() == 0);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(destroying_the_pool_from_its_own_task_does_not_deadlock, Pool, pool_mixes) {
    auto* pool = new Pool(2);
    gate queued;
    std::promise<void> destroyed;
    run_counter ran;
    pool->execute([&] {
        queued.wait();
        delete pool;
        destroyed.set_value();
    });
    for (int i = 0; i < 20; ++i) pool->execute([&] { ran.hit(); });
    queued.open();
    BOOST_TEST((destroyed.get_future().wait_for(scaled(10s)) == std::future_status::ready));
    BOOST_TEST(ran.count() == 20); // queued before the delete: all ran
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(destroying_a_one_thread_pool_from_its_task_runs_the_rest_on_that_thread, Pool, pool_mixes) {
    auto* pool = new Pool(1);
    gate queued;
    std::promise<void> destroyed;
    std::thread::id worker_id, later_id;
    pool->execute([&] {
        worker_id = std::this_thread::get_id();
        queued.wait();
        delete pool;
        destroyed.set_value();
    });
    pool->execute([&] { later_id = std::this_thread::get_id(); });
    queued.open();
    destroyed.get_future().wait();
    BOOST_TEST((later_id == worker_id));
}

BOOST_AUTO_TEST_SUITE_END()
