// crew::work_stealing_pool (doc/policies.md, the work-stealing queue; issue #26): where a task
// goes and in what order it runs (a worker's own tasks newest first, outside
// tasks oldest first), stealing, the Java lifecycle over the deques
// (shutdown_now returns each queued task once, queue_size and purge see the
// deques, wait_idle waits for them, keep-alive), task_group::wait() and
// parallel_for running the waiting worker's own tasks first. What it shares
// with every pool runs in the pool_mixes suites (lifecycle, statistics,
// controls, ...) and the accounting stress tests.
#include "support.hpp"

#include <crew/parallel_for.hpp>
#include <crew/task_group.hpp>
#include <crew/work_stealing_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

// A pool of one worker running a task that waits on `g`: whatever is
// submitted meanwhile queues.
struct one_busy_worker {
    gate g; // outlives the pool, whose destructor joins the worker waiting on it
    crew::work_stealing_pool pool{1};
    one_busy_worker() { occupy(pool, g, 1); }
    ~one_busy_worker() { g.open(); }
};

} // namespace

BOOST_AUTO_TEST_SUITE(work_stealing)

BOOST_AUTO_TEST_CASE(tasks_a_worker_submits_run_newest_first_on_that_worker, *utf::timeout(60)) {
    crew::work_stealing_pool pool(1);
    id_log log;
    pool.submit([&] {
          for (int id = 1; id <= 4; ++id) pool.execute(log.note(id));
      }).get();
    pool.wait_idle();
    BOOST_TEST(log.ids() == (std::vector<int>{4, 3, 2, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(tasks_from_outside_run_oldest_first, *utf::timeout(60)) {
    one_busy_worker busy;
    id_log log;
    for (int id = 1; id <= 4; ++id) busy.pool.execute(log.note(id));
    BOOST_TEST(busy.pool.queue_size() == 4u);
    busy.g.open();
    busy.pool.wait_idle();
    BOOST_TEST(log.ids() == (std::vector<int>{1, 2, 3, 4}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_idle_worker_steals_from_a_busy_workers_deque, *utf::timeout(60)) {
    // The parent queues its children on its own deque and then blocks until
    // they have all run: only the other worker, stealing, can run them.
    crew::work_stealing_pool pool(2);
    constexpr int children = 50;
    std::latch all_ran(children);
    auto parent = pool.submit([&] {
        for (int i = 0; i < children; ++i) pool.execute([&] { all_ran.count_down(); });
        all_ran.wait(); // a stealing failure hangs here: the test's time-out
        return true;
    });
    BOOST_TEST(parent.get());
    BOOST_TEST(pool.completed_task_count() >= 1u);
}

BOOST_AUTO_TEST_CASE(shutdown_now_returns_each_task_in_a_workers_deque_once_and_queue_size_counts_them,
                     *utf::timeout(60)) {
    // Both workers busy (no thief): the first has queued ten children on its
    // own deque.
    crew::work_stealing_pool pool(2);
    gate g;
    std::latch other_started(1), queued(1);
    std::atomic<int> children_ran{0};
    pool.execute([&] {
        other_started.count_down();
        g.wait();
    });
    pool.execute([&] {
        other_started.wait();
        for (int i = 0; i < 10; ++i) pool.execute([&] { ++children_ran; });
        queued.count_down();
        g.wait();
    });
    queued.wait();
    BOOST_TEST(pool.queue_size() == 10u);
    BOOST_TEST(pool.task_count() == 12u);
    std::vector<crew::task> returned = pool.shutdown_now();
    g.open();
    BOOST_TEST(pool.await_termination(scaled(30s)));
    BOOST_TEST(returned.size() == 10u);
    BOOST_TEST(children_ran == 0);
    BOOST_TEST(pool.queue_size() == 0u);
    for (crew::task& t : returned) t.run(false);
    BOOST_TEST(children_ran == 10);
}

BOOST_AUTO_TEST_CASE(shutdown_runs_every_task_queued_in_the_deques, *utf::timeout(60)) {
    // Workers queue children on their own deques while they are held, then
    // shutdown() comes: each child must still run (later submissions, from
    // workers too, are refused, as by any pool after shutdown()).
    crew::work_stealing_pool pool(2);
    gate g;
    std::atomic<int> ran{0};
    std::latch queued(2);
    for (int p = 0; p < 2; ++p)
        pool.execute([&] {
            for (int i = 0; i < 200; ++i) pool.execute([&] { ++ran; });
            queued.count_down();
            g.wait();
        });
    queued.wait();
    pool.shutdown();
    g.open();
    BOOST_TEST(pool.await_termination(scaled(30s)));
    BOOST_TEST(ran == 400);
}

BOOST_AUTO_TEST_CASE(purge_removes_cancelled_futures_from_a_workers_deque, *utf::timeout(60)) {
    crew::work_stealing_pool pool(2);
    gate g;
    std::latch other_started(1), queued(1);
    std::vector<crew::future<int>> futures;
    pool.execute([&] {
        other_started.count_down();
        g.wait();
    });
    pool.execute([&] {
        other_started.wait();
        for (int i = 0; i < 6; ++i) futures.push_back(pool.submit([i] { return i; }));
        queued.count_down();
        g.wait();
    });
    queued.wait();
    for (int i = 0; i < 6; i += 2) futures[static_cast<std::size_t>(i)].cancel(false);
    BOOST_TEST(pool.queue_size() == 6u);
    pool.purge();
    BOOST_TEST(pool.queue_size() == 3u);
    g.open();
    for (int i = 1; i < 6; i += 2) BOOST_TEST(futures[static_cast<std::size_t>(i)].get() == i);
    pool.wait_idle();
    BOOST_TEST(pool.queue_size() == 0u);
}

BOOST_AUTO_TEST_CASE(wait_idle_waits_for_tasks_queued_from_workers, *utf::timeout(60)) {
    crew::work_stealing_pool pool(2);
    std::atomic<int> ran{0};
    for (int p = 0; p < 10; ++p)
        pool.execute([&] {
            for (int i = 0; i < 30; ++i) pool.execute([&] { ++ran; });
        });
    pool.wait_idle();
    BOOST_TEST(ran == 300);
    BOOST_TEST(pool.completed_task_count() == 310u);
}

BOOST_AUTO_TEST_CASE(workers_that_time_out_leave_their_deques_to_the_next, *utf::timeout(60)) {
    crew::work_stealing_pool pool(
        crew::pool_options{.core_pool_size = 2, .keep_alive = 1ms, .allow_core_thread_timeout = true});
    for (int round = 0; round < 3; ++round) {
        std::atomic<int> ran{0};
        pool.submit([&] {
              for (int i = 0; i < 20; ++i) pool.execute([&] { ++ran; });
          }).get();
        pool.wait_idle();
        BOOST_TEST(ran == 20);
        BOOST_TEST(eventually([&] { return pool.pool_size() == 0; }));
    }
}

BOOST_AUTO_TEST_CASE(task_group_wait_on_a_worker_runs_its_own_tasks_newest_first, *utf::timeout(60)) {
    // A FIFO pool's wait() helps oldest first; on a work-stealing worker the
    // group's tasks are on the waiter's own deque, taken newest first (the
    // oldest, the bigger halves in a fork-join, are left to thieves).
    crew::work_stealing_pool pool(1);
    id_log log;
    pool.submit([&] {
          crew::task_group group(pool);
          for (int id = 1; id <= 3; ++id) group.run(log.note(id));
          group.wait();
      }).get();
    BOOST_TEST(log.ids() == (std::vector<int>{3, 2, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(task_group_wait_runs_unrelated_own_tasks_while_its_group_runs_elsewhere, *utf::timeout(60)) {
    // The group's task is stolen by the other worker (the waiter blocks until
    // it is) and waits for a task the waiter queued on its own deque after
    // it: a wait() that slept instead of running its own deque would never
    // let that task run (the other worker is busy in the group's task).
    crew::work_stealing_pool pool(2);
    std::latch own_task_ran(1), stolen(1);
    auto outcome = pool.submit([&] {
        crew::task_group group(pool);
        std::atomic<bool> group_task_ran{false};
        group.run([&] {
            stolen.count_down();
            own_task_ran.wait();
            group_task_ran = true;
        });
        pool.execute([&] { own_task_ran.count_down(); }); // newer, on this worker's deque
        stolen.wait();
        group.wait();
        return group_task_ran.load();
    });
    BOOST_TEST(outcome.get());
}

BOOST_AUTO_TEST_CASE(task_group_wait_on_a_paused_pool_runs_its_own_group, *utf::timeout(60)) {
    // A running task's wait() must not hold its group's task for resume():
    // as on every pool, the tasks wait() runs itself run while paused.
    crew::work_stealing_pool pool(1);
    std::latch queued(1), paused(1);
    std::atomic<bool> ran{false};
    auto outcome = pool.submit([&] {
        crew::task_group group(pool);
        group.run([&] { ran = true; }); // on this worker's deque
        queued.count_down();
        paused.wait();
        group.wait();
        return ran.load();
    });
    queued.wait();
    pool.pause();
    paused.count_down();
    BOOST_TEST(outcome.get());
    pool.resume();
}

BOOST_AUTO_TEST_CASE(fork_join_fibonacci_is_exact_on_one_and_two_workers, *utf::timeout(120)) {
    struct fib {
        crew::work_stealing_pool& pool;
        long operator()(int n) const {
            if (n < 10) return n < 2 ? n : (*this)(n - 1) + (*this)(n - 2);
            long a = 0, b = 0;
            crew::task_group group(pool);
            group.run([&] { a = (*this)(n - 1); });
            group.run([&] { b = (*this)(n - 2); });
            group.wait();
            return a + b;
        }
    };
    for (std::size_t workers : {1u, 2u}) {
        crew::work_stealing_pool pool(workers);
        BOOST_TEST(pool.submit([&] { return fib{pool}(22); }).get() == 17711);
    }
}

BOOST_AUTO_TEST_CASE(parallel_for_on_a_worker_visits_every_index_once, *utf::timeout(60)) {
    crew::work_stealing_pool pool(2);
    std::vector<std::atomic<int>> visits(10000);
    pool.submit([&] { crew::parallel_for(pool, 0, 10000, [&](int i) { ++visits[static_cast<std::size_t>(i)]; }); })
        .get();
    bool once = true;
    for (auto& v : visits) once = once && v.load() == 1;
    BOOST_TEST(once);
}

BOOST_AUTO_TEST_CASE(children_submitted_while_shutdown_now_races_each_end_exactly_once, *utf::timeout(120)) {
    // Outside producers submit parents; each parent submits a child from its
    // worker (its own deque). shutdown_now() comes at a random moment. Every
    // task accepted must run once or come back once; every task refused must
    // be refused visibly (rejected_execution_error).
    std::mt19937 rng(static_cast<unsigned>(std::random_device{}()));
    for (int round = 0; round < 4; ++round) {
        constexpr int parents = 4000;
        std::vector<std::atomic<int>> parent_runs(parents), child_runs(parents);
        std::atomic<int> children_refused{0}, children_accepted{0};
        auto pool = std::make_unique<crew::work_stealing_pool>(2);
        const int stop_after = static_cast<int>(rng() % parents);
        int parents_accepted = 0;
        std::vector<crew::task> returned;
        for (int i = 0; i < parents; ++i) {
            if (i == stop_after) returned = pool->shutdown_now();
            auto& p = *pool;
            const auto parent = [&p, &parent_runs, &child_runs, &children_refused, &children_accepted, i] {
                ++parent_runs[static_cast<std::size_t>(i)];
                try {
                    p.execute([&child_runs, i] { ++child_runs[static_cast<std::size_t>(i)]; });
                    ++children_accepted;
                } catch (const crew::rejected_execution_error&) {
                    ++children_refused;
                }
            };
            try {
                pool->execute(parent);
                ++parents_accepted;
            } catch (const crew::rejected_execution_error&) {
            }
        }
        BOOST_TEST(pool->await_termination(scaled(30s)));
        std::vector<crew::task> late = pool->shutdown_now(); // nothing may be left
        BOOST_TEST(late.empty());
        // What came back runs here (a parent's child is then refused).
        for (crew::task& t : returned) t.run(false);
        int parents_ran = 0, children_ran = 0;
        bool at_most_once = true;
        for (int i = 0; i < parents; ++i) {
            parents_ran += parent_runs[static_cast<std::size_t>(i)];
            children_ran += child_runs[static_cast<std::size_t>(i)];
            at_most_once = at_most_once && parent_runs[static_cast<std::size_t>(i)] <= 1 &&
                           child_runs[static_cast<std::size_t>(i)] <= parent_runs[static_cast<std::size_t>(i)];
        }
        BOOST_TEST_INFO("round " << round << ", shutdown_now after " << stop_after << " parents");
        BOOST_TEST(at_most_once);
        BOOST_TEST(parents_ran == parents_accepted);
        BOOST_TEST(children_accepted + children_refused == parents_ran);
        BOOST_TEST(children_ran == children_accepted);
    }
}

BOOST_AUTO_TEST_SUITE_END()
