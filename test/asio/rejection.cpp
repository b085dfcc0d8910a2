// A handler the pool refuses is dropped: the executor's execute, which Asio
// calls for post, defer, dispatch, strands, co_spawn and senders, never
// throws a refusal into Asio. The pool counts it in rejected_task_count()
// and its RejectPolicy still decides (caller_runs_policy runs it,
// discard_policy discards it); where the policy would throw
// (abort_policy, block_policy once shut down) the handler is destroyed unrun
// instead, as asio::thread_pool drops work after stop(). The pool's own
// execute and submit still throw.
#include "support.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#if defined(BOOST_ASIO_HAS_CO_AWAIT)
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/use_awaitable.hpp>
#endif

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

namespace {

using discarding_pool = crew::basic_executor<crew::unbounded_queue, crew::discard_policy>;
using bounded_pool = crew::basic_executor<crew::bounded_queue>; // abort_policy
using blocking_pool = crew::basic_executor<crew::unbounded_queue, crew::block_policy>;
using caller_runs_pool = crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy>;

bool broken_promise(std::future<int>& f) {
    try {
        f.get();
    } catch (const std::future_error& e) {
        return e.code() == std::future_errc::broken_promise;
    }
    return false;
}

// A one-worker pool with a one-slot queue, its worker busy until this object
// dies and its queue full: the next handler posted to it is refused.
template <class Pool>
struct pool_with_full_queue {
    std::latch release{1};
    std::promise<void> worker_busy;
    Pool pool{crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 1, .queue_capacity = 1}};
    struct open_on_exit {
        std::latch& l;
        ~open_on_exit() { l.count_down(); }
    } guard{release}; // declared after the pool: opens before the pool joins

