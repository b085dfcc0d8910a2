// submit, crew::future, cancellation, stop tokens, invoke_all/invoke_any,
// purge, and "no future ever hangs".
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <functional>
#include <latch>
#include <thread>
#include <future>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

bool is_ready(const auto& f) { return f.wait_for(0s) == std::future_status::ready; }

// invoke_any's result below: its first move on the thread that called
// invoke_any (inside get(), before the losers are cancelled) waits until
// `ready()` holds, so that the test decides what the losers have done by then.
struct held_result {
    int value;
    std::function<bool()> ready;
    std::thread::id caller;

    held_result(int v, std::function<bool()> r, std::thread::id c) : value(v), ready(std::move(r)), caller(c) {}
    held_result(held_result&& other) : value(other.value), ready(std::move(other.ready)), caller(other.caller) {
        if (ready && std::this_thread::get_id() == caller) {
            while (!ready()) std::this_thread::yield();
            ready = nullptr;
        }
    }
};

// For invoke_any: the winner returns a held_result; the loser waits until the
// winner's callable is destroyed (when invoke_any is told of it, so the
// loser is reported second), then throws.
struct contestant {
    bool wins;
    std::atomic<bool>* winner_gone;
    std::function<bool()> hold;
    std::thread::id caller = std::this_thread::get_id(); // made on the thread that calls invoke_any
    bool owner = true;

