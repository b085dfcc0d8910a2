// What a woken worker the OS has not yet run may hold up, reached on purpose
// with the consumer_woken seam (a consumer woken, its wake-up not yet
// withdrawn: where a descheduled thread sits on a busy machine):
//
// - Later tasks: a publish that finds a wake-up in flight for longer than
//   event_count::wake_age_bound wakes another sleeper, so tasks queued
//   behind the held worker start on another while it is held. Without the
//   age bound they wait until it runs (a whole time slice, 200 ms measured
//   in issue #31).
// - A shrink: after set_maximum_pool_size(n) returns, surplus workers woken
//   by it look at their interrupt before they take a task, so tasks
//   submitted after the call run on at most n workers. Without that, every
//   woken worker took one first (3 or 4 of 4 running after a shrink to 2).
//
// Both hold the woken workers at the seam, so they fail against the old code
// every run, not by chance; neither asserts a latency (the time T2 waited is
// reported, not checked: doc/benchmarks.md measures it).
#include "../common/seams.hpp"
#include "pool_mixes.hpp"
#include "support.hpp"

#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <future>
#include <limits>
#include <thread>

using namespace crew_test;
namespace utf = boost::unit_test;
using crew_test_common::seam;
using crew_test_common::seam_gate;

namespace {

const crew::pool_options four_workers{
    .core_pool_size = 4, .maximum_pool_size = 4, .keep_alive = std::chrono::seconds(60), .queue_capacity = 64};

// Workers asleep in the queue now (announced: a wake-up issued from here on
// reaches each through the consumer_woken seam).
template <class Pool>
std::size_t parked(Pool& pool) {
    if constexpr (requires { pool.queue().parked_consumers(); })
        return pool.queue().parked_consumers();
    else
        return pool.queue().wait_statistics().waiting;
}

// Lets the wake-up (or search) of the thread just caught at a seam grow
// older than the age bound, twenty times over. (Timing is the behaviour
// here: the bound is one.)
void let_the_held_one_age() {
    const auto caught_at = clock::now();
    while (clock::now() - caught_at < 20 * crew::detail::wake_age_bound) std::this_thread::yield();
}

// The FIFO queue policies: each parks its workers on an event count whose
// publish follows the in-flight wake rule.
using fifo_pools = boost::mpl::list<crew::fixed_pool, pool_of<crew::bounded_queue>, pool_of<crew::grow_first_queue>,
                                    pool_of<crew::lockfree_queue<256>>>;

// Every policy that parks its workers on an event count, for the shrink.
using parking_pools =
    boost::mpl::list<crew::fixed_pool, pool_of<crew::bounded_queue>, pool_of<crew::grow_first_queue>,
                     pool_of<crew::priority_queue>, pool_of<crew::lockfree_queue<256>>, crew::scheduled_pool,
                     crew::work_stealing_pool>;

} // namespace

BOOST_AUTO_TEST_SUITE(held_wakeups)

BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(tasks_queued_behind_a_held_woken_worker_start_on_another, Pool, fifo_pools) {
    std::atomic<int> t1_ran{0};
    std::promise<clock::duration> t2, t3; // outlive the pool: its tasks set them
    Pool pool(four_workers);
    BOOST_TEST_REQUIRE(pool.prestart_all_core_threads() == 4u);
    seam_gate held(seam::consumer_woken);
    // T1 wakes one worker, which the seam holds. A worker on its way to sleep
    // may take T1 without any wake-up; then T1 ran, nobody was caught, and
    // the round is tried again.
    for (int round = 0; held.caught() == 0; ++round) {
        BOOST_TEST_REQUIRE(round < 50);
        BOOST_TEST_REQUIRE(eventually([&] { return parked(pool) == 4; }));
        const int before = t1_ran.load();
        pool.execute([&] { t1_ran.fetch_add(1); });
        BOOST_TEST_REQUIRE(eventually([&] { return held.caught() == 1 || t1_ran.load() > before; }));
    }
    // Older than the age bound, the wake-up in flight no longer keeps the
    // next publish silent.
    let_the_held_one_age();

    const auto queued = clock::now();
    pool.execute([&] { t2.set_value(clock::now() - queued); });
    pool.execute([&] { t3.set_value(clock::now() - queued); });
    auto f2 = t2.get_future(), f3 = t3.get_future();
    const bool t2_while_held = f2.wait_for(scaled(10s)) == std::future_status::ready;
    const bool t3_while_held = f3.wait_for(scaled(10s)) == std::future_status::ready;
    const int still_held = held.caught();
    held.release();
    BOOST_TEST_REQUIRE(t2_while_held); // the old rule: T2 waits for the held worker
    BOOST_TEST_REQUIRE(t3_while_held);
    BOOST_TEST(still_held == 1);
    BOOST_TEST_MESSAGE("T2 started "
                       << std::chrono::duration_cast<std::chrono::microseconds>(f2.get()).count()
                       << " us after it was queued, the woken worker held");
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
    BOOST_TEST(pool.completed_task_count() == static_cast<std::uint64_t>(t1_ran.load()) + 2u);
}

