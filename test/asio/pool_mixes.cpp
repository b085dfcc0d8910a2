// <crew/asio.hpp> with every kind of pool: std::mutex and crew::spin_lock
// for the lock, the lock-free queue, grow_first_queue, a scheduled pool and a
// cached pool.
// Each must compile and behave the same under post, use_future, dispatch
// and a strand.
#include "support.hpp"

#include <crew/policies/lockfree_queue.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

namespace {

template <class Queue, class Lock = std::mutex>
using pool_of = crew::basic_executor<Queue, crew::abort_policy, crew::default_thread_factory, Lock>;

using pools = std::tuple<crew::fixed_pool,                                  // std::mutex
                         pool_of<crew::unbounded_queue, crew::spin_lock>,   //
                         pool_of<crew::lockfree_queue<256>, crew::spin_lock>, //
                         pool_of<crew::grow_first_queue>,                   //
                         crew::scheduled_pool,                              // execute: due now
                         crew::cached_pool>;

template <class Pool>
Pool make_pool(int threads) {
    if constexpr (std::is_same_v<Pool, crew::cached_pool>) return Pool(); // grows as needed
    else return Pool(threads);
}

// Compiled for each pool type whether or not a test runs it.
template <class Pool>
constexpr bool is_an_asio_executor = execution::is_executor<typename Pool::executor_type>::value &&
                                     asio::can_require<typename Pool::executor_type, execution::blocking_t::never_t>::value;
static_assert(is_an_asio_executor<crew::fixed_pool>);
static_assert(is_an_asio_executor<pool_of<crew::unbounded_queue, crew::spin_lock>>);
static_assert(is_an_asio_executor<pool_of<crew::lockfree_queue<256>, crew::spin_lock>>);
static_assert(is_an_asio_executor<pool_of<crew::grow_first_queue>>);
static_assert(is_an_asio_executor<crew::scheduled_pool>);
static_assert(is_an_asio_executor<crew::cached_pool>);

} // namespace

BOOST_AUTO_TEST_SUITE(pool_mixes)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(post_use_future_and_dispatch_work_on_every_pool, Pool, pools) {
    worker_probe posted;
    Pool pool = make_pool<Pool>(2);
    const auto ex = pool.get_executor();
    asio::post(ex, posted.handler(ex));
    BOOST_TEST(posted.ran_on_a_worker());

    auto value = asio::post(ex, asio::use_future([] { return 7; }));
    BOOST_REQUIRE(ready_within(value));
    BOOST_TEST(value.get() == 7);

    auto inline_on_worker = asio::post(ex, asio::use_future([&] {
        bool ran = false;
        asio::dispatch(asio::require(ex, execution::blocking.possibly), [&] { ran = true; });
        return ran;
    }));
    BOOST_REQUIRE(ready_within(inline_on_worker));
    BOOST_TEST(inline_on_worker.get());
}

BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_strand_serialises_on_every_pool, Pool, pools) {
    constexpr int producers = 2;
    constexpr int per_producer = 300;
    int count = 0; // strand state
    std::promise<void> all_ran;

    Pool pool = make_pool<Pool>(3);
    watched_strand watch(pool.get_executor());
    std::vector<std::thread> threads;
    for (int t = 0; t < producers; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < per_producer; ++i)
                asio::post(watch.strand, [&] {
                    watch.enter();
                    const bool last = ++count == producers * per_producer;
                    watch.leave();
                    if (last) all_ran.set_value();
                });
        });
    for (auto& t : threads) t.join();
    auto done = all_ran.get_future();
    BOOST_REQUIRE(ready_within(done, 30s));
    BOOST_TEST(count == producers * per_producer);
    BOOST_TEST(!watch.overlapped.load());
    BOOST_TEST(watch.off_the_pool == 0);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_timer_completes_onto_every_pool, Pool, pools) {
    worker_probe fired;
    Pool pool = make_pool<Pool>(1);
    const auto ex = pool.get_executor();
    asio::io_context io;
    asio::steady_timer timer(io, std::chrono::milliseconds(1));
    timer.async_wait(asio::bind_executor(ex, fired.completion(ex)));
    io.run();
    BOOST_TEST(fired.ran_on_a_worker());
}

BOOST_AUTO_TEST_SUITE_END()
