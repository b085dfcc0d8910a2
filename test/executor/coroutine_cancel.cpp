// Cancelling a spawned coroutine (issue #25): cancel(true) on the spawn's
// future requests the chain's stop; co_await crew::get_stop_token() reads
// it; the chain's next co_await of resume_on, sleep_for or a future throws
// cancellation_error, and one suspended on sleep_for or a future is woken
// at once, on the thread that cancelled.
#include "../common/seams.hpp"
#include "support.hpp"

#include <crew/coroutine.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <condition_variable>
#include <latch>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

// Counts its destruction and opens a latch: the test waits for a body to
// unwind, and sees that its locals were destroyed (once).
struct unwind_marker {
    explicit unwind_marker(std::atomic<int>* count, std::latch* unwound = nullptr) : count(count), unwound(unwound) {}
    unwind_marker(const unwind_marker&) = delete;
    unwind_marker& operator=(const unwind_marker&) = delete;
    std::atomic<int>* count;
    std::latch* unwound;
    ~unwind_marker() {
        ++*count;
        if (unwound) unwound->count_down();
    }
};

template <class Pool>
bool on_pool(Pool& pool) {
    return pool.get_executor().running_in_this_thread();
}

// Returns once `pool` (one worker) has finished everything queued before: a
// coroutine started there has suspended, a completion there ran its hook.
template <class Pool>
void drain(Pool& pool) {
    BOOST_REQUIRE((pool.submit([] {}).wait_for(scaled(10s)) == std::future_status::ready));
}

bool stopped(const crew::cancellation_error& e) { return message_contains(e, "cancelled"); }

// A coroutine on a one-worker pool goes to sleep for an hour and is held at
// `where`, on its way into the wait; meanwhile its timer is dropped unrun
// (timers.shutdown_now()'s list destroyed). Then it is let go: the chain
// must unwind once, never resumed, and its future be cancelled.
void drop_the_timer_of_a_sleeper_held_at(crew_test_common::seam where) {
    crew::scheduled_pool timers(1);
    crew::fixed_pool pool(1);
    std::atomic<int> destroyed{0};
    std::latch unwound(1);
    std::atomic<bool> went_on{false};
    crew_test_common::seam_gate at(where);
    auto sleeper = [&]() -> crew::coroutine<void> {
        unwind_marker local{&destroyed, &unwound};
        try {
            co_await crew::sleep_for(timers, std::chrono::hours(1));
        } catch (...) {
        }
        went_on = true;
    };
    auto result = crew::spawn(pool, sleeper());
    BOOST_REQUIRE(at.wait_caught());
    auto left = timers.shutdown_now();
    BOOST_TEST(left.size() == 1u);
    left.clear(); // a hook, if one is registered, runs here
    BOOST_TEST(destroyed.load() == 0); // held: the chain is not destroyed under it
    at.release();
    unwound.wait(); // the locals are gone; the future is cancelled after them
    BOOST_TEST(!went_on.load());
    BOOST_TEST(destroyed.load() == 1);
    BOOST_CHECK_THROW(result.get(), crew::cancellation_error); // waits for it
    BOOST_TEST(result.is_cancelled());
}

// Busy-waits `n` turns (no sleep, no clock): races shift their start by it.
void spin(int n) {
    std::atomic<int> turns{0};
    while (turns.fetch_add(1, std::memory_order_relaxed) < n) {
    }
}

using crew_test_common::seam;
using crew_test_common::seam_gate;

} // namespace

BOOST_AUTO_TEST_SUITE(coroutine_cancel)

