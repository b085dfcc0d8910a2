// C++20 coroutines on crew pools (issue #17): crew::coroutine, spawn,
// resume_on, co_await future, sleep_for, and what shutdown and rejection do
// to a suspended coroutine.
#include "support.hpp"

#include <crew/coroutine.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

crew::coroutine<int> twice(int x) { co_return 2 * x; }

crew::coroutine<long> depth(int n) {
    if (n == 0) co_return 0;
    co_return 1 + co_await depth(n - 1);
}

crew::coroutine<void> fails() {
    throw std::runtime_error("from the coroutine");
    co_return;
}

// Counts its destruction: proves a destroyed chain ran its locals' destructors.
struct destruction_counter {
    std::atomic<int>* count;
    ~destruction_counter() { ++*count; }
};

template <class Pool>
bool on_pool(Pool& pool) {
    return pool.get_executor().running_in_this_thread();
}

} // namespace

BOOST_AUTO_TEST_SUITE(coroutines)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(spawn_runs_a_coroutine_on_the_pool_and_returns_its_result) {
    crew::fixed_pool pool(2);
    auto where = [&]() -> crew::coroutine<bool> { co_return on_pool(pool); };
    BOOST_TEST(crew::spawn(pool, where()).get());
    BOOST_TEST(crew::spawn(pool, twice(21)).get() == 42);
    auto failed = crew::spawn(pool, fails());
    BOOST_CHECK_EXCEPTION(failed.get(), std::runtime_error,
                          [](const auto& e) { return message_contains(e, "from the coroutine"); });
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(an_awaited_coroutine_runs_inline_on_the_awaiting_thread) {
    crew::fixed_pool pool(2);
    auto outer = [&]() -> crew::coroutine<bool> {
        const auto before = std::this_thread::get_id();
        auto inner = [&]() -> crew::coroutine<std::thread::id> { co_return std::this_thread::get_id(); };
        const auto inside = co_await inner();
        co_return inside == before && std::this_thread::get_id() == before;
    };
    BOOST_TEST(crew::spawn(pool, outer()).get());
}

// 100,000 nested co_awaits: the chain runs through crew's trampoline in
// constant stack (GCC 12 below -O2 makes no tail call of symmetric transfer).
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(deep_recursion_through_co_await_does_not_overflow_the_stack) {
    crew::fixed_pool pool(1);
    BOOST_TEST(crew::spawn(pool, depth(100000)).get() == 100000);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(resume_on_moves_the_coroutine_to_another_pool) {
    crew::fixed_pool first(1), second(1);
    auto hop = [&]() -> crew::coroutine<int> {
        int hops = on_pool(first) ? 1 : 0;
        co_await crew::resume_on(second);
        hops += on_pool(second) && !on_pool(first) ? 1 : 0;
        co_await crew::resume_on(first);
        hops += on_pool(first) ? 1 : 0;
        co_return hops;
    };
    BOOST_TEST(crew::spawn(first, hop()).get() == 3);
}

// The coroutine awaits a future whose task waits on a gate, on a pool of
// one worker; meanwhile that worker runs another task. A get() that blocked
// the worker would never let it.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(awaiting_a_future_blocks_no_thread_and_resumes_with_its_value) {
    crew::fixed_pool pool(1), other(1);
    gate blocked;
    auto slow = other.submit([&] {
        blocked.wait();
        return 7;
    });
    auto waiter = [&]() -> crew::coroutine<int> { co_return co_await slow + 1; };
    auto result = crew::spawn(pool, waiter());
    BOOST_TEST((pool.submit([] { return 1; }).wait_for(scaled(10s)) == std::future_status::ready));
    BOOST_TEST(!result.is_done());
    blocked.open();
    BOOST_TEST(result.get() == 8);
}

// The awaiter registers, then re-checks; the completer publishes, then
// looks for an awaiter. Racing them 2,000 times must lose no resumption.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(a_future_completing_while_it_is_awaited_always_resumes_the_coroutine) {
    crew::fixed_pool pool(1), other(1);
    for (int round = 0; round < 2000; ++round) {
        auto value = other.submit([round] { return round; });
        auto waiter = [&]() -> crew::coroutine<int> { co_return co_await value; };
        auto result = crew::spawn(pool, waiter());
        BOOST_REQUIRE((result.wait_for(scaled(10s)) == std::future_status::ready));
        BOOST_REQUIRE(result.get() == round);
    }
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(awaiting_a_future_rethrows_and_reports_cancellation) {
    crew::fixed_pool pool(1), other(1);
    auto failing = other.submit([]() -> int { throw std::runtime_error("the task failed"); });
    auto rethrows = [&]() -> crew::coroutine<bool> {
        try {
            (void)co_await failing;
        } catch (const std::runtime_error& e) {
            co_return message_contains(e, "the task failed");
        }
        co_return false;
    };
    BOOST_TEST(crew::spawn(pool, rethrows()).get());

    gate blocked;
    occupy(other, blocked, 1);
    auto queued = other.submit([] { return 1; });
    std::latch awaiting(1);
    auto cancelled = [&]() -> crew::coroutine<bool> {
        awaiting.count_down();
        try {
            (void)co_await queued;
        } catch (const crew::cancellation_error&) {
            co_return true;
        }
        co_return false;
    };
    auto result = crew::spawn(pool, cancelled());
    awaiting.wait();
    BOOST_TEST(queued.cancel()); // the coroutine resumes now, on this thread, or sees it done first
    BOOST_TEST(result.get());
    blocked.open();
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(sleep_for_resumes_on_the_scheduled_pool_after_the_delay) {
    crew::scheduled_pool timers(1);
    crew::fixed_pool pool(1);
    auto nap = [&]() -> crew::coroutine<bool> {
        const auto start = clock::now();
        co_await crew::sleep_for(timers, 30ms);
        co_return clock::now() - start >= 30ms && on_pool(timers);
    };
    BOOST_TEST(crew::spawn(pool, nap()).get());
}

// A coroutine asleep for an hour holds no thread: the one worker runs other
// work. shutdown_now() hands its resumption back; destroying it destroys the
// whole chain (its locals' destructors run) and its future is cancelled.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(shutdown_now_hands_back_a_sleeping_coroutine_and_destroying_it_cancels) {
    crew::scheduled_pool timers(1);
    std::atomic<int> destroyed{0};
    std::latch asleep(1);
    auto sleeper = [&]() -> crew::coroutine<int> {
        destruction_counter outer_local{&destroyed};
        auto inner = [&]() -> crew::coroutine<int> {
            destruction_counter inner_local{&destroyed};
            asleep.count_down();
            co_await crew::sleep_for(timers, std::chrono::hours(1));
            co_return 1;
        };
        co_return co_await inner();
    };
    auto result = crew::spawn(timers, sleeper());
    asleep.wait();
    BOOST_TEST((timers.submit([] { return 2; }).get() == 2)); // the worker is free
    auto left = timers.shutdown_now();
    BOOST_TEST(left.size() == 1u);
    BOOST_TEST(destroyed.load() == 0);
    left.clear();
    BOOST_TEST(destroyed.load() == 2);
    BOOST_CHECK_THROW(result.get(), crew::cancellation_error);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(shutdown_now_hands_back_a_queued_resumption) {
    crew::fixed_pool busy(1), start(1);
    gate blocked;
    occupy(busy, blocked, 1);
    std::atomic<int> destroyed{0};
    std::atomic<bool> resumed{false};
    std::latch queued(1);
    auto mover = [&]() -> crew::coroutine<void> {
        destruction_counter local{&destroyed};
        queued.count_down(); // just before the resumption is queued: shutdown_now may come first (then it throws)
        co_await crew::resume_on(busy);
        resumed = true;
    };
    auto result = crew::spawn(start, mover());
    queued.wait();
    BOOST_TEST(eventually([&] { return busy.queue_size() == 1u || result.is_done(); }));
    auto left = busy.shutdown_now();
    blocked.open();
    left.clear();
    BOOST_CHECK_THROW(result.get(), std::exception); // cancellation_error, or rejected if shut down first
    BOOST_TEST(destroyed.load() == 1);
    BOOST_TEST(!resumed.load());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(spawn_follows_the_reject_policy) {
    crew::fixed_pool aborting(1);
    aborting.shutdown();
    BOOST_CHECK_THROW(crew::spawn(aborting, twice(1)), crew::rejected_execution_error);

    crew::basic_executor<crew::unbounded_queue, crew::discard_policy> discarding(1);
    discarding.shutdown();
    auto dropped = crew::spawn(discarding, twice(1));
    BOOST_CHECK_THROW(dropped.get(), crew::rejected_execution_error); // never hangs
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_refused_resume_on_throws_from_the_co_await) {
    crew::fixed_pool pool(1), closed_aborting(1);
    crew::basic_executor<crew::unbounded_queue, crew::discard_policy> closed_discarding(1);
    closed_aborting.shutdown();
    closed_discarding.shutdown();
    auto tries = [&]() -> crew::coroutine<int> {
        int refused = 0;
        try {
            co_await crew::resume_on(closed_aborting);
        } catch (const crew::rejected_execution_error&) {
            ++refused;
        }
        try {
            co_await crew::resume_on(closed_discarding);
        } catch (const crew::rejected_execution_error&) {
            ++refused;
        }
        co_return on_pool(pool) ? refused : -1; // still where it was
    };
    BOOST_TEST(crew::spawn(pool, tries()).get() == 2);
}

// caller_runs_policy resumes the coroutine inline, on the thread that asked.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(resume_on_a_saturated_caller_runs_pool_continues_inline) {
    crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> saturated(one_worker_one_slot);
    crew::fixed_pool pool(1);
    gate blocked;
    occupy(saturated, blocked, 1);
    saturated.execute([] {});
    auto inline_resume = [&]() -> crew::coroutine<bool> {
        const auto before = std::this_thread::get_id();
        co_await crew::resume_on(saturated);
        co_return std::this_thread::get_id() == before;
    };
    BOOST_TEST(crew::spawn(pool, inline_resume()).get());
    blocked.open();
}

// What a coroutine throws reaches its future, never a worker's hooks.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(no_exception_escapes_into_a_worker) {
    std::atomic<int> escaped{0};
    crew::fixed_pool pool(crew::pool_options{.core_pool_size = 1, .after_execute = [&](std::exception_ptr e) {
        if (e) ++escaped;
    }});
    for (int i = 0; i < 10; ++i) BOOST_CHECK_THROW(crew::spawn(pool, fails()).get(), std::runtime_error);
    pool.wait_idle();
    BOOST_TEST(escaped.load() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
