// completion_queue: futures handed back in completion order (Java's
// ExecutorCompletionService), over every pool kind and policy mix.
#include <crew/any_executor.hpp>
#include <crew/completion_queue.hpp>
#include <crew/crew.hpp>

#include "composition_support.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <array>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace utf = boost::unit_test;
using namespace crew_test;

BOOST_AUTO_TEST_SUITE(completion_queue)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(futures_come_back_in_completion_order, Setup, executor_setups) {
    Setup s;
    crew::completion_queue<int> cq(s.pool);
    std::array<gate, 3> gates;
    std::array<std::promise<void>, 3> finished;
    for (int i = 0; i < 3; ++i) (void)cq.submit([&, i] {
            gates[static_cast<std::size_t>(i)].wait();
            return i;
        });
    // Two workers: release 1, take it; then 0 and 2 (2 queued until a worker frees).
    gates[1].open();
    BOOST_TEST(cq.take().get() == 1);
    gates[2].open();
    BOOST_TEST(cq.take().get() == 2);
    gates[0].open();
    BOOST_TEST(cq.take().get() == 0);
    BOOST_TEST(!cq.poll().has_value());
    BOOST_TEST(cq.size() == 0u);
}

BOOST_AUTO_TEST_CASE(poll_and_poll_for_do_not_wait_past_their_limit, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    crew::completion_queue<int> cq(pool);
    BOOST_TEST(!cq.poll().has_value());
    BOOST_TEST(!cq.poll_for(0ms).has_value());
    gate release;
    auto mine = cq.submit([&] {
        release.wait();
        return 3;
    });
    const auto start = clock::now();
    BOOST_TEST(!cq.poll_for(20ms).has_value());
    BOOST_TEST((clock::now() - start >= 20ms)); // never empty-handed early
    release.open();
    auto next = cq.poll_for(scaled(30s));
    BOOST_TEST_REQUIRE(next.has_value());
    BOOST_TEST(next->get() == 3);
}

BOOST_AUTO_TEST_CASE(the_two_futures_of_a_task_share_one_result, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    crew::completion_queue<int> cq(pool);
    auto mine = cq.submit([] { return 4; });
    auto queued = cq.take();
    BOOST_TEST(mine.is_done());
    BOOST_TEST(queued.get() == 4);
    BOOST_CHECK_THROW(mine.get(), std::future_error);
    auto again = cq.submit([] { return 5; });
    BOOST_TEST(again.get() == 5);
    BOOST_CHECK_THROW(cq.take().get(), std::future_error);
}

BOOST_AUTO_TEST_CASE(a_failure_and_a_cancellation_are_queued_too, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    crew::completion_queue<int> cq(pool);
    gate held;
    occupy(pool, held, 1);
    (void)cq.submit([]() -> int { throw std::runtime_error("failed"); });
    auto cancelled = cq.submit([] { return 1; });
    BOOST_TEST(cancelled.cancel());
    BOOST_CHECK_THROW(cq.take().get(), crew::cancellation_error);
    held.open();
    BOOST_CHECK_THROW(cq.take().get(), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(a_discarded_task_is_queued_rejected_and_an_aborted_one_not_at_all, *utf::timeout(60)) {
    discarding_pool discarding(1);
    discarding.shutdown();
    crew::completion_queue<int> discarded(discarding);
    (void)discarded.submit([] { return 1; });
    auto taken = discarded.poll();
    BOOST_TEST_REQUIRE(taken.has_value());
    BOOST_CHECK_THROW(taken->get(), crew::rejected_execution_error);

    crew::fixed_pool aborting(1);
    aborting.shutdown();
    crew::completion_queue<int> aborted(aborting);
    BOOST_CHECK_THROW((void)aborted.submit([] { return 1; }), crew::rejected_execution_error);
    BOOST_TEST(!aborted.poll().has_value());
}

BOOST_AUTO_TEST_CASE(the_queue_may_die_before_its_tasks, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate release;
    crew::future<int> kept;
    {
        crew::completion_queue<int> cq(pool);
        kept = cq.submit([&] {
            release.wait();
            return 6;
        });
        (void)cq.submit([] { return 7; });
    }
    release.open();
    BOOST_TEST(kept.get() == 6);
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(30s)));
}

BOOST_AUTO_TEST_CASE(many_producers_and_takers_see_every_task_once, *utf::timeout(300)) {
    crew::fixed_pool pool(2);
    crew::completion_queue<int> cq(pool);
    const int per_producer = std::max(200, static_cast<int>(2000 / time_factor()));
    auto produce = [&](int base) {
        for (int i = 0; i < per_producer; ++i) (void)cq.submit([v = base + i] { return v; });
    };
    std::thread a(produce, 0), b(produce, per_producer);
    std::vector<int> seen(static_cast<std::size_t>(2 * per_producer), 0);
    for (int i = 0; i < 2 * per_producer; ++i) ++seen[static_cast<std::size_t>(cq.take().get())];
    a.join();
    b.join();
    for (int count : seen) BOOST_TEST_REQUIRE(count == 1);
}

BOOST_AUTO_TEST_SUITE_END()
