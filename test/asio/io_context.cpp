// An io_context does the waiting, the pool runs the completion handlers:
// bind_executor with steady_timers, directly and through a strand, and an
// any_io_executor holding a pool's executor.
#include "support.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <exception>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

namespace {

// Runs `io` on `threads` threads of its own until it runs out of work.
class io_threads {
  public:
    io_threads(asio::io_context& io, int threads) {
        for (int i = 0; i < threads; ++i) threads_.emplace_back([&io] { io.run(); });
    }
    io_threads(const io_threads&) = delete;
    io_threads& operator=(const io_threads&) = delete;
    ~io_threads() {
        for (auto& t : threads_) t.join();
    }

  private:
    std::vector<std::thread> threads_;
};

} // namespace

BOOST_AUTO_TEST_SUITE(bind_executor)

BOOST_AUTO_TEST_CASE(a_timers_handler_runs_on_a_pool_worker, *utf::timeout(60)) {
    struct seen {
        bool on_worker;
        std::thread::id thread;
        boost::system::error_code ec;
    };
    std::promise<seen> fired;
    crew::fixed_pool pool(2);
    const auto ex = pool.get_executor();
    asio::io_context io;
    asio::steady_timer timer(io, std::chrono::milliseconds(1));
    timer.async_wait(asio::bind_executor(ex, [&](boost::system::error_code ec) {
        fired.set_value({ex.running_in_this_thread(), std::this_thread::get_id(), ec});
    }));
    std::thread runner([&] { io.run(); });
    const std::thread::id io_thread = runner.get_id();
    runner.join(); // io.run() returns once the completion is handed to the pool
    auto f = fired.get_future();
    BOOST_REQUIRE(ready_within(f));
    const seen s = f.get();
    BOOST_TEST(s.on_worker);
    BOOST_TEST((s.thread != io_thread));
    BOOST_TEST(!s.ec);
}

// 200 timers on an io_context run by two threads, all completing into one
// strand over the pool: plain state, no overlap, none lost, each on a worker.
BOOST_AUTO_TEST_CASE(timers_completing_into_a_strand_over_the_pool_are_serialised, *utf::timeout(120)) {
    constexpr int timers = 200;
    int count = 0; // strand state
    int failed = 0;
    std::promise<void> all_fired;

    crew::fixed_pool pool(3);
    watched_strand watch(pool.get_executor());
    asio::io_context io;
    std::vector<std::unique_ptr<asio::steady_timer>> waiting;
    for (int i = 0; i < timers; ++i) {
        waiting.push_back(std::make_unique<asio::steady_timer>(io, std::chrono::milliseconds(i % 5)));
        waiting.back()->async_wait(asio::bind_executor(watch.strand, [&](boost::system::error_code ec) {
            watch.enter();
            if (ec) ++failed;
            const bool last = ++count == timers;
            watch.leave();
            if (last) all_fired.set_value();
        }));
    }
    {
        io_threads run(io, 2);
    }
    auto done = all_fired.get_future();
    BOOST_REQUIRE(ready_within(done, 30s));
    BOOST_TEST(count == timers);
    BOOST_TEST(failed == 0);
    BOOST_TEST(watch.off_the_pool == 0);
    BOOST_TEST(!watch.overlapped.load());
}

// What a handler bound to the pool throws goes to the pool's after_execute,
// not out of io_context::run(): the pool ran it.
BOOST_AUTO_TEST_CASE(a_bound_handlers_exception_goes_to_the_pool_not_to_run, *utf::timeout(60)) {
    escaped_message escaped;
    crew::fixed_pool pool(crew::pool_options{.core_pool_size = 1, .after_execute = escaped.hook()});
    asio::io_context io;
    asio::steady_timer timer(io, std::chrono::milliseconds(1));
    timer.async_wait(asio::bind_executor(pool.get_executor(),
                                         [](boost::system::error_code) { throw std::runtime_error("timer handler failed"); }));
    bool run_threw = false;
    try {
        io.run();
    } catch (...) {
        run_threw = true;
    }
    auto& f = escaped.future();
    BOOST_REQUIRE(ready_within(f));
    BOOST_TEST(f.get() == "timer handler failed");
    BOOST_TEST(!run_threw);
}

// An any_io_executor (what Asio's own APIs take) can hold a pool's executor,
// and work posted through it runs on the pool.
BOOST_AUTO_TEST_CASE(an_any_io_executor_can_hold_a_pools_executor, *utf::timeout(60)) {
    worker_probe on_worker;
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    const asio::any_io_executor any = ex;
    BOOST_TEST((any.target<crew::fixed_pool::executor_type>() != nullptr));
    BOOST_TEST((&asio::query(any, execution::context) == &asio::query(ex, execution::context)));
    asio::post(any, on_worker.handler(ex));
    BOOST_TEST(on_worker.ran_on_a_worker());
}

BOOST_AUTO_TEST_SUITE_END()
