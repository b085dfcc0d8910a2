// pool_size, active_count, largest_pool_size, task_count,
// completed_task_count, queue_size, queue_capacity.
#include "pool_mixes.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <limits>

using namespace crew_test;
namespace utf = boost::unit_test;

BOOST_AUTO_TEST_SUITE(statistics)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(counts_follow_running_queued_and_completed_tasks, Pool, pool_mixes) {
    Pool pool(2);
    gate blocked;
    occupy(pool, blocked, 2);
    for (int i = 0; i < 3; ++i) pool.execute([] {});

    BOOST_TEST(pool.pool_size() == 2u);
    BOOST_TEST(pool.active_count() == 2u);
    BOOST_TEST(pool.queue_size() == 3u);
    BOOST_TEST(pool.task_count() == 5u); // completed + running + queued
    BOOST_TEST(pool.completed_task_count() == 0u);

    blocked.open();
    pool.wait_idle();
    BOOST_TEST(pool.active_count() == 0u);
    BOOST_TEST(pool.queue_size() == 0u);
    BOOST_TEST(pool.task_count() == 5u);
    BOOST_TEST(pool.completed_task_count() == 5u);
    BOOST_TEST(pool.largest_pool_size() == 2u);
}

// wait_idle's handshake with the workers: a worker counts its task, then
// looks for waiters (asymmetric_fence::light, a compiler barrier on Linux);
// wait_idle announces itself, then reads the counts (heavy: membarrier).
// Without a fence on both sides, each could miss the other's store and
// wait_idle would sleep through the last completion: this would then hang
// (caught by the time-out). Rounds race a fresh wait_idle against the
// completion of a task or two, on one and two workers.
// Mutations (checked): light() and heavy() doing nothing, and even the
// worker reading idle_waiters_ before its store, survived 3 runs each: the
// window is a few instructions (on x86 the waiter's fetch_add is a full
// fence by itself). With a yield widening that window (read, yield, store),
// 3 of 3 runs hung and were caught; so this test catches the lost wake-up
// whenever it happens, and the fences are what keep it from happening.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(wait_idle_never_sleeps_through_the_last_completion, Pool, pool_mixes) {
    const int rounds = static_cast<int>(20000 / time_factor());
    for (std::size_t threads : {1u, 2u}) {
        Pool pool(threads);
        std::atomic<int> ran{0};
        for (int round = 0; round < rounds; ++round) {
            for (int i = 0; i <= round % 2; ++i) pool.execute([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
            pool.wait_idle();
            BOOST_REQUIRE_EQUAL(pool.completed_task_count(), pool.task_count());
        }
        BOOST_TEST(ran.load() == static_cast<int>(pool.task_count()));
    }
}

BOOST_AUTO_TEST_CASE(completed_tasks_of_exited_workers_still_count, *utf::timeout(60)) {
    crew::cached_pool pool;
    pool.set_keep_alive(1ms);
    for (int i = 0; i < 10; ++i) pool.execute([] {});
    pool.wait_idle();
    BOOST_TEST(eventually([&] { return pool.pool_size() == 0; }));
    BOOST_TEST(pool.completed_task_count() == 10u);
}

BOOST_AUTO_TEST_CASE(caller_run_tasks_do_not_count_as_completed, *utf::timeout(60)) {
    crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> pool(one_worker_one_slot);
    gate blocked;
    pool.execute([&] { blocked.wait(); });
    pool.execute([] {}); // queued
    bool ran_here = false;
    pool.execute([&] { ran_here = true; }); // saturated: runs on this thread, now
    BOOST_TEST(ran_here);
    blocked.open();
    pool.wait_idle();
    BOOST_TEST(pool.completed_task_count() == 2u);
    BOOST_TEST(pool.task_count() == 2u);
}

BOOST_AUTO_TEST_CASE(discarded_tasks_leave_the_task_count, *utf::timeout(60)) {
    crew::basic_executor<crew::bounded_queue, crew::discard_oldest_policy> pool(
        crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 1, .queue_capacity = 2});
    gate blocked;
    std::vector<int> order;
    std::mutex m;
    auto note = [&](int i) {
        return [&, i] {
            std::lock_guard lock(m);
            order.push_back(i);
        };
    };
    pool.execute([&] { blocked.wait(); });
    pool.execute(note(1));
    pool.execute(note(2));
    pool.execute(note(3)); // drops 1, the oldest queued
    pool.execute(note(4)); // drops 2
    BOOST_TEST(pool.queue_size() == 2u);
    BOOST_TEST(pool.task_count() == 3u);
    blocked.open();
    pool.wait_idle();
    BOOST_TEST((order == std::vector<int>{3, 4}));
    BOOST_TEST(pool.completed_task_count() == 3u);
}

BOOST_AUTO_TEST_CASE(queue_capacity_reports_each_queue, *utf::timeout(30)) {
    constexpr auto unbounded = std::numeric_limits<std::size_t>::max();
    BOOST_TEST(crew::fixed_pool(1).queue_capacity() == unbounded);
    BOOST_TEST(crew::cached_pool().queue_capacity() == 0u);
    BOOST_TEST(crew::basic_executor<crew::priority_queue>(1).queue_capacity() == unbounded);
    BOOST_TEST(crew::basic_executor<crew::bounded_queue>(crew::pool_options{.core_pool_size = 1, .queue_capacity = 7})
                   .queue_capacity() == 7u);
}

BOOST_TEST_DECORATOR(*utf::timeout(30))
BOOST_AUTO_TEST_CASE_TEMPLATE(purge_without_cancellable_tasks_removes_nothing, Pool, pool_mixes) {
    Pool pool(1);
    gate blocked;
    occupy(pool, blocked, 1); // running, not queued: a scheduled pool queues every task first
    pool.execute([] {});
    BOOST_TEST(pool.purge() == 0u);
    BOOST_TEST(pool.queue_size() == 1u);
    blocked.open();
}

BOOST_AUTO_TEST_SUITE_END()
