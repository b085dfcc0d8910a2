// Every public call that takes a duration or a time point, with the extreme
// values of many duration types: max(), min(), zero, negative, one tick,
// sub-microsecond, and for floating types NaN and infinities. Nothing may
// overflow (the asan preset runs this under UBSan), block when it should
// only check, or return before its time.
//
// A value is "short" when it saturates to at most 10 ms: calls with it are
// made for real and timed (never early, never much late). A longer one
// (up to "never") is checked by ending the wait from outside: the call must
// still be waiting and then return the right answer.
#include "support.hpp"

#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <deque>
#include <future>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;
using std::chrono::duration;
using std::chrono::nanoseconds;

namespace {

using duration_types = boost::mpl::list<
    std::chrono::nanoseconds, std::chrono::microseconds, std::chrono::milliseconds, std::chrono::seconds,
    std::chrono::hours, std::chrono::years,                       // signed integers, fine to coarse
    duration<double>, duration<double, std::milli>,               // floating
    duration<float, std::ratio<3600>>, duration<long double, std::nano>,
    duration<unsigned long long, std::micro>, duration<unsigned, std::milli>, // unsigned
    duration<std::int8_t, std::ratio<60>>, duration<std::int16_t, std::milli>, // narrow
    duration<std::int32_t, std::ratio<1, 3>>,                     // not a power of ten
    duration<long long, std::pico>, duration<std::uint64_t, std::femto>>;     // finer than a nanosecond

constexpr nanoseconds short_limit = std::chrono::milliseconds(10);

template <class D>
std::string describe(D d) {
    std::ostringstream out;
    out << static_cast<long double>(d.count()) << " x " << D::period::num << "/" << D::period::den << " s";
    if constexpr (std::is_floating_point_v<typename D::rep>) out << " (floating)";
    else if constexpr (std::is_unsigned_v<typename D::rep>) out << " (unsigned)";
    return out.str();
}

// The values every call is tried with.
template <class D>
std::vector<D> samples() {
    using rep = typename D::rep;
    std::vector<D> out{D::max(), D::min(), D::zero(), D(rep(1))};
    if constexpr (std::is_signed_v<rep>) out.push_back(D(rep(-1)));
    if constexpr (std::is_floating_point_v<rep>) {
        out.push_back(std::chrono::duration_cast<D>(duration<long double, std::nano>(500)));  // 0.5 us
        out.push_back(std::chrono::duration_cast<D>(duration<long double, std::nano>(0.25))); // 0.25 ns
        out.push_back(D(std::numeric_limits<rep>::infinity()));
        out.push_back(D(-std::numeric_limits<rep>::infinity()));
        out.push_back(D(std::numeric_limits<rep>::quiet_NaN()));
        out.push_back(D(std::numeric_limits<rep>::max() / 2));
    } else if constexpr (std::ratio_less_v<typename D::period, std::micro>) {
        out.push_back(std::chrono::duration_cast<D>(nanoseconds(500))); // 0.5 us
    }
    return out;
}

template <class D>
nanoseconds saturated(D d) {
    return crew::detail::saturating_nanoseconds(d);
}

nanoseconds since(clock::time_point start) { return clock::now() - start; }

} // namespace

BOOST_AUTO_TEST_SUITE(durations)

// ---- await_termination ------------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(await_termination_takes_any_value, D, duration_types) {
    gate blocked; // outlives the pool, whose task waits on it
    crew::fixed_pool pool(1);
    pool.execute([&] { blocked.wait(); });

    std::vector<std::future<bool>> long_waits;
    for (const D value : samples<D>()) {
        const nanoseconds ns = saturated(value);
        BOOST_TEST_CONTEXT(describe(value) << " = " << ns.count() << " ns") {
            if (ns > short_limit) {
                long_waits.push_back(std::async(std::launch::async, [&pool, value] { return pool.await_termination(value); }));
                continue;
            }
            const auto start = clock::now();
            BOOST_TEST(!pool.await_termination(value)); // running: zero or negative only checks
            const auto took = since(start);
            BOOST_TEST((took >= std::max(ns, nanoseconds::zero())));
            BOOST_TEST((took < scaled(2s)));
        }
    }
    for (auto& w : long_waits) BOOST_TEST((w.wait_for(0s) == std::future_status::timeout)); // still waiting
    pool.shutdown();
    blocked.open();
    for (auto& w : long_waits) {
        BOOST_TEST_REQUIRE((w.wait_for(scaled(10s)) == std::future_status::ready));
        BOOST_TEST(w.get());
    }
    // Terminated: every value answers true at once, max() included.
    BOOST_TEST_REQUIRE(pool.is_terminated());
    for (const D value : samples<D>()) {
        BOOST_TEST_CONTEXT(describe(value)) {
            const auto start = clock::now();
            BOOST_TEST(pool.await_termination(value));
            BOOST_TEST((since(start) < scaled(1s)));
        }
    }
}

