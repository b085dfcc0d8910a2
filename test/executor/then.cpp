// future::then: continuations handed to an executor once their source is
// done, over every pool kind and policy mix, directly and through an
// any_executor (doc/composition.md, "Continuations").
#include <crew/any_executor.hpp>
#include <crew/crew.hpp>

#include "composition_support.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <latch>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace utf = boost::unit_test;
using namespace crew_test;

BOOST_AUTO_TEST_SUITE(then)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_chain_passes_values_and_whole_futures_along, Setup, executor_setups) {
    Setup s;
    auto first = s.pool.submit([] { return 20; });
    auto plus_one = std::move(first).then(s.ex(), [](int x) { return x + 1; });
    auto doubled = std::move(plus_one).then(s.ex(), [](crew::future<int> f) { return f.get() * 2; });
    auto as_text = std::move(doubled).then(s.ex(), [](int x) { return std::to_string(x); });
    auto ignored = std::move(as_text).then(s.ex(), [](std::string) {});                 // a future<void>
    auto after_void = std::move(ignored).then(s.ex(), [] { return std::string("done"); }); // fn() after void
    BOOST_TEST(after_void.get() == "done");

    auto again = s.pool.submit([] { return 20; }).then(s.ex(), [](int x) { return x + 22; });
    BOOST_TEST(again.get() == 42);
    BOOST_TEST(!first.valid()); // consumed
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_failed_source_hands_its_exception_on_and_fn_never_runs, Setup, executor_setups) {
    Setup s;
    std::atomic<bool> ran{false};
    auto failing = s.pool.submit([]() -> int { throw std::runtime_error("source failed"); });
    auto next = std::move(failing).then(s.ex(), [&](int) {
        ran = true;
        return 1;
    });
    BOOST_CHECK_EXCEPTION(next.get(), std::runtime_error,
                          [](const std::runtime_error& e) { return std::string(e.what()) == "source failed"; });
    s.pool.shutdown();
    BOOST_TEST(s.pool.await_termination(scaled(30s)));
    BOOST_TEST(!ran.load());
}

BOOST_AUTO_TEST_CASE(a_failed_source_is_answered_without_the_executor, *utf::timeout(60)) {
    // The continuation's pool is shut down: were fn handed to it, the
    // answer would be a rejection, not the source's exception.
    crew::fixed_pool source_pool(1);
    crew::fixed_pool shut(1);
    shut.shutdown();
    auto failing = source_pool.submit([]() -> int { throw std::logic_error("first"); });
    auto next = std::move(failing).then(shut, [](int x) { return x; });
    BOOST_CHECK_THROW(next.get(), std::logic_error);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_whole_future_continuation_runs_on_failure_and_sees_it, Setup, executor_setups) {
    Setup s;
    auto failing = s.pool.submit([]() -> int { throw std::runtime_error("boom"); });
    auto handled = std::move(failing).then(s.ex(), [](crew::future<int> f) {
        try {
            return f.get();
        } catch (const std::runtime_error&) {
            return -1;
        }
    });
    BOOST_TEST(handled.get() == -1);
}

BOOST_AUTO_TEST_CASE(a_cancelled_source_gives_cancellation_error_and_fn_never_runs, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate held;
    occupy(pool, held, 1);
    std::atomic<bool> ran{false};
    auto queued = pool.submit([] { return 1; });
    BOOST_TEST(queued.cancel());
    auto next = std::move(queued).then(pool, [&](int x) {
        ran = true;
        return x;
    });
    BOOST_CHECK_THROW(next.get(), crew::cancellation_error);
    held.open();
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(30s)));
    BOOST_TEST(!ran.load());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(an_exception_from_fn_fails_the_continuation, Setup, executor_setups) {
    Setup s;
    auto next = s.pool.submit([] { return 1; }).then(s.ex(), [](int) -> int { throw std::out_of_range("fn"); });
    BOOST_CHECK_THROW(next.get(), std::out_of_range);
}

