// try_execute and try_submit (issue #25): execute and submit that answer
// "busy" (false, an empty optional) where execute and submit would hand the
// task to the RejectPolicy, without consulting the policy; and the
// constructor that takes pool_options and a RejectPolicy without a thread
// factory placeholder.
#include "pool_mixes.hpp"
#include "support.hpp"

#include <crew/any_executor.hpp>

#include <boost/test/unit_test.hpp>

#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

// Every pool the acceptance rules are checked on: the queue mixes, a cached
// pool, and pools whose RejectPolicy would run or drop a refused task.
using accepting_pools =
    std::tuple<crew::fixed_pool, pool_of<crew::unbounded_queue, crew::spin_lock>, pool_of<crew::bounded_queue>,
               pool_of<crew::grow_first_queue>, pool_of<crew::priority_queue>, pool_of<crew::lockfree_queue<256>>,
               crew::scheduled_pool, crew::cached_pool,
               crew::basic_executor<crew::unbounded_queue, crew::caller_runs_policy>,
               crew::basic_executor<crew::bounded_queue, crew::discard_policy>,
               crew::basic_executor<crew::delayed_queue, crew::caller_runs_policy>>;

// Every RejectPolicy: none may be consulted by a try.
using reject_policies = std::tuple<crew::abort_policy, crew::caller_runs_policy, crew::discard_policy,
                                   crew::discard_oldest_policy, crew::block_policy>;

// Pools that refuse only once shut down, or also when full.
using shut_down_pools = std::tuple<crew::fixed_pool, crew::cached_pool, crew::scheduled_pool,
                                   crew::basic_executor<crew::unbounded_queue, crew::caller_runs_policy>,
                                   crew::basic_executor<crew::bounded_queue, crew::discard_policy>,
                                   crew::basic_executor<crew::delayed_queue, crew::caller_runs_policy>,
                                   crew::basic_executor<crew::bounded_queue, crew::block_policy>>;

template <class Pool>
Pool make_pool(int threads) {
    if constexpr (std::is_same_v<typename Pool::queue_type, crew::synchronous_queue>) return Pool();
    else return Pool(threads);
}

template <class Pool>
constexpr bool is_scheduled = crew::scheduling_queue_policy<typename Pool::queue_type>;

// A callable whose destruction the test can see: `watch` expires once every
// copy of it is gone. It counts itself in `ran` if it ever runs.
struct watched_callable {
    explicit watched_callable(run_counter& ran) : ran_(&ran) {}
    std::weak_ptr<int> watch() const { return alive_; }
    void operator()() const { ran_->hit(); }

    run_counter* ran_;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

// `pool` is full: each try is refused, its callable destroyed unrun, and
// nothing is counted as rejected, submitted or run. `try_on` is the pool or
// a handle to it.
template <class Pool, class Target>
void check_tries_are_refused(Pool& pool, Target& try_on) {
    const auto rejected = pool.rejected_task_count();
    const auto submitted = pool.task_count();
    run_counter ran;
    {
        watched_callable f(ran);
        const auto watch = f.watch();
        BOOST_TEST(!try_on.try_execute(std::move(f)));
        BOOST_TEST(watch.expired()); // destroyed, not kept by a policy or the queue
    }
    {
        watched_callable f(ran);
        const auto watch = f.watch();
        auto answer = try_on.try_submit([f = std::move(f)] {
            f();
            return 1;
        });
        BOOST_TEST(!answer.has_value());
        BOOST_TEST(watch.expired());
    }
    {
        auto answer = try_on.try_submit([&ran](std::stop_token) { ran.hit(); });
        BOOST_TEST(!answer.has_value());
    }
    BOOST_TEST(!try_on.try_execute(crew::with_priority(5, [&ran] { ran.hit(); })));
    BOOST_TEST(!try_on.try_execute(crew::task([&ran] { ran.hit(); })));
    BOOST_TEST(ran.count() == 0); // not on this thread either
    BOOST_TEST(pool.rejected_task_count() == rejected);
    BOOST_TEST(pool.task_count() == submitted);
}

// A bounded pool with `Reject`, its one worker busy and its one slot taken by
// a task that records that it ran; `check(pool)` runs while it is full.
template <class Reject, class Check>
void on_a_full_pool(Check check) {
    gate blocked; // outlives the pool
    run_counter queued_ran;
    crew::basic_executor<crew::bounded_queue, Reject> pool(one_worker_one_slot);
    occupy(pool, blocked, 1);
    pool.execute([&] { queued_ran.hit(); });
    check(pool);
    BOOST_TEST(pool.queue_size() == 1u); // discard_oldest_policy did not make room
    blocked.open();
    BOOST_TEST(queued_ran.wait_for_count(1)); // nor did anything else drop it
    pool.wait_idle();
    BOOST_TEST(pool.completed_task_count() == 2u);
}

// A stateful RejectPolicy: counts its calls through a pointer it is built with.
struct counting_policy {
    int* calls = nullptr;
    template <class Executor>
    void rejected_execution(crew::task&& t, Executor&) {
        ++*calls;
        t.reject();
    }
};
static_assert(crew::reject_policy<counting_policy>);

} // namespace

