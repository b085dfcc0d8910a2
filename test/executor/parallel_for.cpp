// crew::parallel_for and crew::parallel_for_each (doc/composition.md, "Composition,
// groups and loops"; issue #25): every index once, in blocks, on the caller
// and helper tasks; failures; loops on a busy pool, nested, and with every
// reject policy refusing the helpers.
#include "composition_support.hpp"
#include "pool_mixes.hpp"
#include "support.hpp"

#include <crew/any_executor.hpp>
#include <crew/parallel_for.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <deque>
#include <latch>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

template <class Pool, bool Erased>
using loop_setup = executor_setup<Pool, Erased, 4>;

using loop_setups = std::tuple<loop_setup<crew::fixed_pool, false>, loop_setup<crew::cached_pool, false>,
                               loop_setup<crew::scheduled_pool, false>, loop_setup<caller_runs_pool, false>,
                               loop_setup<discarding_pool, false>, loop_setup<pool_of<crew::lockfree_queue<256>>, false>,
                               loop_setup<crew::fixed_pool, true>, loop_setup<crew::scheduled_pool, true>,
                               loop_setup<crew::work_stealing_pool, false>, loop_setup<crew::work_stealing_pool, true>>;

// How many times each index of [0, n) was visited.
class visits {
  public:
    explicit visits(std::size_t n) : counts_(n) {}
    void hit(std::size_t i) { counts_.at(i).fetch_add(1); }
    bool each_once() const {
        return std::all_of(counts_.begin(), counts_.end(), [](const auto& c) { return c.load() == 1; });
    }
    std::vector<std::size_t> visited() const {
        std::vector<std::size_t> out;
        for (std::size_t i = 0; i < counts_.size(); ++i)
            if (counts_[i].load() != 0) out.push_back(i);
        return out;
    }

  private:
    std::vector<std::atomic<int>> counts_;
};

// A pool of two workers and room for one queued task, both workers held and
// the queue full: every helper is refused.
const crew::pool_options two_workers_one_slot{.core_pool_size = 2, .maximum_pool_size = 2, .queue_capacity = 1};

// From a task on `pool`, a loop over [0, n) whose body is a loop over
// [0, n) (one index a block, so every body may go to a helper): true if
// each (i, j) was visited once.
bool nested_loops_on_a_worker_visit_each_once(crew::fixed_pool& pool, int n) {
    visits seen(static_cast<std::size_t>(n * n));
    pool.submit([&] {
            crew::parallel_for(pool, 0, n, [&](int i) {
                crew::parallel_for(pool, 0, n, [&](int j) { seen.hit(static_cast<std::size_t>(i * n + j)); }, 1);
            }, 1);
        })
        .get();
    return seen.each_once();
}

template <class Pool>
void saturate(Pool& pool, gate& held) {
    occupy(pool, held, 2);
    pool.execute([] {});
}

// A loop of two one-index blocks on a pool of two workers (so, with two
// hardware threads, one block on the caller and one on a helper): each block
// runs `block(on_caller)`.
template <class Block>
void two_blocks_on_the_caller_and_a_helper(Block block) {
    crew::fixed_pool pool(2);
    const auto caller = std::this_thread::get_id();
    crew::parallel_for(pool, 0, 2, [&](int) { block(std::this_thread::get_id() == caller); }, 1);
}

// A loop over 500 indices, one a block, on a saturated `Pool` (two workers,
// one queue slot): whatever the pool's RejectPolicy does with the helpers,
// every index is visited once.
template <class Pool>
void a_loop_on_a_saturated_pool_visits_each_once() {
    gate held; // outlives the pool: its workers wait on it
    Pool pool(two_workers_one_slot);
    saturate(pool, held);
    visits seen(500);
    crew::parallel_for(pool, 0, 500, [&](int i) { seen.hit(static_cast<std::size_t>(i)); }, 1);
    BOOST_TEST(seen.each_once());
    held.open();
}

} // namespace