// The coroutine waits on a future whose task is blocked: cancel(true) wakes
// it at once, on this thread, inside cancel(), with cancellation_error; the
// token it read stops, and a callback registered on it runs. The awaited
// future is neither cancelled nor retrieved.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_true_requests_the_chain_token_and_wakes_a_coroutine_awaiting_a_future) {
    crew::fixed_pool pool(1), other(1);
    gate blocked;
    auto slow = submit_held(other, blocked, 7);
    std::atomic<int> destroyed{0}, heard{0};
    std::atomic<bool> possible_before{false}, requested_before{true}, threw{false}, requested_after{false},
        same_token{false}, went_on{false};
    std::thread::id woken_on;
    std::stop_token seen;
    auto waiter = [&]() -> crew::coroutine<int> {
        unwind_marker local{&destroyed};
        const std::stop_token token = co_await crew::get_stop_token();
        possible_before = token.stop_possible();
        requested_before = token.stop_requested();
        seen = token;
        try {
            (void)co_await slow;
            went_on = true;
        } catch (const crew::cancellation_error& e) {
            threw = stopped(e);
            woken_on = std::this_thread::get_id();
        }
        const std::stop_token again = co_await crew::get_stop_token();
        same_token = again == token;
        requested_after = token.stop_requested() && again.stop_requested();
        co_return 1;
    };
    auto result = crew::spawn(pool, waiter());
    drain(pool);
    BOOST_TEST(possible_before.load());
    BOOST_TEST(!requested_before.load());
    BOOST_TEST(destroyed.load() == 0);
    std::stop_callback listen(seen, [&] { ++heard; });

    BOOST_TEST(result.cancel(true));
    BOOST_TEST(destroyed.load() == 1); // the whole body ran to its end inside cancel()
    BOOST_TEST((woken_on == std::this_thread::get_id()));
    BOOST_TEST(threw.load());
    BOOST_TEST(!went_on.load());
    BOOST_TEST(heard.load() == 1);
    BOOST_TEST(same_token.load());
    BOOST_TEST(requested_after.load());
    BOOST_TEST(result.is_cancelled());
    BOOST_CHECK_EXCEPTION(result.get(), crew::cancellation_error, stopped);

    BOOST_TEST(!slow.is_done()); // left alone: not cancelled, not retrieved
    blocked.open();
    BOOST_TEST(slow.get() == 7);
}

// A sleep of an hour, woken by cancel(true): the timer is cancelled too, so
// a pool that runs delayed tasks after shutdown terminates at once, and with
// remove_on_cancel it leaves the queue.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_true_wakes_a_coroutine_sleeping_for_an_hour_and_cancels_its_timer) {
    for (const bool remove_on_cancel : {false, true}) {
        crew::scheduled_pool timers(crew::pool_options{.core_pool_size = 1, .remove_on_cancel = remove_on_cancel});
        crew::fixed_pool pool(1);
        std::atomic<int> destroyed{0};
        std::atomic<bool> threw{false}, went_on{false};
        std::thread::id woken_on;
        auto sleeper = [&]() -> crew::coroutine<void> {
            unwind_marker local{&destroyed};
            try {
                co_await crew::sleep_for(timers, std::chrono::hours(1));
                went_on = true;
            } catch (const crew::cancellation_error& e) {
                threw = stopped(e);
                woken_on = std::this_thread::get_id();
                throw;
            }
        };
        auto result = crew::spawn(pool, sleeper());
        drain(pool);
        BOOST_TEST(timers.queue_size() == 1u);
        BOOST_TEST(result.cancel(true));
        BOOST_TEST(destroyed.load() == 1);
        BOOST_TEST(threw.load());
        BOOST_TEST(!went_on.load());
        BOOST_TEST((woken_on == std::this_thread::get_id()));
        BOOST_TEST(result.is_cancelled());
        BOOST_CHECK_THROW(result.get(), crew::cancellation_error);
        if (remove_on_cancel) BOOST_TEST(timers.queue_size() == 0u);
        timers.shutdown(); // runs delayed tasks after shutdown, but not a cancelled one
        BOOST_TEST(timers.await_termination(scaled(10s)));
    }
}