// ---- future::wait_for --------------------------------------------------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(future_wait_for_takes_any_value, D, duration_types) {
    gate blocked; // outlives the pool, whose task waits on it
    crew::fixed_pool pool(1);
    auto pending = submit_held(pool, blocked, 7);

    std::vector<std::future<std::future_status>> long_waits;
    for (const D value : samples<D>()) {
        const nanoseconds ns = saturated(value);
        BOOST_TEST_CONTEXT(describe(value) << " = " << ns.count() << " ns") {
            if (ns > short_limit) {
                long_waits.push_back(
                    std::async(std::launch::async, [&pending, value] { return pending.wait_for(value); }));
                continue;
            }
            const auto start = clock::now();
            BOOST_TEST((pending.wait_for(value) == std::future_status::timeout));
            const auto took = since(start);
            BOOST_TEST((took >= std::max(ns, nanoseconds::zero())));
            BOOST_TEST((took < scaled(2s)));
        }
    }
    for (auto& w : long_waits) BOOST_TEST((w.wait_for(0s) == std::future_status::timeout));
    blocked.open();
    for (auto& w : long_waits) {
        BOOST_TEST_REQUIRE((w.wait_for(scaled(10s)) == std::future_status::ready));
        BOOST_TEST((w.get() == std::future_status::ready));
    }
    BOOST_TEST_REQUIRE(pending.is_done());
    for (const D value : samples<D>()) {
        BOOST_TEST_CONTEXT(describe(value)) {
            const auto start = clock::now();
            BOOST_TEST((pending.wait_for(value) == std::future_status::ready));
            BOOST_TEST((since(start) < scaled(1s)));
        }
    }
    BOOST_TEST(pending.get() == 7);
}

