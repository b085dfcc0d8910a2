// Strands over a pool: many producers, one strand, handlers that never
// overlap and never get lost; a strand's rules for post and dispatch from
// inside it; a throwing handler does not end the strand.
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <exception>
#include <future>
#include <latch>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

BOOST_AUTO_TEST_SUITE(strand)

// 4 producers x 1000 posts to one strand over a 4-worker pool. The strand
// state is plain (non-atomic) and only the handlers touch it, so any overlap
// is a data race for ThreadSanitizer and, without it, a set `overlapped`
// flag; the count proves nothing was lost; per producer, the strand keeps
// the order of posts.
BOOST_AUTO_TEST_CASE(a_strand_serialises_handlers_from_many_producers, *utf::timeout(120)) {
    constexpr int producers = 4;
    constexpr int per_producer = 1000;
    constexpr int total = producers * per_producer;

    // Strand state: touched only by the strand's handlers (and read here once
    // `all_ran` is ready).
    int count = 0;
    std::vector<int> last_seen(producers, -1);
    int out_of_order = 0;
    std::promise<void> all_ran;

    crew::fixed_pool pool(4);
    watched_strand watch(pool.get_executor());

    std::latch start(producers);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&, p] {
            start.arrive_and_wait();
            for (int i = 0; i < per_producer; ++i)
                asio::post(watch.strand, [&, p, i] {
                    watch.enter();
                    if (i <= last_seen[p]) ++out_of_order;
                    last_seen[p] = i;
                    const bool last = ++count == total;
                    watch.leave();
                    if (last) all_ran.set_value();
                });
        });
    for (auto& t : threads) t.join();

    auto done = all_ran.get_future();
    BOOST_REQUIRE(ready_within(done, 60s));
    BOOST_TEST(count == total);
    BOOST_TEST(!watch.overlapped.load());
    BOOST_TEST(out_of_order == 0);
    BOOST_TEST(watch.off_the_pool == 0);
}

// Handlers posted from inside the strand queue behind the running one, even
// with a possibly-blocking pool handle under the strand; dispatch from
// inside runs at once.
BOOST_AUTO_TEST_CASE(inside_a_strand_post_queues_and_dispatch_runs_at_once, *utf::timeout(60)) {
    std::vector<int> order; // strand state
    std::promise<void> finished;
    crew::fixed_pool pool(2);
    const auto strand = asio::make_strand(asio::require(pool.get_executor(), execution::blocking.possibly));
    asio::post(strand, [&] {
        order.push_back(1);
        asio::post(strand, [&] {
            order.push_back(4);
            finished.set_value();
        });
        asio::dispatch(strand, [&] { order.push_back(2); });
        order.push_back(3);
    });
    auto done = finished.get_future();
    BOOST_REQUIRE(ready_within(done));
    BOOST_TEST(order == (std::vector<int>{1, 2, 3, 4}), boost::test_tools::per_element());
}

// A handler that throws: its exception goes to the pool's after_execute and
// the strand runs the handlers behind it.
BOOST_AUTO_TEST_CASE(a_throwing_handler_does_not_end_the_strand, *utf::timeout(60)) {
    std::atomic<int> escaped{0};
    std::promise<void> after_it;
    crew::fixed_pool pool(crew::pool_options{
        .core_pool_size = 2,
        .after_execute = [&](std::exception_ptr e) { if (e) escaped.fetch_add(1); },
    });
    const auto strand = asio::make_strand(pool.get_executor());
    std::latch held(1);
    // Hold the strand so that all three land in one batch behind the first.
    asio::post(strand, [&] { held.wait(); });
    asio::post(strand, [] { throw std::runtime_error("a handler failed"); });
    asio::post(strand, [&] { after_it.set_value(); });
    held.count_down();
    auto f = after_it.get_future();
    BOOST_REQUIRE(ready_within(f));
    pool.wait_idle();
    BOOST_TEST(escaped.load() == 1);
}

// Two strands over one pool run side by side: each waits (with a deadline)
// until the other has started, which only works if they do not exclude each
// other.
BOOST_AUTO_TEST_CASE(two_strands_over_one_pool_run_concurrently, *utf::timeout(60)) {
    std::promise<void> a_started;
    std::promise<void> b_started;
    std::promise<bool> a_saw_b;
    std::promise<bool> b_saw_a;
    crew::fixed_pool pool(2);
    const auto a = asio::make_strand(pool.get_executor());
    const auto b = asio::make_strand(pool.get_executor());
    asio::post(a, [&, other = b_started.get_future()] {
        a_started.set_value();
        a_saw_b.set_value(ready_within(other));
    });
    asio::post(b, [&, other = a_started.get_future()] {
        b_started.set_value();
        b_saw_a.set_value(ready_within(other));
    });
    auto fa = a_saw_b.get_future();
    auto fb = b_saw_a.get_future();
    BOOST_REQUIRE(ready_within(fa, 30s));
    BOOST_REQUIRE(ready_within(fb, 30s));
    BOOST_TEST(fa.get());
    BOOST_TEST(fb.get());
}

BOOST_AUTO_TEST_SUITE_END()
