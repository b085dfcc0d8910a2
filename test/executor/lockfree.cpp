// The executor's rules on crew::lockfree_queue<C>: a full queue starts a
// non-core worker and then rejects; shutdown_now drains; discard_oldest;
// block_policy; purge; keep-alive; queue_capacity() == C; every task runs
// exactly once under two producers; parked workers cost no CPU.
#include "support.hpp"

#include <crew/policies/lockfree_queue.hpp>

#include <boost/test/unit_test.hpp>

#include <sys/resource.h>

#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

template <std::size_t C, class Reject = crew::abort_policy>
using lockfree_pool = crew::basic_executor<crew::lockfree_queue<C>, Reject>;

crew::pool_options sized(std::size_t core, std::size_t maximum) {
    crew::pool_options options;
    options.core_pool_size = core;
    options.maximum_pool_size = maximum;
    return options;
}

// A lockfree pool whose first worker is held inside a task until `blocked`
// opens, so that what the test executes next waits in the queue.
template <std::size_t C, class Reject = crew::abort_policy>
struct held_pool : lockfree_pool<C, Reject> {
    gate blocked;

    explicit held_pool(const crew::pool_options& options) : lockfree_pool<C, Reject>(options) {
        occupy(*this, blocked, 1);
    }
};

// User plus system CPU time of the whole process.
std::chrono::microseconds process_cpu_time() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return std::chrono::seconds(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           std::chrono::microseconds(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// Sized for two cores; sanitizer builds run fewer.
int scaled_count(int n) { return std::max(n / 20, static_cast<int>(n / time_factor())); }

} // namespace

BOOST_AUTO_TEST_SUITE(lockfree)

BOOST_AUTO_TEST_CASE(queue_capacity_is_the_template_argument, *utf::timeout(60)) {
    lockfree_pool<8> small(2);
    BOOST_TEST(small.queue_capacity() == 8u);
    lockfree_pool<65534> largest(1);
    BOOST_TEST(largest.queue_capacity() == 65534u);
    // pool_options::queue_capacity belongs to bounded_queue: ignored here.
    crew::pool_options options = sized(1, 1);
    options.queue_capacity = 3;
    lockfree_pool<8> ignored(options);
    BOOST_TEST(ignored.queue_capacity() == 8u);
}

BOOST_AUTO_TEST_CASE(a_full_queue_starts_a_non_core_worker_and_then_rejects, *utf::timeout(60)) {
    held_pool<2> pool(sized(1, 2));
    run_counter ran;
    pool.execute([&] { ran.hit(); }); // queued
    pool.execute([&] { ran.hit(); }); // queued: the queue is now full
    BOOST_TEST(pool.queue_size() == 2u);
    BOOST_TEST(pool.pool_size() == 1u);

    // Full: the third starts a non-core worker, which runs it at once.
    occupy(pool, pool.blocked, 1, &ran);
    BOOST_TEST(pool.pool_size() == 2u);
    BOOST_TEST(pool.queue_size() == 2u);

    // Full and at the maximum: the abort policy throws, naming the cause.
    try {
        pool.execute([&] { ran.hit(); });
        BOOST_FAIL("a fourth task on a saturated pool was accepted");
    } catch (const crew::rejected_execution_error& e) {
        BOOST_TEST(message_contains(e, "full"));
    }
    pool.blocked.open();
    pool.wait_idle();
    BOOST_TEST(ran.count() == 3);
    BOOST_TEST(pool.completed_task_count() == 4u);
    BOOST_TEST(pool.task_count() == 4u);
    BOOST_TEST(pool.largest_pool_size() == 2u);
}

BOOST_AUTO_TEST_CASE(caller_runs_takes_over_when_queue_and_pool_are_full, *utf::timeout(60)) {
    held_pool<1, crew::caller_runs_policy> pool(sized(1, 1));
    pool.execute([] {}); // queued
    const auto caller = std::this_thread::get_id();
    std::thread::id ran_on;
    pool.execute([&] { ran_on = std::this_thread::get_id(); });
    BOOST_TEST((ran_on == caller));
    pool.blocked.open();
    pool.wait_idle();
    BOOST_TEST(pool.completed_task_count() == 2u);
}

BOOST_AUTO_TEST_CASE(shutdown_now_returns_the_queued_tasks_oldest_first, *utf::timeout(60)) {
    held_pool<16> pool(sized(1, 1));
    id_log log;
    for (int i = 0; i < 5; ++i) pool.execute(log.note(i));

    std::vector<crew::task> unstarted = pool.shutdown_now();
    BOOST_TEST(pool.queue_size() == 0u);
    BOOST_CHECK_THROW(pool.execute([] {}), crew::rejected_execution_error);
    pool.blocked.open();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(log.ids().empty()); // none of them ran
    BOOST_REQUIRE(unstarted.size() == 5u);
    for (auto& t : unstarted) t();
    BOOST_TEST((log.ids() == std::vector<int>{0, 1, 2, 3, 4}));
}

BOOST_AUTO_TEST_CASE(discard_oldest_drops_the_head_of_a_full_queue, *utf::timeout(60)) {
    held_pool<2, crew::discard_oldest_policy> pool(sized(1, 1));
    id_log log;
    auto dropped = pool.submit([] { return 1; }); // oldest queued
    pool.execute(log.note(2));
    pool.execute(log.note(3)); // full: drops `dropped`
    pool.execute(log.note(4)); // full: drops 2
    BOOST_TEST(pool.queue_size() == 2u);
    BOOST_CHECK_THROW(dropped.get(), crew::rejected_execution_error);
    pool.blocked.open();
    pool.wait_idle();
    BOOST_TEST((log.ids() == std::vector<int>{3, 4}));
    BOOST_TEST(pool.task_count() == 3u); // the blocker, 3 and 4
}

BOOST_AUTO_TEST_CASE(block_policy_waits_for_a_free_slot_and_gives_up_at_shutdown, *utf::timeout(60)) {
    lockfree_pool<1, crew::block_policy> pool(sized(1, 1));
    check_block_policy_waits_for_room_and_gives_up_at_shutdown(pool);
}

BOOST_AUTO_TEST_CASE(purge_drops_cancelled_futures_from_the_queue, *utf::timeout(60)) {
    held_pool<16> pool(sized(1, 1));
    std::vector<crew::future<int>> futures;
    for (int i = 0; i < 6; ++i) futures.push_back(pool.submit([i] { return i; }));
    for (int i = 0; i < 6; i += 2) BOOST_TEST(futures[static_cast<std::size_t>(i)].cancel());
    BOOST_TEST(pool.purge() == 3u);
    BOOST_TEST(pool.queue_size() == 3u);
    BOOST_TEST(pool.purge() == 0u);
    pool.blocked.open();
    for (int i = 0; i < 6; ++i) {
        auto& f = futures[static_cast<std::size_t>(i)];
        if (i % 2 == 0) BOOST_CHECK_THROW(f.get(), crew::cancellation_error);
        else BOOST_TEST(f.get() == i);
    }
    pool.wait_idle();
    BOOST_TEST(pool.task_count() == 4u); // the blocker and three survivors
}

BOOST_AUTO_TEST_CASE(a_surplus_worker_leaves_after_keep_alive, *utf::timeout(60)) {
    crew::pool_options options = sized(1, 2);
    options.keep_alive = 20ms;
    held_pool<1> pool(options);
    pool.execute([] {});                // queued
    std::latch surplus_ran(1);
    pool.execute([&] { surplus_ran.count_down(); }); // full: a non-core worker
    surplus_ran.wait();
    pool.blocked.open();
    pool.wait_idle();
    BOOST_TEST(eventually([&] { return pool.pool_size() == 1; }));
    BOOST_TEST(pool.completed_task_count() == 3u);
    // The core worker stayed and still takes work.
    run_counter ran;
    pool.execute([&] { ran.hit(); });
    BOOST_TEST(ran.wait_for_count(1));
}

BOOST_AUTO_TEST_CASE(every_task_runs_exactly_once_under_two_producers, *utf::timeout(300)) {
    const int per_producer = scaled_count(100'000);
    const int total = 2 * per_producer;

    auto run_all = [&](auto& pool, bool workers_run_everything) {
        std::vector<std::atomic<int>> runs(static_cast<std::size_t>(total));
        std::latch start(2);
        auto produce = [&](int first) {
            start.arrive_and_wait();
            for (int i = first; i < total; i += 2)
                pool.execute([&runs, i] { runs[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed); });
        };
        std::thread p1(produce, 0), p2(produce, 1);
        p1.join();
        p2.join();
        pool.wait_idle();
        int wrong = 0;
        for (auto& r : runs) wrong += r.load() != 1;
        BOOST_TEST(wrong == 0);
        BOOST_TEST(pool.queue_size() == 0u);
        if (workers_run_everything) {
            BOOST_TEST(pool.completed_task_count() == static_cast<std::uint64_t>(total));
            BOOST_TEST(pool.task_count() == static_cast<std::uint64_t>(total));
        }
    };

    {
        // Producers outrun two workers and wait for slots in put.
        lockfree_pool<64, crew::block_policy> pool(sized(2, 2));
        run_all(pool, true);
    }
    {
        // The pool grows to its maximum, and the producers run what it refuses.
        lockfree_pool<16, crew::caller_runs_policy> pool(sized(1, 3));
        run_all(pool, false);
    }
    {
        // Workers come and go (keep-alive 1 ms, no core), racing the producers.
        crew::pool_options options = sized(0, 2);
        options.keep_alive = 1ms;
        lockfree_pool<1024, crew::block_policy> pool(options);
        run_all(pool, true);
    }
}

BOOST_AUTO_TEST_CASE(parked_workers_use_no_cpu, *utf::timeout(60)) {
    lockfree_pool<64> pool(4);
    BOOST_TEST(pool.prestart_all_core_threads() == 4u);
    run_counter ran;
    for (int i = 0; i < 4; ++i) pool.execute([&] { ran.hit(); });
    BOOST_TEST(ran.wait_for_count(4));
    pool.wait_idle();

    // A measurement, not synchronisation: four spinning workers would burn
    // four times the wall time; parked ones burn next to nothing.
    const auto cpu_before = process_cpu_time();
    const auto wall_before = clock::now();
    std::this_thread::sleep_for(300ms);
    const auto wall = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - wall_before);
    const auto cpu = process_cpu_time() - cpu_before;
    BOOST_TEST_MESSAGE("idle pool of 4: " << cpu.count() << " us CPU in " << wall.count() << " us");
    BOOST_TEST(cpu.count() < wall.count() / 4);

    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

BOOST_AUTO_TEST_SUITE_END()