// A resumption queued on a busy pool is not taken back: it throws when the
// pool runs it, there, and the rest of the body never runs.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_true_while_a_resume_on_is_queued_throws_when_the_pool_runs_it) {
    crew::fixed_pool start(1), busy(1);
    gate blocked;
    occupy(busy, blocked, 1);
    std::atomic<int> destroyed{0};
    std::latch unwound(1);
    std::atomic<bool> threw_on_busy{false}, went_on{false};
    auto mover = [&]() -> crew::coroutine<void> {
        unwind_marker local{&destroyed, &unwound};
        try {
            co_await crew::resume_on(busy);
            went_on = true;
        } catch (const crew::cancellation_error& e) {
            threw_on_busy = stopped(e) && on_pool(busy);
        }
    };
    auto result = crew::spawn(start, mover());
    drain(start);
    BOOST_TEST(busy.queue_size() == 1u);
    BOOST_TEST(result.cancel(true));
    BOOST_TEST(result.is_cancelled());
    BOOST_TEST(destroyed.load() == 0); // still queued: no early wake-up for resume_on
    blocked.open();
    unwound.wait();
    BOOST_TEST(threw_on_busy.load());
    BOOST_TEST(!went_on.load());
    BOOST_TEST(destroyed.load() == 1);
    BOOST_CHECK_THROW(result.get(), crew::cancellation_error);
}

// Once stop is requested, every later co_await of the three throws before
// suspending: the coroutine stays on its thread, schedules no timer, and
// throws even for a future that is already done.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(after_a_stop_request_each_co_await_throws_without_suspending) {
    crew::fixed_pool pool(1), other(1);
    crew::scheduled_pool timers(1);
    auto done = other.submit([] { return 3; });
    done.wait();
    std::latch running(1), cancelled(1), finished(1);
    std::atomic<int> threw{0};
    std::atomic<bool> stayed{true};
    auto stubborn = [&]() -> crew::coroutine<void> {
        running.count_down();
        cancelled.wait(); // blocks the worker until the test has cancelled
        try {
            co_await crew::resume_on(other);
        } catch (const crew::cancellation_error&) {
            ++threw;
        }
        stayed = stayed && on_pool(pool);
        try {
            co_await crew::sleep_for(timers, 0ms);
        } catch (const crew::cancellation_error&) {
            ++threw;
        }
        stayed = stayed && on_pool(pool);
        try {
            (void)co_await done;
        } catch (const crew::cancellation_error&) {
            ++threw;
        }
        stayed = stayed && on_pool(pool);
        finished.count_down();
    };
    auto result = crew::spawn(pool, stubborn());
    running.wait();
    BOOST_TEST(result.cancel(true));
    cancelled.count_down();
    finished.wait();
    BOOST_TEST(threw.load() == 3);
    BOOST_TEST(stayed.load());
    BOOST_TEST(timers.queue_size() == 0u);
    BOOST_TEST(done.valid()); // not retrieved
    BOOST_CHECK_THROW(result.get(), crew::cancellation_error);
}

// The stop reaches the innermost coroutine of the chain: all see one token,
// the innermost co_await (of a future the chain owns) throws, and every
// frame's locals are destroyed on the way out.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(stop_reaches_the_innermost_coroutine_and_every_frame_unwinds) {
    crew::fixed_pool pool(1), other(1);
    gate blocked;
    std::atomic<int> destroyed{0}, threw{0};
    std::stop_token outer_token, inner_token;
    auto inner = [&]() -> crew::coroutine<int> {
        unwind_marker local{&destroyed};
        inner_token = co_await crew::get_stop_token();
        try {
            co_return co_await other.submit([&] {
                blocked.wait();
                return 1;
            });
        } catch (const crew::cancellation_error&) {
            ++threw;
            throw;
        }
    };
    auto middle = [&]() -> crew::coroutine<int> {
        unwind_marker local{&destroyed};
        try {
            co_return co_await inner() + 1;
        } catch (const crew::cancellation_error&) {
            ++threw;
            throw;
        }
    };
    auto outer = [&]() -> crew::coroutine<int> {
        unwind_marker local{&destroyed};
        outer_token = co_await crew::get_stop_token();
        try {
            co_return co_await middle() + 1;
        } catch (const crew::cancellation_error&) {
            ++threw;
            throw;
        }
    };
    auto result = crew::spawn(pool, outer());
    drain(pool);
    BOOST_TEST((inner_token == outer_token));
    BOOST_TEST(inner_token.stop_possible());
    BOOST_TEST(result.cancel(true));
    BOOST_TEST(threw.load() == 3);
    BOOST_TEST(destroyed.load() == 3);
    BOOST_TEST(inner_token.stop_requested());
    BOOST_CHECK_THROW(result.get(), crew::cancellation_error);
    blocked.open();
}