BOOST_AUTO_TEST_SUITE(try_submit)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_pool_with_room_runs_what_it_is_given_as_execute_and_submit_would, Pool,
                              accepting_pools) {
    auto pool = make_pool<Pool>(2);
    run_counter ran;
    BOOST_TEST(pool.try_execute([&] { ran.hit(); }));
    BOOST_TEST(pool.try_execute(crew::with_priority(3, [&] { ran.hit(); })));
    BOOST_TEST(pool.try_execute(crew::task([&] { ran.hit(); })));
    BOOST_TEST(pool.try_execute([&](std::stop_token) { ran.hit(); }));

    auto value = pool.try_submit([] { return 42; });
    BOOST_REQUIRE(value.has_value());
    BOOST_TEST(value->get() == 42);
    auto prioritized = pool.try_submit(crew::with_priority(2, [] { return 7; }));
    BOOST_REQUIRE(prioritized.has_value());
    BOOST_TEST(prioritized->get() == 7);
    auto stoppable = pool.try_submit([](std::stop_token token) { return token.stop_possible(); });
    BOOST_REQUIRE(stoppable.has_value());
    BOOST_TEST(stoppable->get()); // bound to the future's and the pool's stop requests
    auto nothing = pool.try_submit([&] { ran.hit(); });
    BOOST_REQUIRE(nothing.has_value());
    nothing->get();

    // The same type as submit's: a scheduled_future on a scheduled pool.
    using expected = std::conditional_t<is_scheduled<Pool>, crew::scheduled_future<int>, crew::future<int>>;
    static_assert(std::is_same_v<decltype(value), std::optional<expected>>);
    static_assert(std::is_same_v<decltype(pool.try_execute([] {})), bool>);

    BOOST_TEST(ran.wait_for_count(5));
    pool.wait_idle();
    BOOST_TEST(pool.completed_task_count() == 8u);
    BOOST_TEST(pool.task_count() == 8u);
    BOOST_TEST(pool.rejected_task_count() == 0u);
}

// On a full pool nothing of any RejectPolicy happens: no exception
// (abort_policy), no run on this thread (caller_runs_policy), no future
// failed by the policy (discard_policy), no queued task dropped
// (discard_oldest_policy), no wait for room (block_policy: the test would
// hang). And rejected_task_count() does not move: no policy saw the task.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_full_pool_refuses_without_consulting_its_reject_policy, Reject, reject_policies) {
    on_a_full_pool<Reject>([](auto& pool) { check_tries_are_refused(pool, pool); });
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_cached_pool_at_its_maximum_refuses_without_running_the_task_here) {
    gate blocked;
    crew::basic_executor<crew::synchronous_queue, crew::caller_runs_policy> pool(
        crew::pool_options{.core_pool_size = 0, .maximum_pool_size = 1});
    occupy(pool, blocked, 1);
    check_tries_are_refused(pool, pool);
    blocked.open();
    pool.wait_idle();
    BOOST_TEST(pool.completed_task_count() == 1u);
}

// A paused pool only queues; with its queue full it refuses, where running
// it would have grown the pool (its maximum is not reached), and a try then
// neither grows the pool nor runs the task on the caller. Its one worker is
// busy, so the queued task stays queued (an idle worker would take it and
// hold it, a moment in which the queue looks empty).
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_paused_pool_with_a_full_queue_refuses) {
    gate blocked;
    crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> pool(
        crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 2, .queue_capacity = 1});
    occupy(pool, blocked, 1);
    pool.pause();
    run_counter ran;
    BOOST_TEST(pool.try_execute([&] { ran.hit(); })); // queued
    check_tries_are_refused(pool, pool);
    BOOST_TEST(pool.pool_size() == 1u); // no second worker for the refused tasks
    pool.resume();
    blocked.open();
    BOOST_TEST(ran.wait_for_count(1));
    pool.wait_idle();
    BOOST_TEST(ran.count() == 1);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_shut_down_pool_refuses_without_consulting_its_reject_policy, Pool, shut_down_pools) {
    auto pool = make_pool<Pool>(1);
    BOOST_TEST(pool.try_execute([] {})); // a worker exists
    pool.shutdown();
    check_tries_are_refused(pool, pool);
    BOOST_TEST(pool.await_termination(scaled(10s)));
    check_tries_are_refused(pool, pool); // terminated: the same
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_refused_submission_leaves_no_future_and_no_report) {
    stderr_capture captured;
    on_a_full_pool<crew::abort_policy>([](auto& pool) {
        auto answer = pool.try_submit([]() -> int { throw std::runtime_error("never runs"); });
        BOOST_TEST(!answer.has_value());
    });
    BOOST_TEST(captured.text().empty()); // a cancelled state is not an error to report
}

