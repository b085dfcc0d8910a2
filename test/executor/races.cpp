// The race-sensitive rules of execute: the re-check after offer, culling
// against an arriving task, shutdown against execute, the size bounds under
// contention, and thread-factory refusal. Each would lose or duplicate a
// task, or hang, if its rule were broken.
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <barrier>
#include <functional>
#include <future>
#include <memory>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

// Rounds for the many-round races; sanitizer builds run fewer.
int rounds(int plain) { return std::max(20, static_cast<int>(plain / time_factor())); }

// A factory that refuses (throws) according to a rule.
struct refusing_factory {
    std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
    std::function<bool(int)> refuse; // given the call number, from 1
    crew::default_thread_factory inner;
    std::thread new_thread(crew::task body) {
        if (refuse(calls->fetch_add(1) + 1)) throw std::runtime_error("no threads today");
        return inner.new_thread(std::move(body));
    }
};

// Runs `producers` threads that each execute up to `per_producer` tasks into
// `pool` while the test thread stops the pool after `stop_after` tasks ran.
// Returns {accepted, rejected}.
template <class Pool, class Stop>
std::pair<int, int> produce_while_stopping(Pool& pool, run_counter& ran, int producers, int per_producer,
                                           int stop_after, Stop stop) {
    std::atomic<int> accepted{0}, rejected{0};
    std::barrier start(producers + 1);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&] {
            start.arrive_and_wait();
            for (int i = 0; i < per_producer; ++i) {
                try {
                    pool.execute([&] { ran.hit(); });
                    accepted.fetch_add(1);
                } catch (const crew::rejected_execution_error&) {
                    rejected.fetch_add(1);
                }
            }
        });
    start.arrive_and_wait();
    eventually([&] { return ran.count() >= stop_after || accepted.load() + rejected.load() == producers * per_producer; });
    stop();
    for (auto& t : threads) t.join();
    return {accepted.load(), rejected.load()};
}

} // namespace

BOOST_AUTO_TEST_SUITE(races)

// Java's re-check: a task offered while the last worker times out must find a
// worker. With core 0 every offer goes through that path.
BOOST_AUTO_TEST_CASE(a_task_offered_to_a_pool_with_no_worker_still_runs, *utf::timeout(120)) {
    crew::basic_executor<crew::bounded_queue> pool(crew::pool_options{
        .core_pool_size = 0, .maximum_pool_size = 1, .keep_alive = 1us, .queue_capacity = 16});
    run_counter ran;
    const int n = rounds(2000);
    for (int i = 0; i < n; ++i) {
        pool.execute([&] { ran.hit(); });
        if (i % 2 == 0) BOOST_REQUIRE(ran.wait_for_count(i + 1)); // let the worker time out between rounds
    }
    BOOST_TEST(ran.wait_for_count(n));
    BOOST_TEST(pool.largest_pool_size() == 1u);
}

// A worker whose keep-alive expires just as a task is handed to it must not
// strand the task (synchronous hand-off) ...
BOOST_AUTO_TEST_CASE(culling_never_strands_a_handed_off_task, *utf::timeout(120)) {
    crew::cached_pool pool;
    pool.set_keep_alive(1us);
    run_counter ran;
    const int n = rounds(3000);
    for (int i = 0; i < n; ++i) {
        pool.execute([&] { ran.hit(); });
        BOOST_REQUIRE(ran.wait_for_count(i + 1));
    }
    BOOST_TEST(ran.count() == n);
}

// ... nor a task queued as the last core worker times out (Java's
// processWorkerExit replacement when the queue is not empty).
BOOST_AUTO_TEST_CASE(culling_the_last_worker_never_strands_a_queued_task, *utf::timeout(120)) {
    crew::fixed_pool pool(1);
    pool.set_keep_alive(1us);
    pool.allow_core_thread_timeout(true);
    run_counter ran;
    const int n = rounds(3000);
    std::thread second_producer([&] {
        for (int i = 0; i < n; ++i) pool.execute([&] { ran.hit(); });
    });
    for (int i = 0; i < n; ++i) pool.execute([&] { ran.hit(); });
    second_producer.join();
    BOOST_TEST(ran.wait_for_count(2 * n));
    BOOST_TEST(pool.largest_pool_size() == 1u);
}

// A task submitted concurrently with shutdown() is either run or rejected.
BOOST_AUTO_TEST_CASE(shutdown_racing_execute_runs_every_accepted_task, *utf::timeout(300)) {
    for (int round = 0; round < rounds(40); ++round) {
        crew::basic_executor<crew::bounded_queue> pool(crew::pool_options{
            .core_pool_size = 1, .maximum_pool_size = 2, .keep_alive = 1ms, .queue_capacity = 64});
        run_counter ran;
        auto [accepted, rejected] =
            produce_while_stopping(pool, ran, 2, 500, round * 10, [&] { pool.shutdown(); });
        BOOST_REQUIRE(pool.await_termination(scaled(10s)));
        BOOST_REQUIRE_EQUAL(ran.count(), accepted);
        BOOST_REQUIRE_EQUAL(accepted + rejected, 1000);
    }
}

