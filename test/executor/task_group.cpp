// crew::task_group: fork with run(), join with wait() (doc/composition.md, "Composition,
// groups and loops"; issue #25). Every pool kind and policy mix, directly
// and through a crew::any_executor; recursion on a pool of one; what a
// discard, an abort, a drop and cancel() do to the group.
#include "composition_support.hpp"
#include "pool_mixes.hpp"
#include "support.hpp"

#include <crew/any_executor.hpp>
#include <crew/task_group.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <tuple>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

auto has_code(int code) {
    return [code](const custom_error& e) { return e.code == code; };
}

// Runs in `g` a task that starts, waits at a gate and then runs `then`;
// once it has started, waits for the group on this thread while another
// thread opens the gate (the waiter asleep, or on its way to sleep, as the
// task goes on).
template <class Group, class Then>
void wait_for_a_task_released_meanwhile(Group& g, Then then) {
    std::latch started(1);
    gate release;
    g.run([&] {
        started.count_down();
        release.wait();
        then();
    });
    started.wait();
    std::thread opener([&] { release.open(); });
    g.wait();
    opener.join();
}

template <class Pool, bool Erased, int Threads = 2>
using group_setup = executor_setup<Pool, Erased, Threads>;

using group_setups =
    std::tuple<group_setup<crew::fixed_pool, false>, group_setup<crew::cached_pool, false>,
               group_setup<crew::scheduled_pool, false>, group_setup<caller_runs_pool, false>,
               group_setup<discarding_pool, false>, group_setup<pool_of<crew::lockfree_queue<1024>>, false>,
               group_setup<pool_of<crew::priority_queue, crew::spin_lock>, false>,
               group_setup<crew::fixed_pool, true>, group_setup<crew::scheduled_pool, true>,
               group_setup<crew::work_stealing_pool, false>, group_setup<crew::work_stealing_pool, true>>;

// Pools of one worker: a recursive wait there must run the sub-group's
// tasks itself, or nothing ever would.
using pools_of_one = std::tuple<group_setup<crew::fixed_pool, false, 1>, group_setup<crew::scheduled_pool, false, 1>,
                                group_setup<pool_of<crew::lockfree_queue<256>>, false, 1>,
                                group_setup<crew::fixed_pool, true, 1>,
                                group_setup<crew::work_stealing_pool, false, 1>>;

long serial_fib(int n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

// TBB's documented example, with a serial cutoff.
template <class Ex>
long fib(Ex& ex, int n) {
    if (n < 12) return serial_fib(n);
    long x = 0, y = 0;
    crew::task_group g(ex);
    g.run([&] { x = fib(ex, n - 1); });
    g.run([&] { y = fib(ex, n - 2); });
    g.wait();
    return x + y;
}

// A task at `depth` runs the next level in a group of its own and waits for
// it; returns the deepest level reached. `off_pool` counts levels that ran
// on a thread other than `worker` (set when a level runs elsewhere).
template <class Ex>
int descend(Ex& ex, int depth, int limit, std::thread::id worker, std::atomic<int>& off_pool) {
    if (std::this_thread::get_id() != worker) off_pool.fetch_add(1);
    if (depth == limit) return depth;
    int reached = -1;
    crew::task_group g(ex);
    g.run([&] { reached = descend(ex, depth + 1, limit, worker, off_pool); });
    g.wait();
    return reached;
}

// A parallel quicksort: the recursion TBB's benchmarks use.
template <class Ex>
void quicksort(Ex& ex, int* first, int* last) {
    while (last - first > 64) {
        int* const middle = first + (last - first) / 2;
        std::nth_element(first, middle, last); // the median: both halves shrink
        crew::task_group g(ex);
        g.run([&ex, first, middle] { quicksort(ex, first, middle); });
        g.run([&ex, middle, last] { quicksort(ex, middle + 1, last); });
        g.wait();
        return;
    }
    std::sort(first, last);
}

} // namespace

