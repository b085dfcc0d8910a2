// How a pool's executor invokes what Asio hands it: as an lvalue, on the
// inline path (execute on one of the pool's own workers) as on the queued
// one, as Asio's standard executors must (P0443's executor_of<E, F> asks for
// invocable<remove_cvref_t<F>&>). Asio's sender/receiver adaptation depends
// on it: execution::connect and submit wrap the receiver in a function
// object whose call operator is `&`-qualified (execution::detail::
// as_invocable). Adapted from Asio's own thread_pool executor and sender
// tests (libs/asio/test/thread_pool.cpp, Boost 1.74).
//
// The sender tests need Asio's sender/receiver facilities, which later Asio
// deprecates (BOOST_ASIO_NO_DEPRECATED removes them) and then drops: they
// are compiled where <boost/asio/execution/connect.hpp> exists and is not
// deprecated away. The rest calls `ex.execute(f)`, as Asio itself does.
#include "support.hpp"

#if __has_include(<boost/asio/execution/connect.hpp>) && !defined(BOOST_ASIO_NO_DEPRECATED)
#define CREW_TEST_ASIO_SENDERS 1
#include <boost/asio/execution/connect.hpp>
#include <boost/asio/execution/schedule.hpp>
#include <boost/asio/execution/start.hpp>
#include <boost/asio/execution/submit.hpp>
#endif

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <exception>
#include <future>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

namespace {

using executor = crew::fixed_pool::executor_type;

enum class called { none, lvalue, rvalue };

// Callable only as an lvalue, as Asio's as_invocable.
struct lvalue_only {
    std::shared_ptr<std::promise<bool>> ran; // on a worker of `pool`
    crew::fixed_pool* pool;
    void operator()() & { ran->set_value(pool->get_executor().running_in_this_thread()); }
};

// Overloaded on the value category: the executor must pick `&` on both paths.
struct by_category {
    std::shared_ptr<std::promise<called>> seen;
    void operator()() & { seen->set_value(called::lvalue); }
    void operator()() && { seen->set_value(called::rvalue); }
};

static_assert(!std::is_invocable_v<lvalue_only&&>, "callable only as an lvalue");

#if defined(CREW_TEST_ASIO_SENDERS)
// A receiver as Asio's thread_pool test writes it, counting each of its
// three completions (a receiver must get exactly one of them, once), and
// noting whether set_value ran on one of the pool's workers.
struct counts {
    std::atomic<int> value{0};
    std::atomic<int> done{0};
    std::atomic<int> error{0};
    std::atomic<bool> value_on_worker{false};
    std::promise<void> completed; // set by whichever completion comes first
    std::future<void> completion = completed.get_future();
    std::atomic<bool> completed_set{false};
    void complete() {
        if (!completed_set.exchange(true)) completed.set_value();
    }
};

struct receiver {
    counts* c;
    crew::fixed_pool* pool;
    receiver(counts* c_, crew::fixed_pool* p) noexcept : c(c_), pool(p) {}
    receiver(const receiver&) noexcept = default;
    receiver(receiver&&) noexcept = default;
    void set_value() noexcept {
        c->value_on_worker = pool->get_executor().running_in_this_thread();
        ++c->value;
        c->complete();
    }
    template <class E>
    void set_error(E) noexcept {
        ++c->error;
        c->complete();
    }
    void set_done() noexcept {
        ++c->done;
        c->complete();
    }
};

// Waits for the receiver over `c` to complete and for the worker to be done
// with it; then it must have had exactly one completion: set_value.
void check_one_value(counts& c, crew::fixed_pool& pool) {
    BOOST_REQUIRE(ready_within(c.completion));
    pool.wait_idle(); // the worker is done with the receiver
    BOOST_TEST(c.value == 1);
    BOOST_TEST(c.done + c.error == 0);
}

static_assert(execution::is_receiver_of<receiver>::value);
static_assert(execution::is_sender_to<executor, receiver>::value, "an executor is a sender of void()");
#endif

} // namespace

BOOST_AUTO_TEST_SUITE(invocation)

BOOST_AUTO_TEST_CASE(an_lvalue_only_function_object_runs_queued_and_inline, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const executor ex = pool.get_executor();

    auto queued = std::make_shared<std::promise<bool>>();
    ex.execute(lvalue_only{queued, &pool}); // not on a worker: queued
    auto queued_ran = queued->get_future();
    BOOST_REQUIRE(ready_within(queued_ran));
    BOOST_TEST(queued_ran.get());

    // On one of the pool's workers the default handle runs it before execute
    // returns.
    auto inside = pool.submit([&pool, ex] {
        auto ran = std::make_shared<std::promise<bool>>();
        auto f = ran->get_future();
        ex.execute(lvalue_only{ran, &pool});
        return f.wait_for(0s) == std::future_status::ready && f.get();
    });
    BOOST_REQUIRE(ready_within(inside));
    BOOST_TEST(inside.get());
}