BOOST_AUTO_TEST_CASE(then_does_not_block_while_the_source_runs, *utf::timeout(60)) {
    // One worker, held by the source: a then() that waited for it would
    // never return.
    crew::fixed_pool pool(1);
    gate release;
    auto source = submit_held(pool, release, 5);
    auto next = std::move(source).then(pool, [](int x) { return x * 3; });
    BOOST_TEST(!next.is_done());
    release.open();
    BOOST_TEST(next.get() == 15);
}

BOOST_AUTO_TEST_CASE(a_continuation_after_a_done_source_is_handed_off_at_once, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    auto source = pool.submit([] { return 2; });
    source.wait();
    BOOST_TEST(std::move(source).then(pool, [](int x) { return x + 1; }).get() == 3);
}

BOOST_AUTO_TEST_CASE(a_continuation_the_pool_discards_reports_rejected_execution, *utf::timeout(60)) {
    crew::fixed_pool source_pool(1);
    discarding_pool shut(1);
    shut.shutdown();
    auto next = source_pool.submit([] { return 1; }).then(shut, [](int x) { return x; });
    BOOST_CHECK_THROW(next.get(), crew::rejected_execution_error);
    auto via_handle = source_pool.submit([] { return 1; }).then(crew::any_executor(shut), [](int x) { return x; });
    BOOST_CHECK_THROW(via_handle.get(), crew::rejected_execution_error);
}

BOOST_AUTO_TEST_CASE(a_continuation_an_abort_policy_refuses_reports_rejected_execution, *utf::timeout(60)) {
    // abort_policy throws out of execute, which destroys the task unrun:
    // the future must say "rejected", not "cancelled", and nothing throws
    // into the completing worker.
    crew::fixed_pool source_pool(1);
    crew::fixed_pool shut(1);
    shut.shutdown();
    auto next = source_pool.submit([] { return 1; }).then(shut, [](int x) { return x; });
    BOOST_CHECK_THROW(next.get(), crew::rejected_execution_error);
    BOOST_TEST(!next.is_cancelled());
    auto full = crew::basic_executor<crew::bounded_queue>(one_worker_one_slot);
    gate held;
    occupy(full, held, 1);
    full.execute([] {}); // the queue's one slot
    auto refused = source_pool.submit([] { return 1; }).then(full, [](int x) { return x; });
    BOOST_CHECK_THROW(refused.get(), crew::rejected_execution_error);
    held.open();
}

BOOST_AUTO_TEST_CASE(a_caller_runs_continuation_runs_on_the_completing_thread, *utf::timeout(60)) {
    crew::fixed_pool source_pool(1);
    crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> full(one_worker_one_slot);
    gate held;
    occupy(full, held, 1);
    full.execute([] {}); // the queue's one slot: the next task runs on its submitter
    std::thread::id source_thread;
    std::latch registered(1); // the source completes only after then() registered (else then() hands off itself)
    auto next = source_pool
                    .submit([&] {
                        registered.wait();
                        source_thread = std::this_thread::get_id();
                        return 1;
                    })
                    .then(full, [](int) { return std::this_thread::get_id(); });
    registered.count_down();
    BOOST_TEST((next.get() == source_thread));
    held.open();
}

BOOST_AUTO_TEST_CASE(cancelling_the_continuation_before_fn_starts_keeps_fn_from_running, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate release;
    std::atomic<bool> ran{false};
    auto source = submit_held(pool, release, 7);
    auto next = std::move(source).then(pool, [&](int x) {
        ran = true;
        return x;
    });
    BOOST_TEST(next.cancel());
    release.open();
    BOOST_CHECK_THROW(next.get(), crew::cancellation_error);
    pool.shutdown(); // the source's worker hands the continuation off before it finishes the task
    BOOST_TEST(pool.await_termination(scaled(30s)));
    BOOST_TEST(!ran.load());
    BOOST_TEST(pool.completed_task_count() >= 1u);
}

BOOST_AUTO_TEST_CASE(cancelling_the_continuation_does_not_cancel_the_source, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate release;
    std::atomic<int> source_ran{0};
    auto source = pool.submit([&] {
        release.wait();
        return ++source_ran;
    });
    auto next = std::move(source).then(pool, [](crew::future<int> f) { return f.get(); });
    BOOST_TEST(next.cancel());
    release.open();
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(30s)));
    BOOST_TEST(source_ran.load() == 1);
}

