// How crew's fuzz targets report a broken rule: print it, with up to two
// numbers that tell the case, and abort, so that libFuzzer keeps the input
// as a crash (test/fuzz/run.sh).
#ifndef CREW_TEST_FUZZ_CHECK_HPP
#define CREW_TEST_FUZZ_CHECK_HPP

#include <cstdio>
#include <cstdlib>
#include <string>

namespace crew_fuzz {

template <class A = int, class B = int>
[[noreturn]] void fail(const char* what, A a = 0, B b = 0) {
    std::fprintf(stderr, "fuzz: %s (%s, %s)\n", what, std::to_string(a).c_str(), std::to_string(b).c_str());
    std::abort();
}

} // namespace crew_fuzz

// CHECK(cond) or CHECK(cond, a) or CHECK(cond, a, b): fails with the
// condition's text and the numbers given.
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) ::crew_fuzz::fail("check failed: " #cond, ##__VA_ARGS__);                                         \
    } while (0)

#endif