// ---- schedule, schedule_at_fixed_rate, schedule_with_fixed_delay -------------

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(schedule_takes_any_delay, D, duration_types) {
    crew::scheduled_pool pool(2);
    for (const D value : samples<D>()) {
        const nanoseconds ns = saturated(value);
        BOOST_TEST_CONTEXT(describe(value) << " = " << ns.count() << " ns") {
            const auto called = clock::now();
            auto f = pool.schedule(value, [] { return clock::now(); });
            if (ns > short_limit) {
                BOOST_TEST((f.delay() > short_limit / 2)); // no wrap into the past
                BOOST_TEST(!f.is_done());
                BOOST_TEST(f.cancel());
                BOOST_CHECK_THROW(f.get(), crew::cancellation_error);
            } else {
                BOOST_TEST_REQUIRE((f.wait_for(scaled(10s)) == std::future_status::ready));
                BOOST_TEST((f.get() >= called + std::max(ns, nanoseconds::zero()))); // never early
            }
        }
    }
    pool.purge();
    BOOST_TEST(pool.queue_size() == 0u);
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(periodic_schedules_take_any_initial_delay_and_refuse_non_positive_periods, D,
                              duration_types) {
    // A cancelled schedule's run in progress still completes: its counter
    // must outlive the pool, not the loop iteration.
    std::deque<std::atomic<int>> counters;
    crew::scheduled_pool pool(2);
    for (const D value : samples<D>()) {
        const nanoseconds ns = saturated(value);
        BOOST_TEST_CONTEXT(describe(value) << " = " << ns.count() << " ns") {
            // As the initial delay, with a 1 ms period.
            for (bool fixed_rate : {true, false}) {
                std::atomic<int>& runs = counters.emplace_back(0);
                auto f = fixed_rate ? pool.schedule_at_fixed_rate(value, 1ms, [&] { runs.fetch_add(1); })
                                    : pool.schedule_with_fixed_delay(value, 1ms, [&] { runs.fetch_add(1); });
                if (ns > short_limit) {
                    BOOST_TEST((f.delay() > short_limit / 2));
                    BOOST_TEST(runs.load() == 0);
                } else {
                    BOOST_TEST(eventually([&] { return runs.load() >= 2; }));
                }
                BOOST_TEST(f.cancel());
            }
            // As the period: not positive in nanoseconds -> invalid_argument.
            for (bool fixed_rate : {true, false}) {
                std::atomic<int>& runs = counters.emplace_back(0);
                auto schedule = [&] {
                    return fixed_rate ? pool.schedule_at_fixed_rate(0ms, value, [&] { runs.fetch_add(1); })
                                      : pool.schedule_with_fixed_delay(0ms, value, [&] { runs.fetch_add(1); });
                };
                if (ns <= nanoseconds::zero()) {
                    BOOST_CHECK_THROW(schedule(), std::invalid_argument);
                    continue;
                }
                auto f = schedule();
                if (ns > short_limit) {
                    // Runs once now; the next run is far away (at "never" for max()).
                    BOOST_TEST_REQUIRE(eventually([&] { return runs.load() == 1 && f.delay() > short_limit / 2; }));
                } else {
                    BOOST_TEST(eventually([&] { return runs.load() >= 3; }));
                }
                BOOST_TEST(f.cancel());
                BOOST_CHECK_THROW(f.get(), crew::cancellation_error);
            }
        }
    }
    pool.purge();
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

// schedule_at takes a steady_clock::time_point.
BOOST_AUTO_TEST_CASE(schedule_at_takes_any_time_point, *utf::timeout(60)) {
    using tp = clock::time_point;
    crew::scheduled_pool pool(2);
    const auto now = clock::now();
    const std::vector<tp> past{tp::min(), tp{}, now - 1h, now - 1ns, now};
    for (const tp when : past) {
        auto f = pool.schedule_at(when, [] { return 1; });
        BOOST_TEST(f.delay() <= nanoseconds::zero());
        BOOST_TEST_REQUIRE((f.wait_for(scaled(10s)) == std::future_status::ready));
        BOOST_TEST(f.get() == 1);
    }
    const auto soon = clock::now() + 500ns;
    auto sub_microsecond = pool.schedule_at(soon, [] { return clock::now(); });
    BOOST_TEST((sub_microsecond.get() >= soon));
    for (const tp when : {tp::max(), tp::max() - 1ns, clock::now() + 24h}) {
        auto f = pool.schedule_at(when, [] { return 1; });
        BOOST_TEST((f.delay() > 1h));
        BOOST_TEST((f.due_time() == when));
        BOOST_TEST(f.cancel());
    }
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

// ---- future::wait_until ---------------------------------------------------------

// Time points on both clocks, in several units, that stay clear of the limits
// (the limits themselves: see the next case).
BOOST_AUTO_TEST_CASE(future_wait_until_takes_time_points_of_either_clock_and_any_unit, *utf::timeout(60)) {
    using std::chrono::system_clock;
    gate blocked; // outlives the pool
    crew::fixed_pool pool(1);
    auto pending = pool.submit([&] { blocked.wait(); });

    auto check_past = [&](auto when) {
        const auto start = clock::now();
        BOOST_TEST((pending.wait_until(when) == std::future_status::timeout));
        BOOST_TEST((since(start) < scaled(1s)));
    };
    check_past(clock::now());
    check_past(clock::now() - 1h);
    check_past(clock::time_point{});
    check_past(system_clock::now() - 1h);
    check_past(system_clock::time_point{});
    check_past(std::chrono::time_point_cast<std::chrono::hours>(clock::now()) - std::chrono::hours(1));
    check_past(std::chrono::time_point<system_clock, duration<double>>(system_clock::now() - 1s));

    auto check_soon = [&](auto when, nanoseconds at_least) {
        const auto start = clock::now();
        BOOST_TEST((pending.wait_until(when) == std::future_status::timeout));
        BOOST_TEST((since(start) >= at_least - 1ms)); // another clock may tick apart by a little
        BOOST_TEST((since(start) < scaled(2s)));
    };
    check_soon(clock::now() + 5ms, 5ms);
    check_soon(clock::now() + 500ns, 0ns);
    check_soon(system_clock::now() + 5ms, 5ms);
    check_soon(std::chrono::time_point<std::chrono::steady_clock, duration<double, std::milli>>(clock::now() + 5ms), 5ms);

    auto far = std::async(std::launch::async, [&] { return pending.wait_until(clock::now() + 24h); });
    auto far_system = std::async(std::launch::async, [&] { return pending.wait_until(system_clock::now() + 24h); });
    BOOST_TEST((far.wait_for(0s) == std::future_status::timeout));
    blocked.open();
    BOOST_TEST((far.get() == std::future_status::ready));
    BOOST_TEST((far_system.get() == std::future_status::ready));
    // Done: any time point answers ready at once, the limits included.
    BOOST_TEST((pending.wait_until(clock::time_point::max()) == std::future_status::ready));
    BOOST_TEST((pending.wait_until(system_clock::time_point::max()) == std::future_status::ready));
    BOOST_TEST((pending.wait_until(clock::time_point{}) == std::future_status::ready));
}

// Regression (fixed in d204e4d): future::wait_until used to compute
// `deadline - Clock::now()` before saturating, which overflows near the
// limits: time_point::min() wrapped to a huge wait (a pending future blocked
// until done instead of answering timeout at once), and
// time_point<steady_clock, hours>::max() wrapped into the past (timeout at
// once instead of waiting). UBSan flagged both.
BOOST_AUTO_TEST_CASE(future_wait_until_saturates_at_the_limits_of_the_time_point, *utf::timeout(60)) {
    using std::chrono::system_clock;
    gate blocked; // outlives the pool
    crew::fixed_pool pool(1);
    auto pending = pool.submit([&] { blocked.wait(); });
    // Should a wait wrongly block, this ends it after a while, so that the
    // case fails instead of hanging; normally the checks release it at once.
    std::promise<void> checked;
    std::thread rescue([&, done = checked.get_future()] {
        (void)done.wait_for(scaled(10s));
        blocked.open();
    });
    auto check_only = [&](auto when) {
        const auto start = clock::now();
        BOOST_TEST((pending.wait_until(when) == std::future_status::timeout));
        BOOST_TEST((since(start) < scaled(1s)));
    };
    check_only(clock::time_point::min());
    check_only(system_clock::time_point::min());
    check_only(std::chrono::time_point<std::chrono::steady_clock, std::chrono::hours>::min());
    check_only(std::chrono::time_point<system_clock, duration<double>>::min());
    checked.set_value();
    rescue.join();
    BOOST_TEST_REQUIRE((pending.wait_for(scaled(10s)) == std::future_status::ready));

    gate blocked_again; // outlives the pool
    crew::fixed_pool second(1);
    auto other = second.submit([&] { blocked_again.wait(); });
    using hours_point = std::chrono::time_point<std::chrono::steady_clock, std::chrono::hours>;
    using double_point = std::chrono::time_point<system_clock, duration<double>>;
    std::vector<std::future<std::future_status>> never;
    never.push_back(std::async(std::launch::async, [&] { return other.wait_until(hours_point::max()); }));
    never.push_back(std::async(std::launch::async, [&] { return other.wait_until(system_clock::time_point::max()); }));
    never.push_back(std::async(std::launch::async, [&] { return other.wait_until(double_point::max()); }));
    for (auto& w : never) BOOST_TEST((w.wait_for(50ms) == std::future_status::timeout)); // still waiting
    blocked_again.open();
    for (auto& w : never) BOOST_TEST((w.get() == std::future_status::ready));
}

// ---- keep-alive ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(keep_alive_takes_the_extremes_of_nanoseconds, *utf::timeout(60)) {
    crew::cached_pool pool;
    for (nanoseconds ok : {nanoseconds::max(), nanoseconds(1), nanoseconds::zero(), nanoseconds(999)}) {
        pool.set_keep_alive(ok);
        BOOST_TEST((pool.keep_alive() == ok));
        BOOST_TEST(pool.submit([] { return 1; }).get() == 1);
    }
    for (nanoseconds bad : {nanoseconds::min(), nanoseconds(-1)}) {
        BOOST_CHECK_THROW(pool.set_keep_alive(bad), std::invalid_argument);
        BOOST_CHECK_THROW(crew::cached_pool(crew::pool_options{.core_pool_size = 0, .keep_alive = bad}),
                          std::invalid_argument);
    }
    BOOST_TEST((pool.keep_alive() == nanoseconds(999))); // a refused value changes nothing
    // Zero is refused only together with core timeout.
    BOOST_CHECK_THROW(
        crew::fixed_pool(crew::pool_options{.core_pool_size = 1, .keep_alive = 0ns, .allow_core_thread_timeout = true}),
        std::invalid_argument);
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(10s)));
}