BOOST_AUTO_TEST_CASE(an_overloaded_function_object_gets_the_lvalue_overload_inline_as_queued, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const executor ex = pool.get_executor();

    // Queued: from this thread, and from a worker through a blocking.never handle.
    auto queued = std::make_shared<std::promise<called>>();
    ex.execute(by_category{queued});
    auto queued_seen = queued->get_future();
    BOOST_REQUIRE(ready_within(queued_seen));
    BOOST_TEST((queued_seen.get() == called::lvalue));

    auto from_worker = std::make_shared<std::promise<called>>();
    pool.execute([ex, from_worker] { asio::require(ex, execution::blocking.never).execute(by_category{from_worker}); });
    auto from_worker_seen = from_worker->get_future();
    BOOST_REQUIRE(ready_within(from_worker_seen));
    BOOST_TEST((from_worker_seen.get() == called::lvalue));

    // Inline, with an rvalue and with an lvalue argument.
    auto inline_calls = pool.submit([ex] {
        auto rvalue_arg = std::make_shared<std::promise<called>>();
        auto lvalue_arg = std::make_shared<std::promise<called>>();
        ex.execute(by_category{rvalue_arg});
        const by_category named{lvalue_arg};
        ex.execute(named);
        auto a = rvalue_arg->get_future();
        auto b = lvalue_arg->get_future();
        const bool both_ran = a.wait_for(0s) == std::future_status::ready && b.wait_for(0s) == std::future_status::ready;
        return both_ran && a.get() == called::lvalue && b.get() == called::lvalue;
    });
    BOOST_REQUIRE(ready_within(inline_calls));
    BOOST_TEST(inline_calls.get());
}

// Inline, the executor works on a copy of what it is given, as Asio's
// thread_pool does: an rvalue argument is moved from, and the copy is gone
// by the time execute returns.
BOOST_AUTO_TEST_CASE(inline_execute_consumes_an_rvalue_function_object, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const executor ex = pool.get_executor();
    auto result = pool.submit([ex] {
        auto token = std::make_shared<int>(0);
        std::weak_ptr<int> watch = token;
        bool ran = false;
        auto f = [&ran, held = std::move(token)] { ran = held != nullptr; };
        ex.execute(std::move(f));
        return ran && watch.expired();
    });
    BOOST_REQUIRE(ready_within(result));
    BOOST_TEST(result.get());
}

#if defined(CREW_TEST_ASIO_SENDERS)

// Asio's sender adaptation of an executor: submit (connect + start inside)
// from a thread outside the pool queues the receiver's set_value.
BOOST_AUTO_TEST_CASE(submit_through_the_executor_completes_the_receiver_on_a_worker, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const executor ex = pool.get_executor();
    counts c;
    execution::submit(ex, receiver(&c, &pool));
    check_one_value(c, pool);
    BOOST_TEST(c.value_on_worker);

    // schedule(executor) is the executor itself, a sender of void().
    counts d;
    execution::submit(execution::schedule(ex), receiver(&d, &pool));
    check_one_value(d, pool);
}

// connect + start on one of the pool's workers: the default handle runs the
// receiver inline, before start returns.
BOOST_AUTO_TEST_CASE(connect_and_start_on_a_worker_complete_the_receiver_inline, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const executor ex = pool.get_executor();
    counts c;
    auto inline_completion = pool.submit([&] {
        auto op = execution::connect(ex, receiver(&c, &pool));
        execution::start(op);
        return c.value == 1;
    });
    BOOST_REQUIRE(ready_within(inline_completion));
    BOOST_TEST(inline_completion.get());
    BOOST_TEST(c.value == 1);
    BOOST_TEST(c.value_on_worker);
    BOOST_TEST(c.done + c.error == 0);

    // The same operation started from outside the pool is queued; the
    // operation state must then live until the receiver completes.
    counts q;
    auto op = execution::connect(ex, receiver(&q, &pool));
    execution::start(op);
    check_one_value(q, pool);
}

// A pool that refuses the receiver (shut down, abort_policy) drops the
// function object, and Asio's as_invocable reports a dropped receiver with
// set_done: exactly one completion. (A refusal thrown out of execute
// instead made as_operation::start complete it twice: set_done from the
// destroyed as_invocable, then set_error.)
BOOST_AUTO_TEST_CASE(a_refused_receiver_gets_set_done_once, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const executor ex = pool.get_executor();
    pool.shutdown();
    BOOST_REQUIRE(pool.await_termination(scaled(10s)));
    const auto refused_before = pool.rejected_task_count();

    counts c;
    execution::submit(ex, receiver(&c, &pool));
    BOOST_TEST(c.done == 1);
    BOOST_TEST(c.value == 0);
    BOOST_TEST(c.error == 0);

    counts d;
    {
        auto op = execution::connect(ex, receiver(&d, &pool));
        execution::start(op);
    }
    BOOST_TEST(d.done == 1);
    BOOST_TEST(d.value + d.error == 0);
    BOOST_TEST(pool.rejected_task_count() == refused_before + 2);
}

#endif // CREW_TEST_ASIO_SENDERS

BOOST_AUTO_TEST_SUITE_END()
