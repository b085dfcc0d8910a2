// Fork-join on every pool (issue #32): a worker that forks leaves no pool
// task behind for what it ran itself; a worker that waits (task_group::wait,
// future::get) runs its pool's queued work instead of sleeping, so a task
// that waits for work queued behind it cannot deadlock a pool of one; and
// crew::isolate keeps a wait to the spawns of its own region.
#include "pool_mixes.hpp"
#include "support.hpp"

#include <crew/task_group.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

template <class Pool>
Pool make_pool(int threads) {
    return Pool(crew::pool_options{.core_pool_size = static_cast<std::size_t>(threads),
                                   .maximum_pool_size = static_cast<std::size_t>(threads),
                                   .keep_alive = std::chrono::seconds(60),
                                   .queue_capacity = 1024});
}

// composition.md's pattern: every node forks both halves and waits.
template <class Pool>
long fib(Pool& pool, int n) {
    if (n < 2) return n;
    long a = 0, b = 0;
    crew::task_group g(pool);
    g.run([&] { a = fib(pool, n - 1); });
    g.run([&] { b = fib(pool, n - 2); });
    g.wait();
    return a + b;
}

constexpr long fib_of_18 = 2584;

} // namespace

BOOST_AUTO_TEST_SUITE(fork_join)

// fib(18) makes 4,180 groups and 8,360 tasks. On a pool of one, recursion
// started on its worker, the worker runs every one of them itself: before
// issue #32 each left its pool task in the queue (a shell; thousands when
// the answer was back). Now at most the spawn tickets are queued.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_worker_that_forks_and_runs_everything_itself_leaves_no_shells, Pool, pool_mixes) {
    auto pool = make_pool<Pool>(1);
    auto answer = pool.submit([&] {
        const long value = fib(pool, 18);
        return std::pair{value, pool.queue_size()};
    });
    const auto [value, queued] = answer.get();
    BOOST_TEST(value == fib_of_18);
    BOOST_TEST(queued <= crew::detail::spawn_deque::max_tickets);
}

// The hooks and statistics count the pool's tasks: the root, and a ticket
// each (at most max_tickets of them for one worker's spawns); the 8,360
// tasks the worker ran itself are not the pool's.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(the_hooks_see_the_pools_tasks_not_the_tasks_a_worker_ran_itself) {
    std::atomic<int> before{0};
    crew::fixed_pool pool(crew::pool_options{.core_pool_size = 1,
                                             .maximum_pool_size = 1,
                                             .before_execute = [&] { before.fetch_add(1); }});
    BOOST_TEST(pool.submit([&] { return fib(pool, 18); }).get() == fib_of_18);
    pool.wait_idle();
    const auto most = 1 + crew::detail::spawn_deque::max_tickets;
    BOOST_TEST(before.load() >= 1);
    BOOST_TEST(before.load() <= static_cast<int>(most));
    BOOST_TEST(pool.completed_task_count() == static_cast<std::uint64_t>(before.load()));
}

// A task that waits for a task queued behind it, on a pool of one: get()
// and wait() on the worker run it (before issue #32 the worker slept for
// ever). Every queue policy.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(get_on_the_only_worker_runs_the_task_it_waits_for, Pool, pool_mixes) {
    auto pool = make_pool<Pool>(1);
    auto outer = pool.submit([&] {
        auto inner = pool.submit([] { return 21; });
        auto waited = pool.submit([] { return 2; });
        waited.wait();
        return inner.get() * waited.get();
    });
    BOOST_REQUIRE(outer.wait_for(scaled(30s)) == std::future_status::ready);
    BOOST_TEST(outer.get() == 42);
}

// No worker sleeps in a wait while its pool has queued work: of two
// workers, one is blocked in a task, the other waits in get() for it; tasks
// submitted from outside meanwhile run on the waiting worker.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_waiting_worker_runs_the_pools_queued_tasks, Pool, pool_mixes) {
    auto pool = make_pool<Pool>(2);
    gate release;
    std::latch blocker_started(1);
    auto blocker = pool.submit([&] {
        blocker_started.count_down();
        release.wait();
        return 1;
    });
    blocker_started.wait();
    std::atomic<std::thread::id> waiter_id{};
    std::latch waiting(1);
    auto waiter = pool.submit([&] {
        waiter_id = std::this_thread::get_id();
        waiting.count_down();
        return blocker.get();
    });
    waiting.wait();
    constexpr int tasks = 10;
    std::latch ran(tasks);
    std::atomic<int> on_the_waiter{0};
    for (int i = 0; i < tasks; ++i)
        pool.execute([&] {
            if (std::this_thread::get_id() == waiter_id.load()) on_the_waiter.fetch_add(1);
            ran.count_down();
        });
    const bool all_ran = eventually([&] { return ran.try_wait(); }, std::chrono::seconds(30));
    release.open();
    BOOST_TEST(all_ran);
    BOOST_TEST(on_the_waiter.load() == tasks);
    BOOST_TEST(waiter.get() == 1);
}

