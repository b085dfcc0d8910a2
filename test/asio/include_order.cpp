// <boost/asio.hpp> first, then <crew/asio.hpp>: crew's header works after
// all of Asio. (<utility> comes first only for Boost 1.74's own
// <boost/asio/awaitable.hpp>, which uses std::exchange without including it,
// and fails under C++20 whenever <boost/asio.hpp> is the first header of a
// translation unit, with or without crew: doc/interop.md, "Which Asio".)
#include <utility>

#include <boost/asio.hpp>

#include <crew/asio.hpp>
#include <crew/fixed_pool.hpp>

#include "../common/time_factor.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>

namespace utf = boost::unit_test;

BOOST_AUTO_TEST_SUITE(include_order)

BOOST_AUTO_TEST_CASE(crew_asio_after_boost_asio, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    std::future<int> r = boost::asio::post(ex, boost::asio::use_future([] { return 42; }));
    auto strand = boost::asio::make_strand(ex);
    std::future<bool> in_strand = boost::asio::post(strand, boost::asio::use_future([&strand] {
        return strand.running_in_this_thread();
    }));
    const auto limit = crew_test_common::scaled(std::chrono::seconds(10));
    BOOST_REQUIRE(r.wait_for(limit) == std::future_status::ready);
    BOOST_TEST(r.get() == 42);
    BOOST_REQUIRE(in_strand.wait_for(limit) == std::future_status::ready);
    BOOST_TEST(in_strand.get());
}

BOOST_AUTO_TEST_SUITE_END()
