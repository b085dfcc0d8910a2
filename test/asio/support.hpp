// Shared helpers for the Asio suite.
#ifndef CREW_TEST_ASIO_SUPPORT_HPP
#define CREW_TEST_ASIO_SUPPORT_HPP

// First, so that the suite notices if <crew/asio.hpp> stops including what
// its users call (post, dispatch, strands, use_future, bind_executor).
#include <crew/asio.hpp>

#include <crew/crew.hpp>

#include "../common/stderr_capture.hpp"
#include "../common/time_factor.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>

#include <unistd.h>

namespace crew_asio_test {

using namespace std::chrono_literals;
using crew_test_common::scaled;
namespace asio = boost::asio;
namespace execution = boost::asio::execution;

// Whether Asio's dispatch() itself asks the executor for blocking.possibly.
// Asio 1.18 to 1.24 (Boost 1.74 to 1.80) do; from 1.26 (Boost 1.81) on,
// dispatch uses the executor as it is given.
#if BOOST_ASIO_VERSION < 102600
inline constexpr bool dispatch_prefers_possibly = true;
#else
inline constexpr bool dispatch_prefers_possibly = false;
#endif

// True once `f` is ready, false if `limit` (scaled) passes first: a lost
// handler fails the test instead of hanging it.
template <class T>
bool ready_within(const std::future<T>& f, std::chrono::milliseconds limit = 10s) {
    return f.wait_for(scaled(limit)) == std::future_status::ready;
}
template <class T>
bool ready_within(const crew::future<T>& f, std::chrono::milliseconds limit = 10s) {
    return f.wait_for(scaled(limit)) == std::future_status::ready;
}

using crew_test_common::stderr_capture;

} // namespace crew_asio_test

#endif