// cancel(false) keeps what it always did: the future reports cancellation at
// once, but the chain is not stopped: it goes on, unhindered, and its result
// is discarded.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_false_completes_the_future_but_the_chain_runs_on) {
    crew::fixed_pool pool(1), other(1);
    crew::scheduled_pool timers(1);
    gate blocked;
    auto slow = submit_held(other, blocked, 5);
    std::atomic<int> destroyed{0};
    std::latch unwound(1);
    std::atomic<bool> finished{false}, requested{true};
    auto runner = [&]() -> crew::coroutine<int> {
        unwind_marker local{&destroyed, &unwound};
        const int v = co_await slow;
        co_await crew::resume_on(other);
        co_await crew::sleep_for(timers, 0ms);
        requested = (co_await crew::get_stop_token()).stop_requested();
        finished = true;
        co_return v;
    };
    auto result = crew::spawn(pool, runner());
    drain(pool);
    BOOST_TEST(result.cancel(false));
    BOOST_TEST(result.is_cancelled());
    BOOST_CHECK_THROW(result.get(), crew::cancellation_error);
    BOOST_TEST(destroyed.load() == 0); // still waiting
    BOOST_TEST(!result.cancel(true)); // done already: no stop request either
    blocked.open();
    unwound.wait();
    BOOST_TEST(finished.load());
    BOOST_TEST(!requested.load());
}

// cancel(true) before the chain starts: the body never runs, and its frame
// (its parameters) is destroyed.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_true_before_the_start_never_runs_the_body) {
    crew::fixed_pool pool(1);
    gate blocked;
    occupy(pool, blocked, 1);
    std::atomic<bool> ran{false};
    auto param = std::make_shared<int>(0);
    auto body = [](std::shared_ptr<int>, std::atomic<bool>& flag) -> crew::coroutine<void> {
        flag = true;
        co_return;
    };
    auto result = crew::spawn(pool, body(param, ran));
    BOOST_TEST(param.use_count() == 2);
    BOOST_TEST(result.cancel(true));
    blocked.open();
    drain(pool);
    BOOST_TEST(!ran.load());
    BOOST_TEST(param.use_count() == 1);
    BOOST_CHECK_THROW(result.get(), crew::cancellation_error);
}

// Through crew::any_executor: spawn and resume_on take it, and the queued
// resumption throws when it runs.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancellation_through_any_executor) {
    crew::fixed_pool start_pool(1), busy_pool(1);
    crew::any_executor start = start_pool, busy = busy_pool;
    gate blocked;
    occupy(busy_pool, blocked, 1);
    std::atomic<int> destroyed{0};
    std::latch unwound(1);
    std::atomic<bool> threw{false}, went_on{false};
    auto mover = [&]() -> crew::coroutine<void> {
        unwind_marker local{&destroyed, &unwound};
        try {
            co_await crew::resume_on(busy);
            went_on = true;
        } catch (const crew::cancellation_error&) {
            threw = on_pool(busy_pool);
        }
    };
    auto result = crew::spawn(start, mover());
    drain(start_pool);
    BOOST_TEST(result.cancel(true));
    blocked.open();
    unwound.wait();
    BOOST_TEST(threw.load());
    BOOST_TEST(!went_on.load());
    BOOST_CHECK_THROW(result.get(), crew::cancellation_error);
}

// ---- the wake-up protocol, one window at a time (wait seams) ----------

// The future completes while the coroutine is still arming its wait (hook
// registered, stop callback not yet): the completer finds it arming and
// leaves it alone; the coroutine then does not suspend and goes on, on its
// own thread, with the value.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_future_completing_while_the_wait_is_armed_lets_the_coroutine_go_on_by_itself) {
    crew::fixed_pool pool(1), other(1);
    gate go;
    auto value = submit_held(other, go, 9);
    std::atomic<int> got{0};
    std::atomic<bool> stayed{false};
    seam_gate at(seam::coroutine_wait_registered);
    auto waiter = [&]() -> crew::coroutine<void> {
        got = co_await value;
        stayed = on_pool(pool);
    };
    auto result = crew::spawn(pool, waiter());
    BOOST_REQUIRE(at.wait_caught());
    go.open();
    drain(other); // the completer has run the hook
    BOOST_TEST(!result.is_done());
    at.release();
    result.get();
    BOOST_TEST(got.load() == 9);
    BOOST_TEST(stayed.load());
}

