// The pool never touches itself after destroying a task (#23, finding 1):
// a task, a callable's destructor or a future may own the last reference to
// the pool. One test per path on which the pool destroys a task it holds:
// after running it, when a periodic schedule ends, when before_execute
// throws, on cancel with remove_on_cancel, in purge(), in shutdown()'s
// drop of delayed tasks, and in discard_oldest_policy. Each drops the test's
// own reference first, so that destroying the task destroys the pool; a pool
// read after that is a heap-use-after-free, which the ASan preset reports
// (before the fix: the execute test crashed in every plain run too).
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <functional>
#include <latch>
#include <memory>
#include <thread>
#include <utility>

namespace crew_test {
namespace {

namespace utf = boost::unit_test;

// Counts down a latch as the object dies: declared before the pool in
// owned_pool, it dies after it, so the latch says "the pool is gone".
struct death_notice {
    std::latch* gone;
    std::thread::id* destroyed_on = nullptr;
    ~death_notice() {
        if (destroyed_on) *destroyed_on = std::this_thread::get_id();
        gone->count_down();
    }
};

// Counts the worker threads that ended: a pool destroyed by its own worker
// detaches that thread, and a use-after-free there happens after the pool is
// gone, so each test waits for every worker thread to end before it ends.
struct thread_ends {
    std::atomic<int> started{0};
    std::atomic<int> ended{0};
    void wait_all_ended() const {
        const auto deadline = clock::now() + scaled(30s);
        while (ended.load() != started.load() && clock::now() < deadline) std::this_thread::yield();
        BOOST_REQUIRE_MESSAGE(ended.load() == started.load(), "a worker thread never ended");
    }
};

struct counting_factory {
    thread_ends* ends;
    std::thread new_thread(crew::task body) {
        ends->started.fetch_add(1);
        return std::thread([body = std::move(body), ends = ends]() mutable {
            body();
            ends->ended.fetch_add(1);
        });
    }
};

template <class Queue, class Reject = crew::abort_policy>
using counted = crew::basic_executor<Queue, Reject, counting_factory>;

template <class Pool>
struct owned_pool {
    template <class... Args>
    explicit owned_pool(std::latch& gone, Args&&... args) : notice{&gone}, pool(std::forward<Args>(args)...) {}
    death_notice notice;
    Pool pool;
};

// A callable that runs `on_destroy` when the callable that was built (not a
// moved-from shell) dies, then lets go of what it owns.
struct run_on_destroy {
    std::function<void()> on_destroy;
    std::shared_ptr<void> owned;
    run_on_destroy(std::function<void()> f, std::shared_ptr<void> o) : on_destroy(std::move(f)), owned(std::move(o)) {}
    run_on_destroy(run_on_destroy&& other) noexcept
        : on_destroy(std::exchange(other.on_destroy, nullptr)), owned(std::move(other.owned)) {}
    run_on_destroy& operator=(run_on_destroy&&) = delete;
    ~run_on_destroy() {
        if (on_destroy) on_destroy();
    }
    void operator()() const {}
};

// Keeps a pool's only worker busy until the task made by task() dies; then a
// helper thread lets the worker go, so that the pool's destructor (run by
// that task's destruction, on the test thread) can join it. Declare it after
// the pool's owner: it must outlive the pool.
class busy_until_the_task_dies {
  public:
    template <class Pool>
    explicit busy_until_the_task_dies(Pool& pool) {
        pool.execute([this] { busy_.wait(); });
    }
    ~busy_until_the_task_dies() { opener_.join(); }
    // A task that owns `owner` and lets the worker go as it dies.
    run_on_destroy task(std::shared_ptr<void> owner) {
        return run_on_destroy([this] { died_.count_down(); }, std::move(owner));
    }

