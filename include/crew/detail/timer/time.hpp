#ifndef CREW_DETAIL_TIMER_TIME_HPP
#define CREW_DETAIL_TIMER_TIME_HPP

#include <chrono>
#include <type_traits>

namespace crew::detail {

using clock = std::chrono::steady_clock;

// Converts any duration to nanoseconds, clamping instead of overflowing:
// hours::max() becomes nanoseconds::max() ("never"), not a wrap to the past.
// Works for floating, unsigned and narrow representations alike: the range
// is checked in long double (exact for every 64-bit count), and only a value
// known to fit is converted exactly.
template <class Rep, class Period>
constexpr std::chrono::nanoseconds saturating_nanoseconds(std::chrono::duration<Rep, Period> d) noexcept {
    using std::chrono::nanoseconds;
    using to_nano = std::ratio_divide<Period, std::nano>;
    if constexpr (std::is_floating_point_v<Rep>) {
        if (d.count() != d.count()) return nanoseconds::zero(); // NaN
    }
    const long double ns = static_cast<long double>(d.count()) * static_cast<long double>(to_nano::num) /
                           static_cast<long double>(to_nano::den);
    // 2^63 exactly: every int64 is below it.
    constexpr long double limit = 9223372036854775808.0L;
    if (ns >= limit) return nanoseconds::max();
    if (ns <= -limit) return nanoseconds::min();
    if constexpr (!std::is_floating_point_v<Rep> && (to_nano::den == 1 || to_nano::num == 1)) {
        // Exact integer arithmetic; in range, so neither step overflows.
        const auto count = static_cast<nanoseconds::rep>(d.count() / to_nano::den);
        return nanoseconds(count * static_cast<nanoseconds::rep>(to_nano::num));
    } else {
        return nanoseconds(static_cast<nanoseconds::rep>(ns));
    }
}

// a - b, clamped to the range of nanoseconds.
constexpr std::chrono::nanoseconds saturating_difference(std::chrono::nanoseconds a,
                                                         std::chrono::nanoseconds b) noexcept {
    using std::chrono::nanoseconds;
    if (b < nanoseconds::zero() && a > nanoseconds::max() + b) return nanoseconds::max();
    if (b > nanoseconds::zero() && a < nanoseconds::min() + b) return nanoseconds::min();
    return a - b;
}

// How long from now until `deadline` on any clock, clamped: no subtraction
// of time points near their limits can overflow.
template <class Clock, class Duration>
std::chrono::nanoseconds saturating_time_until(std::chrono::time_point<Clock, Duration> deadline) noexcept {
    return saturating_difference(saturating_nanoseconds(deadline.time_since_epoch()),
                                 saturating_nanoseconds(Clock::now().time_since_epoch()));
}

// now + d, clamped to the clock's range. time_point::max() means "never".
template <class Rep, class Period>
clock::time_point saturating_deadline(std::chrono::duration<Rep, Period> d,
                                      clock::time_point now = clock::now()) noexcept {
    const auto ns = saturating_nanoseconds(d);
    if (ns > std::chrono::nanoseconds::zero() && now > clock::time_point::max() - ns)
        return clock::time_point::max();
    if (ns < std::chrono::nanoseconds::zero() && now < clock::time_point::min() - ns)
        return clock::time_point::min();
    return now + ns;
}

} // namespace crew::detail

#endif
