// Shared helpers for the Asio suite.
#ifndef CREW_TEST_ASIO_SUPPORT_HPP
#define CREW_TEST_ASIO_SUPPORT_HPP

// First, so that the suite notices if <crew/asio.hpp> stops including what
// its users call (post, dispatch, strands, use_future, bind_executor).
#include <crew/asio.hpp>

#include <crew/crew.hpp>

#include "../common/escaped_message.hpp"
#include "../common/stderr_capture.hpp"
#include "../common/time_factor.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
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

// Tells whether a handler ran on one of the pool's workers: hand
// `handler(ex)` to post, dispatch or defer (or `completion(ex)` to an
// async_wait, bound to `ex`); ran_on_a_worker() waits for it, and is false
// if it ran elsewhere, failed, or never ran. Declare it before the pool.
class worker_probe {
  public:
    template <class Executor>
    auto handler(const Executor& ex) {
        return [this, ex] { ran_.set_value(ex.running_in_this_thread()); };
    }
    template <class Executor>
    auto completion(const Executor& ex) {
        return [this, ex](boost::system::error_code ec) { ran_.set_value(!ec && ex.running_in_this_thread()); };
    }
    bool ran_on_a_worker() { return ready_within(future_) && future_.get(); }

  private:
    std::promise<bool> ran_;
    std::future<bool> future_ = ran_.get_future();
};

// A strand over a pool's executor, checked from inside each of its handlers
// (enter() first, leave() last): two that overlap set `overlapped`; one off
// the pool's workers or outside the strand counts in `off_the_pool`, plain
// state that only the strand's handlers touch, so that an overlap is also a
// data race for ThreadSanitizer.
template <class Executor>
class watched_strand {
  public:
    explicit watched_strand(const Executor& ex) : ex_(ex), strand(asio::make_strand(ex)) {}
    void enter() {
        if (inside_.exchange(true)) overlapped.store(true);
        if (!ex_.running_in_this_thread() || !strand.running_in_this_thread()) ++off_the_pool;
    }
    void leave() { inside_.store(false); }

  private:
    Executor ex_;
    std::atomic<bool> inside_{false};

  public:
    const asio::strand<Executor> strand;
    std::atomic<bool> overlapped{false};
    int off_the_pool = 0;
};

using crew_test_common::escaped_message;
using crew_test_common::stderr_capture;

} // namespace crew_asio_test

#endif