  private:
    gate busy_;
    std::latch died_{1};
    std::thread opener_{[this] {
        died_.wait();
        busy_.open();
    }};
};

void wait_gone(std::latch& gone, const thread_ends& ends) {
    // A generous bound that only a pool that never dies reaches.
    const auto deadline = clock::now() + scaled(30s);
    while (!gone.try_wait() && clock::now() < deadline) std::this_thread::yield();
    BOOST_REQUIRE_MESSAGE(gone.try_wait(), "the pool was never destroyed");
    ends.wait_all_ended();
}

BOOST_AUTO_TEST_SUITE(pool_lifetime)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_task_owning_the_last_reference_destroys_the_pool_after_it_ran) {
    for (int round = 0; round < 20; ++round) {
        std::latch gone(1);
        thread_ends ends;
        auto owner = std::make_shared<owned_pool<counted<crew::unbounded_queue>>>(gone, crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 1}, counting_factory{&ends});
        std::atomic<bool> ran{false};
        std::latch dropped(1); // the test's reference is gone: the task's is the last
        owner->pool.execute([owner, &ran, &dropped] {
            dropped.wait();
            ran = true;
        });
        owner.reset();
        dropped.count_down();
        wait_gone(gone, ends);
        BOOST_TEST(ran.load());
    }
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_task_owning_the_last_reference_after_before_execute_throws) {
    std::latch gone(1);
    crew::pool_options options;
    options.core_pool_size = options.maximum_pool_size = 1;
    std::latch dropped(1);
    options.before_execute = [&dropped] {
        dropped.wait();
        throw std::runtime_error("before_execute refuses");
    };
    stderr_capture quiet; // the refused task's error is reported there
    thread_ends ends;
    auto owner = std::make_shared<owned_pool<counted<crew::unbounded_queue>>>(gone, options, counting_factory{&ends});
    std::atomic<bool> ran{false};
    owner->pool.execute([owner, &ran] { ran = true; });
    owner.reset();
    dropped.count_down();
    wait_gone(gone, ends);
    BOOST_TEST(!ran.load());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_periodic_task_owning_the_last_reference_when_its_schedule_ends) {
    std::latch gone(1);
    thread_ends ends;
    stderr_capture quiet; // the run's exception, which no future reads, is reported there
    auto owner = std::make_shared<owned_pool<counted<crew::delayed_queue>>>(
        gone, crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 1}, counting_factory{&ends});
    std::atomic<int> runs{0};
    std::thread::id destroyed_on;
    owner->notice.destroyed_on = &destroyed_on;
    std::latch dropped(1);
    {
        // The future shares the callable's state: dropped too, the task's
        // reference is the last.
        auto future = owner->pool.schedule_at_fixed_rate(0ms, 1ms, [owner, &runs, &dropped] {
            dropped.wait();
            if (++runs == 3) throw std::runtime_error("the schedule ends here");
        });
    }
    owner.reset();
    dropped.count_down();
    wait_gone(gone, ends);
    BOOST_TEST(runs.load() == 3);
    BOOST_TEST((destroyed_on != std::this_thread::get_id())); // by the worker, as the task died
}

