// execute() of a small lambda allocates nothing: a counting global
// operator new proves it. The same operator new also injects failures: armed
// on one thread, it makes the n-th allocation from then on (and, "sticky",
// every later one) fail, so that every allocation of a submit can be made to
// throw std::bad_alloc in turn. (The replacement serves the whole executor
// binary, so the failing-allocation tests live here.)
//
// A future's state comes from detail::recycler, which allocates only when it
// has no block to reuse: the tests that count or fail a state's allocation
// first empty the calling thread's cache and the depot (empty_recycler).
#include "support.hpp"

#include <crew/detail/recycler.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <functional>
#include <latch>
#include <memory>
#include <new>
#include <optional>
#include <vector>

namespace {
std::atomic<std::uint64_t> allocations{0};

// Fault injection, per thread: 0 = off; otherwise the allocation that brings
// it to 0 fails. Plain thread_locals with constant initialisation: touching
// them allocates nothing.
thread_local std::uint64_t fail_countdown = 0;
thread_local bool fail_sticky = false;
thread_local std::uint64_t failures_here = 0;
}

// Every replaceable form that allocates from malloc is replaced, so that no
// sanitizer runtime's allocator is ever paired with our free(). (Aligned
// forms keep the runtime's own new and delete pair.)
namespace {
void* counted(std::size_t size) noexcept {
    if (fail_countdown != 0 && --fail_countdown == 0) {
        if (fail_sticky) fail_countdown = 1;
        ++failures_here;
        return nullptr;
    }
    allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(size ? size : 1);
}
void* counted_or_throw(std::size_t size) {
    if (void* p = counted(size)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void release(void* p) noexcept { std::free(p); }
} // namespace

void* operator new(std::size_t size) { return counted_or_throw(size); }
void* operator new[](std::size_t size) { return counted_or_throw(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted(size); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

// The next future state made on this thread comes from operator new (as
// long as no other thread hands the depot a batch meanwhile; in these tests
// no worker frees enough states for that).
void empty_recycler() noexcept {
    crew::detail::recycler::release_thread_cache();
    crew::detail::recycler::trim();
}

// While alive, the n-th allocation on this thread fails (and with `sticky`,
// every one after it). Nothing between arming and disarming may allocate
// but the call under test: no BOOST_TEST inside.
class failing_allocations {
  public:
    failing_allocations(std::uint64_t nth, bool sticky) noexcept : before_(failures_here) {
        fail_sticky = sticky;
        fail_countdown = nth;
    }
    failing_allocations(const failing_allocations&) = delete;
    failing_allocations& operator=(const failing_allocations&) = delete;
    ~failing_allocations() { disarm(); }
    // Disarms; true if an allocation failed.
    bool disarm() noexcept {
        fail_countdown = 0;
        fail_sticky = false;
        return failures_here != before_;
    }

  private:
    std::uint64_t before_;
};

enum class outcome { accepted, out_of_memory, rejected };

const char* name(outcome o) {
    return o == outcome::accepted ? "accepted" : o == outcome::out_of_memory ? "std::bad_alloc" : "rejected";
}

// The state a measured call finds the pool in.
template <class Pool>
struct scenario {
    std::function<std::unique_ptr<Pool>()> make;
    int blockers = 0;       // tasks holding the workers while the call is made
    int fillers = 0;        // tasks queued behind them before the call
    bool idle_worker = false; // wait until one worker idles (a synchronous queue's hand-off)
    bool shut_down = false; // the call meets a shut-down pool
};

// The measured call: submits or executes one task that bumps `runs` and
// returns 42; returns its future, if it has one.
template <class Pool>
using measured_call = std::function<std::optional<crew::future<int>>(Pool&, std::atomic<int>& runs)>;

// Makes the 1st, 2nd, ... allocation of `call` fail in turn (each on a fresh
// pool in the given scenario), until the call makes fewer allocations than
// that. Whatever fails, the caller sees std::bad_alloc (or the pool's refusal),
// nothing is half-enqueued, the counters stay true, and the pool still
// works and shuts down.
template <class Pool>
void each_allocation_may_fail(const scenario<Pool>& s, const measured_call<Pool>& call, bool sticky) {
    int failures_seen = 0;
    for (std::uint64_t nth = 1; nth <= 200; ++nth) {
        gate blocked; // outlives the pool
        auto pool = s.make();
        occupy(*pool, blocked, s.blockers); // the blockers left the queue
        std::atomic<int> filler_runs{0};
        for (int i = 0; i < s.fillers; ++i) pool->execute([&] { filler_runs.fetch_add(1); });
        if (s.idle_worker) {
            pool->submit([] {}).get();
            eventually([&] { return pool->active_count() == static_cast<std::size_t>(s.blockers); });
        }
        if (s.shut_down) pool->shutdown();
        const auto tasks_before = pool->task_count();
        const auto queued_before = pool->queue_size();

        std::atomic<int> runs{0};
        std::optional<crew::future<int>> result;
        outcome o = outcome::accepted;
        bool failed;
        empty_recycler();
        {
            failing_allocations failing(nth, sticky);
            try {
                result = call(*pool, runs);
            } catch (const std::bad_alloc&) {
                o = outcome::out_of_memory;
            } catch (const crew::rejected_execution_error&) {
                o = outcome::rejected;
            }
            failed = failing.disarm();
        }
        if (failed) ++failures_seen;

        BOOST_TEST_CONTEXT("allocation #" << nth << (sticky ? " and every later one" : "") << " fails: "
                                          << name(o)) {
            if (o != outcome::accepted) {
                BOOST_TEST(pool->task_count() == tasks_before); // nothing half-enqueued
                BOOST_TEST(pool->queue_size() == queued_before);
                BOOST_TEST(!result.has_value());
            }
            if (s.shut_down) BOOST_TEST((o != outcome::accepted || result.has_value()));
            blocked.open();
            // The pool still works (and a task queued while no worker could
            // start finds one now).
            const bool open = !s.shut_down;
            if (open) BOOST_TEST(pool->submit([] { return 1; }).get() == 1);
            if (o == outcome::accepted && result) {
                if (open) {
                    BOOST_TEST(result->get() == 42);
                } else {
                    // Discarded after shutdown: its future says so (or, if making
                    // that exception failed too, says std::bad_alloc).
                    BOOST_TEST(result->is_done());
                    BOOST_CHECK_THROW(result->get(), std::exception);
                }
            }
            pool->shutdown();
            BOOST_TEST_REQUIRE(pool->await_termination(scaled(10s)));
            const int ran = o == outcome::accepted && open ? 1 : 0;
            BOOST_TEST(runs.load() == ran);
            BOOST_TEST(filler_runs.load() == s.fillers);
            BOOST_TEST(pool->completed_task_count() ==
                       static_cast<std::uint64_t>(s.blockers + s.fillers + (s.idle_worker ? 1 : 0) + ran +
                                                  (open ? 1 : 0)));
            BOOST_TEST(pool->task_count() == pool->completed_task_count());
            BOOST_TEST(pool->queue_size() == 0u);
        }
        if (!failed) { // the call made fewer than nth allocations: every one was tried
            BOOST_TEST(failures_seen > 0);
            return;
        }
    }
    BOOST_FAIL("a single call made more than 200 allocations");
}

template <class Pool>
measured_call<Pool> submit_call() {
    return [](Pool& pool, std::atomic<int>& runs) -> std::optional<crew::future<int>> {
        return std::optional<crew::future<int>>(pool.submit([&runs] {
            runs.fetch_add(1);
            return 42;
        }));
    };
}

// execute() of a callable too big to store inline: the task allocates too.
template <class Pool>
measured_call<Pool> execute_big_call() {
    return [](Pool& pool, std::atomic<int>& runs) -> std::optional<crew::future<int>> {
        struct big {
            char bytes[200];
        };
        pool.execute([&runs, b = big{}] {
            (void)b;
            runs.fetch_add(1);
        });
        return std::nullopt;
    };
}

template <class Pool>
void fresh_pool_every_way(std::function<std::unique_ptr<Pool>()> make) {
    scenario<Pool> s{make};
    for (bool sticky : {false, true}) {
        each_allocation_may_fail<Pool>(s, submit_call<Pool>(), sticky);
        each_allocation_may_fail<Pool>(s, execute_big_call<Pool>(), sticky);
    }
}

using bounded_pool = crew::basic_executor<crew::bounded_queue>;
using priority_pool = crew::basic_executor<crew::priority_queue>;
using discarding_pool = crew::basic_executor<crew::bounded_queue, crew::discard_policy>;

crew::pool_options bounded_options() {
    return crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 2, .queue_capacity = 64};
}

// A callable of 48 bytes (five words and a reference) that adds 5, its last
// word, to `sum`.
auto a_48_byte_job(std::atomic<std::uint64_t>& sum) {
    struct payload {
        std::uint64_t words[5];
    };
    const payload data{{1, 2, 3, 4, 5}};
    auto job = [&sum, data] { sum.fetch_add(data.words[4], std::memory_order_relaxed); };
    static_assert(sizeof(job) == 48);
    return job;
}

} // namespace

BOOST_AUTO_TEST_SUITE(allocation)

BOOST_AUTO_TEST_CASE(execute_of_a_48_byte_lambda_allocates_nothing, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    std::atomic<std::uint64_t> sum{0};
    auto job = a_48_byte_job(sum);

    // Warm up: workers started, and the queue's ring grown to hold every
    // task at once (the measured run can never back up further).
    crew_test::gate blocked;
    for (int i = 0; i < 2; ++i) pool.execute([&] { blocked.wait(); });
    for (int i = 0; i < 10000; ++i) pool.execute(job);
    blocked.open();
    pool.wait_idle();
    sum = 0;

    const auto before = allocations.load();
    for (int i = 0; i < 10000; ++i) pool.execute(job);
    pool.wait_idle();
    const auto after = allocations.load();
    BOOST_TEST(after - before == 0u);
    BOOST_TEST(sum.load() == 50000u);
}

BOOST_AUTO_TEST_CASE(try_execute_of_a_48_byte_lambda_allocates_nothing_accepted_or_refused, *utf::timeout(60)) {
    crew::basic_executor<crew::bounded_queue> pool(
        crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 1, .queue_capacity = 16});
    std::atomic<std::uint64_t> sum{0};
    auto job = a_48_byte_job(sum);
    crew_test::gate blocked;
    pool.execute([&] { blocked.wait(); });
    const auto before = allocations.load();
    int accepted = 0, refused = 0;
    for (int i = 0; i < 32; ++i) ++(pool.try_execute(job) ? accepted : refused);
    const auto after = allocations.load();
    blocked.open();
    pool.wait_idle();
    BOOST_TEST(after - before == 0u);
    BOOST_TEST(accepted == 16);
    BOOST_TEST(refused == 16);
    BOOST_TEST(sum.load() == 80u);
}

BOOST_AUTO_TEST_CASE(a_larger_callable_is_counted_so_the_probe_works, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    pool.prestart_all_core_threads();
    struct big {
        char bytes[200];
    };
    const auto before = allocations.load();
    pool.execute([b = big{}] { (void)b; });
    pool.wait_idle();
    BOOST_TEST(allocations.load() - before >= 1u);
}

// With nothing to recycle; see the steady-state tests below for the rest.
BOOST_AUTO_TEST_CASE(submit_allocates_one_shared_state_and_a_stop_token_task_two, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    pool.prestart_all_core_threads();
    pool.submit([] { return 1; }).get(); // warm up
    pool.submit([](std::stop_token) { return 1; }).get();

    empty_recycler();
    auto before = allocations.load();
    auto plain = pool.submit([] { return 1; });
    BOOST_TEST(allocations.load() - before == 1u);
    plain.get();

    empty_recycler();
    before = allocations.load();
    auto with_token = pool.submit([](std::stop_token) { return 1; });
    BOOST_TEST(allocations.load() - before == 2u); // the state and std::stop_source's own
    with_token.get();
}

BOOST_AUTO_TEST_CASE(scheduled_pool_execute_allocates_nothing_once_the_heap_has_grown, *utf::timeout(60)) {
    crew::scheduled_pool pool(2);
    std::atomic<std::uint64_t> sum{0};
    auto job = [&sum] { sum.fetch_add(1, std::memory_order_relaxed); };
    crew_test::gate blocked;
    for (int i = 0; i < 2; ++i) pool.execute([&] { blocked.wait(); });
    for (int i = 0; i < 10000; ++i) pool.execute(job);
    blocked.open();
    pool.wait_idle();

    const auto before = allocations.load();
    for (int i = 0; i < 10000; ++i) pool.execute(job);
    pool.wait_idle();
    BOOST_TEST(allocations.load() - before == 0u);
    BOOST_TEST(sum.load() == 20000u);
}

BOOST_AUTO_TEST_CASE(schedule_allocates_one_state_and_periodic_runs_allocate_nothing, *utf::timeout(60)) {
    crew::scheduled_pool pool(1);
    pool.prestart_all_core_threads();
    pool.schedule(0ms, [] { return 1; }).get(); // warm up

    empty_recycler();
    auto before = allocations.load();
    auto once = pool.schedule(1ms, [] { return 1; });
    BOOST_TEST(allocations.load() - before == 1u);
    once.get();

    // Between its 10th and 60th run, a periodic task's machinery (hand-over
    // to the next run's task, re-queueing) allocates nothing.
    std::atomic<int> runs{0};
    std::atomic<std::uint64_t> at_10{0}, at_60{0};
    auto periodic = pool.schedule_at_fixed_rate(0ms, 50us, [&] {
        const int n = runs.fetch_add(1) + 1;
        if (n == 10) at_10 = allocations.load();
        if (n == 60) at_60 = allocations.load();
    });
    BOOST_TEST_REQUIRE(crew_test::eventually([&] { return runs.load() >= 60; }));
    periodic.cancel();
    BOOST_TEST(at_60.load() - at_10.load() == 0u);
}

// States die on the workers (or here, with their futures) and are reused by
// the next schedule: once the recycler holds as many as are alive at once,
// and the heap has grown, schedule, submit and a periodic schedule allocate
// nothing at all (issue #15).
BOOST_AUTO_TEST_CASE(schedule_and_submit_allocate_nothing_in_steady_state, *utf::timeout(120)) {
    crew::scheduled_pool pool(2);
    constexpr int n = 2000;
    std::atomic<int> runs{0};
    auto job = [&runs] {
        runs.fetch_add(1, std::memory_order_relaxed);
        return 1;
    };
    std::vector<crew::scheduled_future<int>> futures;
    std::vector<crew::scheduled_future<void>> periodic;
    futures.reserve(2 * n);
    periodic.reserve(n);

    // Every other future is dropped at once, so that its state dies on a
    // worker; the rest die here.
    auto schedule_round = [&] {
        for (int i = 0; i < n; ++i) {
            auto f = pool.schedule(std::chrono::microseconds(i % 3 * 1000), job); // 0, 1 or 2 ms
            if (i % 2 == 0) futures.push_back(std::move(f));
        }
        pool.wait_idle();
        futures.clear();
    };
    auto submit_round = [&] {
        for (int i = 0; i < n; ++i) {
            auto f = pool.submit(job);
            if (i % 2 == 0) futures.push_back(std::move(f));
        }
        pool.wait_idle();
        futures.clear();
    };
    // Periodic schedules, each cancelled after its first run: the task
    // leaves the queue at its next due time, unrun.
    bool periodic_runs_missing = false;
    auto periodic_round = [&] {
        const int first = runs.load();
        for (int i = 0; i < n / 4; ++i)
            periodic.push_back(pool.schedule_at_fixed_rate(std::chrono::microseconds(i % 3 * 1000), 1ms, [&runs] {
                runs.fetch_add(1, std::memory_order_relaxed);
            }));
        // Checked after the measured rounds (an assertion may allocate).
        if (!crew_test::eventually([&] { return runs.load() - first >= n / 4; })) periodic_runs_missing = true;
        for (auto& f : periodic) f.cancel();
        pool.wait_idle();
        periodic.clear();
    };

    // Warm up: the workers started, the heap grown to hold 2n tasks at once,
    // and the recycler (this thread's cache, the workers', the depot) filled
    // with twice as many states as a round can have alive at once: the
    // workers' caches hold some of them back (up to cache_limit each).
    gate blocked;
    for (int i = 0; i < 2; ++i) pool.execute([&] { blocked.wait(); });
    for (int i = 0; i < 2 * n; ++i) futures.push_back(pool.schedule(0ms, job));
    blocked.open();
    pool.wait_idle();
    futures.clear();
    for (int round = 0; round < 2; ++round) {
        schedule_round();
        submit_round();
        periodic_round();
    }

    runs = 0;
    auto before = allocations.load();
    schedule_round();
    BOOST_TEST(allocations.load() - before == 0u);
    before = allocations.load();
    submit_round();
    BOOST_TEST(allocations.load() - before == 0u);
    before = allocations.load();
    periodic_round();
    BOOST_TEST(allocations.load() - before == 0u);
    BOOST_TEST(!periodic_runs_missing);
    BOOST_TEST(runs.load() >= 2 * n + n / 4);
}

// The same for submit on a plain pool: its state is recycled too.
BOOST_AUTO_TEST_CASE(submit_on_a_fixed_pool_allocates_nothing_in_steady_state, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    constexpr int n = 2000;
    std::vector<crew::future<int>> futures;
    futures.reserve(2 * n);
    auto round = [&] {
        for (int i = 0; i < n; ++i) {
            auto f = pool.submit([i] { return i; });
            if (i % 2 == 0) futures.push_back(std::move(f));
        }
        pool.wait_idle();
        futures.clear();
    };
    // Warm up with twice as many states alive at once as a round can have:
    // the workers' caches hold some of them back (up to cache_limit each).
    gate blocked;
    for (int i = 0; i < 2; ++i) pool.execute([&] { blocked.wait(); });
    for (int i = 0; i < 2 * n; ++i) futures.push_back(pool.submit([i] { return i; }));
    blocked.open();
    pool.wait_idle();
    futures.clear();
    round();
    round();

    const auto before = allocations.load();
    round();
    BOOST_TEST(allocations.load() - before == 0u);
}

// ---- failing allocations -----------------------------------------------------

BOOST_AUTO_TEST_CASE(every_allocation_of_a_first_submit_may_fail_and_leaves_the_pool_true, *utf::timeout(120)) {
    fresh_pool_every_way<crew::fixed_pool>([] { return std::make_unique<crew::fixed_pool>(2); });
    fresh_pool_every_way<crew::cached_pool>([] { return std::make_unique<crew::cached_pool>(); });
    fresh_pool_every_way<bounded_pool>([] { return std::make_unique<bounded_pool>(bounded_options()); });
    fresh_pool_every_way<priority_pool>([] { return std::make_unique<priority_pool>(2); });
    fresh_pool_every_way<crew::scheduled_pool>([] { return std::make_unique<crew::scheduled_pool>(2); });
}

// The queue must grow to take the task: a failure there used to leave
// task_count one too high (and wait_idle waiting for ever).
BOOST_AUTO_TEST_CASE(every_allocation_of_a_submit_that_grows_the_queue_may_fail, *utf::timeout(120)) {
    for (bool sticky : {false, true}) {
        // 1 blocked worker and 16 queued tasks: the ring (or heap) is full.
        each_allocation_may_fail<crew::fixed_pool>(
            {[] { return std::make_unique<crew::fixed_pool>(1); }, 1, 16}, submit_call<crew::fixed_pool>(), sticky);
        each_allocation_may_fail<bounded_pool>({[] { return std::make_unique<bounded_pool>(bounded_options()); }, 1, 16},
                                               submit_call<bounded_pool>(), sticky);
        each_allocation_may_fail<priority_pool>({[] { return std::make_unique<priority_pool>(1); }, 1, 16},
                                                submit_call<priority_pool>(), sticky);
        each_allocation_may_fail<crew::scheduled_pool>(
            {[] { return std::make_unique<crew::scheduled_pool>(1); }, 1, 16}, submit_call<crew::scheduled_pool>(),
            sticky);
        // An idle cached worker: the hand-off ring grows on the first offer.
        each_allocation_may_fail<crew::cached_pool>(
            {[] { return std::make_unique<crew::cached_pool>(); }, 1, 0, true}, submit_call<crew::cached_pool>(),
            sticky);
    }
}

BOOST_AUTO_TEST_CASE(every_allocation_of_a_refused_submit_may_fail, *utf::timeout(120)) {
    for (bool sticky : {false, true}) {
        each_allocation_may_fail<crew::fixed_pool>(
            {.make = [] { return std::make_unique<crew::fixed_pool>(1); }, .shut_down = true},
            submit_call<crew::fixed_pool>(), sticky);
        each_allocation_may_fail<discarding_pool>(
            {.make = [] { return std::make_unique<discarding_pool>(bounded_options()); }, .shut_down = true},
            submit_call<discarding_pool>(), sticky);
        each_allocation_may_fail<crew::scheduled_pool>(
            {.make = [] { return std::make_unique<crew::scheduled_pool>(1); }, .shut_down = true},
            submit_call<crew::scheduled_pool>(), sticky);
    }
}

BOOST_AUTO_TEST_CASE(every_allocation_of_a_schedule_may_fail, *utf::timeout(120)) {
    const measured_call<crew::scheduled_pool> schedule = [](crew::scheduled_pool& pool, std::atomic<int>& runs) {
        return std::optional<crew::future<int>>(pool.schedule(1ms, [&runs] {
            runs.fetch_add(1);
            return 42;
        }));
    };
    for (bool sticky : {false, true}) {
        each_allocation_may_fail<crew::scheduled_pool>({[] { return std::make_unique<crew::scheduled_pool>(2); }},
                                                       schedule, sticky);
        each_allocation_may_fail<crew::scheduled_pool>(
            {[] { return std::make_unique<crew::scheduled_pool>(1); }, 1, 16}, schedule, sticky);
    }
}

// Regression (fixed in d204e4d): invoke_all and invoke_any pushed each
// future into their vector after the task was submitted; when that push_back
// could not allocate, the future died with the temporary and the catch block
// could not cancel its task: the call threw std::bad_alloc, yet a task ran
// later.
namespace {
template <class Invoke>
void invoking_runs_nothing_once_it_threw(Invoke invoke, int runs_if_returned_at_least) {
    for (std::uint64_t nth = 1; nth <= 100; ++nth) {
        gate blocked; // outlives the pool
        crew::fixed_pool pool(1);
        pool.execute([&] { blocked.wait(); });
        std::atomic<int> runs{0};
        std::vector<std::function<void()>> jobs(3, [&runs] { runs.fetch_add(1); });
        // The tasks wait behind the blocked worker; a call that does not
        // throw waits for them, so open the gate once all three are queued.
        std::atomic<bool> returned{false};
        std::thread opener([&] {
            eventually([&] { return returned.load() || pool.queue_size() == 3u; });
            blocked.open();
        });
        bool threw = false, failed;
        empty_recycler();
        {
            failing_allocations failing(nth, false);
            try {
                invoke(pool, jobs);
            } catch (const std::bad_alloc&) {
                threw = true;
            }
            failed = failing.disarm();
        }
        returned = true;
        opener.join();
        pool.shutdown();
        BOOST_TEST_REQUIRE(pool.await_termination(scaled(10s)));
        BOOST_TEST_CONTEXT("allocation #" << nth << " fails") {
            if (threw) BOOST_TEST(runs.load() == 0);
            else BOOST_TEST(runs.load() >= runs_if_returned_at_least);
            BOOST_TEST(pool.task_count() == pool.completed_task_count());
        }
        if (!failed) return;
    }
}
} // namespace

BOOST_AUTO_TEST_CASE(invoke_all_that_runs_out_of_memory_runs_none_of_its_tasks, *utf::timeout(120)) {
    invoking_runs_nothing_once_it_threw([](auto& pool, auto& jobs) { pool.invoke_all(jobs); }, 3);
}

BOOST_AUTO_TEST_CASE(invoke_any_that_runs_out_of_memory_runs_none_of_its_tasks, *utf::timeout(120)) {
    invoking_runs_nothing_once_it_threw([](auto& pool, auto& jobs) { pool.invoke_any(jobs); }, 1);
}

BOOST_AUTO_TEST_SUITE_END()
