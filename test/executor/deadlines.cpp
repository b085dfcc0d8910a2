// Deadlines, cancellation through chains, and the rest of CompletableFuture
// (doc/composition.md, "Deadlines and cancellation through chains"): crew::promise, ready futures,
// flattening then, within / on_timeout, cancel(true) flowing up through
// then, within, when_all, when_any and when_all_succeed, cancel_rest,
// submit with arguments, completion_queue::poll_until; and the two
// composition bugs: a then() on a done future sixteen hooks deep, and a
// then link that reported errors its source would not have reported.
#include <crew/coroutine.hpp>
#include <crew/crew.hpp>
#include <crew/detail/timer/deadline_timer.hpp>

#include "composition_support.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <functional>
#include <future>
#include <latch>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace utf = boost::unit_test;
using namespace crew_test;
using namespace std::chrono_literals;

namespace {

// Runs each task at once, on the calling thread: what a caller_runs_policy
// does with a full pool, without one.
struct inline_executor {
    void execute(crew::task t) const { t(); }
};

template <class F>
bool throws_future_error(F&& f, std::future_errc code) {
    try {
        f();
    } catch (const std::future_error& e) {
        return e.code() == std::make_error_code(code);
    }
    return false;
}

} // namespace

BOOST_AUTO_TEST_SUITE(deadlines)

// ---- promise and ready futures --------------------------------------------

BOOST_AUTO_TEST_CASE(a_promise_completes_its_future_once, *utf::timeout(60)) {
    crew::promise<std::string> p;
    crew::future<std::string> f = p.get_future();
    BOOST_TEST(throws_future_error([&] { (void)p.get_future(); }, std::future_errc::future_already_retrieved));
    BOOST_TEST(!f.is_done());
    p.set_value("hello");
    BOOST_TEST(throws_future_error([&] { p.set_value("again"); }, std::future_errc::promise_already_satisfied));
    BOOST_TEST(throws_future_error([&] { p.set_exception(std::make_exception_ptr(std::runtime_error("x"))); },
                                   std::future_errc::promise_already_satisfied));
    BOOST_TEST(f.get() == "hello");

    crew::promise<void> v;
    crew::future<void> fv = v.get_future();
    v.set_exception(std::make_exception_ptr(std::logic_error("failed")));
    BOOST_CHECK_THROW(fv.get(), std::logic_error);
}

BOOST_AUTO_TEST_CASE(a_promise_destroyed_unset_breaks_its_future, *utf::timeout(60)) {
    crew::future<int> f;
    {
        crew::promise<int> p;
        f = p.get_future();
    }
    BOOST_TEST(f.is_done());
    BOOST_CHECK_THROW(f.get(), crew::broken_promise);
    { crew::promise<int> never_asked; } // no future made: nothing leaks (ASan), nothing throws
    crew::promise<int> moved_from;
    crew::promise<int> taker = std::move(moved_from);
    BOOST_TEST(throws_future_error([&] { (void)moved_from.get_future(); }, std::future_errc::no_state));
}

