// I/O objects built on a pool's executor, with no io_context: Asio's
// reactor for the process-wide execution_context of <crew/asio.hpp> runs on
// a thread of Asio's own (started with the first such object), and hands
// each completion to the pool.
#include "support.hpp"

#include <boost/asio/steady_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

BOOST_AUTO_TEST_SUITE(io_objects)

BOOST_AUTO_TEST_CASE(a_steady_timer_on_a_pools_executor_completes_on_the_pool, *utf::timeout(60)) {
    worker_probe fired;
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    asio::steady_timer timer(ex, std::chrono::milliseconds(1));
    BOOST_TEST((timer.get_executor() == ex));
    timer.async_wait(fired.completion(ex));
    BOOST_TEST(fired.ran_on_a_worker());
}

// A pending wait is outstanding work of the pool (the operation holds a
// tracked executor, as on an asio::thread_pool): cancelling it completes it
// on the pool, with operation_aborted, and leaves none.
BOOST_AUTO_TEST_CASE(a_pending_wait_is_outstanding_work_until_it_completes, *utf::timeout(60)) {
    std::promise<boost::system::error_code> completed;
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    asio::steady_timer timer(ex, std::chrono::hours(1));
    timer.async_wait([&completed](boost::system::error_code ec) { completed.set_value(ec); });
    BOOST_TEST(crew_outstanding_work(pool).count() >= 1u);
    timer.cancel();
    auto f = completed.get_future();
    BOOST_REQUIRE(ready_within(f));
    BOOST_TEST((f.get() == asio::error::operation_aborted));
    pool.shutdown();
    BOOST_REQUIRE(pool.await_termination(scaled(10s)));
    BOOST_TEST(crew_outstanding_work(pool).count() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