// keep_alive = max: idle workers wait "for ever" (no overflowing deadline),
// yet shutdown ends them at once. keep_alive = 1 ns: workers leave at once,
// and tasks still find one.
BOOST_AUTO_TEST_CASE(keep_alive_max_never_times_out_and_keep_alive_1ns_loses_no_task, *utf::timeout(60)) {
    {
        crew::fixed_pool pool(crew::pool_options{.core_pool_size = 2,
                                                 .keep_alive = nanoseconds::max(),
                                                 .allow_core_thread_timeout = true});
        BOOST_TEST(pool.prestart_all_core_threads() == 2u);
        BOOST_TEST(pool.submit([] { return 1; }).get() == 1);
        std::this_thread::sleep_for(20ms); // time for a wrapped deadline to fire, if it were one
        BOOST_TEST(pool.pool_size() == 2u);
        pool.shutdown();
        BOOST_TEST(pool.await_termination(scaled(5s)));
    }
    {
        crew::cached_pool pool;
        pool.set_keep_alive(nanoseconds::max());
        BOOST_TEST(pool.submit([] { return 1; }).get() == 1);
        pool.shutdown();
        BOOST_TEST(pool.await_termination(scaled(5s)));
    }
    {
        crew::fixed_pool pool(crew::pool_options{
            .core_pool_size = 2, .keep_alive = 1ns, .allow_core_thread_timeout = true});
        run_counter ran;
        for (int i = 0; i < 200; ++i) pool.execute([&] { ran.hit(); });
        BOOST_TEST(ran.wait_for_count(200));
        BOOST_TEST(eventually([&] { return pool.pool_size() == 0u; }));
        BOOST_TEST(pool.submit([] { return 2; }).get() == 2);
        pool.shutdown();
        BOOST_TEST(pool.await_termination(scaled(5s)));
    }
    {
        crew::scheduled_pool pool(crew::pool_options{
            .core_pool_size = 1, .keep_alive = nanoseconds::max(), .allow_core_thread_timeout = true});
        auto far = pool.schedule(1h, [] {});
        BOOST_TEST(pool.schedule(1ms, [] { return 3; }).get() == 3);
        BOOST_TEST(far.cancel());
        pool.shutdown();
        BOOST_TEST(pool.await_termination(scaled(5s)));
    }
}

