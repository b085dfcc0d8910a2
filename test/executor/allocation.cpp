// execute() of a small lambda allocates nothing: a counting global
// operator new proves it.
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <new>

namespace {
std::atomic<std::uint64_t> allocations{0};
}

// Every replaceable form that allocates from malloc is replaced, so that no
// sanitizer runtime's allocator is ever paired with our free(). (Aligned
// forms keep the runtime's own new and delete pair.)
namespace {
void* counted(std::size_t size) noexcept {
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

BOOST_AUTO_TEST_SUITE(allocation)

BOOST_AUTO_TEST_CASE(execute_of_a_48_byte_lambda_allocates_nothing, *utf::timeout(60)) {
    crew::fixed_pool pool(2);
    std::atomic<std::uint64_t> sum{0};
    struct payload {
        std::uint64_t words[5];
    };
    const payload data{{1, 2, 3, 4, 5}};
    auto job = [&sum, data] { sum.fetch_add(data.words[4], std::memory_order_relaxed); };
    static_assert(sizeof(job) == 48);

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

BOOST_AUTO_TEST_CASE(submit_allocates_one_shared_state_and_a_stop_token_task_two, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    pool.prestart_all_core_threads();
    pool.submit([] { return 1; }).get(); // warm up
    pool.submit([](std::stop_token) { return 1; }).get();

    auto before = allocations.load();
    auto plain = pool.submit([] { return 1; });
    BOOST_TEST(allocations.load() - before == 1u);
    plain.get();

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

BOOST_AUTO_TEST_SUITE_END()