// Stop is requested while the coroutine arms its wait, before its stop
// callback exists: registering the callback runs it there, it takes the hook
// back, and the coroutine does not suspend: it throws on its own thread.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_stop_requested_while_the_wait_is_armed_wakes_it_as_the_callback_registers) {
    crew::fixed_pool pool(1), other(1);
    gate go;
    auto value = submit_held(other, go, 9);
    std::atomic<int> destroyed{0};
    std::latch unwound(1);
    std::atomic<bool> threw_here{false}, went_on{false};
    seam_gate at(seam::coroutine_wait_registered);
    auto waiter = [&]() -> crew::coroutine<void> {
        unwind_marker local{&destroyed, &unwound};
        try {
            (void)co_await value;
            went_on = true;
        } catch (const crew::cancellation_error&) {
            threw_here = on_pool(pool);
        }
    };
    auto result = crew::spawn(pool, waiter());
    BOOST_REQUIRE(at.wait_caught());
    BOOST_TEST(result.cancel(true)); // no stop callback yet: nothing runs here
    BOOST_TEST(destroyed.load() == 0);
    at.release();
    unwound.wait();
    BOOST_TEST(threw_here.load());
    BOOST_TEST(!went_on.load());
    BOOST_TEST(!value.is_done());
    go.open();
    BOOST_TEST(value.get() == 9); // the hook was taken back: the completion touched no frame
}

// The sleeper's timer is dropped (shutdown_now's list destroyed) while the
// coroutine arms its wait: the hook finds it arming and leaves the chain to
// it, which destroys the chain once it sees the drop. Never resumed.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_timer_dropped_while_the_wait_is_armed_destroys_the_chain_from_the_armer) {
    drop_the_timer_of_a_sleeper_held_at(seam::coroutine_wait_registered); // the hook runs at the drop
}

// The completer has taken the hook (and stops before resuming) when stop is
// requested: the stop callback finds the hook gone and returns at once; the
// completer resumes the coroutine, whose co_await then throws, there.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_stop_that_finds_the_hook_taken_leaves_the_resumption_to_the_completer) {
    crew::fixed_pool pool(1), other(1);
    gate go;
    auto value = submit_held(other, go, 4);
    std::atomic<int> destroyed{0}, resumed{0};
    std::latch unwound(1);
    std::atomic<bool> threw_on_other{false};
    auto waiter = [&]() -> crew::coroutine<void> {
        unwind_marker local{&destroyed, &unwound};
        try {
            (void)co_await value;
        } catch (const crew::cancellation_error&) {
            threw_on_other = on_pool(other);
        }
        ++resumed;
    };
    auto result = crew::spawn(pool, waiter());
    drain(pool);
    seam_gate at(seam::coroutine_wait_settling);
    go.open();
    BOOST_REQUIRE(at.wait_caught());
    BOOST_TEST(result.cancel(true)); // returns at once: the stop callback lost
    BOOST_TEST(destroyed.load() == 0);
    at.release();
    unwound.wait();
    BOOST_TEST(threw_on_other.load());
    BOOST_TEST(resumed.load() == 1);
}

// The stop callback has taken the hook back (and stops before resuming) when
// the future completes: the completion runs no hook; the stop callback
// resumes the coroutine alone, on the thread that cancelled.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_stop_that_took_the_hook_back_resumes_alone_though_the_future_completes) {
    crew::fixed_pool pool(1), other(1);
    gate go;
    auto value = submit_held(other, go, 4);
    std::atomic<int> destroyed{0}, resumed{0};
    std::latch unwound(1);
    std::thread::id woken_on;
    auto waiter = [&]() -> crew::coroutine<void> {
        unwind_marker local{&destroyed, &unwound};
        try {
            (void)co_await value;
        } catch (const crew::cancellation_error&) {
            woken_on = std::this_thread::get_id();
        }
        ++resumed;
    };
    auto result = crew::spawn(pool, waiter());
    drain(pool);
    seam_gate at(seam::coroutine_wait_settling);
    std::thread canceller([&] { (void)result.cancel(true); });
    BOOST_REQUIRE(at.wait_caught());
    go.open();
    drain(other); // completed, no hook to run
    BOOST_TEST(value.is_done());
    BOOST_TEST(destroyed.load() == 0);
    at.release();
    unwound.wait();
    const auto canceller_id = canceller.get_id();
    canceller.join();
    BOOST_TEST((woken_on == canceller_id));
    BOOST_TEST(resumed.load() == 1);
    BOOST_TEST(value.get() == 4); // neither cancelled nor retrieved
}