BOOST_AUTO_TEST_CASE(a_cancelled_promise_future_drops_the_value_and_tells_the_producer, *utf::timeout(60)) {
    crew::promise<int> p;
    crew::future<int> f = p.get_future();
    BOOST_TEST(!p.is_cancelled());
    BOOST_TEST(f.cancel());
    BOOST_TEST(p.is_cancelled());
    p.set_value(1); // dropped, no error
    BOOST_CHECK_THROW(f.get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(a_promise_future_composes_as_any_future, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    crew::promise<int> a;
    crew::promise<int> b;
    auto sum = crew::when_all(a.get_future(), b.get_future()).then(pool, [](std::tuple<crew::future<int>, crew::future<int>> both) {
        return std::get<0>(both).get() + std::get<1>(both).get();
    });
    std::thread producer([&] { a.set_value(40); });
    b.set_value(2);
    producer.join();
    BOOST_TEST(sum.get() == 42);
}

namespace {
crew::coroutine<int> awaits(crew::future<int> f) {
    co_return 1 + co_await f;
}
} // namespace

BOOST_AUTO_TEST_CASE(a_promise_future_is_awaitable_and_within_too, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    crew::promise<int> p;
    auto result = crew::spawn(pool, awaits(p.get_future()));
    p.set_value(41);
    BOOST_TEST(result.get() == 42);
    crew::promise<int> never;
    auto timed = crew::spawn(pool, awaits(never.get_future().within(10ms)));
    BOOST_CHECK_THROW(timed.get(), crew::timeout_error);
    BOOST_TEST(never.is_cancelled());
}

BOOST_AUTO_TEST_CASE(ready_and_exceptional_futures_are_done_at_once, *utf::timeout(60)) {
    crew::future<int> r = crew::make_ready_future(7);
    BOOST_TEST(r.is_done());
    BOOST_TEST(r.get() == 7);
    crew::future<void> v = crew::make_ready_future();
    BOOST_TEST(v.is_done());
    v.get();
    auto e = crew::make_exceptional_future<std::string>(std::make_exception_ptr(std::out_of_range("no")));
    BOOST_TEST(e.is_done());
    BOOST_CHECK_THROW(e.get(), std::out_of_range);
    auto moved = crew::make_ready_future(std::make_unique<int>(3));
    BOOST_TEST(*moved.get() == 3);
}

// ---- then, flattening ------------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_then_returning_a_future_is_flattened, Setup, executor_setups) {
    Setup s;
    auto outer = s.pool.submit([] { return 20; }).then(s.ex(), [&](int x) {
        return s.pool.submit([x] { return x + 22; });
    });
    static_assert(std::is_same_v<decltype(outer), crew::future<int>>);
    BOOST_TEST(outer.get() == 42);

    auto failing = crew::make_ready_future(1).then(s.ex(), [](int) {
        return crew::make_exceptional_future<int>(std::make_exception_ptr(std::runtime_error("inner")));
    });
    BOOST_CHECK_THROW(failing.get(), std::runtime_error);

    auto empty = crew::make_ready_future(1).then(s.ex(), [](int) { return crew::future<int>{}; });
    BOOST_TEST(throws_future_error([&] { empty.get(); }, std::future_errc::no_state));

    auto void_inner = crew::make_ready_future().then(s.ex(), [] { return crew::make_ready_future(); });
    static_assert(std::is_same_v<decltype(void_inner), crew::future<void>>);
    void_inner.get();
}

BOOST_AUTO_TEST_CASE(cancelling_a_flattened_then_cancels_its_inner_future, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    crew::promise<int> inner;
    std::latch handed(1);
    auto outer = crew::make_ready_future(1).then(pool, [&](int) {
        auto f = inner.get_future();
        handed.count_down();
        return f;
    });
    handed.wait();
    // Before or after the outer state took the inner future: either way the
    // cancellation reaches it (relay_from looks at the flag once it holds it).
    BOOST_TEST(outer.cancel(true));
    BOOST_TEST(eventually([&] { return inner.is_cancelled(); }));
    BOOST_CHECK_THROW(outer.get(), crew::cancellation_error);
}

// ---- cancellation flows up --------------------------------------------------

BOOST_AUTO_TEST_CASE(cancel_true_on_a_then_cancels_its_source_and_cancel_false_does_not, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    crew::promise<int> up;
    auto down = up.get_future().then(pool, [](int x) { return x; });
    BOOST_TEST(down.cancel(false));
    BOOST_TEST(!up.is_cancelled());

    crew::promise<int> up2;
    auto chain = up2.get_future().then(pool, [](int x) { return x; }).then(pool, [](int x) { return x + 1; });
    BOOST_TEST(chain.cancel(true));
    BOOST_TEST(up2.is_cancelled()); // through two links, before cancel() returned
}

BOOST_AUTO_TEST_CASE(cancelling_the_end_of_a_long_chain_takes_bounded_stack, *utf::timeout(120)) {
    crew::fixed_pool pool(1);
    crew::promise<int> up;
    crew::future<int> chain = up.get_future();
    for (int i = 0; i < 100'000; ++i) chain = std::move(chain).then(pool, [](int x) { return x + 1; });
    BOOST_TEST(chain.cancel(true));
    BOOST_TEST(up.is_cancelled());
    BOOST_CHECK_THROW(chain.get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(a_completed_link_keeps_no_upstream_alive, *utf::timeout(120)) {
    // Each link drops its upstream once that is done: a long chain that
    // completes frees as it goes, and destroying it takes no recursion.
    crew::fixed_pool pool(1);
    crew::promise<int> up;
    crew::future<int> chain = up.get_future();
    for (int i = 0; i < 100'000; ++i) chain = std::move(chain).then(pool, [](int x) { return x + 1; });
    up.set_value(0);
    BOOST_TEST(chain.get() == 100'000);
}

BOOST_AUTO_TEST_CASE(cancel_true_on_aggregates_cancels_their_inputs, *utf::timeout(60)) {
    {
        crew::promise<int> a, b;
        auto all = crew::when_all(a.get_future(), b.get_future());
        BOOST_TEST(all.cancel(true));
        BOOST_TEST((a.is_cancelled() && b.is_cancelled()));
    }
    {
        crew::promise<int> a, b;
        std::vector<crew::future<int>> v;
        v.push_back(a.get_future());
        v.push_back(b.get_future());
        auto any = crew::when_any(std::move(v));
        BOOST_TEST(any.cancel(true));
        BOOST_TEST((a.is_cancelled() && b.is_cancelled()));
    }
    {
        crew::promise<int> a, b;
        auto all = crew::when_all_succeed(a.get_future(), b.get_future());
        BOOST_TEST(all.cancel(false)); // only the aggregate
        BOOST_TEST(!a.is_cancelled());
        crew::promise<int> c;
        std::vector<crew::future<int>> v;
        v.push_back(c.get_future());
        auto range = crew::when_all_succeed(std::move(v));
        BOOST_TEST(range.cancel(true));
        BOOST_TEST(c.is_cancelled());
    }
}

BOOST_AUTO_TEST_CASE(a_cancelled_chain_interrupts_the_running_source, *utf::timeout(60)) {
    // cancel(true) reaches a running task's stop token through the chain.
    crew::fixed_pool pool(1);
    std::latch started(1);
    auto source = pool.submit([&](std::stop_token stop) {
        started.count_down();
        std::mutex m;
        std::condition_variable_any stopped;
        std::unique_lock lock(m);
        stopped.wait(lock, stop, [] { return false; }); // until stop is requested
        return 1;
    });
    auto end = std::move(source).then(pool, [](int x) { return x; }).within(1h);
    started.wait();
    BOOST_TEST(end.cancel(true));
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(30s))); // the task saw its stop token
}

// ---- within and on_timeout ----------------------------------------------------

BOOST_AUTO_TEST_CASE(within_fails_with_timeout_error_and_cancels_the_source, *utf::timeout(60)) {
    crew::promise<int> p;
    const auto start = std::chrono::steady_clock::now();
    auto d = p.get_future().within(50ms);
    BOOST_CHECK_THROW(d.get(), crew::timeout_error);
    BOOST_TEST((std::chrono::steady_clock::now() - start >= 50ms)); // never early
    BOOST_TEST(p.is_cancelled());
    p.set_value(1); // dropped
}

BOOST_AUTO_TEST_CASE(within_met_in_time_passes_the_outcome_on_and_leaves_no_timer, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    auto& timer = crew::detail::deadline_timer::instance();
    const std::size_t before = timer.pending();
    auto d = pool.submit([] { return 5; }).within(1h);
    BOOST_TEST(d.get() == 5);
    BOOST_TEST(eventually([&] { return timer.pending() == before; })); // removed, not left to fire in an hour

    auto failing = pool.submit([]() -> int { throw std::runtime_error("own"); }).within(1h);
    BOOST_CHECK_THROW(failing.get(), std::runtime_error);
    auto ready = crew::make_ready_future(std::string("now")).within(1h);
    BOOST_TEST(ready.get() == "now");
    auto forever = crew::make_ready_future(1).within(std::chrono::nanoseconds::max()); // arms nothing
    BOOST_TEST(forever.get() == 1);
    crew::promise<void> cancelled;
    auto f = cancelled.get_future();
    f.cancel();
    BOOST_CHECK_THROW(std::move(f).within(1h).get(), crew::cancellation_error);
    BOOST_TEST(eventually([&] { return timer.pending() == before; }));
}

BOOST_AUTO_TEST_CASE(deadlines_met_in_time_wake_no_thread, *utf::timeout(60)) {
    // The thread sleeps until a first deadline; that one is met (removed,
    // which wakes nobody), and the heap is empty. Deadlines due later than
    // the time the thread sleeps until, each met in time, never notify it,
    // however the threads are scheduled. ("Notify when the new deadline is
    // the earliest" notified every one of them: the heap was empty.)
    auto& timer = crew::detail::deadline_timer::instance();
    crew::promise<int> first;
    auto held = first.get_future().within(1h);
    BOOST_TEST(eventually([&] {
        const auto until = timer.sleeping_until();
        return until != crew::detail::clock::time_point::max() && until != crew::detail::clock::time_point::min() &&
               until > crew::detail::clock::now() + 30min;
    }));
    first.set_value(0);
    BOOST_TEST(held.get() == 0);
    const std::size_t before = timer.notifies();
    for (int i = 0; i < 1000; ++i) {
        crew::promise<int> p;
        auto d = p.get_future().within(2h);
        p.set_value(i);
        BOOST_TEST_REQUIRE(d.get() == i);
    }
    BOOST_TEST(timer.notifies() - before == 0u);
    BOOST_TEST(timer.pending() == 0u);
}

BOOST_AUTO_TEST_CASE(on_timeout_completes_with_the_fallback, *utf::timeout(60)) {
    crew::promise<int> p;
    auto v = p.get_future().on_timeout(20ms, 7);
    BOOST_TEST(v.get() == 7);
    BOOST_TEST(p.is_cancelled());
    crew::promise<void> pv;
    auto vv = pv.get_future().on_timeout(20ms);
    vv.get();
    auto in_time = crew::make_ready_future(1).on_timeout(1h, 2);
    BOOST_TEST(in_time.get() == 1);
}

BOOST_AUTO_TEST_CASE(within_on_a_scheduled_pool_of_the_users, *utf::timeout(60)) {
    crew::scheduled_pool timers(1);
    crew::promise<int> p;
    auto d = p.get_future().within(30ms, timers);
    BOOST_CHECK_THROW(d.get(), crew::timeout_error);
    BOOST_TEST(p.is_cancelled());

    timers.set_remove_on_cancel(true);
    auto met = crew::make_ready_future(3).within(1h, timers);
    BOOST_TEST(met.get() == 3);
    BOOST_TEST(eventually([&] { return timers.queue_size() == 0; })); // the deadline task was cancelled

    crew::scheduled_pool shut(1);
    shut.shutdown();
    crew::promise<int> kept;
    crew::future<int> f = kept.get_future();
    BOOST_CHECK_THROW((void)std::move(f).within(1h, shut), crew::rejected_execution_error);
    BOOST_TEST(f.valid()); // a refused deadline leaves the future with its caller
    kept.set_value(9);
    BOOST_TEST(f.get() == 9);
}

BOOST_AUTO_TEST_CASE(many_deadlines_some_met_some_fired, *utf::timeout(60)) {
    // Twenty deadlines at once: the even ones (an hour) are met, the odd
    // ones (5 to 95 ms, in no order) fire; each gets its own outcome.
    std::vector<crew::promise<int>> ps(20);
    std::vector<crew::future<int>> ds;
    for (int i = 0; i < 20; ++i) {
        const auto timeout = i % 2 == 0 ? std::chrono::milliseconds(1h) : std::chrono::milliseconds(5 * (20 - i));
        ds.push_back(ps[static_cast<std::size_t>(i)].get_future().within(timeout));
    }
    for (int i = 0; i < 20; i += 2) ps[static_cast<std::size_t>(i)].set_value(i);
    for (int i = 0; i < 20; ++i) {
        if (i % 2 == 0) BOOST_TEST(ds[static_cast<std::size_t>(i)].get() == i);
        else BOOST_CHECK_THROW(ds[static_cast<std::size_t>(i)].get(), crew::timeout_error);
    }
}

BOOST_AUTO_TEST_CASE(a_relay_deferred_deep_inside_hooks_survives_a_cancel, *utf::timeout(60)) {
    // Found by review: thirty withins on one promise, completed from inside
    // a hook, so that the relays past sixteen are deferred; a cancel(true)
    // of the end before they run takes the links' references to their
    // sources. Each deferred relay holds its own (ASan saw a read of a
    // freed source here).
    crew::promise<int> trigger;
    crew::promise<int> first;
    crew::future<int> last = first.get_future();
    for (int i = 0; i < 30; ++i) last = std::move(last).within(1h);
    bool cancelled = false;
    auto outer = trigger.get_future().then(inline_executor{}, [&](int) {
        first.set_value(1);
        cancelled = last.cancel(true);
    });
    trigger.set_value(0);
    outer.get();
    BOOST_TEST(cancelled);
    BOOST_CHECK_THROW(last.get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(the_timer_thread_never_reads_a_removed_deadline, *utf::timeout(60)) {
    // Found by review: the timer thread slept until a node's due time read
    // through the node, which a deadline met in time removes and frees;
    // the next, sooner deadline woke it onto freed memory (ASan).
    {
        crew::promise<int> p;
        auto d = p.get_future().within(1h);
        auto& timer = crew::detail::deadline_timer::instance();
        BOOST_TEST(eventually([&] { return timer.pending() >= 1u; }));
        p.set_value(1);
        BOOST_TEST(d.get() == 1);
    }
    crew::promise<int> q;
    auto e = q.get_future().within(1ms); // sooner: wakes the thread
    BOOST_CHECK_THROW(e.get(), crew::timeout_error);
}

BOOST_AUTO_TEST_CASE(a_deadline_whose_timer_pool_drops_it_still_comes, *utf::timeout(60)) {
    // Found by review: a user's scheduled pool that drops the deadline's
    // task unrun (shut down without running delayed tasks) left the future
    // waiting for its source for ever. The deadline moves to the
    // process-wide timer.
    crew::pool_options options;
    options.core_pool_size = 1;
    options.execute_delayed_after_shutdown = false;
    crew::scheduled_pool timers(options);
    crew::promise<int> p;
    const auto start = std::chrono::steady_clock::now();
    auto d = p.get_future().within(50ms, timers);
    timers.shutdown();
    BOOST_TEST(timers.await_termination(scaled(30s)));
    BOOST_CHECK_THROW(d.get(), crew::timeout_error);
    BOOST_TEST((std::chrono::steady_clock::now() - start >= 50ms)); // not early either
    BOOST_TEST(p.is_cancelled());

    crew::promise<int> in_time;
    crew::scheduled_pool timers2(options);
    auto met = in_time.get_future().within(1h, timers2);
    timers2.shutdown(); // the deadline moves; the source then completes first
    in_time.set_value(4);
    BOOST_TEST(met.get() == 4);
    BOOST_TEST(eventually([] { return crew::detail::deadline_timer::instance().pending() == 0u; }));
}

BOOST_AUTO_TEST_CASE(a_flattened_inner_future_already_read_fails_the_result, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    auto outer = crew::make_ready_future(1).then(pool, [](int x) {
        auto f = crew::make_ready_future(x);
        (void)f.get(); // read: the state is there, its result is not
        return f;
    });
    BOOST_TEST(throws_future_error([&] { outer.get(); }, std::future_errc::future_already_retrieved));
}

// ---- when_all_succeed, when_any ------------------------------------------------

BOOST_AUTO_TEST_CASE(when_all_succeed_gives_the_values_in_order, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    std::vector<crew::future<int>> v;
    for (int i = 0; i < 10; ++i) v.push_back(pool.submit([i] { return i * i; }));
    std::vector<int> squares = crew::when_all_succeed(std::move(v)).get();
    BOOST_TEST(squares == (std::vector<int>{0, 1, 4, 9, 16, 25, 36, 49, 64, 81}));
    auto t = crew::when_all_succeed(pool.submit([] { return 1; }), pool.submit([] { return std::string("a"); }));
    BOOST_TEST((t.get() == std::tuple<int, std::string>(1, "a")));
    BOOST_TEST(crew::when_all_succeed(std::vector<crew::future<int>>{}).get().empty());
    std::vector<crew::future<void>> voids;
    voids.push_back(pool.submit([] {}));
    crew::future<void> all_void = crew::when_all_succeed(std::move(voids));
    all_void.get();
}

BOOST_AUTO_TEST_CASE(when_all_succeed_fails_fast_and_cancels_the_rest, *utf::timeout(60)) {
    crew::promise<int> slow, failing, fine;
    auto all = crew::when_all_succeed(slow.get_future(), failing.get_future(), fine.get_future());
    fine.set_value(1);
    failing.set_exception(std::make_exception_ptr(std::runtime_error("first failure")));
    BOOST_TEST(all.is_done()); // before the slow one finished
    BOOST_CHECK_EXCEPTION(all.get(), std::runtime_error,
                          [](const std::runtime_error& e) { return std::string(e.what()) == "first failure"; });
    BOOST_TEST(slow.is_cancelled());

    crew::promise<int> c;
    crew::future<int> cf = c.get_future();
    cf.cancel();
    std::vector<crew::future<int>> v;
    v.push_back(std::move(cf));
    BOOST_CHECK_THROW(crew::when_all_succeed(std::move(v)).get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(variadic_when_any_and_cancel_rest, *utf::timeout(60)) {
    crew::promise<int> a;
    crew::promise<std::string> b;
    auto any = crew::when_any(a.get_future(), b.get_future());
    b.set_value("b");
    auto r = any.get();
    BOOST_TEST(r.index == 1u);
    BOOST_TEST(std::get<1>(r.futures).get() == "b");
    BOOST_TEST(!a.is_cancelled());

    crew::promise<int> x, y, z;
    std::vector<crew::future<int>> v;
    v.push_back(x.get_future());
    v.push_back(y.get_future());
    v.push_back(z.get_future());
    auto race = crew::when_any(std::move(v), crew::cancel_rest);
    y.set_value(2);
    auto won = race.get();
    BOOST_TEST(won.index == 1u);
    BOOST_TEST(won.futures[1].get() == 2);
    BOOST_TEST((x.is_cancelled() && z.is_cancelled()));
    BOOST_TEST(!y.is_cancelled());
}

// ---- submit with arguments, poll_until ---------------------------------------------

BOOST_AUTO_TEST_CASE(submit_and_execute_take_arguments_as_std_thread_does, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    std::string text = "abc";
    auto joined = pool.submit([](std::string s, int n) { return s + std::to_string(n); }, text, 4);
    text = "changed"; // copied at the call
    BOOST_TEST(joined.get() == "abc4");
    auto owned = pool.submit([](std::unique_ptr<int> p) { return *p; }, std::make_unique<int>(9));
    BOOST_TEST(owned.get() == 9);
    int target = 0;
    pool.submit([](int& t, int v) { t = v; }, std::ref(target), 5).get();
    BOOST_TEST(target == 5);
    struct adder {
        int base;
        int add(int x) const { return base + x; }
    };
    BOOST_TEST(pool.submit(&adder::add, adder{10}, 5).get() == 15);
    std::latch ran(1);
    pool.execute([&](int v) { target = v; ran.count_down(); }, 6);
    ran.wait();
    BOOST_TEST(target == 6);
    crew::any_executor ex(pool);
    BOOST_TEST(ex.submit([](int a, int b) { return a * b; }, 6, 7).get() == 42);
}

BOOST_AUTO_TEST_CASE(completion_queue_poll_until, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    crew::completion_queue<int> cq(pool);
    BOOST_TEST(!cq.poll_until(std::chrono::steady_clock::now() - 1s).has_value()); // only looks
    BOOST_TEST(!cq.poll_until(std::chrono::system_clock::now() + 10ms).has_value());
    cq.submit([] { return 3; });
    auto got = cq.poll_until(std::chrono::steady_clock::now() + scaled(30s));
    BOOST_REQUIRE(got.has_value());
    BOOST_TEST(got->get() == 3);
}

// ---- the two bugs ------------------------------------------------------------------------

namespace {

// Builds a chain of `depth` inline continuations on `p`'s future; the last
// runs `at_bottom` (sixteen or more completion hooks deep once p is set).
template <class F>
crew::future<int> nest(crew::future<int> f, int depth, F at_bottom) {
    if (depth == 0) return std::move(f).then(inline_executor{}, [at_bottom](int x) mutable { return at_bottom(x); });
    return nest(std::move(f).then(inline_executor{}, [](int x) { return x + 1; }), depth - 1, at_bottom);
}

} // namespace

BOOST_AUTO_TEST_CASE(then_on_a_done_future_deep_inside_hooks_runs_at_once, *utf::timeout(60)) {
    // Every chain length up to three times the inline depth: the bottom
    // link runs at each hook depth (deferred links restart at the
    // outermost run, so the depth it runs at is not the length).
    for (int depth = 0; depth <= 48; ++depth) {
        crew::promise<int> p;
        bool done_at_once = false;
        auto end = nest(p.get_future(), depth, [&](int x) {
            // A then() on a done future, here: it must not wait for the
            // outermost hook run (which is this thread's caller).
            auto r = crew::make_ready_future(x).then(inline_executor{}, [](int y) { return y * 2; });
            done_at_once = r.is_done();
            return r.get();
        });
        p.set_value(0);
        BOOST_TEST(done_at_once, "depth " << depth);
        BOOST_TEST(end.get() == 2 * depth);
    }
}

BOOST_AUTO_TEST_CASE(a_wait_deep_inside_hooks_runs_the_hooks_it_deferred, *utf::timeout(120)) {
    for (int depth = 0; depth <= 48; ++depth) {
        crew::promise<int> p;
        std::atomic<bool> finished{false};
        auto end = nest(p.get_future(), depth, [&](int x) {
            // Completing a promise this deep defers its hooks; a wait for
            // what they complete must run them, not wait for itself.
            crew::promise<int> q;
            auto next = q.get_future().then(inline_executor{}, [](int y) { return y + 100; });
            q.set_value(x);
            const bool ready = next.wait_for(scaled(10s)) == std::future_status::ready;
            finished = ready;
            return ready ? next.get() : -1;
        });
        std::thread completer([&] { p.set_value(0); });
        completer.join();
        BOOST_TEST(finished.load(), "depth " << depth);
        BOOST_TEST(end.get() == depth + 100);
    }
}

BOOST_AUTO_TEST_CASE(a_link_reports_an_unread_error_only_where_its_source_would, *utf::timeout(60)) {
    {   // a discarded task's rejection: not reported, link or no link
        discarding_pool shut(1);
        shut.shutdown();
        crew::fixed_pool next(1);
        stderr_capture capture;
        {
            auto end = shut.submit([] { return 1; }).then(next, [](int x) { return x; });
            BOOST_TEST(end.is_done()); // rejected at once; dropped unread below
        }
        next.shutdown();
        BOOST_TEST(next.await_termination(scaled(10s)));
        BOOST_TEST(capture.text().empty());
    }
    {   // an exception an after_execute hook received
        std::latch heard(1);
        crew::fixed_pool hooked(crew::pool_options{.core_pool_size = 1,
                                                   .after_execute = [&](std::exception_ptr e) {
                                                       if (e) heard.count_down();
                                                   }});
        crew::fixed_pool next(1);
        stderr_capture capture;
        {
            auto end = hooked.submit([]() -> int { throw std::runtime_error("heard"); }).then(next, [](int x) { return x; });
            (void)end.wait_for(scaled(10s));
            heard.wait();
        }
        hooked.shutdown();
        next.shutdown();
        BOOST_TEST(hooked.await_termination(scaled(10s)));
        BOOST_TEST(next.await_termination(scaled(10s)));
        BOOST_TEST(capture.text().empty());
    }
    {   // an error nobody saw: reported once, at the chain's end
        crew::fixed_pool pool(1);
        stderr_capture capture;
        {
            auto end = pool.submit([]() -> int { throw std::runtime_error("unseen"); })
                           .then(pool, [](int x) { return x; })
                           .then(pool, [](int x) { return x; });
            (void)end.wait_for(scaled(10s));
        }
        pool.shutdown();
        BOOST_TEST(pool.await_termination(scaled(10s)));
        const std::string text = capture.text();
        BOOST_TEST(text.find("unseen") != std::string::npos);
        BOOST_TEST(text.find("unseen") == text.rfind("unseen")); // once
    }
}

BOOST_AUTO_TEST_SUITE_END()
