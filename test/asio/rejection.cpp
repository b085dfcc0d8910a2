// A handler the pool refuses follows the pool's RejectPolicy: abort_policy
// throws rejected_execution_error to the caller of post/defer/dispatch;
// discard_policy destroys the handler unrun, and nothing waits for it.
#include "support.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <string>
#include <system_error>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

namespace {

using discarding_pool = crew::basic_executor<crew::unbounded_queue, crew::discard_policy>;
using bounded_pool = crew::basic_executor<crew::bounded_queue>; // abort_policy

bool broken_promise(std::future<int>& f) {
    try {
        f.get();
    } catch (const std::future_error& e) {
        return e.code() == std::future_errc::broken_promise;
    }
    return false;
}

} // namespace

BOOST_AUTO_TEST_SUITE(rejection)

BOOST_AUTO_TEST_CASE(with_abort_policy_post_defer_and_dispatch_throw_once_shut_down, *utf::timeout(60)) {
    auto alive = std::make_shared<int>(0); // each handler holds a copy
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    pool.shutdown();
    BOOST_CHECK_THROW(asio::post(ex, [alive] {}), crew::rejected_execution_error);
    BOOST_CHECK_THROW(asio::defer(ex, [alive] {}), crew::rejected_execution_error);
    BOOST_CHECK_THROW(asio::dispatch(ex, [alive] {}), crew::rejected_execution_error);
    BOOST_CHECK_THROW(asio::post(ex, asio::use_future([alive] { return 1; })), crew::rejected_execution_error);
    // An idle strand schedules itself on the pool at the first post. The
    // handler waits in the strand's queue, which nothing will run now, until
    // the last copy of the strand goes.
    {
        const auto strand = asio::make_strand(ex);
        BOOST_CHECK_THROW(asio::post(strand, [alive] {}), crew::rejected_execution_error);
    }
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(alive.use_count() == 1); // every refused handler was destroyed, none ran
}

// Not only at shutdown: a full bounded queue refuses too, and post says so.
BOOST_AUTO_TEST_CASE(with_abort_policy_a_full_queue_makes_post_throw, *utf::timeout(60)) {
    std::latch release(1);
    std::promise<void> worker_busy;
    bounded_pool pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 1, .queue_capacity = 1});
    const auto ex = pool.get_executor();
    struct open_on_exit {
        std::latch& l;
        ~open_on_exit() { l.count_down(); }
    } guard{release}; // declared after the pool: opens before the pool joins
    asio::post(ex, [&] {
        worker_busy.set_value();
        release.wait();
    });
    auto busy = worker_busy.get_future();
    BOOST_REQUIRE(ready_within(busy));
    asio::post(ex, [] {}); // fills the queue
    bool threw = false;
    try {
        asio::post(ex, [] {});
    } catch (const crew::rejected_execution_error& e) {
        threw = std::string(e.what()).find("full") != std::string::npos;
    }
    BOOST_TEST(threw);
}

BOOST_AUTO_TEST_CASE(with_discard_policy_a_refused_handler_is_destroyed_and_nothing_hangs, *utf::timeout(60)) {
    auto alive = std::make_shared<int>(0);
    discarding_pool pool(1);
    const auto ex = pool.get_executor();
    pool.shutdown();
    asio::post(ex, [alive] {});
    asio::defer(ex, [alive] {});
    asio::dispatch(ex, [alive] {});
    BOOST_TEST(alive.use_count() == 1); // destroyed at once, unrun

    // A use_future future does not wait for a handler that will never run.
    std::future<int> f = asio::post(ex, asio::use_future([alive] { return 1; }));
    BOOST_REQUIRE(ready_within(f));
    BOOST_TEST(broken_promise(f));

    // A strand over the pool: its scheduling task is dropped, so the strand
    // runs nothing more; its handlers go when the last copy of the strand does.
    {
        const auto strand = asio::make_strand(ex);
        asio::post(strand, [alive] {});
        asio::post(strand, [alive] {});
    }
    BOOST_TEST(alive.use_count() == 1);
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

// A completion handler bound to a pool that refuses it: with abort_policy the
// refusal has only the thread running the io_context to go to, so it comes
// out of run(), as a handler's own exception would with Asio's executors.
BOOST_AUTO_TEST_CASE(a_refused_completion_handler_throws_out_of_run, *utf::timeout(60)) {
    auto alive = std::make_shared<int>(0);
    crew::fixed_pool pool(1);
    pool.shutdown();
    asio::io_context io;
    asio::steady_timer timer(io, std::chrono::milliseconds(1));
    timer.async_wait(asio::bind_executor(pool.get_executor(), [alive](boost::system::error_code) {}));
    BOOST_CHECK_THROW(io.run(), crew::rejected_execution_error);
    BOOST_TEST(alive.use_count() == 1);
}

BOOST_AUTO_TEST_SUITE_END()