BOOST_AUTO_TEST_SUITE(parallel_for)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(every_index_is_visited_once, Setup, loop_setups) {
    Setup s;
    decltype(auto) ex = s.ex();
    visits seen(10'000);
    crew::parallel_for(ex, 0, 10'000, [&](int i) { seen.hit(static_cast<std::size_t>(i)); });
    BOOST_TEST(seen.each_once());
    visits grained(10'000);
    crew::parallel_for(ex, std::size_t{0}, std::size_t{10'000}, [&](std::size_t i) { grained.hit(i); }, 7);
    BOOST_TEST(grained.each_once());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(for_each_visits_every_element_by_reference, Setup, loop_setups) {
    Setup s;
    decltype(auto) ex = s.ex();
    std::vector<int> v(5'000, 1);
    crew::parallel_for_each(ex, v, [](int& x) { x *= 3; });
    BOOST_TEST(std::all_of(v.begin(), v.end(), [](int x) { return x == 3; }));
    std::deque<int> d(1'000, 2);
    crew::parallel_for_each(ex, d, [](int& x) { ++x; }, 10);
    BOOST_TEST(std::all_of(d.begin(), d.end(), [](int x) { return x == 3; }));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(fn_receives_the_index_type_over_any_integer_range) {
    crew::fixed_pool pool(2);
    std::atomic<long long> sum{0};
    crew::parallel_for(pool, -50, 50, [&](auto i) {
        static_assert(std::is_same_v<decltype(i), int>);
        sum += i;
    });
    BOOST_TEST(sum.load() == -50);

    std::atomic<int> shorts{0};
    crew::parallel_for(pool, short(SHRT_MIN), short(SHRT_MIN + 100), [&](auto i) {
        static_assert(std::is_same_v<decltype(i), short>);
        if (i < SHRT_MIN + 100) shorts.fetch_add(1);
    }, 3);
    BOOST_TEST(shorts.load() == 100);

    // The ends of a type's range: no overflow on the way.
    std::atomic<int> top{0};
    crew::parallel_for(pool, INT_MAX - 100, INT_MAX, [&](int i) { top += i >= INT_MAX - 100 ? 1 : 0; }, 1);
    BOOST_TEST(top.load() == 100);
    const auto umax = std::numeric_limits<std::uint64_t>::max();
    std::atomic<int> utop{0};
    crew::parallel_for(pool, umax - 1000, umax, [&](std::uint64_t i) { utop += i >= umax - 1000 ? 1 : 0; });
    BOOST_TEST(utop.load() == 1000);
    std::atomic<int> whole{0};
    crew::parallel_for(pool, std::int8_t(-128), std::int8_t(127), [&](std::int8_t) { whole.fetch_add(1); });
    BOOST_TEST(whole.load() == 255);

    // Mixed types: the common one.
    std::atomic<int> mixed{0};
    crew::parallel_for(pool, 0, std::size_t{10}, [&](auto i) {
        static_assert(std::is_same_v<decltype(i), std::size_t>);
        mixed.fetch_add(1);
    });
    BOOST_TEST(mixed.load() == 10);
}

// A block is `grain` consecutive indices, in order, on one thread.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_block_is_grain_consecutive_indices_run_in_order_on_one_thread) {
    crew::fixed_pool pool(4);
    constexpr int n = 1'000, grain = 10;
    std::vector<std::thread::id> thread_of(n);
    std::vector<long> stamp(n);
    std::atomic<long> clock{0};
    crew::parallel_for(pool, 0, n, [&](int i) {
        thread_of[static_cast<std::size_t>(i)] = std::this_thread::get_id();
        stamp[static_cast<std::size_t>(i)] = clock.fetch_add(1);
    }, grain);
    for (int b = 0; b < n; b += grain)
        for (int i = b + 1; i < b + grain; ++i) {
            const auto k = static_cast<std::size_t>(i);
            BOOST_TEST((thread_of[k] == thread_of[k - 1]));
            BOOST_TEST(stamp[k] > stamp[k - 1]);
        }
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(invalid_arguments_name_the_argument) {
    crew::fixed_pool pool(2);
    auto nothing = [](auto) {};
    BOOST_CHECK_EXCEPTION(crew::parallel_for(pool, 5, 3, nothing), std::invalid_argument, names("first"));
    BOOST_CHECK_EXCEPTION(crew::parallel_for(pool, 0, 10, nothing, 0), std::invalid_argument, names("grain"));
    BOOST_CHECK_EXCEPTION(crew::parallel_for(pool, 0, 10, nothing, -1), std::invalid_argument, names("grain"));
    BOOST_CHECK_EXCEPTION(crew::parallel_for(pool, -1, std::size_t{10}, nothing), std::invalid_argument,
                          names("first"));
    std::vector<int> v(10);
    BOOST_CHECK_EXCEPTION(crew::parallel_for_each(pool, v, nothing, 0), std::invalid_argument, names("grain"));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(an_empty_range_calls_nothing_and_submits_nothing) {
    crew::fixed_pool pool(2);
    pool.shutdown(); // any helper would be refused with a throw: none is made
    int calls = 0;
    crew::parallel_for(pool, 7, 7, [&](int) { ++calls; });
    std::vector<int> none;
    crew::parallel_for_each(pool, none, [&](int) { ++calls; });
    BOOST_TEST(calls == 0);
    BOOST_TEST(pool.rejected_task_count() == 0u);
}

// The caller takes part and helpers are pool tasks: two blocks that each
// wait for the other to start need two threads at once.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(the_caller_and_a_helper_run_blocks_at_the_same_time) {
    if (one_hardware_thread()) return;
    crew::fixed_pool pool(2);
    std::latch both(2);
    std::set<std::thread::id> threads;
    std::mutex m;
    crew::parallel_for(pool, 0, 2, [&](int) {
        both.arrive_and_wait();
        std::lock_guard lock(m);
        threads.insert(std::this_thread::get_id());
    }, 1);
    BOOST_TEST(threads.size() == 2u);
    BOOST_TEST(threads.count(std::this_thread::get_id()) == 1u);
}

// At most min(blocks, pool size) threads, the caller included.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_loop_uses_at_most_the_pools_size_in_threads) {
    crew::fixed_pool one(1);
    std::vector<int> order;
    crew::parallel_for(one, 0, 100, [&](int i) { order.push_back(i); }); // the caller alone, in order
    std::vector<int> expected(100);
    for (int i = 0; i < 100; ++i) expected[static_cast<std::size_t>(i)] = i;
    BOOST_TEST(order == expected);

    crew::fixed_pool two(2);
    std::set<std::thread::id> threads;
    std::mutex m;
    crew::parallel_for(two, 0, 10'000, [&](int) {
        std::lock_guard lock(m);
        threads.insert(std::this_thread::get_id());
    }, 1);
    BOOST_TEST(threads.size() <= 2u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(the_first_exception_is_rethrown_and_blocks_not_started_are_skipped) {
    gate held;
    crew::fixed_pool pool(2);
    occupy(pool, held, 2); // the helpers cannot start: the caller runs the blocks in order
    visits seen(100);
    BOOST_CHECK_EXCEPTION(crew::parallel_for(pool, 0, 100, [&](int i) {
        seen.hit(static_cast<std::size_t>(i));
        if (i == 3) throw custom_error(3);
    }, 1), custom_error, [](const custom_error& e) { return e.code == 3; });
    BOOST_TEST(seen.visited() == (std::vector<std::size_t>{0, 1, 2, 3}));
    held.open();
    pool.wait_idle(); // the helpers start now and find nothing to do
    BOOST_TEST(seen.visited() == (std::vector<std::size_t>{0, 1, 2, 3}));
}

// The caller's block throws while a helper's block runs: the exception
// comes out only after that block has finished.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(the_exception_waits_for_blocks_already_running) {
    if (one_hardware_thread()) return;
    std::latch helper_started(1);
    std::atomic<bool> caller_threw{false}, helper_finished{false};
    try {
        two_blocks_on_the_caller_and_a_helper([&](bool on_caller) {
            if (on_caller) {
                helper_started.wait();
                caller_threw = true;
                throw custom_error(1);
            }
            helper_started.count_down();
            while (!caller_threw.load()) std::this_thread::yield();
            for (int k = 0; k < 1000; ++k) std::this_thread::yield(); // a loop that returned early would be seen
            helper_finished = true;
        });
        BOOST_FAIL("parallel_for did not rethrow");
    } catch (const custom_error& e) {
        BOOST_TEST(e.code == 1);
        BOOST_TEST(helper_finished.load());
    }
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(an_exception_in_a_helpers_block_reaches_the_caller) {
    if (one_hardware_thread()) return;
    std::latch both(2);
    BOOST_CHECK_EXCEPTION(two_blocks_on_the_caller_and_a_helper([&](bool on_caller) {
        both.arrive_and_wait();
        if (!on_caller) throw custom_error(2);
    }), custom_error, [](const custom_error& e) { return e.code == 2; });
}

// On one of the pool's workers, with every other worker busy, the helpers
// it submits never start: the loop must not wait for them.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_loop_on_a_worker_never_waits_for_helpers_that_cannot_start) {
    gate held;
    crew::fixed_pool pool(2);
    occupy(pool, held, 1);
    visits seen(1'000);
    const auto ran_on = pool.submit([&] {
                                std::set<std::thread::id> threads;
                                std::mutex m;
                                crew::parallel_for(pool, 0, 1'000, [&](int i) {
                                    seen.hit(static_cast<std::size_t>(i));
                                    std::lock_guard lock(m);
                                    threads.insert(std::this_thread::get_id());
                                }, 1);
                                return threads.size();
                            })
                            .get();
    BOOST_TEST(seen.each_once());
    BOOST_TEST(ran_on == 1u); // the worker alone
    held.open();
}

// The same from outside the pool: every worker busy, the caller does it all.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_loop_completes_on_the_caller_while_every_worker_is_busy) {
    gate held;
    crew::fixed_pool pool(2);
    occupy(pool, held, 2);
    visits seen(1'000);
    crew::parallel_for(pool, 0, 1'000, [&](int i) { seen.hit(static_cast<std::size_t>(i)); }, 1);
    BOOST_TEST(seen.each_once());
    held.open();
    pool.wait_idle(); // late helpers: nothing to do, and the loop's state still theirs to free
    BOOST_TEST(seen.each_once());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(nested_loops_complete_on_a_pool_of_one) {
    crew::fixed_pool pool(1);
    BOOST_TEST(nested_loops_on_a_worker_visit_each_once(pool, 10));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(nested_loops_complete_on_a_busy_pool) {
    crew::fixed_pool pool(2);
    BOOST_TEST(nested_loops_on_a_worker_visit_each_once(pool, 20));
}

// Helpers the pool refuses, whatever the RejectPolicy does with them: the
// caller does the work, every index once.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(refused_helpers_are_harmless) {
    a_loop_on_a_saturated_pool_visits_each_once<discarding_pool>();
    a_loop_on_a_saturated_pool_visits_each_once<crew::basic_executor<crew::bounded_queue>>(); // execute throws
    // A helper runs inside execute, on the caller.
    a_loop_on_a_saturated_pool_visits_each_once<crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy>>();
    {
        crew::fixed_pool pool(2);
        pool.shutdown();
        visits seen(500);
        crew::parallel_for(crew::any_executor(pool), 0, 500, [&](int i) { seen.hit(static_cast<std::size_t>(i)); }, 1);
        BOOST_TEST(seen.each_once());
    }
    {
        gate held;
        crew::fixed_pool pool(2);
        occupy(pool, held, 2); // the helpers wait in the queue
        std::vector<crew::task> dropped;
        visits seen(500);
        crew::parallel_for(pool, 0, 500, [&](int i) {
            seen.hit(static_cast<std::size_t>(i));
            if (i == 0) dropped = pool.shutdown_now(); // the caller's first block: the queued helpers handed back
        }, 1);
        BOOST_TEST(dropped.size() == (one_hardware_thread() ? 0u : 1u));
        dropped.clear(); // destroyed unrun: they let go of the loop's state
        BOOST_TEST(seen.each_once());
        held.open();
    }
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(for_each_over_arrays_and_const_ranges) {
    crew::fixed_pool pool(2);
    std::array<int, 64> a{};
    crew::parallel_for_each(pool, a, [](int& x) { x = 5; }, 4);
    BOOST_TEST(std::all_of(a.begin(), a.end(), [](int x) { return x == 5; }));
    const std::vector<int> c(300, 2);
    std::atomic<int> sum{0};
    crew::parallel_for_each(pool, c, [&](const int& x) { sum += x; });
    BOOST_TEST(sum.load() == 600);
}

BOOST_AUTO_TEST_SUITE_END()