    pool_with_full_queue() {
        asio::post(pool.get_executor(), [this] {
            worker_busy.set_value();
            release.wait();
        });
        auto busy = worker_busy.get_future();
        BOOST_REQUIRE(ready_within(busy));
        asio::post(pool.get_executor(), [] {}); // fills the queue
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(rejection)

BOOST_AUTO_TEST_CASE(with_abort_policy_post_defer_and_dispatch_drop_a_refused_handler, *utf::timeout(60)) {
    auto alive = std::make_shared<int>(0); // each handler holds a copy
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    pool.shutdown();
    const auto refused_before = pool.rejected_task_count();
    BOOST_CHECK_NO_THROW(asio::post(ex, [alive] {}));
    BOOST_CHECK_NO_THROW(asio::defer(ex, [alive] {}));
    BOOST_CHECK_NO_THROW(asio::dispatch(ex, [alive] {}));
    BOOST_TEST(alive.use_count() == 1); // destroyed at once, unrun
    BOOST_TEST(pool.rejected_task_count() == refused_before + 3);

    // A use_future future does not wait for a handler that will never run.
    std::future<int> f = asio::post(ex, asio::use_future([alive] { return 1; }));
    BOOST_REQUIRE(ready_within(f));
    BOOST_TEST(broken_promise(f));

    // An idle strand schedules itself on the pool at the first post; that is
    // dropped, so the strand runs nothing more, and its handlers go when the
    // last copy of the strand does.
    {
        const auto strand = asio::make_strand(ex);
        BOOST_CHECK_NO_THROW(asio::post(strand, [alive] {}));
        BOOST_CHECK_NO_THROW(asio::post(strand, [alive] {}));
    }
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(alive.use_count() == 1); // every refused handler was destroyed, none ran

    // The pool's own calls still throw.
    BOOST_CHECK_THROW(pool.execute([alive] {}), crew::rejected_execution_error);
    BOOST_CHECK_THROW((void)pool.submit([alive] {}), crew::rejected_execution_error);
    BOOST_TEST(alive.use_count() == 1);
}

// Not only at shutdown: a handler a full bounded queue refuses is dropped too.
BOOST_AUTO_TEST_CASE(with_abort_policy_a_full_queue_drops_what_post_hands_it, *utf::timeout(60)) {
    auto alive = std::make_shared<int>(0);
    pool_with_full_queue<bounded_pool> full;
    auto& pool = full.pool;
    const auto ex = pool.get_executor();
    BOOST_TEST(pool.rejected_task_count() == 0u);
    BOOST_CHECK_NO_THROW(asio::post(ex, [alive] {}));
    BOOST_TEST(alive.use_count() == 1);
    BOOST_TEST(pool.rejected_task_count() == 1u);
    // The pool's own execute still says why.
    bool threw = false;
    try {
        pool.execute([] {});
    } catch (const crew::rejected_execution_error& e) {
        threw = std::string(e.what()).find("full") != std::string::npos;
    }
    BOOST_TEST(threw);
}

// block_policy throws once the pool is shut down: the handler is dropped.
BOOST_AUTO_TEST_CASE(with_block_policy_a_handler_refused_at_shutdown_is_dropped, *utf::timeout(60)) {
    auto alive = std::make_shared<int>(0);
    blocking_pool pool(1);
    const auto ex = pool.get_executor();
    pool.shutdown();
    BOOST_CHECK_NO_THROW(asio::post(ex, [alive] {}));
    BOOST_CHECK_NO_THROW(asio::dispatch(ex, [alive] {}));
    BOOST_TEST(alive.use_count() == 1);
    BOOST_TEST(pool.rejected_task_count() == 2u);
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

// The RejectPolicy still decides where it does not throw: caller_runs_policy
// runs a handler a full queue refuses on the thread that posts it, and what
// that handler throws still reaches post's caller.
BOOST_AUTO_TEST_CASE(with_caller_runs_policy_a_refused_handler_runs_on_the_posting_thread, *utf::timeout(60)) {
    pool_with_full_queue<caller_runs_pool> full;
    auto& pool = full.pool;
    const auto ex = pool.get_executor();
    std::thread::id ran_on;
    asio::post(ex, [&ran_on] { ran_on = std::this_thread::get_id(); });
    BOOST_TEST((ran_on == std::this_thread::get_id()));
    BOOST_CHECK_THROW(asio::post(ex, [] { throw crew::rejected_execution_error("the handler's own"); }),
                      crew::rejected_execution_error);
    BOOST_TEST(pool.rejected_task_count() == 2u);
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

// A completion handler bound to a pool that refuses it: dropped, and the
// io_context's run() goes on (it used to throw out of run()).
BOOST_AUTO_TEST_CASE(a_refused_completion_handler_is_dropped_and_run_returns, *utf::timeout(60)) {
    auto alive = std::make_shared<int>(0);
    crew::fixed_pool pool(1);
    pool.shutdown();
    asio::io_context io;
    asio::steady_timer timer(io, std::chrono::milliseconds(1));
    timer.async_wait(asio::bind_executor(pool.get_executor(), [alive](boost::system::error_code) {}));
    BOOST_CHECK_NO_THROW(io.run());
    BOOST_TEST(alive.use_count() == 1);
    BOOST_TEST(pool.rejected_task_count() == 1u);
}

#if defined(BOOST_ASIO_HAS_CO_AWAIT)

// Coroutines started with co_spawn on a pool with abort_policy, suspended on
// an io_context's timers, and the two orders of shutting the pool and the
// io_context down. Either way some of Asio's work reaches a shut-down pool
// from where an exception cannot pass (the destructor of a coroutine's
// pending completion posts the coroutine's unwinding to the pool), and each
// used to end in std::terminate. Now each coroutine is destroyed unresumed,
// with its locals.

namespace {

struct counted_local {
    std::atomic<int>& destroyed;
    ~counted_local() { ++destroyed; }
};

asio::awaitable<void> wait_on(asio::steady_timer& timer, std::atomic<int>& started, std::atomic<int>& destroyed,
                              std::atomic<int>& resumed) {
    counted_local local{destroyed};
    ++started;
    co_await timer.async_wait(asio::use_awaitable);
    ++resumed;
}

constexpr int coroutines = 8;

} // namespace

// Pool first: the io_context then runs the coroutines' completions into a
// shut-down pool, which drops them.
BOOST_AUTO_TEST_CASE(co_spawn_coroutines_end_cleanly_when_the_pool_shuts_down_before_the_io_context,
                     *utf::timeout(60)) {
    std::atomic<int> started{0}, destroyed{0}, resumed{0};
    crew::fixed_pool pool(2); // abort_policy
    {
        asio::io_context io;
        std::vector<std::unique_ptr<asio::steady_timer>> timers;
        for (int i = 0; i < coroutines; ++i) {
            timers.push_back(std::make_unique<asio::steady_timer>(io, std::chrono::steady_clock::now()));
            asio::co_spawn(pool.get_executor(), wait_on(*timers.back(), started, destroyed, resumed), asio::detached);
        }
        pool.shutdown(); // runs what is queued: every coroutine gets to its wait
        BOOST_REQUIRE(pool.await_termination(scaled(10s)));
        BOOST_TEST(started == coroutines);
        BOOST_TEST(destroyed == 0);
        const auto refused_before = pool.rejected_task_count();

        BOOST_CHECK_NO_THROW(io.run()); // the timers are due: completions go to the pool
        BOOST_TEST(destroyed == coroutines);
        BOOST_TEST(resumed == 0);
        BOOST_TEST(pool.rejected_task_count() >= refused_before + coroutines);
    }
    BOOST_TEST(destroyed == coroutines);
}

// io_context first: its thread stops with the coroutines' waits pending, the
// pool shuts down, and destroying the io_context destroys the pending
// completions, which post the coroutines' unwinding to the shut-down pool.
BOOST_AUTO_TEST_CASE(co_spawn_coroutines_end_cleanly_when_the_io_context_stops_before_the_pool, *utf::timeout(60)) {
    std::atomic<int> started{0}, destroyed{0}, resumed{0};
    crew::fixed_pool pool(2); // abort_policy
    {
        asio::io_context io;
        auto work = asio::make_work_guard(io);
        std::thread io_thread([&io] { io.run(); });
        std::vector<std::unique_ptr<asio::steady_timer>> timers;
        for (int i = 0; i < coroutines; ++i) {
            timers.push_back(std::make_unique<asio::steady_timer>(io, std::chrono::hours(1)));
            asio::co_spawn(pool.get_executor(), wait_on(*timers.back(), started, destroyed, resumed), asio::detached);
        }
        io.stop();
        io_thread.join();
        pool.shutdown(); // runs what is queued: every coroutine gets to its wait
        BOOST_REQUIRE(pool.await_termination(scaled(10s)));
        BOOST_TEST(started == coroutines);
        BOOST_TEST(destroyed == 0); // the io_context's pending waits own them
        timers.clear();             // cancels the waits: their completions queue in the stopped io_context
    }                               // destroys them, unrun
    BOOST_TEST(destroyed == coroutines);
    BOOST_TEST(resumed == 0);
    BOOST_TEST(pool.rejected_task_count() >= static_cast<std::uint64_t>(coroutines));
}

// co_spawn on a pool that is already shut down: nothing runs, nothing
// throws, nothing is left behind.
BOOST_AUTO_TEST_CASE(co_spawn_on_a_shut_down_pool_runs_nothing_and_leaks_nothing, *utf::timeout(60)) {
    std::atomic<int> started{0}, destroyed{0}, resumed{0};
    crew::fixed_pool pool(1);
    pool.shutdown();
    asio::io_context io;
    asio::steady_timer timer(io, std::chrono::steady_clock::now());
    auto alive = std::make_shared<int>(0);
    BOOST_CHECK_NO_THROW(asio::co_spawn(
        pool.get_executor(),
        [alive, &timer, &started, &destroyed, &resumed]() -> asio::awaitable<void> {
            co_await wait_on(timer, started, destroyed, resumed);
        },
        asio::detached));
    BOOST_TEST(alive.use_count() == 1);
    BOOST_TEST(started == 0);
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

#endif // BOOST_ASIO_HAS_CO_AWAIT

BOOST_AUTO_TEST_SUITE_END()