BOOST_AUTO_TEST_SUITE(task_group)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(wait_returns_after_every_task_ran_once, Setup, group_setups) {
    Setup s;
    crew::task_group g(s.ex());
    std::vector<std::atomic<int>> runs(200);
    for (auto& r : runs) g.run([&r] { r.fetch_add(1); });
    g.wait();
    BOOST_TEST(std::all_of(runs.begin(), runs.end(), [](const auto& r) { return r.load() == 1; }));
    BOOST_TEST(g.pending() == 0u);
    BOOST_TEST(g.completed() == 200u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(recursive_groups_compute_fibonacci, Setup, group_setups) {
    Setup s;
    decltype(auto) ex = s.ex();
    BOOST_TEST(fib(ex, 20) == serial_fib(20));
    // The same recursion started on the pool: every wait there is a worker's.
    BOOST_TEST(s.pool.submit([&] { return fib(ex, 18); }).get() == serial_fib(18));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_parallel_quicksort_sorts, Setup, group_setups) {
    Setup s;
    decltype(auto) ex = s.ex();
    std::vector<int> v(20'000);
    std::mt19937 random(25);
    for (int& x : v) x = static_cast<int>(random() % 1000);
    std::vector<int> expected = v;
    std::sort(expected.begin(), expected.end());
    quicksort(ex, v.data(), v.data() + v.size());
    BOOST_TEST(v == expected);
}

// The recursive proof: each level waits for the next inside a task on the
// pool's only worker. A wait that blocked there would wait for a task queued
// behind itself for ever (the timeout would fail the case).
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(recursive_groups_depth_20_complete_on_a_pool_of_one, Setup, pools_of_one) {
    Setup s;
    decltype(auto) ex = s.ex();
    std::atomic<int> off_pool{0};
    const int reached = s.pool
                            .submit([&] { return descend(ex, 0, 20, std::this_thread::get_id(), off_pool); })
                            .get();
    BOOST_TEST(reached == 20);
    BOOST_TEST(off_pool.load() == 0); // every level ran on the one worker
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_binary_tree_of_groups_completes_on_a_pool_of_one) {
    crew::fixed_pool pool(1);
    std::atomic<int> leaves{0};
    std::function<void(int)> grow = [&](int depth) {
        if (depth == 0) {
            leaves.fetch_add(1);
            return;
        }
        crew::task_group g(pool);
        g.run([&, depth] { grow(depth - 1); });
        g.run([&, depth] { grow(depth - 1); });
        g.wait();
    };
    pool.submit([&] { grow(10); }).get();
    BOOST_TEST(leaves.load() == 1024);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_task_may_run_more_tasks_in_its_own_group) {
    crew::fixed_pool pool(3);
    crew::task_group g(pool);
    std::atomic<int> ran{0};
    std::function<void(int)> spread = [&](int depth) {
        ran.fetch_add(1);
        if (depth == 0) return;
        g.run([&, depth] { spread(depth - 1); });
        g.run([&, depth] { spread(depth - 1); });
    };
    g.run([&] { spread(8); });
    g.wait();
    BOOST_TEST(ran.load() == 511); // 2^9 - 1: every task run before wait() returned
    BOOST_TEST(g.completed() == 511u);
    BOOST_TEST(g.pending() == 0u);
}

// Outside the pool too, the waiting thread runs what no worker has started.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(wait_runs_tasks_no_worker_started_on_the_waiting_thread) {
    gate held;
    crew::fixed_pool pool(1);
    occupy(pool, held, 1);
    crew::task_group g(pool);
    std::vector<std::thread::id> ran_on(3);
    for (auto& id : ran_on) g.run([&id] { id = std::this_thread::get_id(); });
    BOOST_TEST(g.pending() == 3u);
    g.wait();
    for (const auto& id : ran_on) BOOST_TEST((id == std::this_thread::get_id()));
    BOOST_TEST(g.completed() == 3u);
    held.open();
    pool.wait_idle(); // the trampolines run now and find nothing to do
    BOOST_TEST(g.completed() == 3u);
}

// The only worker runs the parent, which runs a child and waits for it
// without a group wait: only the waiting test thread can run the child,
// after sleeping while the parent ran; a new task must wake it.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_task_run_by_a_running_task_wakes_the_waiter) {
    crew::fixed_pool pool(1);
    crew::task_group g(pool);
    std::latch child_done(1);
    std::thread::id child_ran_on;
    wait_for_a_task_released_meanwhile(g, [&] { // the parent
        g.run([&] {
            child_ran_on = std::this_thread::get_id();
            child_done.count_down();
        });
        child_done.wait();
    });
    BOOST_TEST((child_ran_on == std::this_thread::get_id()));
    BOOST_TEST(g.completed() == 2u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(wait_sleeps_until_a_running_task_finishes) {
    crew::fixed_pool pool(1);
    crew::task_group g(pool);
    std::atomic<bool> finished{false};
    wait_for_a_task_released_meanwhile(g, [&] { finished = true; });
    BOOST_TEST(finished.load());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(wait_rethrows_the_first_exception_once) {
    gate held;
    crew::fixed_pool pool(1);
    occupy(pool, held, 1);
    crew::task_group g(pool);
    std::atomic<int> ran{0};
    g.run([] { throw custom_error(1); });
    g.run([] { throw custom_error(2); });
    g.run([&] { ran.fetch_add(1); }); // a failure does not stop the others
    held.open();
    pool.wait_idle(); // FIFO on one worker: 1 fails first
    BOOST_CHECK_EXCEPTION(g.wait(), custom_error, has_code(1));
    BOOST_CHECK_NO_THROW(g.wait()); // reported once
    BOOST_TEST(ran.load() == 1);
    BOOST_TEST(g.completed() == 3u); // a task that threw ran to its end

    // The group goes on: a later failure is the next wait's.
    g.run([] { throw custom_error(3); });
    BOOST_CHECK_EXCEPTION(g.wait(), custom_error, has_code(3));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(one_of_several_concurrent_waits_rethrows) {
    crew::fixed_pool pool(2);
    crew::task_group g(pool);
    std::latch started(1);
    gate release;
    g.run([&] {
        started.count_down();
        release.wait();
        throw custom_error(4);
    });
    started.wait();
    std::atomic<int> caught{0};
    auto waiter = [&] {
        try {
            g.wait();
        } catch (const custom_error&) {
            caught.fetch_add(1);
        }
    };
    std::thread a(waiter), b(waiter);
    release.open();
    waiter();
    a.join();
    b.join();
    BOOST_TEST(caught.load() == 1);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(pending_and_completed_count_progress) {
    gate held;
    crew::fixed_pool pool(1);
    occupy(pool, held, 1);
    crew::task_group g(pool);
    BOOST_TEST(g.pending() == 0u);
    BOOST_TEST(g.completed() == 0u);
    for (int i = 0; i < 3; ++i) g.run([] {});
    BOOST_TEST(g.pending() == 3u);
    BOOST_TEST(g.completed() == 0u);
    held.open();
    pool.wait_idle();
    BOOST_TEST(g.pending() == 0u);
    BOOST_TEST(g.completed() == 3u);
    g.wait();
    BOOST_TEST(g.completed() == 3u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_drops_tasks_not_started_and_later_runs) {
    gate held;
    crew::fixed_pool pool(1);
    occupy(pool, held, 1);
    crew::task_group g(pool);
    std::atomic<int> ran{0};
    for (int i = 0; i < 5; ++i) g.run([&] { ran.fetch_add(1); });
    BOOST_TEST(g.pending() == 5u);
    BOOST_TEST(!g.is_cancelled());
    g.cancel();
    BOOST_TEST(g.is_cancelled());
    BOOST_TEST(g.pending() == 0u); // dropped at once, not when their trampolines come round
    g.run([&] { ran.fetch_add(1); }); // final: does nothing
    BOOST_TEST(g.pending() == 0u);
    held.open();
    pool.wait_idle(); // the five trampolines run and find nothing
    BOOST_CHECK_NO_THROW(g.wait());
    BOOST_TEST(ran.load() == 0);
    BOOST_TEST(g.completed() == 0u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_from_a_task_drops_its_queued_siblings) {
    gate held;
    crew::fixed_pool pool(1);
    occupy(pool, held, 1);
    crew::task_group g(pool);
    std::atomic<int> ran{0};
    g.run([&] { g.cancel(); });
    for (int i = 0; i < 4; ++i) g.run([&] { ran.fetch_add(1); });
    held.open();
    pool.wait_idle(); // FIFO: the canceller runs first
    g.wait();
    BOOST_TEST(ran.load() == 0);
    BOOST_TEST(g.completed() == 1u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_requests_stop_for_running_tasks) {
    crew::fixed_pool pool(1);
    crew::task_group g(pool);
    std::latch started(1);
    std::atomic<bool> saw_stop{false};
    g.run([&](std::stop_token token) {
        std::latch stopped(1);
        std::stop_callback on_stop(token, [&] { stopped.count_down(); });
        started.count_down();
        stopped.wait(); // only cancel() ends this task
        saw_stop = token.stop_requested();
    });
    started.wait();
    g.cancel();
    g.wait();
    BOOST_TEST(saw_stop.load());
    BOOST_TEST(g.completed() == 1u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_stop_token_task_gets_the_groups_token) {
    crew::fixed_pool pool(2);
    crew::task_group g(pool);
    std::vector<std::stop_token> tokens(2);
    g.run([&](std::stop_token t) { tokens[0] = t; });
    g.run([&](std::stop_token t) { tokens[1] = t; });
    g.wait();
    for (const auto& t : tokens) {
        BOOST_TEST(t.stop_possible());
        BOOST_TEST(!t.stop_requested());
    }
    g.cancel();
    for (const auto& t : tokens) BOOST_TEST(t.stop_requested()); // one source: the group's
}

// A discard policy drops the trampoline: the group hears of it.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_discarded_task_makes_wait_throw_rejected_execution_error) {
    gate held;
    discarding_pool pool(one_worker_one_slot);
    occupy(pool, held, 1);
    pool.execute([] {}); // fills the queue
    crew::task_group g(pool);
    std::atomic<bool> ran{false};
    g.run([&] { ran = true; }); // discarded inside run()
    BOOST_TEST(g.pending() == 0u);
    BOOST_CHECK_THROW(g.wait(), crew::rejected_execution_error);
    BOOST_CHECK_NO_THROW(g.wait());
    held.open();
    pool.wait_idle();
    BOOST_TEST(!ran.load());
    BOOST_TEST(g.completed() == 0u);
}

// discard_oldest_policy drops an already queued trampoline later.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_queued_task_discarded_as_oldest_makes_wait_throw) {
    gate held;
    crew::basic_executor<crew::bounded_queue, crew::discard_oldest_policy> pool(one_worker_one_slot);
    occupy(pool, held, 1);
    crew::task_group g(pool);
    std::atomic<bool> ran{false};
    g.run([&] { ran = true; }); // queued
    BOOST_TEST(g.pending() == 1u);
    pool.execute([] {}); // the queue is full: our task, the oldest, goes
    BOOST_TEST(g.pending() == 0u);
    BOOST_CHECK_THROW(g.wait(), crew::rejected_execution_error);
    held.open();
    pool.wait_idle();
    BOOST_TEST(!ran.load());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(abort_policy_throws_from_run_and_leaves_the_group_consistent) {
    crew::fixed_pool pool(1);
    pool.shutdown();
    crew::task_group g(pool);
    std::atomic<int> ran{0};
    BOOST_CHECK_THROW(g.run([&] { ran.fetch_add(1); }), crew::rejected_execution_error);
    BOOST_TEST(g.pending() == 0u);
    BOOST_CHECK_NO_THROW(g.wait()); // the throw was the answer: no cancellation_error besides
    BOOST_CHECK_THROW(g.run([&] { ran.fetch_add(1); }), crew::rejected_execution_error);
    BOOST_CHECK_NO_THROW(g.wait());
    BOOST_TEST(ran.load() == 0);
    BOOST_TEST(g.completed() == 0u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(after_an_abort_on_a_full_pool_the_group_goes_on) {
    gate held;
    crew::basic_executor<crew::bounded_queue> pool(one_worker_one_slot);
    occupy(pool, held, 1);
    pool.execute([] {}); // fills the queue
    crew::task_group g(pool);
    std::atomic<int> ran{0};
    BOOST_CHECK_THROW(g.run([&] { ran.fetch_add(1); }), crew::rejected_execution_error);
    held.open();
    pool.wait_idle();
    g.run([&] { ran.fetch_add(10); });
    g.wait();
    BOOST_TEST(ran.load() == 10);
    BOOST_TEST(g.completed() == 1u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(caller_runs_policy_runs_the_task_inside_run) {
    gate held;
    crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> pool(one_worker_one_slot);
    occupy(pool, held, 1);
    pool.execute([] {}); // fills the queue
    crew::task_group g(pool);
    std::thread::id ran_on, child_ran_on;
    g.run([&] {
        ran_on = std::this_thread::get_id();
        g.run([&] { child_ran_on = std::this_thread::get_id(); }); // inline as well
    });
    BOOST_TEST((ran_on == std::this_thread::get_id()));
    BOOST_TEST((child_ran_on == std::this_thread::get_id()));
    BOOST_TEST(g.pending() == 0u);
    BOOST_TEST(g.completed() == 2u);
    BOOST_CHECK_NO_THROW(g.wait());
    held.open();
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(caller_runs_policy_on_a_shut_down_pool_discards_visibly) {
    caller_runs_pool pool(1);
    pool.shutdown();
    crew::task_group g(pool);
    std::atomic<bool> ran{false};
    g.run([&] { ran = true; });
    BOOST_CHECK_THROW(g.wait(), crew::rejected_execution_error);
    BOOST_TEST(!ran.load());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_task_dropped_from_shutdown_nows_list_makes_wait_throw_cancellation_error) {
    gate held;
    crew::fixed_pool pool(1);
    occupy(pool, held, 1);
    crew::task_group g(pool);
    std::atomic<int> ran{0};
    g.run([&] { ran.fetch_add(1); });
    g.run([&] { ran.fetch_add(1); });
    std::vector<crew::task> left = pool.shutdown_now();
    BOOST_TEST(left.size() == 2u);
    BOOST_TEST(g.pending() == 2u);
    left.clear(); // destroyed unrun
    BOOST_TEST(g.pending() == 0u);
    BOOST_CHECK_THROW(g.wait(), crew::cancellation_error);
    BOOST_TEST(ran.load() == 0);
    held.open();
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_cancelled_group_hears_nothing_of_dropped_tasks) {
    gate held;
    crew::fixed_pool pool(1);
    occupy(pool, held, 1);
    crew::task_group g(pool);
    g.run([] {});
    g.cancel();
    std::vector<crew::task> left = pool.shutdown_now();
    left.clear();
    BOOST_CHECK_NO_THROW(g.wait());
    held.open();
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(before_execute_refusing_a_task_reaches_wait) {
    crew::pool_options options{.core_pool_size = 1, .maximum_pool_size = 1};
    options.before_execute = [] { throw custom_error(5); };
    crew::fixed_pool pool(options);
    crew::task_group g(pool);
    std::atomic<bool> ran{false};
    g.run([&] { ran = true; });
    pool.wait_idle(); // the worker takes the trampoline first; the hook refuses it
    BOOST_CHECK_EXCEPTION(g.wait(), custom_error, has_code(5));
    BOOST_TEST(!ran.load());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(after_execute_sees_a_group_tasks_exception) {
    escaped_message escaped; // before the pool: its hook uses it
    crew::pool_options options{.core_pool_size = 1, .maximum_pool_size = 1};
    options.after_execute = escaped.hook();
    crew::fixed_pool pool(options);
    crew::task_group g(pool);
    g.run([] { throw std::out_of_range("from the group"); });
    BOOST_TEST(escaped.future().get() == "from the group");
    BOOST_CHECK_THROW(g.wait(), std::out_of_range); // and the group still has it
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(the_destructor_waits_runs_what_is_queued_and_does_not_rethrow) {
    gate held;
    crew::fixed_pool pool(1);
    occupy(pool, held, 1);
    std::atomic<int> ran{0};
    {
        crew::task_group g(pool);
        g.run([&] {
            ran.fetch_add(1);
            throw custom_error(6);
        });
        g.run([&] { ran.fetch_add(1); });
    } // runs both here, swallows the exception
    BOOST_TEST(ran.load() == 2);
    held.open();
    pool.wait_idle(); // the trampolines outlive the group and find nothing
    BOOST_TEST(ran.load() == 2);
}

// Trampolines of a group that finished long ago, many of them: each touches
// only its own entry (ASan: no use after free).
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(trampolines_running_after_their_group_is_gone_do_nothing) {
    gate held;
    crew::fixed_pool pool(1);
    occupy(pool, held, 1);
    std::atomic<int> ran{0};
    for (int round = 0; round < 10; ++round) {
        crew::task_group g(pool);
        for (int i = 0; i < 10; ++i) g.run([&] { ran.fetch_add(1); });
        g.wait();
    }
    BOOST_TEST(ran.load() == 100);
    held.open();
    pool.wait_idle();
    BOOST_TEST(ran.load() == 100);
}

// Many runs between two waits: claimed entries are unlinked on the way
// (counts stay right; ASan's leak check sees every entry freed).
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(many_runs_between_waits) {
    crew::fixed_pool pool(2);
    crew::task_group g(pool);
    std::atomic<int> ran{0};
    for (int i = 0; i < 20'000; ++i) g.run([&] { ran.fetch_add(1); });
    g.wait();
    BOOST_TEST(ran.load() == 20'000);
    BOOST_TEST(g.completed() == 20'000u);
    BOOST_TEST(g.pending() == 0u);
}

// A callable's captures are released before wait() returns, even when a
// worker ran it.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_tasks_callable_is_destroyed_before_wait_returns) {
    crew::fixed_pool pool(2);
    auto held = std::make_shared<int>(0);
    {
        crew::task_group g(pool);
        for (int i = 0; i < 50; ++i) g.run([held] { (void)held; });
        g.wait();
        BOOST_TEST(held.use_count() == 1);
    }
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(run_rejects_an_empty_callable) {
    crew::fixed_pool pool(1);
    crew::task_group g(pool);
    std::function<void()> empty;
    BOOST_CHECK_THROW(g.run(empty), std::invalid_argument);
    BOOST_TEST(g.pending() == 0u);
    g.wait();
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_group_over_a_type_erased_handle_takes_any_pool) {
    crew::fixed_pool fixed(2);
    crew::scheduled_pool scheduled(1);
    std::atomic<int> ran{0};
    for (crew::any_executor ex : {crew::any_executor(fixed), crew::any_executor(scheduled)}) {
        crew::task_group<> g(ex);
        static_assert(std::is_same_v<decltype(g), crew::task_group<crew::any_executor>>);
        g.run([&] { ran.fetch_add(1); });
        g.wait();
    }
    crew::task_group deduced(fixed);
    static_assert(std::is_same_v<decltype(deduced), crew::task_group<crew::fixed_pool>>);
    BOOST_TEST(&deduced.executor() == &fixed);
    BOOST_TEST(ran.load() == 2);
}

BOOST_AUTO_TEST_SUITE_END()