// The timer falls due and runs before the coroutine waits on it (a delay of
// zero): the coroutine still continues on the scheduled pool, through its
// queue, not inline where it was.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_timer_that_ran_before_the_wait_is_armed_still_continues_on_the_scheduled_pool) {
    crew::scheduled_pool timers(1);
    crew::fixed_pool pool(1);
    seam_gate at(seam::coroutine_timer_queued);
    auto napper = [&]() -> crew::coroutine<bool> {
        co_await crew::sleep_for(timers, 0ms);
        co_return on_pool(timers);
    };
    auto result = crew::spawn(pool, napper());
    BOOST_REQUIRE(at.wait_caught());
    BOOST_REQUIRE(eventually([&] { return timers.completed_task_count() == 1u; }));
    at.release();
    BOOST_TEST(result.get());
}

// The timer is dropped unrun before the coroutine waits on it: the chain is
// destroyed, never resumed, as with a dropped resumption.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_timer_dropped_before_the_wait_is_armed_destroys_the_chain) {
    drop_the_timer_of_a_sleeper_held_at(seam::coroutine_timer_queued); // no hook yet at the drop
}

// A sleep the pool refuses (it is shut down) throws from the co_await:
// abort_policy's exception, or rejected_execution_error for a discarded timer.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_refused_sleep_throws_rejected_execution_error_from_the_co_await) {
    crew::fixed_pool pool(1);
    crew::scheduled_pool closed_aborting(1);
    crew::basic_executor<crew::delayed_queue, crew::discard_policy> closed_discarding(1);
    closed_aborting.shutdown();
    closed_discarding.shutdown();
    auto tries = [&]() -> crew::coroutine<int> {
        int refused = 0;
        try {
            co_await crew::sleep_for(closed_aborting, 0ms);
        } catch (const crew::rejected_execution_error&) {
            ++refused;
        }
        try {
            co_await crew::sleep_for(closed_discarding, 0ms);
        } catch (const crew::rejected_execution_error&) {
            ++refused;
        }
        co_return on_pool(pool) ? refused : -1; // still where it was
    };
    BOOST_TEST(crew::spawn(pool, tries()).get() == 2);
}

// ---- races, many rounds (run them under ThreadSanitizer and ASan too) ----

// The future completes on another worker while this thread cancels: the
// coroutine is resumed exactly once, by whichever wins (the stop callback
// takes the hook back, or finds the completer took it), and its locals are
// destroyed once. Rounds vary the order and the delay between the two, and
// half of them cancel while the coroutine is on its way to suspend, so the
// race also covers the arming of the wait.
BOOST_TEST_DECORATOR(*utf::timeout(240))
BOOST_AUTO_TEST_CASE(cancel_racing_a_completing_future_resumes_the_coroutine_exactly_once) {
    crew::fixed_pool pool(1), other(1);
    int outcomes[3] = {};
    for (int round = 0; round < 400; ++round) {
        const int mode = round % 4; // 0, 1: asleep first; 0, 2: cancel before the value can come
        gate go;
        auto value = submit_held(other, go, round);
        std::atomic<int> destroyed{0}, resumed{0}, outcome{0};
        std::latch started(1), unwound(1);
        auto waiter = [&]() -> crew::coroutine<void> {
            unwind_marker local{&destroyed, &unwound};
            started.count_down();
            try {
                const int v = co_await value;
                ++resumed;
                outcome = v == round ? 1 : 0;
            } catch (const crew::cancellation_error&) {
                ++resumed;
                outcome = 2;
            }
        };
        auto result = crew::spawn(pool, waiter());
        started.wait();
        if (mode < 2) drain(pool);
        if (mode % 2 == 1) go.open();
        spin(round / 4 % 10 * 400);
        (void)result.cancel(true);
        if (mode % 2 == 0) go.open();
        BOOST_REQUIRE(eventually([&] { return unwound.try_wait(); }));
        BOOST_REQUIRE(resumed.load() == 1);
        BOOST_REQUIRE(destroyed.load() == 1);
        BOOST_REQUIRE(outcome.load() != 0);
        if (mode % 2 == 0) BOOST_REQUIRE(outcome.load() == 2);
        ++outcomes[outcome.load()];
        value.wait(); // the task has let go of the gate
    }
    BOOST_TEST_MESSAGE("value " << outcomes[1] << ", stopped " << outcomes[2]);
}