// Inside crew::isolate a wait runs only its region's spawns: T waits for a
// spawn that another worker runs (blocked until the test lets it go), with
// an unrelated task U queued meanwhile. U must not run nested inside T's
// wait. (Without the isolation it does: the waiting worker helps.)
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(isolate_keeps_a_wait_to_the_regions_own_spawns) {
    auto pool = make_pool<crew::fixed_pool>(2);
    std::latch spawn_started(1);
    gate release_spawn;
    std::atomic<bool> t_waiting{false};
    std::atomic<std::thread::id> t_id{};
    std::atomic<bool> u_ran_inside_the_wait{false};
    std::latch u_ran(1);
    auto t = pool.submit([&] {
        t_id = std::this_thread::get_id();
        crew::isolate([&] {
            crew::task_group g(pool);
            g.run([&] {
                spawn_started.count_down();
                release_spawn.wait();
            });
            spawn_started.wait(); // the other worker took it (through its ticket)
            pool.execute([&] {
                if (t_waiting.load() && std::this_thread::get_id() == t_id.load()) u_ran_inside_the_wait = true;
                u_ran.count_down();
            });
            t_waiting = true;
            g.wait();
            t_waiting = false;
        });
    });
    spawn_started.wait();
    // Time for a wrong wait to take U (not needed for a right one).
    (void)eventually([&] { return u_ran.try_wait(); }, std::chrono::milliseconds(200));
    release_spawn.open();
    BOOST_REQUIRE(t.wait_for(scaled(30s)) == std::future_status::ready);
    t.get();
    BOOST_TEST(eventually([&] { return u_ran.try_wait(); }, std::chrono::seconds(30)));
    BOOST_TEST(!u_ran_inside_the_wait.load());
}

BOOST_AUTO_TEST_CASE(isolate_returns_what_fn_returns_and_regions_nest) {
    const void* const outside = crew::detail::current_isolation;
    const int got = crew::isolate([&] {
        const void* const outer = crew::detail::current_isolation;
        BOOST_TEST(outer != outside);
        const void* inner = crew::isolate([] { return crew::detail::current_isolation; });
        BOOST_TEST(inner != outer);
        BOOST_TEST(crew::detail::current_isolation == outer);
        return 7;
    });
    BOOST_TEST(got == 7);
    BOOST_TEST(crew::detail::current_isolation == outside);
    BOOST_CHECK_THROW(crew::isolate([]() -> int { throw std::runtime_error("out"); }), std::runtime_error);
    BOOST_TEST(crew::detail::current_isolation == outside);
}

// Recursion through every pool with more than one worker: the spawns are
// stolen through their tickets, and each waiter helps; the answer is right
// and every group drains.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(fork_join_on_two_workers_computes_the_answer, Pool, pool_mixes) {
    auto pool = make_pool<Pool>(2);
    BOOST_TEST(pool.submit([&] { return fib(pool, 18); }).get() == fib_of_18);
}

// A spawn stolen by another worker (through its ticket) runs inside the
// region it was spawned in: its own waits keep to that region too.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(a_stolen_spawn_runs_inside_its_region) {
    auto pool = make_pool<crew::fixed_pool>(2);
    std::atomic<const void*> region{nullptr};
    std::atomic<const void*> seen_by_the_thief{nullptr};
    std::atomic<std::thread::id> thief{};
    auto t = pool.submit([&] {
        crew::isolate([&] {
            region = crew::detail::current_isolation;
            crew::task_group g(pool);
            std::latch taken(1);
            g.run([&] {
                seen_by_the_thief = crew::detail::current_isolation;
                thief = std::this_thread::get_id();
                taken.count_down();
            });
            taken.wait(); // blocks outside crew: only the other worker can take it
            g.wait();
        });
        return std::this_thread::get_id();
    });
    BOOST_REQUIRE(t.wait_for(scaled(30s)) == std::future_status::ready);
    BOOST_TEST((thief.load() != t.get()));
    BOOST_TEST(region.load() != nullptr);
    BOOST_TEST(seen_by_the_thief.load() == region.load());
}