BOOST_AUTO_TEST_CASE(an_empty_callable_is_an_invalid_argument) {
    crew::fixed_pool fixed(1);
    crew::scheduled_pool scheduled(1);
    crew::any_executor handle = fixed;
    crew::any_executor scheduled_handle = scheduled;
    BOOST_CHECK_THROW(fixed.try_execute(std::function<void()>{}), std::invalid_argument);
    BOOST_CHECK_THROW(fixed.try_execute(crew::task{}), std::invalid_argument);
    BOOST_CHECK_THROW((void)fixed.try_submit(std::function<int()>{}), std::invalid_argument);
    BOOST_CHECK_THROW((void)scheduled.try_submit(std::function<int()>{}), std::invalid_argument);
    BOOST_CHECK_THROW(scheduled.try_execute(static_cast<void (*)()>(nullptr)), std::invalid_argument);
    BOOST_CHECK_THROW(handle.try_execute(std::function<void()>{}), std::invalid_argument);
    BOOST_CHECK_THROW((void)handle.try_submit(std::function<int()>{}), std::invalid_argument);
    BOOST_CHECK_THROW((void)scheduled_handle.try_submit(std::function<int()>{}), std::invalid_argument);
    BOOST_TEST(fixed.task_count() == 0u);
}

// A crew::task lvalue goes to the RejectPolicy's overload: refused, it stays
// with the caller (who may run or reject it); accepted, it is moved from.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_task_lvalue_is_left_with_the_caller_when_refused) {
    on_a_full_pool<crew::abort_policy>([](auto& pool) {
        run_counter ran;
        crew::task t([&ran] { ran.hit(); });
        BOOST_TEST(!pool.try_execute(t));
        BOOST_REQUIRE(static_cast<bool>(t));
        t();
        BOOST_TEST(ran.count() == 1);
    });
    crew::fixed_pool pool(1);
    run_counter ran;
    crew::task t([&ran] { ran.hit(); });
    BOOST_TEST(pool.try_execute(t));
    BOOST_TEST(!static_cast<bool>(t));
    BOOST_TEST(ran.wait_for_count(1));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(try_execute_keeps_the_priority_of_with_priority) {
    pool_of<crew::priority_queue> pool(1);
    gate blocked;
    occupy(pool, blocked, 1);
    id_log log;
    BOOST_TEST(pool.try_execute(crew::with_priority(1, log.note(1))));
    auto high = pool.try_submit(crew::with_priority(9, log.note(9)));
    BOOST_TEST(pool.try_execute(log.note(0)));
    BOOST_REQUIRE(high.has_value());
    blocked.open();
    high->get();
    pool.wait_idle();
    BOOST_TEST((log.ids() == std::vector<int>{9, 1, 0}));
}

// A task observer sees a try's task stamped when it was accepted, as
// execute's: its `queued` is before the worker could start it.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_tried_task_is_stamped_for_the_task_observer) {
    observed_busy_pool busy;
    crew::any_executor handle = busy.pool;
    BOOST_TEST(busy.pool.try_execute([] {}));
    BOOST_TEST(handle.try_execute([] {}));
    BOOST_TEST(busy.pool.try_submit([] { return 1; }).has_value());
    busy.held.open();
    busy.pool.wait_idle();
    const auto seen = busy.log.timings();
    BOOST_REQUIRE(seen.size() == 4u);
    for (std::size_t i = 1; i < 4; ++i) BOOST_TEST((seen[i].queued < seen[i].started)); // stamped, not "unknown"
}