// Schedules, an hour ahead, a task that holds the last reference to a
// one-worker scheduled pool made with `options`; `drop(pool, future)` must
// destroy that task, and with it the pool.
template <class Drop>
void drop_a_delayed_task_that_owns_the_pool(crew::pool_options options, Drop drop) {
    std::latch gone(1);
    options.core_pool_size = options.maximum_pool_size = 1;
    auto owner = std::make_shared<owned_pool<crew::scheduled_pool>>(gone, options);
    auto future = owner->pool.schedule(1h, [owner] {});
    crew::scheduled_pool& pool = owner->pool;
    owner.reset();
    BOOST_TEST(!gone.try_wait());
    drop(pool, future);
    BOOST_TEST(gone.try_wait());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(cancel_with_remove_on_cancel_destroys_the_pool_owned_by_the_task) {
    drop_a_delayed_task_that_owns_the_pool({.remove_on_cancel = true}, [](crew::scheduled_pool&, auto& future) {
        BOOST_TEST(future.cancel()); // destroys the task, and the task the pool
    });
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(shutdown_dropping_a_delayed_task_that_owns_the_pool) {
    drop_a_delayed_task_that_owns_the_pool({.execute_delayed_after_shutdown = false},
                                           [](crew::scheduled_pool& pool, auto& future) {
                                               pool.shutdown(); // drops the task, which destroys the pool
                                               BOOST_CHECK_THROW(future.get(), crew::cancellation_error);
                                           });
}

// The pool's only worker is busy until the purged task dies: then a helper
// thread lets it go, so that the pool's destructor (run by the task's
// destruction, on this thread) can join it.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(purge_destroying_a_cancelled_task_that_owns_the_pool) {
    std::latch gone(1);
    auto owner = std::make_shared<owned_pool<crew::fixed_pool>>(gone, 1);
    busy_until_the_task_dies worker(owner->pool);
    auto future = owner->pool.submit(worker.task(owner));
    crew::fixed_pool* pool = &owner->pool;
    owner.reset();
    BOOST_TEST(future.cancel());
    BOOST_TEST(pool->purge() == 1u);
    BOOST_TEST(gone.try_wait());
}

// The same on a scheduled pool: its queue hands back both the due-now tasks
// and the heap's (delayed_queue::extract_if).
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(purge_on_a_scheduled_pool_destroying_a_cancelled_task_that_owns_the_pool) {
    std::latch gone(1);
    auto owner = std::make_shared<owned_pool<crew::scheduled_pool>>(gone, 1);
    auto future = owner->pool.schedule(1h, run_on_destroy([] {}, owner));
    crew::scheduled_pool* pool = &owner->pool;
    owner.reset();
    BOOST_TEST(future.cancel()); // remove_on_cancel is off: the task stays queued
    BOOST_TEST(!gone.try_wait());
    BOOST_TEST(pool->purge() == 1u);
    BOOST_TEST(gone.try_wait());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(discard_oldest_destroying_a_task_that_owns_the_pool) {
    using pool_type = crew::basic_executor<crew::bounded_queue, crew::discard_oldest_policy>;
    std::latch gone(1);
    auto owner = std::make_shared<owned_pool<pool_type>>(gone, one_worker_one_slot);
    busy_until_the_task_dies worker(owner->pool);
    owner->pool.execute(worker.task(owner));
    pool_type* pool = &owner->pool;
    owner.reset();
    std::atomic<bool> newest_ran{false};
    pool->execute([&newest_ran] { newest_ran = true; }); // discards the oldest, which destroys the pool
    BOOST_TEST(gone.try_wait());
    BOOST_TEST(newest_ran.load()); // the destructor ran what was queued
}

// #23, the second finding "also seen": a pool given no task, destroyed at
// once, had started a worker (its destructor's resume() asked for one
// whether or not tasks were queued). Before the fix: 1 thread, every run.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_pool_given_no_task_starts_no_worker_even_as_it_dies) {
    thread_ends ends;
    {
        counted<crew::unbounded_queue> fixed(crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 2},
                                             counting_factory{&ends});
        counted<crew::synchronous_queue> cached(crew::synchronous_queue::default_options(), counting_factory{&ends});
        counted<crew::delayed_queue> scheduled(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 1},
                                               counting_factory{&ends});
        counted<crew::bounded_queue> paused(
            crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 2, .queue_capacity = 4},
            counting_factory{&ends});
        paused.pause();
    }
    BOOST_TEST(ends.started.load() == 0);
}

// #23, finding 8: the purged tasks die outside the queue's lock, so a
// callable whose destructor submits to the same pool does not deadlock.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(purge_destroys_tasks_outside_the_queue_lock) {
    crew::basic_executor<crew::priority_queue> pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 1});
    gate busy;
    pool.execute([&busy] { busy.wait(); });
    std::atomic<bool> resubmitted_ran{false};
    auto future = pool.submit(run_on_destroy(
        [&pool, &resubmitted_ran] { pool.execute([&resubmitted_ran] { resubmitted_ran = true; }); }, nullptr));
    BOOST_TEST(future.cancel());
    BOOST_TEST(pool.purge() == 1u); // before the fix: the destructor's execute deadlocked on the queue's mutex
    busy.open();
    pool.wait_idle();
    BOOST_TEST(resubmitted_ran.load());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace
} // namespace crew_test
