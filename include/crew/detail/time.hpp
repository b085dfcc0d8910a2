#ifndef CREW_DETAIL_TIME_HPP
#define CREW_DETAIL_TIME_HPP

#include <chrono>
#include <type_traits>

namespace crew::detail {

using clock = std::chrono::steady_clock;

// Converts any duration to nanoseconds, clamping instead of overflowing:
// hours::max() becomes nanoseconds::max() ("never"), not a wrap to the past.
template <class Rep, class Period>
constexpr std::chrono::nanoseconds saturating_nanoseconds(std::chrono::duration<Rep, Period> d) noexcept {
    using std::chrono::nanoseconds;
    using source = std::chrono::duration<Rep, Period>;
    if constexpr (std::is_floating_point_v<Rep>) {
        if (d != d) return nanoseconds::zero(); // NaN
        const auto ns = std::chrono::duration<long double, std::nano>(d).count();
        if (ns >= static_cast<long double>(nanoseconds::max().count())) return nanoseconds::max();
        if (ns <= static_cast<long double>(nanoseconds::min().count())) return nanoseconds::min();
        return nanoseconds(static_cast<nanoseconds::rep>(ns));
    } else if constexpr (std::ratio_greater_equal_v<std::nano, Period> &&
                         sizeof(Rep) <= sizeof(nanoseconds::rep)) {
        // Finer than or equal to a nanosecond: the conversion only shrinks.
        return std::chrono::duration_cast<nanoseconds>(d);
    } else {
        constexpr auto hi = std::chrono::duration_cast<source>(nanoseconds::max());
        constexpr auto lo = std::chrono::duration_cast<source>(nanoseconds::min());
        if (d >= hi) return nanoseconds::max();
        if (d <= lo) return nanoseconds::min();
        return std::chrono::duration_cast<nanoseconds>(d);
    }
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