// The age is the oldest untaken wake-up's, not the newest's (the adversarial
// review of #31). Worker A, woken for T1, is held; T2's publish, past the
// bound, wakes B, which takes the older T1 and is busy in it. B's pass-on
// must then see A's wake-up as old and wake C for T2. Stamped by the newest
// wake-up (B's, fresh), it woke nobody, and T2 waited for A (18 runs in 20).
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(the_age_bound_counts_from_the_oldest_untaken_wakeup, Pool, fifo_pools) {
    std::atomic<int> generation{0}; // round r's T1 blocks until generation > r
    std::atomic<int> t1_started{0};
    std::promise<void> t2; // outlive the pool: its tasks use them
    Pool pool(crew::pool_options{.core_pool_size = 3, .maximum_pool_size = 3, .queue_capacity = 64});
    BOOST_TEST_REQUIRE(pool.prestart_all_core_threads() == 3u);
    seam_gate held(seam::consumer_woken);
    for (int round = 0;; ++round) {
        BOOST_TEST_REQUIRE(round < 50);
        BOOST_TEST_REQUIRE(eventually([&] { return parked(pool) == 3; }));
        const int before = t1_started.load();
        pool.execute([&, round] {
            t1_started.fetch_add(1);
            (void)eventually([&] { return generation.load() > round; }, 60s);
        });
        BOOST_TEST_REQUIRE(eventually([&] { return held.caught() == 1 || t1_started.load() > before; }));
        if (held.caught() == 1) break;
        generation = round + 1; // T1 was taken without a wake-up: let it go and try again
    }
    let_the_held_one_age();
    pool.execute([&] { t2.set_value(); }); // wakes B, which takes T1 and stays in it
    const bool t2_while_held = t2.get_future().wait_for(scaled(10s)) == std::future_status::ready;
    held.release();
    generation = std::numeric_limits<int>::max();
    BOOST_TEST_REQUIRE(t2_while_held);
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

// The same for the work-stealing throttle: searcher A is held; T1, past the
// bound, wakes B, whose own search finds T1 and which stays in it; T2,
// submitted as T1 starts, must wake C. Stamped by the newest search (B's),
// it found "a live search" and woke nobody (10 runs in 10).
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(the_search_age_counts_from_the_oldest_search) {
    std::atomic<bool> let_go{false};
    std::promise<void> t1, t2; // outlive the pool: its tasks use them
    crew::work_stealing_pool pool(crew::pool_options{.core_pool_size = 3, .maximum_pool_size = 3});
    BOOST_TEST_REQUIRE(pool.prestart_all_core_threads() == 3u);
    BOOST_TEST_REQUIRE(eventually([&] { return parked(pool) == 3; }));
    seam_gate held(seam::work_stealing_search_failed);
    std::promise<void> t0;
    pool.execute([&] { t0.set_value(); }); // its worker searches again, finds nothing, and is held
    BOOST_TEST_REQUIRE((t0.get_future().wait_for(scaled(10s)) == std::future_status::ready));
    BOOST_TEST_REQUIRE(held.wait_caught(1, scaled(10s)));
    let_the_held_one_age();
    pool.execute([&] {
        t1.set_value();
        (void)eventually([&] { return let_go.load(); }, 60s);
    });
    BOOST_TEST_REQUIRE((t1.get_future().wait_for(scaled(10s)) == std::future_status::ready));
    pool.execute([&] { t2.set_value(); });
    const bool t2_while_held = t2.get_future().wait_for(scaled(10s)) == std::future_status::ready;
    held.release();
    let_go = true;
    BOOST_TEST_REQUIRE(t2_while_held);
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

// The work-stealing pool's throttle: a submitter wakes nobody while a worker
// searches. Its only searcher is held after a failed search (still counted
// as searching: where a descheduled searcher, or one moving a slow task out,
// sits). A search older than the age bound no longer keeps the submitter
// silent, so T2 starts on a parked worker while the searcher is held.
BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE(a_task_submitted_while_the_searcher_is_held_starts_on_another) {
    std::promise<void> t1;
    std::promise<clock::duration> t2; // outlive the pool: its tasks set them
    crew::work_stealing_pool pool(four_workers);
    BOOST_TEST_REQUIRE(pool.prestart_all_core_threads() == 4u);
    BOOST_TEST_REQUIRE(eventually([&] { return parked(pool) == 4; }));
    seam_gate held(seam::work_stealing_search_failed);
    pool.execute([&] { t1.set_value(); }); // the worker woken for it searches again, finds nothing, and is held
    BOOST_TEST_REQUIRE((t1.get_future().wait_for(scaled(10s)) == std::future_status::ready));
    BOOST_TEST_REQUIRE(held.wait_caught(1, scaled(10s)));
    let_the_held_one_age();

    const auto queued = clock::now();
    pool.execute([&] { t2.set_value(clock::now() - queued); });
    auto f2 = t2.get_future();
    const bool t2_while_held = f2.wait_for(scaled(10s)) == std::future_status::ready;
    held.release();
    BOOST_TEST_REQUIRE(t2_while_held); // the old throttle: T2 waits for the held searcher
    BOOST_TEST_MESSAGE("T2 started " << std::chrono::duration_cast<std::chrono::microseconds>(f2.get()).count()
                                     << " us after it was queued, the searcher held");
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(after_a_shrink_returns_tasks_run_on_at_most_the_new_maximum, Pool, parking_pools) {
    constexpr int tasks = 8;
    std::atomic<int> running{0}, most{0};
    gate go; // outlive the pool: its tasks wait on them
    run_counter ran;
    Pool pool(four_workers);
    BOOST_TEST_REQUIRE(pool.prestart_all_core_threads() == 4u);
    pool.set_core_pool_size(2); // wakes the idle workers once; they park again
    BOOST_TEST_REQUIRE(eventually([&] { return parked(pool) == 4; }));

    // set_maximum_pool_size wakes all four; each is held as it wakes, before
    // it withdraws, while tasks are submitted behind the returned call.
    seam_gate held(seam::consumer_woken, seam_gate::any_thread, 4);
    pool.set_maximum_pool_size(2);
    BOOST_TEST_REQUIRE(held.wait_caught(4, scaled(10s)));

    for (int i = 0; i < tasks; ++i)
        pool.execute([&] {
            const int now = running.fetch_add(1) + 1;
            for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {}
            go.wait();
            running.fetch_sub(1);
            ran.hit();
        });
    held.release();
    // Two workers stay and take a task each; the other two leave. Then the
    // tasks are let go one pair after another.
    BOOST_TEST(eventually([&] { return running.load() == 2 && pool.pool_size() == 2u; }));
    go.open();
    BOOST_TEST_REQUIRE(ran.wait_for_count(tasks));
    BOOST_TEST(most.load() == 2); // today's code before the fix: 4
    BOOST_TEST(pool.largest_pool_size() == 4u);
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

BOOST_AUTO_TEST_SUITE_END()