// The same race against a timer that falls due at once (or after a few
// microseconds): the sleeper wakes exactly once.
BOOST_TEST_DECORATOR(*utf::timeout(240))
BOOST_AUTO_TEST_CASE(cancel_racing_a_due_timer_wakes_the_sleeper_exactly_once) {
    crew::scheduled_pool timers(1);
    crew::fixed_pool pool(1);
    int outcomes[3] = {};
    for (int round = 0; round < 400; ++round) {
        std::atomic<int> destroyed{0}, resumed{0}, outcome{0};
        std::latch started(1), unwound(1);
        auto sleeper = [&]() -> crew::coroutine<void> {
            unwind_marker local{&destroyed, &unwound};
            started.count_down();
            try {
                co_await crew::sleep_for(timers, std::chrono::microseconds(round % 4 * 20));
                ++resumed;
                outcome = 1;
            } catch (const crew::cancellation_error&) {
                ++resumed;
                outcome = 2;
            }
        };
        auto result = crew::spawn(pool, sleeper());
        started.wait();
        if (round % 3 == 0) drain(pool);
        spin(round / 3 % 10 * 400);
        (void)result.cancel(true);
        BOOST_REQUIRE(eventually([&] { return unwound.try_wait(); }));
        BOOST_REQUIRE(resumed.load() == 1);
        BOOST_REQUIRE(destroyed.load() == 1);
        ++outcomes[outcome.load()];
    }
    BOOST_TEST_MESSAGE("slept " << outcomes[1] << ", stopped " << outcomes[2]);
}

// shutdown_now() drops the sleeper's timer while this thread cancels: either
// the drop destroys the chain (it never resumes) or the stop wakes it (it
// resumes once); its locals are destroyed exactly once either way.
BOOST_TEST_DECORATOR(*utf::timeout(240))
BOOST_AUTO_TEST_CASE(cancel_racing_shutdown_now_ends_the_chain_exactly_once) {
    crew::fixed_pool pool(1);
    int outcomes[2] = {};
    for (int round = 0; round < 100; ++round) {
        crew::scheduled_pool timers(1);
        std::atomic<int> destroyed{0}, resumed{0};
        std::latch unwound(1);
        auto sleeper = [&]() -> crew::coroutine<void> {
            unwind_marker local{&destroyed, &unwound};
            try {
                co_await crew::sleep_for(timers, std::chrono::hours(1));
            } catch (const crew::cancellation_error&) {
            }
            ++resumed;
        };
        auto result = crew::spawn(pool, sleeper());
        drain(pool); // asleep: the race is the drop's against the stop's
        std::thread dropper([&] { timers.shutdown_now(); }); // its list dies at once
        (void)result.cancel(true);
        dropper.join();
        BOOST_REQUIRE(eventually([&] { return unwound.try_wait(); }));
        BOOST_REQUIRE(resumed.load() <= 1);
        BOOST_REQUIRE(destroyed.load() == 1);
        BOOST_CHECK_THROW(result.get(), crew::cancellation_error);
        ++outcomes[resumed.load()];
    }
    BOOST_TEST_MESSAGE("dropped " << outcomes[0] << ", woken by the stop " << outcomes[1]);
}

BOOST_AUTO_TEST_SUITE_END()