// ---- through any_executor -----------------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_handle_refuses_as_its_full_pool_would, Reject, reject_policies) {
    on_a_full_pool<Reject>([](auto& pool) {
        crew::any_executor handle = pool;
        check_tries_are_refused(pool, handle);
    });
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_handle_to_a_scheduled_pool_tries_a_task_due_now) {
    crew::scheduled_pool pool(1);
    crew::any_executor handle = pool;
    run_counter ran;
    BOOST_TEST(handle.try_execute([&] { ran.hit(); }));
    auto value = handle.try_submit([] { return 3; });
    static_assert(std::is_same_v<decltype(value), std::optional<crew::future<int>>>);
    BOOST_REQUIRE(value.has_value());
    BOOST_TEST(value->get() == 3);
    BOOST_TEST(ran.wait_for_count(1));
    pool.shutdown();
    check_tries_are_refused(pool, handle);
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

// A handle's submit on a scheduled pool goes into the heap with its slot
// (cancel() takes it out under remove_on_cancel): so does try_submit's.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_handles_tried_scheduled_task_leaves_the_queue_when_cancelled) {
    crew::scheduled_pool pool(crew::pool_options{.core_pool_size = 1, .remove_on_cancel = true});
    crew::any_executor handle = pool;
    gate blocked;
    occupy(pool, blocked, 1);
    auto tried = handle.try_submit([] { return 1; });
    BOOST_REQUIRE(tried.has_value());
    BOOST_TEST(pool.queue_size() == 1u);
    BOOST_TEST(tried->cancel());
    BOOST_TEST(pool.queue_size() == 0u);
    blocked.open();
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_handle_tries_on_every_pool, Pool, accepting_pools) {
    auto pool = make_pool<Pool>(2);
    crew::any_executor handle = pool;
    run_counter ran;
    BOOST_TEST(handle.try_execute([&] { ran.hit(); }));
    BOOST_TEST(handle.try_execute(crew::task([&] { ran.hit(); })));
    auto value = handle.try_submit([](std::stop_token) { return 5; });
    BOOST_REQUIRE(value.has_value());
    BOOST_TEST(value->get() == 5);
    BOOST_TEST(ran.wait_for_count(2));
    pool.wait_idle();
    BOOST_TEST(pool.completed_task_count() == 3u);
    BOOST_TEST(pool.rejected_task_count() == 0u);
}

BOOST_AUTO_TEST_CASE(a_handle_reports_its_pools_sizes) {
    crew::fixed_pool pool(crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 5});
    crew::cached_pool cached;
    crew::any_executor handle = pool;
    crew::any_executor cached_handle = cached;
    BOOST_TEST(handle.core_pool_size() == 2u);
    BOOST_TEST(handle.maximum_pool_size() == 5u);
    pool.set_maximum_pool_size(7);
    pool.set_core_pool_size(3);
    BOOST_TEST(handle.maximum_pool_size() == 7u); // read each time, not copied
    BOOST_TEST(handle.core_pool_size() == 3u);
    BOOST_TEST(cached_handle.core_pool_size() == cached.core_pool_size());
    BOOST_TEST(cached_handle.maximum_pool_size() == cached.maximum_pool_size());
}

// ---- construction with a reject policy and no thread factory ----------------------

// The policy given is the one used: a stateful policy keeps its state, and a
// block_policy its timeout (a default one would wait for room for ever).
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_pool_takes_options_and_a_reject_policy_without_a_thread_factory) {
    int calls = 0;
    {
        gate blocked;
        crew::basic_executor<crew::bounded_queue, counting_policy> pool(one_worker_one_slot, counting_policy{&calls});
        occupy(pool, blocked, 1);
        pool.execute([] {});
        pool.execute([] {}); // refused: the policy we gave counts it
        BOOST_TEST(calls == 1);
        BOOST_TEST(pool.maximum_pool_size() == 1u); // and the options are ours
        BOOST_TEST(pool.queue_capacity() == 1u);
        blocked.open();
    }
    {
        gate blocked;
        const crew::block_policy no_wait{0ms};
        crew::basic_executor<crew::bounded_queue, crew::block_policy> pool(one_worker_one_slot, no_wait); // an lvalue
        occupy(pool, blocked, 1);
        pool.execute([] {});
        BOOST_CHECK_THROW(pool.execute([] {}), crew::rejected_execution_error); // at once: no room within 0 ms
        blocked.open();
    }
    {
        int scheduled_calls = 0;
        crew::basic_executor<crew::delayed_queue, counting_policy> pool(crew::pool_options{.core_pool_size = 1},
                                                                         counting_policy{&scheduled_calls});
        pool.shutdown();
        pool.execute([] {});
        BOOST_TEST(scheduled_calls == 1);
    }
}

// The overload does not take what is not the pool's RejectPolicy, nor a
// braced placeholder (that is still the thread factory).
using bounded_blocking = crew::basic_executor<crew::bounded_queue, crew::block_policy>;
static_assert(std::is_constructible_v<bounded_blocking, crew::pool_options, crew::block_policy>);
static_assert(std::is_constructible_v<bounded_blocking, crew::pool_options, const crew::block_policy&>);
static_assert(std::is_constructible_v<crew::fixed_pool, crew::pool_options, crew::abort_policy>);
static_assert(!std::is_constructible_v<bounded_blocking, crew::pool_options, crew::abort_policy>);
static_assert(!std::is_constructible_v<bounded_blocking, crew::pool_options, int>);
static_assert(
    std::is_constructible_v<bounded_blocking, crew::pool_options, crew::default_thread_factory, crew::block_policy>);

BOOST_AUTO_TEST_CASE(a_braced_second_argument_is_still_the_thread_factory) {
    bounded_blocking pool(crew::pool_options{.core_pool_size = 1}, {});
    BOOST_TEST(pool.core_pool_size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
