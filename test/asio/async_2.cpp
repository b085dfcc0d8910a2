// Asio's executors example async_2 (a composed operation reading lines from a
// stream: each step posts the next through the executor and hands its result
// to the handler through the handler's executor, holding tracked copies of
// both meanwhile), written anew, on a crew pool's executor instead of an
// asio::thread_pool's. The pool is destroyed while the chain still has
// handlers to post: a tracked executor is outstanding work, so the
// destructor waits for the chain before it shuts the pool down, and the
// last handler runs.
//
// Deterministic: the pool is paused while the chain starts, so the first
// step runs only once the destructor has begun (it resumes the pool), and
// that step waits until the destructor has either shut the pool down
// (before tracked work was counted: every later post was refused, the last
// handler never ran) or is waiting for the tracked executors.
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

namespace {

// Reads one line from `in` on `io_ex`, then hands it to `handler` through
// the handler's own executor (tracked meanwhile). `before_read` lets the
// test hold the first read.
template <class IoExecutor, class Handler>
void async_getline(IoExecutor io_ex, std::istream& in, const std::function<void()>& before_read, Handler handler) {
    auto work = asio::prefer(asio::get_associated_executor(handler, io_ex), execution::outstanding_work.tracked);
    asio::post(io_ex, [&in, &before_read, work, handler = std::move(handler)]() mutable {
        before_read();
        std::string line;
        std::getline(in, line);
        asio::dispatch(work, [line = std::move(line), handler = std::move(handler)]() mutable {
            handler(std::move(line));
        });
    });
}

// Reads lines until an empty one, one async_getline after another, and hands
// them all to `handler` through its executor. Both executors are tracked for
// the whole composition.
template <class IoExecutor, class Handler>
void async_getlines(IoExecutor io_ex, std::istream& in, const std::function<void()>& before_read, std::string so_far,
                    Handler handler) {
    auto io_work = asio::prefer(io_ex, execution::outstanding_work.tracked);
    auto handler_work =
        asio::prefer(asio::get_associated_executor(handler, io_ex), execution::outstanding_work.tracked);
    async_getline(io_ex, in, before_read,
                  asio::bind_executor(handler_work, [io_work, handler_work, &in, &before_read,
                                                     so_far = std::move(so_far),
                                                     handler = std::move(handler)](std::string line) mutable {
                      if (line.empty()) {
                          asio::dispatch(handler_work, [so_far = std::move(so_far), handler = std::move(handler)]() mutable {
                              handler(std::move(so_far));
                          });
                      } else {
                          async_getlines(io_work, in, before_read, so_far + line + "\n", std::move(handler));
                      }
                  }));
}

// Whether the pool's destructor waits for tracked executors now (always
// false with a crew that does not count them).
template <class Pool>
bool destructor_waits_for_work(Pool& pool) {
    if constexpr (requires { crew_outstanding_work(pool).waited_on(); }) return crew_outstanding_work(pool).waited_on();
    else return false;
}

} // namespace

BOOST_AUTO_TEST_SUITE(async_2)

BOOST_AUTO_TEST_CASE(the_last_handler_runs_when_the_pool_is_destroyed_under_the_chain, *utf::timeout(60)) {
    std::istringstream input("abc\n123\nxyz\n\n");
    std::ostringstream printed;         // what the example prints
    std::optional<bool> last_on_worker; // set by the last handler
    {
        crew::fixed_pool pool(2);
        const auto ex = pool.get_executor();
        bool first = true;
        const std::function<void()> before_read = [&] {
            if (!std::exchange(first, false)) return;
            // The destructor has begun (it resumed the pool): wait until it
            // shut the pool down or waits for the chain's tracked executors.
            while (!pool.is_shutdown() && !destructor_waits_for_work(pool)) std::this_thread::yield();
        };
        pool.pause();
        async_getlines(ex, input, before_read, std::string(),
                       asio::bind_executor(ex, [&printed, &last_on_worker, ex](std::string lines) {
                           printed << "Lines:\n" << lines;
                           last_on_worker = ex.running_in_this_thread();
                       }));
    } // ~fixed_pool
    BOOST_TEST(printed.str() == "Lines:\nabc\n123\nxyz\n");
    BOOST_TEST(last_on_worker.value_or(false));
}

// The example as it is, unhindered: the pool destroyed at once, every time.
BOOST_AUTO_TEST_CASE(the_chain_finishes_in_every_run, *utf::timeout(120)) {
    const std::function<void()> nothing = [] {};
    int finished = 0;
    constexpr int runs = 50;
    for (int run = 0; run < runs; ++run) {
        std::istringstream input("abc\n123\nxyz\n\n");
        std::string result;
        {
            crew::fixed_pool pool(2);
            const auto ex = pool.get_executor();
            async_getlines(ex, input, nothing, std::string(),
                           asio::bind_executor(ex, [&result](std::string lines) { result = std::move(lines); }));
        }
        if (result == "abc\n123\nxyz\n") ++finished;
    }
    BOOST_TEST(finished == runs);
}

BOOST_AUTO_TEST_SUITE_END()
