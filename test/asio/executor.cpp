// A pool's executor under Asio: the properties Asio asks for, post, defer,
// dispatch, use_future, equality, the execution_context, and where a
// handler's exception goes.
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <exception>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

namespace {

using executor = crew::fixed_pool::executor_type;

// What Asio checks before it accepts the handle at all; a failure here is a
// compile error rather than 27 lines of enable_if at a call site.
static_assert(execution::is_executor<executor>::value);
static_assert(asio::can_require<executor, execution::blocking_t::never_t>::value);
static_assert(asio::can_require<executor, execution::blocking_t::possibly_t>::value);
static_assert(!asio::can_require<executor, execution::blocking_t::always_t>::value,
              "a pool cannot promise to finish a handler before execute returns");
static_assert(asio::can_require<executor, execution::outstanding_work_t::tracked_t>::value);
static_assert(asio::can_prefer<executor, execution::relationship_t::continuation_t>::value);
static_assert(asio::can_query<executor, execution::blocking_t>::value);
static_assert(std::is_same_v<asio::query_result<executor, execution::context_t>::type, asio::execution_context&>);
static_assert(std::is_nothrow_copy_constructible_v<executor>);

// A service of our own, to show that the context keeps services.
struct probe_service : asio::execution_context::service {
    using key_type = probe_service;
    static inline asio::execution_context::id id;
    explicit probe_service(asio::execution_context& owner) : service(owner) {}
    void shutdown() override {}
};

} // namespace

BOOST_AUTO_TEST_SUITE(executor_properties)

BOOST_AUTO_TEST_CASE(blocking_is_possibly_by_default_and_follows_require, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    BOOST_TEST((asio::query(ex, execution::blocking) == execution::blocking.possibly));
    BOOST_TEST(ex.runs_inline_on_own_thread());

    const auto never = asio::require(ex, execution::blocking.never);
    BOOST_TEST((asio::query(never, execution::blocking) == execution::blocking.never));
    BOOST_TEST(!never.runs_inline_on_own_thread());

    const auto possibly = asio::require(never, execution::blocking.possibly);
    BOOST_TEST((asio::query(possibly, execution::blocking) == execution::blocking.possibly));
    BOOST_TEST(possibly.runs_inline_on_own_thread());

    // prefer goes through require where it can, and leaves the handle alone
    // where the property means nothing to a pool.
    BOOST_TEST(asio::prefer(never, execution::blocking.possibly).runs_inline_on_own_thread());
    BOOST_TEST(!asio::prefer(never, execution::relationship.continuation).runs_inline_on_own_thread());
    // outstanding_work.tracked gives a tracked handle to the same pool (outstanding_work.cpp).
    BOOST_TEST((asio::prefer(possibly, execution::outstanding_work.tracked).untracked() == ex));
}

BOOST_AUTO_TEST_CASE(handles_to_one_pool_are_equal_and_to_two_pools_are_not, *utf::timeout(60)) {
    crew::fixed_pool a(1);
    crew::fixed_pool b(1);
    const auto ex = a.get_executor();
    const auto copy = ex;
    BOOST_TEST((ex == copy));
    BOOST_TEST((ex == a.get_executor()));
    BOOST_TEST((ex == asio::require(ex, execution::blocking.possibly))); // same workers
    BOOST_TEST((ex != b.get_executor()));
    BOOST_TEST(!(ex == b.get_executor()));
    // Two strands over one pool are two strands.
    BOOST_TEST((asio::make_strand(ex) != asio::make_strand(ex)));
    const auto strand = asio::make_strand(ex);
    BOOST_TEST((strand == strand));
    BOOST_TEST((strand.get_inner_executor() == ex));
}

