// Core/maximum sizing, keep-alive culling, setters and their validation.
#include "pool_mixes.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <limits>
#include <stdexcept>
#include <tuple>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

using bounded_pool = crew::basic_executor<crew::bounded_queue>;
// The sizing rules hold whatever guards the worker set. Not grow_first_queue
// (it grows before it queues: controls.cpp) nor delayed_queue (never full).
using bounded_mixes = each_lock<crew::bounded_queue>;

} // namespace

BOOST_AUTO_TEST_SUITE(sizing)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(execute_fills_core_then_the_queue_then_grows_to_maximum_then_rejects, Pool, bounded_mixes) {
    gate blocked; // both outlive the pool
    run_counter ran;
    Pool pool(crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 4, .queue_capacity = 2});
    auto job = [&] {
        blocked.wait();
        ran.hit();
    };

    pool.execute(job); // a new core worker takes it directly
    BOOST_TEST(pool.pool_size() == 1u);
    pool.execute(job);
    BOOST_TEST(pool.pool_size() == 2u);
    BOOST_TEST(pool.queue_size() == 0u);
    pool.execute(job); // core reached: queued
    pool.execute(job);
    BOOST_TEST(pool.pool_size() == 2u);
    BOOST_TEST(pool.queue_size() == 2u);
    pool.execute(job); // queue full: a non-core worker
    pool.execute(job);
    BOOST_TEST(pool.pool_size() == 4u);
    BOOST_TEST(pool.queue_size() == 2u);
    BOOST_CHECK_THROW(pool.execute(job), crew::rejected_execution_error); // saturated
    BOOST_TEST(pool.largest_pool_size() == 4u);

    blocked.open();
    pool.wait_idle();
    BOOST_TEST(ran.count() == 6);
    BOOST_TEST(pool.completed_task_count() == 6u);
}

BOOST_AUTO_TEST_CASE(invalid_sizes_throw_invalid_argument_naming_the_field, *utf::timeout(30)) {
    using crew::pool_options;
    BOOST_CHECK_EXCEPTION(bounded_pool(pool_options{.core_pool_size = 0, .maximum_pool_size = 0}),
                          std::invalid_argument, names("maximum_pool_size"));
    BOOST_CHECK_EXCEPTION(bounded_pool(pool_options{.core_pool_size = 3, .maximum_pool_size = 2}),
                          std::invalid_argument, names("core_pool_size"));
    BOOST_CHECK_EXCEPTION(bounded_pool(pool_options{.core_pool_size = 1, .keep_alive = -1ns}),
                          std::invalid_argument, names("keep_alive"));
    BOOST_CHECK_EXCEPTION(
        bounded_pool(pool_options{.core_pool_size = 1, .keep_alive = 0ns, .allow_core_thread_timeout = true}),
        std::invalid_argument, names("allow_core_thread_timeout"));
    BOOST_CHECK_EXCEPTION(bounded_pool(pool_options{.core_pool_size = 1, .queue_capacity = 0}),
                          std::invalid_argument, names("queue_capacity"));
    BOOST_CHECK_EXCEPTION(crew::fixed_pool(0), std::invalid_argument, names("threads"));
    BOOST_CHECK_EXCEPTION(crew::fixed_pool(std::size_t{0}), std::invalid_argument, names("threads"));
}

// Java throws for a negative count; a conversion to std::size_t would have
// asked for 2^64 - 42 threads without a word.
BOOST_AUTO_TEST_CASE(a_negative_signed_count_throws_naming_the_argument, *utf::timeout(30)) {
    BOOST_CHECK_EXCEPTION(crew::fixed_pool(-42), std::invalid_argument, names("threads"));
    BOOST_CHECK_EXCEPTION(crew::fixed_pool(-1L), std::invalid_argument, names("-1"));
    BOOST_CHECK_EXCEPTION(crew::cached_pool(static_cast<short>(-3)), std::invalid_argument, names("threads"));
    BOOST_CHECK_EXCEPTION(crew::scheduled_pool(-1), std::invalid_argument, names("threads"));

    crew::fixed_pool pool(3); // an int that is positive is fine
    BOOST_TEST(pool.maximum_pool_size() == 3u);
    BOOST_CHECK_EXCEPTION(pool.set_maximum_pool_size(-1), std::invalid_argument, names("maximum_pool_size"));
    BOOST_CHECK_EXCEPTION(pool.set_core_pool_size(-1), std::invalid_argument, names("core_pool_size"));
    BOOST_TEST(pool.maximum_pool_size() == 3u);
    BOOST_TEST(pool.core_pool_size() == 3u);
    pool.set_core_pool_size(2);
    BOOST_TEST(pool.core_pool_size() == 2u);
}