// With shutdown_now(), every accepted task either ran or was handed back.
BOOST_AUTO_TEST_CASE(shutdown_now_racing_execute_hands_back_what_did_not_run, *utf::timeout(300)) {
    for (int round = 0; round < rounds(40); ++round) {
        crew::cached_pool pool;
        run_counter ran;
        std::size_t handed_back = 0;
        auto [accepted, rejected] = produce_while_stopping(pool, ran, 2, 500, round * 10,
                                                           [&] { handed_back = pool.shutdown_now().size(); });
        BOOST_REQUIRE(pool.await_termination(scaled(10s)));
        BOOST_REQUIRE_EQUAL(ran.count() + static_cast<int>(handed_back), accepted);
        BOOST_REQUIRE_EQUAL(accepted + rejected, 1000);
    }
}

BOOST_AUTO_TEST_CASE(the_pool_never_exceeds_its_maximum_under_contention, *utf::timeout(120)) {
    crew::basic_executor<crew::synchronous_queue, crew::caller_runs_policy> pool(
        crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 3, .keep_alive = 1us});
    std::atomic<int> running{0}, most{0};
    run_counter ran;
    auto job = [&] {
        const int now = running.fetch_add(1) + 1;
        for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {}
        std::this_thread::yield();
        running.fetch_sub(1);
        ran.hit();
    };
    const int per_producer = rounds(3000);
    std::vector<std::thread> producers;
    for (int p = 0; p < 3; ++p)
        producers.emplace_back([&] {
            for (int i = 0; i < per_producer; ++i) pool.execute(job);
        });
    for (auto& t : producers) t.join();
    BOOST_TEST(ran.wait_for_count(3 * per_producer));
    BOOST_TEST(pool.largest_pool_size() <= 3u);
    // Callers ran some tasks themselves: at most 3 workers + 3 callers at once.
    BOOST_TEST(most.load() <= 6);
}

BOOST_AUTO_TEST_CASE(a_refusing_factory_loses_no_task_and_runs_none_twice, *utf::timeout(120)) {
    refusing_factory factory;
    factory.refuse = [](int call) { return call % 2 == 1; }; // every other thread
    constexpr int n = 500;
    auto runs = std::make_unique<std::atomic<int>[]>(n);
    {
        crew::basic_executor<crew::unbounded_queue, crew::abort_policy, refusing_factory> pool(
            crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 2}, factory);
        for (int i = 0; i < n; ++i) pool.execute([&, i] { runs[i].fetch_add(1); });
        pool.wait_idle();
        BOOST_TEST(pool.pool_size() <= 2u);
    }
    for (int i = 0; i < n; ++i) BOOST_REQUIRE_EQUAL(runs[i].load(), 1);
}

BOOST_AUTO_TEST_CASE(a_factory_that_always_refuses_counts_no_worker, *utf::timeout(60)) {
    refusing_factory factory;
    factory.refuse = [](int) { return true; };
    run_counter ran;
    std::thread::id ran_on;
    {
        crew::basic_executor<crew::unbounded_queue, crew::abort_policy, refusing_factory> pool(
            crew::pool_options{.core_pool_size = 1}, factory);
        pool.execute([&] {
            ran_on = std::this_thread::get_id();
            ran.hit();
        }); // no worker: queued, as Java does when addWorker fails
        BOOST_TEST(pool.pool_size() == 0u);
        BOOST_TEST(pool.queue_size() == 1u);
        BOOST_TEST(!pool.prestart_core_thread());
    } // the destructor runs what no worker could
    BOOST_TEST(ran.count() == 1);
    BOOST_TEST((ran_on == std::this_thread::get_id()));

    // Where the queue cannot take it either, the reject policy decides.
    crew::basic_executor<crew::synchronous_queue, crew::abort_policy, refusing_factory> handoff(
        crew::pool_options{.core_pool_size = 0, .maximum_pool_size = 4}, factory);
    BOOST_CHECK_THROW(handoff.execute([&] { ran.hit(); }), crew::rejected_execution_error);
    BOOST_TEST(handoff.pool_size() == 0u);
    handoff.shutdown();
    BOOST_TEST(handoff.is_terminated()); // no phantom worker holds termination back
    BOOST_TEST(ran.count() == 1);
}

BOOST_AUTO_TEST_CASE(block_policy_waits_for_room_and_gives_up_at_shutdown, *utf::timeout(60)) {
    crew::basic_executor<crew::bounded_queue, crew::block_policy> pool(one_worker_one_slot);
    check_block_policy_waits_for_room_and_gives_up_at_shutdown(pool);
}

BOOST_AUTO_TEST_SUITE_END()