    contestant(bool w, std::atomic<bool>& gone, std::function<bool()> h)
        : wins(w), winner_gone(&gone), hold(std::move(h)) {}
    contestant(contestant&& other) noexcept
        : wins(other.wins), winner_gone(other.winner_gone), hold(std::move(other.hold)), caller(other.caller),
          owner(std::exchange(other.owner, false)) {}
    contestant& operator=(contestant&&) = delete;
    ~contestant() {
        if (owner && wins) winner_gone->store(true);
    }
    held_result operator()() const {
        if (wins) return held_result(7, hold, caller);
        while (!winner_gone->load()) std::this_thread::yield();
        throw std::out_of_range("a loser");
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(futures)

BOOST_AUTO_TEST_CASE(submit_returns_values_void_move_only_and_references, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    BOOST_TEST(pool.submit([] { return 42; }).get() == 42);
    bool ran = false;
    pool.submit([&] { ran = true; }).get();
    BOOST_TEST(ran);
    BOOST_TEST(*pool.submit([] { return std::make_unique<int>(7); }).get() == 7);
    static int shared_value = 3;
    int& ref = pool.submit([]() -> int& { return shared_value; }).get();
    BOOST_TEST(&ref == &shared_value);
    BOOST_TEST(pool.submit([](std::stop_token) { return 5; }).get() == 5);
}

BOOST_AUTO_TEST_CASE(get_rethrows_the_tasks_exception_as_is_and_only_once, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    auto f = pool.submit([]() -> int { throw custom_error(17); });
    try {
        f.get();
        BOOST_FAIL("get() should have thrown");
    } catch (const custom_error& e) {
        BOOST_TEST(e.code == 17);
    }
    BOOST_TEST(!f.valid());
    try {
        f.get();
        BOOST_FAIL("a second get() should have thrown");
    } catch (const std::future_error& e) {
        BOOST_TEST((e.code() == std::future_errc::future_already_retrieved));
    }
    try {
        crew::future<int>().wait();
        BOOST_FAIL("wait() without a state should have thrown");
    } catch (const std::future_error& e) {
        BOOST_TEST((e.code() == std::future_errc::no_state));
    }
}

// doc/futures.md, "After get()": the state outlives get(), as Java's Future does.
BOOST_AUTO_TEST_CASE(a_future_still_answers_after_get, *utf::timeout(60)) {
    gate blocked; // outlives the pool
    crew::fixed_pool pool(1);
    auto ok = pool.submit([] { return 1; });
    BOOST_TEST(ok.get() == 1);
    BOOST_TEST(!ok.valid());
    BOOST_TEST(ok.is_done());
    BOOST_TEST(!ok.is_cancelled());
    BOOST_TEST(!ok.cancel(true)); // already completed
    ok.wait();
    BOOST_TEST(is_ready(ok));
    BOOST_CHECK_THROW(ok.get(), std::future_error);

    auto failed = pool.submit([]() -> int { throw std::out_of_range("range"); });
    BOOST_CHECK_THROW(failed.get(), std::out_of_range);
    BOOST_TEST(failed.is_done());
    BOOST_TEST(!failed.is_cancelled());

    pool.execute([&] { blocked.wait(); });
    auto cancelled = pool.submit([] { return 2; });
    BOOST_TEST(cancelled.cancel());
    BOOST_CHECK_THROW(cancelled.get(), crew::cancellation_error);
    BOOST_TEST(cancelled.is_done());
    BOOST_TEST(cancelled.is_cancelled());
    blocked.open();

    crew::future<int> moved = std::move(cancelled); // moving keeps "already retrieved"
    BOOST_TEST(!moved.valid());
    BOOST_TEST(moved.is_cancelled());
    BOOST_CHECK_THROW(moved.get(), std::future_error);
}

// Java's timeout idiom: one thread waits in get(), another calls
// cancel(true) on a task that runs until its stop token is requested. Before
// the fix, get() released the future's reference and cancel() read the state
// after waking the waiter, so the stopped task's release could free the state
// under cancel(): TSan reported the race on its deletion, ASan (with a delay
// injected) a heap-use-after-free. Run in the tsan and asan presets too.
//   owner_is_waiter = false: the test thread owns the future and destroys it
//     after both threads joined.
//   owner_is_waiter = true: the waiter owns it, and destroys it as soon as
//     the canceller has joined (destroying nothing before).
static void race_cancel_with_get(bool owner_is_waiter) {
    crew::fixed_pool pool(2);
    for (int round = 0; round < 400; ++round) {
        auto f = pool.submit([round](std::stop_token stop) {
            while (!stop.stop_requested()) std::this_thread::yield();
            return round;
        });
        std::atomic<int> outcome{0}; // 1 value, 2 cancellation_error, 3 anything else
        std::atomic<bool> cancelled{false};
        std::latch cancel_done(1);
        auto wait_in_get = [&](crew::future<int>& mine) {
            try {
                (void)mine.get();
                outcome = 1;
            } catch (const crew::cancellation_error&) {
                outcome = 2;
            } catch (...) {
                outcome = 3;
            }
        };
        crew::future<int>* target = &f;
        std::thread waiter;
        if (owner_is_waiter) {
            std::latch handed_over(1);
            waiter = std::thread([&, mine = std::move(f)]() mutable {
                target = &mine;
                handed_over.count_down();
                wait_in_get(mine);
                cancel_done.wait(); // the canceller is out of cancel(): now `mine` may die
            });
            handed_over.wait();
        } else {
            waiter = std::thread([&] { wait_in_get(f); });
        }
        std::thread canceller([&] {
            cancelled = target->cancel(true);
            cancel_done.count_down();
        });
        canceller.join();
        waiter.join();
        BOOST_TEST_REQUIRE(cancelled.load()); // the task runs until stopped: only cancel ends it
        BOOST_TEST_REQUIRE(outcome.load() == 2);
        if (!owner_is_waiter) {
            BOOST_TEST_REQUIRE(f.is_done());
            BOOST_TEST_REQUIRE(f.is_cancelled());
        }
    }
    pool.wait_idle(); // every stopped task has returned
}

BOOST_AUTO_TEST_CASE(cancel_racing_get_never_touches_a_freed_state, *utf::timeout(300)) {
    race_cancel_with_get(false);
}

BOOST_AUTO_TEST_CASE(cancel_racing_get_with_the_waiter_owning_the_future, *utf::timeout(300)) {
    race_cancel_with_get(true);
}

// cancel(false) racing a task that completes on its own, with a waiter in
// get(): exactly one outcome wins, and get() reports that one.
BOOST_AUTO_TEST_CASE(cancel_racing_completion_and_get_agree_on_the_outcome, *utf::timeout(300)) {
    crew::fixed_pool pool(2);
    for (int round = 0; round < 400; ++round) {
        std::latch go(3);
        auto f = pool.submit([&go, round] {
            go.arrive_and_wait();
            return round;
        });
        std::atomic<int> got{-1}; // the value, or -2 for cancellation_error
        std::thread waiter([&] {
            go.arrive_and_wait();
            try {
                got = f.get();
            } catch (const crew::cancellation_error&) {
                got = -2;
            }
        });
        bool cancelled = false;
        std::thread canceller([&] {
            go.arrive_and_wait();
            cancelled = f.cancel(false);
        });
        canceller.join();
        waiter.join();
        BOOST_TEST_REQUIRE(got.load() == (cancelled ? -2 : round));
        BOOST_TEST_REQUIRE(f.is_cancelled() == cancelled);
        pool.wait_idle(); // the task may still be leaving `go`, which dies with this round
    }
}


BOOST_AUTO_TEST_CASE(wait_for_saturates_and_never_times_out_early, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate blocked;
    auto pending = submit_held(pool, blocked, 1);
    BOOST_TEST(!pending.is_done());
    BOOST_TEST((pending.wait_for(0s) == std::future_status::timeout));
    BOOST_TEST((pending.wait_for(-1h) == std::future_status::timeout));
    BOOST_TEST((pending.wait_for(std::chrono::nanoseconds::min()) == std::future_status::timeout));
    const auto start = clock::now();
    BOOST_TEST((pending.wait_for(20ms) == std::future_status::timeout));
    BOOST_TEST((clock::now() - start >= 20ms));

    std::thread opener([&] { blocked.open(); });
    BOOST_TEST((pending.wait_for(std::chrono::hours::max()) == std::future_status::ready));
    opener.join();
    BOOST_TEST(pending.is_done());
    // A finished future is ready even for zero and negative timeouts.
    BOOST_TEST((pending.wait_for(0s) == std::future_status::ready));
    BOOST_TEST((pending.wait_for(std::chrono::hours::min()) == std::future_status::ready));
    BOOST_TEST((pending.wait_until(clock::now() - 1h) == std::future_status::ready));
    BOOST_TEST(pending.get() == 1);
}

BOOST_AUTO_TEST_CASE(a_cancelled_queued_task_never_runs, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate blocked;
    pool.execute([&] { blocked.wait(); });
    run_counter ran;
    auto f = pool.submit([&] {
        ran.hit();
        return 1;
    });
    BOOST_TEST(f.cancel());
    BOOST_TEST(f.is_cancelled());
    BOOST_TEST(f.is_done());
    BOOST_TEST(!f.cancel()); // only once
    blocked.open();
    pool.wait_idle();
    BOOST_TEST(ran.count() == 0);
    BOOST_CHECK_THROW(f.get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(cancel_fails_once_the_task_has_completed, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    auto f = pool.submit([] { return 9; });
    f.wait();
    BOOST_TEST(!f.cancel(true));
    BOOST_TEST(!f.is_cancelled());
    BOOST_TEST(f.get() == 9);
}

BOOST_AUTO_TEST_CASE(cancelling_a_running_task_discards_its_result_and_may_interrupt_it, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    std::promise<void> started;
    std::promise<bool> stop_seen;
    auto interrupted = pool.submit([&](std::stop_token token) {
        started.set_value();
        const auto deadline = clock::now() + scaled(10s);
        while (!token.stop_requested() && clock::now() < deadline) std::this_thread::yield();
        stop_seen.set_value(token.stop_requested());
        return 1;
    });
    started.get_future().wait();
    BOOST_TEST(interrupted.cancel(true));
    BOOST_TEST(stop_seen.get_future().get());
    BOOST_CHECK_THROW(interrupted.get(), crew::cancellation_error);

    // cancel(false): the token is left alone, the result still discarded.
    gate finish;
    std::promise<void> started2;
    std::atomic<bool> stop_requested{true};
    auto left_running = pool.submit([&](std::stop_token token) {
        started2.set_value();
        finish.wait();
        stop_requested = token.stop_requested();
        return 2;
    });
    started2.get_future().wait();
    BOOST_TEST(left_running.cancel(false));
    finish.open();
    pool.wait_idle();
    BOOST_TEST(!stop_requested.load());
    BOOST_CHECK_THROW(left_running.get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(cancel_racing_start_and_completion_settles_exactly_once, *utf::timeout(120)) {
    crew::fixed_pool pool(2);
    const int n = std::max(200, static_cast<int>(3000 / time_factor()));
    for (int i = 0; i < n; ++i) {
        std::atomic<int> runs{0};
        auto f = pool.submit([&] {
            runs.fetch_add(1);
            return 5;
        });
        bool cancelled = false;
        std::thread canceller([&] { cancelled = f.cancel(i % 2 == 0); });
        canceller.join();
        BOOST_REQUIRE(f.wait_for(scaled(10s)) == std::future_status::ready);
        if (cancelled) {
            BOOST_REQUIRE(f.is_cancelled());
            BOOST_CHECK_THROW(f.get(), crew::cancellation_error);
        } else {
            BOOST_REQUIRE_EQUAL(f.get(), 5);
            BOOST_REQUIRE_EQUAL(runs.load(), 1);
        }
        pool.wait_idle();
        BOOST_REQUIRE(runs.load() <= 1);
    }
}

// The future's parking word: a waiter announces itself, reads the word,
// re-checks the status and sleeps unless the word moved; a completer sets the
// status, then moves the word if anyone announced. Every round races get()
// (or a long wait_for, which would report a time-out) against a completion
// on another thread, so a lost wake-up hangs here or fails the wait_for.
// Mutation (checked): the waiter reading the word after its re-check, with a
// yield between widening the window: 3 of 3 runs failed (a hang, caught by
// the time-out).
BOOST_AUTO_TEST_CASE(get_racing_completion_never_sleeps_through_it, *utf::timeout(120)) {
    const int rounds = static_cast<int>(20000 / time_factor());
    for (std::size_t threads : {1u, 2u}) {
        crew::fixed_pool pool(threads);
        for (int i = 0; i < rounds; ++i) {
            auto f = pool.submit([i] { return i; });
            if (i % 2 == 0) {
                BOOST_REQUIRE_EQUAL(f.get(), i);
            } else {
                BOOST_REQUIRE(f.wait_for(scaled(60s)) == std::future_status::ready);
                BOOST_REQUIRE_EQUAL(f.get(), i);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(many_threads_may_wait_and_cancel_concurrently, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate blocked;
    auto f = submit_held(pool, blocked, 3);
    std::atomic<int> woke{0}, successful_cancels{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] {
            f.wait();
            if (f.is_done()) woke.fetch_add(1);
        });
    for (int i = 0; i < 3; ++i)
        threads.emplace_back([&] {
            if (f.cancel()) successful_cancels.fetch_add(1);
        });
    for (auto& t : threads) t.join();
    blocked.open();
    BOOST_TEST(woke.load() == 4);
    BOOST_TEST(successful_cancels.load() == 1);
    BOOST_CHECK_THROW(f.get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(shutdown_now_stops_a_running_stop_token_task_promptly, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    std::promise<void> started;
    auto f = pool.submit([&](std::stop_token token) {
        started.set_value();
        while (!token.stop_requested()) std::this_thread::yield();
        return 8;
    });
    started.get_future().wait();
    pool.shutdown_now();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(f.get() == 8); // the task chose to return once asked to stop
}

BOOST_AUTO_TEST_CASE(futures_of_tasks_dropped_from_shutdown_now_report_cancellation, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate blocked;
    pool.execute([&] { blocked.wait(); });
    auto a = pool.submit([] { return 1; });
    auto b = pool.submit([] {});
    {
        auto unstarted = pool.shutdown_now();
        BOOST_TEST(unstarted.size() == 2u);
        BOOST_TEST(!a.is_done()); // still owned by the returned tasks
    } // destroyed unrun
    BOOST_TEST(a.is_cancelled());
    BOOST_CHECK_THROW(a.get(), crew::cancellation_error);
    BOOST_CHECK_THROW(b.get(), crew::cancellation_error);
    blocked.open();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

BOOST_AUTO_TEST_CASE(rejected_submissions_never_leave_a_future_hanging, *utf::timeout(60)) {
    using options = crew::pool_options;
    const options saturated{.core_pool_size = 1, .maximum_pool_size = 1, .queue_capacity = 1};
    gate blocked;

    crew::basic_executor<crew::bounded_queue, crew::discard_policy> discarding(saturated);
    discarding.execute([&] { blocked.wait(); });
    discarding.execute([] {});
    auto dropped = discarding.submit([] { return 1; });
    BOOST_CHECK_THROW(dropped.get(), crew::rejected_execution_error);

    crew::basic_executor<crew::bounded_queue, crew::discard_oldest_policy> oldest_dropping(saturated);
    oldest_dropping.execute([&] { blocked.wait(); });
    auto oldest = oldest_dropping.submit([] { return 1; });
    auto newest = oldest_dropping.submit([] { return 2; });
    BOOST_CHECK_THROW(oldest.get(), crew::rejected_execution_error);

    crew::basic_executor<crew::bounded_queue, crew::abort_policy> aborting(saturated);
    aborting.execute([&] { blocked.wait(); });
    aborting.execute([] {});
    BOOST_CHECK_THROW(aborting.submit([] { return 1; }), crew::rejected_execution_error);

    crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> caller_running(saturated);
    caller_running.execute([&] { blocked.wait(); });
    caller_running.execute([] {});
    auto here = caller_running.submit([]() -> int { throw custom_error(3); }); // does not throw from submit
    BOOST_TEST(is_ready(here));
    BOOST_CHECK_THROW(here.get(), custom_error);

    blocked.open();
    BOOST_TEST(newest.get() == 2);
}

BOOST_AUTO_TEST_CASE(after_execute_sees_a_submit_tasks_exception_which_get_still_rethrows, *utf::timeout(60)) {
    std::atomic<int> seen{0};
    crew::fixed_pool pool(crew::pool_options{
        .core_pool_size = 1, .after_execute = [&](std::exception_ptr e) {
            if (e) seen.fetch_add(1);
        }});
    auto f = pool.submit([]() -> int { throw custom_error(1); });
    BOOST_CHECK_THROW(f.get(), custom_error);
    pool.wait_idle();
    BOOST_TEST(seen.load() == 1);
}

BOOST_AUTO_TEST_CASE(a_throwing_before_execute_completes_the_future_with_that_exception, *utf::timeout(60)) {
    crew::fixed_pool pool(crew::pool_options{
        .core_pool_size = 1, .before_execute = [] { throw custom_error(99); }});
    run_counter ran;
    auto f = pool.submit([&] { ran.hit(); });
    try {
        f.get();
        BOOST_FAIL("get() should have thrown");
    } catch (const custom_error& e) {
        BOOST_TEST(e.code == 99);
    }
    BOOST_TEST(ran.count() == 0);
}

BOOST_AUTO_TEST_CASE(purge_drops_cancelled_queued_tasks_and_their_count, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate blocked;
    pool.execute([&] { blocked.wait(); });
    std::vector<crew::future<int>> futures;
    for (int i = 0; i < 6; ++i) futures.push_back(pool.submit([i] { return i; }));
    for (int i = 0; i < 6; i += 2) futures[i].cancel();
    BOOST_TEST(pool.queue_size() == 6u);
    BOOST_TEST(pool.task_count() == 7u);
    BOOST_TEST(pool.purge() == 3u);
    BOOST_TEST(pool.queue_size() == 3u);
    BOOST_TEST(pool.task_count() == 4u);
    blocked.open();
    for (int i = 1; i < 6; i += 2) BOOST_TEST(futures[i].get() == i);
    BOOST_CHECK_THROW(futures[0].get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(invoke_all_returns_every_future_done_and_in_order, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    std::vector<std::function<int()>> tasks;
    for (int i = 0; i < 10; ++i) tasks.push_back([i] { return i * i; });
    auto futures = pool.invoke_all(tasks);
    BOOST_REQUIRE(futures.size() == 10u);
    for (auto& f : futures) BOOST_TEST(f.is_done());
    for (int i = 0; i < 10; ++i) BOOST_TEST(futures[i].get() == i * i);
    // Java's invokeAll: an empty collection gives an empty list.
    BOOST_TEST(pool.invoke_all(std::vector<std::function<int()>>{}).empty());
    BOOST_TEST(pool.invoke_all(std::vector<std::function<void(std::stop_token)>>{}).empty());
    BOOST_TEST(pool.task_count() == 10u); // nothing was submitted for them
}

BOOST_AUTO_TEST_CASE(invoke_all_cancels_what_it_submitted_when_a_submission_throws, *utf::timeout(60)) {
    crew::basic_executor<crew::bounded_queue> pool(
        crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 1, .queue_capacity = 2});
    gate blocked;
    pool.execute([&] { blocked.wait(); });
    run_counter ran;
    std::vector<std::function<void()>> tasks(4, [&] { ran.hit(); });
    BOOST_CHECK_THROW(pool.invoke_all(tasks), crew::rejected_execution_error);
    blocked.open();
    pool.wait_idle();
    BOOST_TEST(ran.count() == 0); // the two that were queued were cancelled
}

BOOST_AUTO_TEST_CASE(invoke_any_returns_the_first_success_and_cancels_the_rest, *utf::timeout(60)) {
    crew::fixed_pool pool(3);
    std::atomic<int> stopped{0};
    std::vector<std::function<int(std::stop_token)>> tasks;
    tasks.push_back([](std::stop_token) -> int { throw custom_error(1); });
    for (int i = 0; i < 2; ++i)
        tasks.push_back([&](std::stop_token token) {
            while (!token.stop_requested()) std::this_thread::yield();
            stopped.fetch_add(1);
            return -1;
        });
    tasks.push_back([](std::stop_token) { return 7; });
    BOOST_TEST(pool.invoke_any(tasks) == 7);
    pool.wait_idle(); // the spinning ones were interrupted, or never started
    BOOST_TEST(stopped.load() <= 2);
    BOOST_CHECK_THROW(pool.invoke_any(std::vector<std::function<int()>>{}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(invoke_any_throws_the_last_failure_when_none_succeeds, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    std::vector<std::function<int()>> failing(3, []() -> int { throw custom_error(5); });
    BOOST_CHECK_THROW(pool.invoke_any(failing), custom_error);

    // Tasks a policy discards count as failures: no hang.
    crew::basic_executor<crew::synchronous_queue, crew::discard_policy> none_taken(
        crew::pool_options{.core_pool_size = 0, .maximum_pool_size = 1});
    gate blocked;
    none_taken.execute([&] { blocked.wait(); });
    std::vector<std::function<int()>> tasks(2, [] { return 1; });
    BOOST_CHECK_THROW(none_taken.invoke_any(tasks), crew::rejected_execution_error);
    blocked.open();
}

BOOST_AUTO_TEST_CASE(submit_keeps_with_priority, *utf::timeout(60)) {
    crew::basic_executor<crew::priority_queue> pool(1);
    gate blocked;
    pool.execute([&] { blocked.wait(); });
    std::vector<int> order;
    std::mutex m;
    auto note = [&](int i) {
        std::lock_guard lock(m);
        order.push_back(i);
    };
    auto low = pool.submit(crew::with_priority(1, [&] { note(1); }));
    auto high = pool.submit(crew::with_priority(9, [&] { note(9); }));
    blocked.open();
    low.get();
    high.get();
    BOOST_TEST((order == std::vector<int>{9, 1}));
}

// ---- an exception that reaches no one is reported ---------------------------

// The rule for execute() (standard error, with the thread's name, when no
// after_execute hook is set) holds for a submit task whose future is gone.
BOOST_AUTO_TEST_CASE(a_failure_whose_future_was_dropped_is_written_to_stderr, *utf::timeout(60)) {
    stderr_capture captured;
    {
        gate blocked; // outlives the pool
        crew::fixed_pool pool(1);
        pool.execute([&] { blocked.wait(); });
        (void)pool.submit([]() -> int { throw std::out_of_range("nobody reads this"); });
        blocked.open(); // the future is gone before the task runs
        pool.wait_idle();
    }
    const std::string text = captured.text();
    BOOST_TEST(text.find("nobody reads this") != std::string::npos, text);
    BOOST_TEST(text.find("dropped without get()") != std::string::npos, text);
    BOOST_TEST(text.find("crew-") != std::string::npos, text); // the worker's name
}

// Waited for but never read: reported when the future dies, not before.
BOOST_AUTO_TEST_CASE(a_failure_never_read_is_written_to_stderr_when_the_future_dies, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    crew::future<int> f;
    {
        stderr_capture while_held;
        f = pool.submit([]() -> int { throw std::out_of_range("waited for, never read"); });
        f.wait();
        pool.wait_idle(); // the task's half is gone: the future holds the last reference
        const std::string text = while_held.text();
        BOOST_TEST(text.empty(), text); // get() could still read it
    }
    stderr_capture at_drop;
    f = crew::future<int>();
    const std::string text = at_drop.text();
    BOOST_TEST(text.find("waited for, never read") != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(a_failure_read_by_get_or_shown_to_a_hook_is_not_reported_again, *utf::timeout(60)) {
    std::atomic<int> hook_saw{0};
    stderr_capture captured;
    {
        crew::fixed_pool plain(1);
        auto read = plain.submit([]() -> int { throw std::out_of_range("read by get"); });
        BOOST_CHECK_THROW(read.get(), std::out_of_range);

        gate blocked; // outlives the pool
        crew::fixed_pool hooked(crew::pool_options{
            .core_pool_size = 1,
            .after_execute = [&](std::exception_ptr e) {
                if (e) hook_saw.fetch_add(1);
            }});
        hooked.execute([&] { blocked.wait(); });
        (void)hooked.submit([]() -> int { throw std::out_of_range("shown to the hook"); });
        blocked.open();
        hooked.wait_idle();

        // invoke_any's losers are ignored on purpose. Here the loser fails,
        // unread, while invoke_any is held between reading the winner and
        // cancelling the rest (until both tasks completed).
        crew::fixed_pool two(2);
        std::atomic<bool> winner_reported{false};
        auto both_completed = [&two] { return two.completed_task_count() == 2; };
        std::vector<contestant> race;
        race.emplace_back(true, winner_reported, both_completed);
        race.emplace_back(false, winner_reported, both_completed);
        BOOST_TEST(two.invoke_any(std::move(race)).value == 7);
        two.wait_idle();

        // A discarded task's rejection is the policy's outcome, not a lost error.
        gate busy; // outlives the pool
        crew::basic_executor<crew::synchronous_queue, crew::discard_policy> discarding(
            crew::pool_options{.core_pool_size = 0, .maximum_pool_size = 1});
        discarding.execute([&] { busy.wait(); });
        (void)discarding.submit([] { return 1; });
        busy.open();
    }
    BOOST_TEST(hook_saw.load() == 1);
    const std::string text = captured.text();
    BOOST_TEST(text.empty(), text);
}

// A periodic task that throws, whose future was dropped, on a pool with no
// after_execute hook: its schedule ends, and the exception is reported.
BOOST_AUTO_TEST_CASE(a_periodic_failure_whose_future_was_dropped_is_written_to_stderr, *utf::timeout(60)) {
    stderr_capture captured;
    std::atomic<int> runs{0};
    {
        crew::scheduled_pool pool(1);
        (void)pool.schedule_at_fixed_rate(0ms, 1ms, [&] {
            if (runs.fetch_add(1) == 2) throw std::out_of_range("periodic, third run");
        });
        // Each run queues the next before it counts as completed, so the pool
        // is idle only once the failing run ended the schedule.
        pool.wait_idle();
    }
    BOOST_TEST(runs.load() == 3);
    const std::string text = captured.text();
    BOOST_TEST(text.find("periodic, third run") != std::string::npos, text);
    BOOST_TEST(text.find("crew-") != std::string::npos, text);
}

BOOST_AUTO_TEST_SUITE_END()