BOOST_TEST_DECORATOR(*utf::timeout(30))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_failed_setter_leaves_every_size_unchanged, Pool, bounded_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 4, .keep_alive = 5s});
    auto unchanged = [&] {
        return pool.core_pool_size() == 2 && pool.maximum_pool_size() == 4 && pool.keep_alive() == 5s &&
               !pool.allows_core_thread_timeout();
    };
    BOOST_CHECK_EXCEPTION(pool.set_core_pool_size(5), std::invalid_argument, names("core_pool_size"));
    BOOST_TEST(unchanged());
    BOOST_CHECK_EXCEPTION(pool.set_maximum_pool_size(0), std::invalid_argument, names("maximum_pool_size"));
    BOOST_CHECK_EXCEPTION(pool.set_maximum_pool_size(1), std::invalid_argument, names("core_pool_size"));
    BOOST_TEST(unchanged());
    BOOST_CHECK_EXCEPTION(pool.set_keep_alive(-1ms), std::invalid_argument, names("keep_alive"));
    BOOST_TEST(unchanged());

    pool.set_keep_alive(0ns);
    BOOST_CHECK_EXCEPTION(pool.allow_core_thread_timeout(true), std::invalid_argument,
                          names("allow_core_thread_timeout"));
    BOOST_TEST(!pool.allows_core_thread_timeout());
    pool.set_keep_alive(1s);
    pool.allow_core_thread_timeout(true);
    BOOST_CHECK_EXCEPTION(pool.set_keep_alive(0ns), std::invalid_argument, names("keep_alive"));
    BOOST_TEST(pool.keep_alive() == 1s);
}

