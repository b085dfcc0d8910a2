// Unit tests for crew::detail::saturating_nanoseconds and saturating_deadline:
// every duration converts without overflow ("max means never"). The asan
// preset runs these under UBSan, which turns a signed overflow into a failure.

#include <crew/detail/timer/time.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>

using namespace std::chrono_literals;
using crew::detail::saturating_deadline;
using crew::detail::saturating_nanoseconds;
using std::chrono::duration;
using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using time_point = crew::detail::clock::time_point;

TEMPLATE_TEST_CASE("saturating_nanoseconds maps max and min of every standard duration to the nanosecond limits",
                   "[time]", hours, minutes, seconds, milliseconds, microseconds, nanoseconds, std::chrono::days,
                   std::chrono::years) {
    STATIC_REQUIRE(saturating_nanoseconds(TestType::max()) == nanoseconds::max());
    STATIC_REQUIRE(saturating_nanoseconds(TestType::min()) == nanoseconds::min());
}

TEST_CASE("saturating_nanoseconds converts in-range durations exactly", "[time]") {
    STATIC_REQUIRE(saturating_nanoseconds(0s) == 0ns);
    STATIC_REQUIRE(saturating_nanoseconds(hours(0)) == 0ns);
    STATIC_REQUIRE(saturating_nanoseconds(1h) == nanoseconds(3'600'000'000'000));
    STATIC_REQUIRE(saturating_nanoseconds(-1h) == nanoseconds(-3'600'000'000'000));
    STATIC_REQUIRE(saturating_nanoseconds(-5s) == nanoseconds(-5'000'000'000));
    STATIC_REQUIRE(saturating_nanoseconds(250ms) == nanoseconds(250'000'000));
    STATIC_REQUIRE(saturating_nanoseconds(-7us) == -7000ns);
    STATIC_REQUIRE(saturating_nanoseconds(123ns) == 123ns);
    STATIC_REQUIRE(saturating_nanoseconds(-123ns) == -123ns);
}

TEST_CASE("saturating_nanoseconds is exact right below the limits", "[time]") {
    // The largest whole number of seconds/ms/us that still fits.
    constexpr auto max_ns = nanoseconds::max().count();
    constexpr auto min_ns = nanoseconds::min().count();
    STATIC_REQUIRE(saturating_nanoseconds(seconds(max_ns / 1'000'000'000 - 1)) ==
                   nanoseconds((max_ns / 1'000'000'000 - 1) * 1'000'000'000));
    STATIC_REQUIRE(saturating_nanoseconds(milliseconds(max_ns / 1'000'000 - 1)) ==
                   nanoseconds((max_ns / 1'000'000 - 1) * 1'000'000));
    STATIC_REQUIRE(saturating_nanoseconds(microseconds(min_ns / 1000 + 1)) ==
                   nanoseconds((min_ns / 1000 + 1) * 1000));
    // One past the limit saturates instead of wrapping.
    STATIC_REQUIRE(saturating_nanoseconds(seconds(max_ns / 1'000'000'000 + 1)) == nanoseconds::max());
    STATIC_REQUIRE(saturating_nanoseconds(seconds(min_ns / 1'000'000'000 - 1)) == nanoseconds::min());
}

TEST_CASE("saturating_nanoseconds truncates durations finer than a nanosecond", "[time]") {
    using picoseconds = duration<std::int64_t, std::pico>;
    STATIC_REQUIRE(saturating_nanoseconds(picoseconds(1500)) == 1ns);
    STATIC_REQUIRE(saturating_nanoseconds(picoseconds::max()) == nanoseconds(picoseconds::max().count() / 1000));
    STATIC_REQUIRE(saturating_nanoseconds(picoseconds::min()) == nanoseconds(picoseconds::min().count() / 1000));
}

TEST_CASE("saturating_nanoseconds converts floating durations and clamps huge ones", "[time]") {
    REQUIRE(saturating_nanoseconds(duration<double>(1.5)) == 1'500'000'000ns);
    REQUIRE(saturating_nanoseconds(duration<double, std::milli>(0.25)) == 250'000ns);
    REQUIRE(saturating_nanoseconds(duration<double, std::milli>(-0.25)) == -250'000ns);
    REQUIRE(saturating_nanoseconds(duration<float>(2.0f)) == 2'000'000'000ns);
    REQUIRE(saturating_nanoseconds(duration<double>(0.0)) == 0ns);
    REQUIRE(saturating_nanoseconds(duration<double>(-0.0)) == 0ns);

    REQUIRE(saturating_nanoseconds(duration<double>(1e300)) == nanoseconds::max());
    REQUIRE(saturating_nanoseconds(duration<double>(-1e300)) == nanoseconds::min());
    REQUIRE(saturating_nanoseconds(duration<double, std::ratio<3600>>(1e12)) == nanoseconds::max());
    REQUIRE(saturating_nanoseconds(duration<double>::max()) == nanoseconds::max());
    REQUIRE(saturating_nanoseconds(duration<double>::min()) == nanoseconds::min()); // -DBL_MAX
    REQUIRE(saturating_nanoseconds(duration<double>(std::numeric_limits<double>::min())) == 0ns); // DBL_MIN
    REQUIRE(saturating_nanoseconds(duration<double, std::nano>(0.9)) == 0ns);
    REQUIRE(saturating_nanoseconds(duration<double, std::nano>(-0.9)) == 0ns);
    REQUIRE(saturating_nanoseconds(duration<double>(std::numeric_limits<double>::lowest())) ==
            nanoseconds::min());
    REQUIRE(saturating_nanoseconds(duration<float>(std::numeric_limits<float>::max())) == nanoseconds::max());
    REQUIRE(saturating_nanoseconds(duration<long double>(std::numeric_limits<long double>::max())) ==
            nanoseconds::max());
    REQUIRE(saturating_nanoseconds(duration<long double, std::ratio<3600>>(
                std::numeric_limits<long double>::lowest())) == nanoseconds::min());

    // Right at the edge: 2^63 ns as a double is one past nanoseconds::max().
    REQUIRE(saturating_nanoseconds(duration<double, std::nano>(9223372036854775808.0)) == nanoseconds::max());
    REQUIRE(saturating_nanoseconds(duration<double, std::nano>(-9223372036854775808.0)) == nanoseconds::min());
    REQUIRE(saturating_nanoseconds(duration<double>(9.2e9)) == nanoseconds(9'200'000'000'000'000'000));
}

TEST_CASE("saturating_nanoseconds maps infinities to the limits and NaN to zero", "[time]") {
    constexpr double inf = std::numeric_limits<double>::infinity();
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    REQUIRE(saturating_nanoseconds(duration<double>(inf)) == nanoseconds::max());
    REQUIRE(saturating_nanoseconds(duration<double>(-inf)) == nanoseconds::min());
    REQUIRE(saturating_nanoseconds(duration<double>(nan)) == 0ns);
    REQUIRE(saturating_nanoseconds(duration<double, std::ratio<3600>>(-nan)) == 0ns);
    REQUIRE(saturating_nanoseconds(duration<float>(std::numeric_limits<float>::quiet_NaN())) == 0ns);
    REQUIRE(saturating_nanoseconds(duration<long double>(std::numeric_limits<long double>::infinity())) ==
            nanoseconds::max());
}

TEST_CASE("saturating_nanoseconds handles small and unsigned integer representations", "[time]") {
    // Durations are any std::chrono::duration (doc/reliability.md, "Durations and time points"). A rep narrower than
    // 64 bits or unsigned must neither wrap nor saturate a value that fits.
    // (Before a574782, 5 ms as uint32 became nanoseconds::min().)
    CHECK(saturating_nanoseconds(duration<std::uint32_t, std::milli>(5)) == 5'000'000ns);
    CHECK(saturating_nanoseconds(duration<std::uint64_t, std::milli>(5)) == 5'000'000ns);
    CHECK(saturating_nanoseconds(duration<std::uint64_t>(5)) == 5'000'000'000ns);
    CHECK(saturating_nanoseconds(duration<std::uint64_t, std::nano>::max()) == nanoseconds::max());
    CHECK(saturating_nanoseconds(duration<std::int32_t, std::milli>(2'100'000'000)) ==
          nanoseconds(2'100'000'000'000'000));
    CHECK(saturating_nanoseconds(duration<std::int32_t>(1'000'000'000)) ==
          nanoseconds(1'000'000'000'000'000'000));
    CHECK(saturating_nanoseconds(duration<std::int32_t>::max()) ==
          nanoseconds(std::int64_t{std::numeric_limits<std::int32_t>::max()} * 1'000'000'000));
    CHECK(saturating_nanoseconds(duration<std::int32_t>::min()) ==
          nanoseconds(std::int64_t{std::numeric_limits<std::int32_t>::min()} * 1'000'000'000));
    CHECK(saturating_nanoseconds(duration<std::uint32_t, std::ratio<3600>>::max()) == nanoseconds::max());
    CHECK(saturating_nanoseconds(duration<std::uint64_t, std::pico>::max()) ==
          nanoseconds(static_cast<std::int64_t>(std::numeric_limits<std::uint64_t>::max() / 1000)));
    CHECK(saturating_nanoseconds(duration<std::int16_t, std::milli>(-3)) == -3'000'000ns);
    STATIC_REQUIRE(saturating_nanoseconds(duration<std::uint32_t, std::milli>(5)) == 5'000'000ns);
}

TEST_CASE("saturating_nanoseconds handles periods that are not a power of ten", "[time]") {
    using frames = duration<std::int64_t, std::ratio<1, 60>>; // 1/60 s: num and den both != 1 in ns
    CHECK(saturating_nanoseconds(frames(60)) == 1s);
    CHECK(saturating_nanoseconds(frames(-90)) == -1500ms);
    CHECK(saturating_nanoseconds(frames(1)) == nanoseconds(16'666'666));
    CHECK(saturating_nanoseconds(frames::max()) == nanoseconds::max());
    CHECK(saturating_nanoseconds(frames::min()) == nanoseconds::min());
    using thirds = duration<std::uint32_t, std::ratio<1, 3>>;
    CHECK(saturating_nanoseconds(thirds(3)) == 1s);
    CHECK(saturating_nanoseconds(thirds::max()) == nanoseconds(1'431'655'765'000'000'000));
}

TEST_CASE("saturating_nanoseconds is exact for whole units next to the limit", "[time]") {
    // Every count below 2^63 ns converts exactly; one unit more saturates.
    CHECK(saturating_nanoseconds(milliseconds(9'223'372'036'854)) == nanoseconds(9'223'372'036'854'000'000));
    CHECK(saturating_nanoseconds(milliseconds(9'223'372'036'855)) == nanoseconds::max());
    CHECK(saturating_nanoseconds(milliseconds(-9'223'372'036'854)) == nanoseconds(-9'223'372'036'854'000'000));
    CHECK(saturating_nanoseconds(milliseconds(-9'223'372'036'855)) == nanoseconds::min());
    CHECK(saturating_nanoseconds(seconds(9'223'372'036)) == nanoseconds(9'223'372'036'000'000'000));
    CHECK(saturating_nanoseconds(seconds(9'223'372'037)) == nanoseconds::max());
    CHECK(saturating_nanoseconds(hours(2'562'047)) == nanoseconds(std::int64_t{2'562'047} * 3'600'000'000'000));
    CHECK(saturating_nanoseconds(hours(2'562'048)) == nanoseconds::max());
}

TEST_CASE("saturating_deadline adds in range and clamps to the clock's limits", "[time]") {
    const time_point now = crew::detail::clock::now();
    REQUIRE(saturating_deadline(1s, now) == now + 1s);
    REQUIRE(saturating_deadline(-1s, now) == now - 1s);
    REQUIRE(saturating_deadline(0s, now) == now);
    REQUIRE(saturating_deadline(duration<double>(0.5), now) == now + 500ms);

    REQUIRE(saturating_deadline(nanoseconds::max(), now) == time_point::max());
    REQUIRE(saturating_deadline(hours::max(), now) == time_point::max());
    REQUIRE(saturating_deadline(seconds::max(), now) == time_point::max());
    REQUIRE(saturating_deadline(milliseconds::max(), now) == time_point::max());
    REQUIRE(saturating_deadline(duration<double>(1e300), now) == time_point::max());
    REQUIRE(saturating_deadline(duration<double>(std::numeric_limits<double>::infinity()), now) ==
            time_point::max());
    REQUIRE(saturating_deadline(duration<double>(std::numeric_limits<double>::quiet_NaN()), now) == now);
}

TEST_CASE("saturating_deadline never overflows near either end of the clock", "[time]") {
    const time_point near_max = time_point::max() - 10ns;
    REQUIRE(saturating_deadline(10ns, near_max) == time_point::max());
    REQUIRE(saturating_deadline(11ns, near_max) == time_point::max());
    REQUIRE(saturating_deadline(9ns, near_max) == time_point::max() - 1ns);
    REQUIRE(saturating_deadline(hours::max(), time_point::max()) == time_point::max());
    REQUIRE(saturating_deadline(hours::min(), near_max) == near_max + nanoseconds::min());

    const time_point near_min = time_point::min() + 10ns;
    REQUIRE(saturating_deadline(-10ns, near_min) == time_point::min());
    REQUIRE(saturating_deadline(-11ns, near_min) == time_point::min());
    REQUIRE(saturating_deadline(-9ns, near_min) == time_point::min() + 1ns);
    REQUIRE(saturating_deadline(hours::min(), time_point::min()) == time_point::min());
    REQUIRE(saturating_deadline(nanoseconds::min(), near_min) == time_point::min());
    REQUIRE(saturating_deadline(hours::max(), near_min) == near_min + nanoseconds::max());

    // At the epoch, the whole range of nanoseconds is reachable.
    REQUIRE(saturating_deadline(nanoseconds::min(), time_point{}) == time_point::min());
    REQUIRE(saturating_deadline(nanoseconds::max(), time_point{}) == time_point::max());
    REQUIRE(saturating_deadline(duration<double>(-1e300), time_point{}) == time_point::min());
}

TEST_CASE("saturating_deadline defaults to now on the steady clock", "[time]") {
    const time_point before = crew::detail::clock::now();
    const time_point deadline = saturating_deadline(2s);
    const time_point after = crew::detail::clock::now();
    REQUIRE(deadline >= before + 2s);
    REQUIRE(deadline <= after + 2s);
    REQUIRE(saturating_deadline(hours::max()) == time_point::max());
}
