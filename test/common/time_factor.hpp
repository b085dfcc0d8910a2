// The one reading of CREW_TEST_TIME_FACTOR, shared by the unit and executor
// suites. Sanitizer builds run several times slower, so their presets raise
// the factor, and the tests multiply their generous upper bounds (and only
// those) by it. A factor below 1 would tighten a bound past what the test was
// written for, so it counts as 1, as does a value that does not parse.
//
// Included relatively ("../common/time_factor.hpp") so that neither
// test/CMakeLists.txt nor test/Jamfile needs an include path for it; neither
// globs this directory for tests.
#ifndef CREW_TEST_COMMON_TIME_FACTOR_HPP
#define CREW_TEST_COMMON_TIME_FACTOR_HPP

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace crew_test_common {

inline double time_factor() {
    static const double factor = [] {
        const char* text = std::getenv("CREW_TEST_TIME_FACTOR");
        if (text == nullptr) return 1.0;
        char* end = nullptr;
        const double value = std::strtod(text, &end);
        // `!(value >= 1)` rather than `value < 1`: NaN counts as 1 too. An
        // infinite factor would overflow every scaled duration.
        return end == text || !(value >= 1.0) || std::isinf(value) ? 1.0 : value;
    }();
    return factor;
}

// `d` multiplied by the time factor, in the steady clock's own unit so that
// it adds to a steady time point without another cast.
template <class Rep, class Period>
std::chrono::steady_clock::duration scaled(std::chrono::duration<Rep, Period> d) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(d * time_factor());
}

// Polls `done` until it holds or a scaled limit passes. Only for states that
// no event announces (a thread has started waiting inside a queue, a worker
// was culled by keep-alive); everything else synchronises on latches and
// futures.
template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    using namespace std::chrono_literals;
    const auto deadline = std::chrono::steady_clock::now() + scaled(limit);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return done();
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

} // namespace crew_test_common

#endif