// A wait off the pool's workers runs only its own group's tasks: here
// another group's task, older on the same worker's deque, takes a mutex the
// waiter holds; running it on the waiter would deadlock. (The adversarial
// review of #32 found the first version doing it.)
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(an_outside_wait_runs_no_other_groups_task) {
    auto pool = make_pool<crew::fixed_pool>(1);
    std::mutex m;
    crew::task_group g(pool);
    std::latch spawned(1);
    gate main_done;
    std::atomic<bool> other_ran_on_main{false};
    const auto main_id = std::this_thread::get_id();
    pool.execute([&] {
        crew::task_group h(pool); // made here: its run() spawns on this worker's deque
        h.run([&] {
            if (std::this_thread::get_id() == main_id) other_ran_on_main = true;
            std::lock_guard lock(m);
        });
        g.run([] {}); // g was made outside: through the pool
        spawned.count_down();
        main_done.wait(); // blocks outside crew until main's wait is over
        h.wait();
    });
    spawned.wait();
    {
        std::lock_guard lock(m);
        g.wait();
    }
    main_done.open();
    pool.wait_idle();
    BOOST_TEST(!other_ran_on_main.load());
}

// A pool with no room for a spawn's ticket (full queue, caller_runs_policy):
// the spawn goes to the RejectPolicy, as a task from outside would, instead
// of waiting on a deque whose owner then blocks outside crew. The first
// version left it there with no ticket, and this hung.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(a_spawn_the_pool_has_no_room_for_goes_to_the_reject_policy) {
    crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> pool(
        crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 2, .queue_capacity = 1});
    gate release_other;
    std::latch other_started(1);
    pool.execute([&] {
        other_started.count_down();
        release_other.wait();
    });
    other_started.wait();
    gate queue_full;
    std::latch forker_started(1);
    std::atomic<bool> child_ran_inline{false};
    auto forker = pool.submit([&] {
        forker_started.count_down();
        queue_full.wait();
        crew::task_group g(pool);
        g.run([&] {
            crew::task_group h(pool);
            std::latch child_done(1);
            const auto me = std::this_thread::get_id();
            h.run([&] {
                child_ran_inline = std::this_thread::get_id() == me;
                child_done.count_down();
            });
            release_other.open();
            child_done.wait(); // blocks outside crew
            h.wait();
        });
        g.wait();
    });
    forker_started.wait();
    std::latch filler_ran(1);
    pool.execute([&] { filler_ran.count_down(); }); // the one queue slot: full now
    queue_full.open();
    BOOST_REQUIRE(forker.wait_for(scaled(30s)) == std::future_status::ready);
    forker.get();
    BOOST_TEST(child_ran_inline.load());
    filler_ran.wait();
}

// A group holds the deque its worker spawned on (a waiter elsewhere may
// steal from it). Taken and let go on that worker, the reference costs no
// read-modify-write; a group destroyed anywhere else, before or after the
// worker leaves, lets go through the shared count. The deque must survive
// both, and be freed once (AddressSanitizer and ThreadSanitizer check this
// in CI: a release on the wrong count is a race or a use after free).
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_group_destroyed_off_its_forking_worker_lets_its_deque_go_once, Pool, pool_mixes) {
    auto pool = make_pool<Pool>(1);
    using group = crew::task_group<Pool>;
    std::unique_ptr<group> handed_out;
    std::latch destroyed(1);
    auto first = pool.submit([&] {
        auto g = std::make_unique<group>(pool);
        int ran = 0;
        g->run([&] { ++ran; });
        g->wait();
        handed_out = std::move(g);
        auto answer = std::pair{ran, handed_out->completed()};
        return answer;
    });
    const auto [ran, completed] = first.get();
    BOOST_TEST(ran == 1);
    BOOST_TEST(completed == 1u);
    // Off the worker while it is alive, then more fork-join on that worker.
    auto later = pool.submit([&] {
        destroyed.wait();
        return fib(pool, 12);
    });
    handed_out.reset();
    destroyed.count_down();
    BOOST_TEST(later.get() == 144);
    // A group that outlives its worker.
    handed_out = pool.submit([&] {
                         auto g = std::make_unique<group>(pool);
                         g->run([] {});
                         g->wait();
                         return g;
                     })
                     .get();
    pool.shutdown();
    BOOST_TEST(pool.await_termination(std::chrono::hours(1)));
    BOOST_TEST(handed_out->completed() == 1u);
    handed_out.reset();
}

BOOST_AUTO_TEST_SUITE_END()