BOOST_AUTO_TEST_CASE(default_and_sized_construction_match_java_factories, *utf::timeout(30)) {
    crew::cached_pool cached;
    BOOST_TEST(cached.core_pool_size() == 0u);
    BOOST_TEST(cached.maximum_pool_size() == std::numeric_limits<std::size_t>::max());
    BOOST_TEST(cached.keep_alive() == std::chrono::nanoseconds(60s));
    BOOST_TEST(cached.queue_capacity() == 0u);

    crew::fixed_pool fixed;
    BOOST_TEST(fixed.core_pool_size() == crew::default_thread_count());
    BOOST_TEST(fixed.maximum_pool_size() == fixed.core_pool_size());

    crew::fixed_pool three(3);
    BOOST_TEST(three.core_pool_size() == 3u);
    BOOST_TEST(three.maximum_pool_size() == 3u);
    BOOST_TEST(three.pool_size() == 0u); // workers start lazily
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(keep_alive_culls_surplus_workers_no_earlier_than_keep_alive, Pool, bounded_mixes) {
    const auto keep_alive = 100ms;
    Pool pool(crew::pool_options{
        .core_pool_size = 1, .maximum_pool_size = 3, .keep_alive = keep_alive, .queue_capacity = 1});
    gate blocked;
    for (int i = 0; i < 4; ++i) pool.execute([&] { blocked.wait(); });
    BOOST_TEST(pool.pool_size() == 3u);

    const auto opened = clock::now();
    blocked.open();
    pool.wait_idle();
    BOOST_TEST(eventually([&] { return pool.pool_size() == 1; }));
    // A surplus worker starts its keep-alive wait only after its last task,
    // which ended after the gate opened.
    BOOST_TEST((clock::now() - opened >= keep_alive));
    BOOST_TEST(pool.largest_pool_size() == 3u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(core_workers_stay_without_core_timeout_and_go_with_it, Pool, bounded_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 2}); // fixed size
    pool.set_keep_alive(20ms);
    BOOST_TEST(pool.prestart_all_core_threads() == 2u);
    run_counter ran;
    pool.execute([&] { ran.hit(); });
    pool.wait_idle();
    BOOST_TEST(pool.pool_size() == 2u); // core workers ignore keep-alive

    pool.allow_core_thread_timeout(true);
    BOOST_TEST(eventually([&] { return pool.pool_size() == 0; }));

    pool.execute([&] { ran.hit(); }); // a culled pool starts a worker again
    BOOST_TEST(ran.wait_for_count(2));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(lowering_the_maximum_retires_surplus_idle_workers_promptly, Pool, bounded_mixes) {
    Pool pool(crew::pool_options{
        .core_pool_size = 1, .maximum_pool_size = 4, .keep_alive = 1h, .queue_capacity = 1});
    gate blocked;
    for (int i = 0; i < 5; ++i) pool.execute([&] { blocked.wait(); });
    BOOST_TEST(pool.pool_size() == 4u);
    blocked.open();
    pool.wait_idle();

    pool.set_maximum_pool_size(2);
    // An hour of keep-alive would keep them; the lowered maximum must not.
    BOOST_TEST(eventually([&] { return pool.pool_size() == 2; }, 5s));
    BOOST_TEST(pool.maximum_pool_size() == 2u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(lowering_the_maximum_retires_busy_workers_after_their_task, Pool, bounded_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 3, .maximum_pool_size = 3}); // fixed size
    gate blocked;
    run_counter ran;
    execute_held(pool, blocked, ran, 3);
    pool.set_core_pool_size(1);
    pool.set_maximum_pool_size(1);
    BOOST_TEST(pool.pool_size() == 3u); // busy workers are not disturbed
    blocked.open();
    BOOST_TEST(ran.wait_for_count(3));
    BOOST_TEST(eventually([&] { return pool.pool_size() == 1; }, 5s));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(lowering_the_core_makes_surplus_workers_subject_to_keep_alive, Pool, bounded_mixes) {
    const auto keep_alive = 100ms;
    Pool pool(crew::pool_options{.core_pool_size = 3, .maximum_pool_size = 3}); // fixed size
    pool.set_keep_alive(keep_alive);
    BOOST_TEST(pool.prestart_all_core_threads() == 3u);

    const auto lowered = clock::now();
    pool.set_core_pool_size(1);
    BOOST_TEST(eventually([&] { return pool.pool_size() == 1; }));
    BOOST_TEST((clock::now() - lowered >= keep_alive));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(raising_the_core_starts_workers_for_queued_tasks, Pool, bounded_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 4}); // a queue with room for all
    gate blocked;
    run_counter ran;
    execute_held(pool, blocked, ran, 3);
    BOOST_TEST(pool.pool_size() == 1u);
    BOOST_TEST(pool.queue_size() == 2u);

    pool.set_core_pool_size(4);
    // Two queued tasks: two new workers, not three.
    BOOST_TEST(pool.pool_size() == 3u);
    blocked.open();
    BOOST_TEST(ran.wait_for_count(3));
}

BOOST_TEST_DECORATOR(*utf::timeout(30))
BOOST_AUTO_TEST_CASE_TEMPLATE(prestart_starts_core_workers_only, Pool, bounded_mixes) {
    Pool pool(crew::pool_options{.core_pool_size = 3, .maximum_pool_size = 3}); // fixed size
    BOOST_TEST(pool.prestart_core_thread());
    BOOST_TEST(pool.pool_size() == 1u);
    BOOST_TEST(pool.prestart_all_core_threads() == 2u);
    BOOST_TEST(pool.pool_size() == 3u);
    BOOST_TEST(!pool.prestart_core_thread());
    BOOST_TEST(pool.prestart_all_core_threads() == 0u);
    BOOST_TEST(pool.largest_pool_size() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()