// Regression (fixed in d204e4d): set_keep_alive took only nanoseconds, so
// hours::max() overflowed converting at the call site (UB; the pool then saw
// a negative value and threw). A template overload now saturates.
// (pool_options::keep_alive is a nanoseconds field: the caller converts.)
BOOST_AUTO_TEST_CASE(set_keep_alive_saturates_coarse_durations, *utf::timeout(30)) {
    crew::cached_pool pool;
    pool.set_keep_alive(std::chrono::hours::max());
    BOOST_TEST((pool.keep_alive() == nanoseconds::max()));
    pool.set_keep_alive(std::chrono::years::max());
    BOOST_TEST((pool.keep_alive() == nanoseconds::max()));
    pool.set_keep_alive(duration<double>(std::numeric_limits<double>::infinity()));
    BOOST_TEST((pool.keep_alive() == nanoseconds::max()));
    pool.set_keep_alive(duration<double, std::milli>(1.5));
    BOOST_TEST((pool.keep_alive() == nanoseconds(1'500'000)));
    BOOST_CHECK_THROW(pool.set_keep_alive(std::chrono::hours::min()), std::invalid_argument);
    BOOST_TEST((pool.keep_alive() == nanoseconds(1'500'000)));
}

BOOST_AUTO_TEST_SUITE_END()