BOOST_AUTO_TEST_CASE(the_execution_context_is_one_for_all_pools_and_context_is_the_pool, *utf::timeout(60)) {
    crew::fixed_pool a(1);
    crew::scheduled_pool b(1);
    asio::execution_context& from_a = asio::query(a.get_executor(), execution::context);
    asio::execution_context& from_b = asio::query(b.get_executor(), execution::context);
    BOOST_TEST(&from_a == &from_b);
    BOOST_TEST(&a.get_executor().context() == &a);
    BOOST_TEST(&b.get_executor().context() == &b);
    // It is a working context: Asio can keep services in it (strands do).
    BOOST_TEST(&asio::use_service<probe_service>(from_a) == &asio::use_service<probe_service>(from_b));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(post_defer_dispatch)

BOOST_AUTO_TEST_CASE(post_and_defer_run_the_handler_on_a_worker, *utf::timeout(60)) {
    worker_probe posted, deferred;
    crew::fixed_pool pool(2);
    const auto ex = pool.get_executor();
    asio::post(ex, posted.handler(ex));
    asio::defer(ex, deferred.handler(ex));
    BOOST_TEST(posted.ran_on_a_worker());
    BOOST_TEST(deferred.ran_on_a_worker());
}

// With one worker, busy with the task that posts, a handler that ran before
// post returned can only have run inline.
BOOST_AUTO_TEST_CASE(post_and_defer_queue_even_when_called_on_a_worker, *utf::timeout(60)) {
    std::atomic<int> ran{0};
    std::promise<void> both_ran;
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    auto count = [&] {
        if (ran.fetch_add(1) + 1 == 2) both_ran.set_value();
    };
    auto inside = pool.submit([&] {
        asio::post(ex, count);
        asio::defer(ex, count);
        return ran.load();
    });
    BOOST_TEST(inside.get() == 0);
    auto done = both_ran.get_future();
    BOOST_REQUIRE(ready_within(done));
    BOOST_TEST(ran.load() == 2);
}

BOOST_AUTO_TEST_CASE(dispatch_runs_inline_on_a_worker, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    // Through the handle as get_executor() gives it: Asio's dispatch asks for
    // blocking.possibly itself up to Asio 1.24; later Asio uses the handle's
    // own blocking property.
    const bool expect_inline =
        dispatch_prefers_possibly || asio::query(ex, execution::blocking) == execution::blocking.possibly;
    std::atomic<bool> ran{false};
    std::promise<std::thread::id> ran_on;
    auto inside = pool.submit([&] {
        asio::dispatch(ex, [&] {
            ran.store(true);
            ran_on.set_value(std::this_thread::get_id());
        });
        return std::pair(ran.load(), std::this_thread::get_id());
    });
    const auto [ran_before_return, worker] = inside.get();
    BOOST_TEST(ran_before_return == expect_inline);
    auto on = ran_on.get_future();
    BOOST_REQUIRE(ready_within(on));
    BOOST_TEST((on.get() == worker));

    // Through a possibly-blocking handle: inline with every Asio version.
    auto with_possibly = pool.submit([&] {
        bool inline_ran = false;
        asio::dispatch(asio::require(ex, execution::blocking.possibly), [&] { inline_ran = true; });
        return inline_ran;
    });
    BOOST_TEST(with_possibly.get());
}

BOOST_AUTO_TEST_CASE(dispatch_from_another_thread_queues_the_handler, *utf::timeout(60)) {
    worker_probe on_worker;
    worker_probe on_worker_too;
    crew::fixed_pool pool(1);
    const auto ex = pool.get_executor();
    asio::dispatch(ex, on_worker.handler(ex));
    BOOST_TEST(on_worker.ran_on_a_worker());

    // Not even a possibly-blocking handle runs the pool's work on a thread
    // that is not the pool's.
    asio::dispatch(asio::require(ex, execution::blocking.possibly), on_worker_too.handler(ex));
    BOOST_TEST(on_worker_too.ran_on_a_worker());
}

BOOST_AUTO_TEST_CASE(an_inline_dispatch_passes_the_handlers_exception_to_its_caller, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const auto possibly = asio::require(pool.get_executor(), execution::blocking.possibly);
    auto caught = pool.submit([&] {
        try {
            asio::dispatch(possibly, [] { throw std::runtime_error("from the handler"); });
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("nothing");
    });
    BOOST_TEST(caught.get() == "from the handler");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(use_future)

BOOST_AUTO_TEST_CASE(use_future_gives_the_handlers_value, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    const auto ex = pool.get_executor();
    std::future<int> answer = asio::post(ex, asio::use_future([] { return 6 * 7; }));
    std::future<bool> where = asio::post(ex, asio::use_future([&] { return ex.running_in_this_thread(); }));
    std::future<void> nothing = asio::post(ex, asio::use_future([] {}));
    BOOST_REQUIRE(ready_within(answer));
    BOOST_REQUIRE(ready_within(where));
    BOOST_REQUIRE(ready_within(nothing));
    BOOST_TEST(answer.get() == 42);
    BOOST_TEST(where.get());
    nothing.get();
}

BOOST_AUTO_TEST_CASE(use_future_gives_the_handlers_exception_not_the_pool, *utf::timeout(60)) {
    std::atomic<int> escaped{0};
    crew::fixed_pool pool(crew::pool_options{
        .core_pool_size = 1,
        .after_execute = [&](std::exception_ptr e) { if (e) escaped.fetch_add(1); },
    });
    std::future<int> f = asio::post(pool.get_executor(), asio::use_future([]() -> int { throw std::out_of_range("no value"); }));
    BOOST_REQUIRE(ready_within(f));
    BOOST_CHECK_THROW(f.get(), std::out_of_range);
    pool.wait_idle();
    BOOST_TEST(escaped.load() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(handler_exceptions)

BOOST_AUTO_TEST_CASE(a_posted_handlers_exception_goes_to_after_execute, *utf::timeout(60)) {
    escaped_message escaped;
    crew::fixed_pool pool(crew::pool_options{.core_pool_size = 1, .after_execute = escaped.hook()});
    asio::post(pool.get_executor(), [] { throw std::runtime_error("from a posted handler"); });
    auto& f = escaped.future();
    BOOST_REQUIRE(ready_within(f));
    BOOST_TEST(f.get() == "from a posted handler");
}

BOOST_AUTO_TEST_CASE(without_a_hook_a_handlers_exception_goes_to_stderr, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    std::string text;
    {
        stderr_capture capture;
        asio::post(pool.get_executor(), [] { throw std::runtime_error("lost in an asio handler"); });
        pool.wait_idle(); // the report is written before the task counts as completed
        text = capture.text();
    }
    BOOST_TEST(text.find("lost in an asio handler") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