BOOST_AUTO_TEST_CASE(a_long_chain_runs_every_link_once, *utf::timeout(120)) {
    crew::fixed_pool pool(2);
    const int links = 100'000;
    auto f = pool.submit([] { return 0; });
    for (int i = 0; i < links; ++i) f = std::move(f).then(pool, [](int x) { return x + 1; });
    BOOST_TEST(f.get() == links);
}

// Completions that cascade on one thread (a failure handed down a chain, a
// caller_runs continuation run inline by the thread that completed the
// last link, a dropped source cancelling every link) must not take stack
// per link: 100,000 links overflowed an 8 MB stack before hooks were
// trampolined (detail/future/future_state.hpp, run_hooks).
BOOST_AUTO_TEST_CASE(a_long_chain_failing_at_its_source_passes_the_failure_down_in_bounded_stack,
                     *utf::timeout(120)) {
    crew::fixed_pool pool(2);
    gate go;
    auto f = pool.submit([&]() -> int {
        go.wait();
        throw std::runtime_error("source");
    });
    for (int i = 0; i < 100'000; ++i) f = std::move(f).then(pool, [](int x) { return x + 1; });
    go.open();
    BOOST_CHECK_THROW(f.get(), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(a_long_chain_run_inline_by_caller_runs_takes_bounded_stack, *utf::timeout(120)) {
    crew::fixed_pool source_pool(1);
    crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> full(one_worker_one_slot);
    gate held;
    occupy(full, held, 1);
    full.execute([&] { held.wait(); }); // the queue's one slot: every link runs on its completer
    gate go;
    auto f = source_pool.submit([&] {
        go.wait();
        return 0;
    });
    for (int i = 0; i < 100'000; ++i) f = std::move(f).then(full, [](int x) { return x + 1; });
    go.open();
    BOOST_TEST(f.get() == 100'000);
    held.open();
}

BOOST_AUTO_TEST_CASE(a_long_chain_whose_source_is_dropped_unrun_is_cancelled_in_bounded_stack,
                     *utf::timeout(120)) {
    crew::fixed_pool pool(1);
    gate go;
    pool.execute([&] { go.wait(); });
    auto f = pool.submit([] { return 0; }); // queued behind the held worker
    for (int i = 0; i < 100'000; ++i) f = std::move(f).then(pool, [](int x) { return x + 1; });
    auto dropped = pool.shutdown_now(); // the source's task, unrun
    go.open();
    dropped.clear(); // cancels the source here, and with it every link
    BOOST_CHECK_THROW(f.get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(a_continuation_may_own_the_last_reference_to_its_pool, *utf::timeout(60)) {
    // The continuation's callable holds the pool: the pool dies when the
    // task does, on its own worker, after the continuation completed.
    auto pool = std::make_shared<crew::fixed_pool>(1);
    std::weak_ptr<crew::fixed_pool> watch = pool;
    auto source = pool->submit([] { return 1; });
    auto next = std::move(source).then(*pool, [p = pool](int x) { return x + 1; });
    pool.reset();
    BOOST_TEST(next.get() == 2);
    BOOST_TEST(eventually([&] { return watch.expired(); }));
}

BOOST_AUTO_TEST_CASE(then_needs_a_state, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    crew::future<int> empty;
    BOOST_CHECK_THROW(std::move(empty).then(pool, [](int x) { return x; }), std::future_error);
    auto read = pool.submit([] { return 1; });
    (void)read.get();
    BOOST_CHECK_THROW(std::move(read).then(pool, [](int x) { return x; }), std::future_error);
}

BOOST_AUTO_TEST_CASE(sources_completing_while_then_registers_are_never_lost, *utf::timeout(300)) {
    // The source completes on a worker while then() registers its hook:
    // the hook runs once, on one side or the other.
    crew::fixed_pool pool(2);
    const int rounds = std::max(200, static_cast<int>(2000 / time_factor()));
    for (int i = 0; i < rounds; ++i) {
        auto source = pool.submit([i] { return i; });
        auto next = std::move(source).then(pool, [](int x) { return x + 1; });
        BOOST_TEST_REQUIRE(next.get() == i + 1);
    }
}

BOOST_AUTO_TEST_SUITE_END()
