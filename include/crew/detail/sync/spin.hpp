#ifndef CREW_DETAIL_SYNC_SPIN_HPP
#define CREW_DETAIL_SYNC_SPIN_HPP

// Brief spinning before a thread blocks: the pause instruction, how many CPUs
// a spinner competes for, and a bounded spin loop.

#include <algorithm>
#include <cstddef>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <intrin.h> // _mm_pause; GCC and Clang use a builtin instead of <immintrin.h>'s 47,000 lines
#endif

namespace crew::detail {

// Tells the CPU this is a spin-wait loop (saves power, yields the core to a
// sibling hyper-thread).
inline void cpu_relax() noexcept {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_ia32_pause();
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// The CPUs this thread may run on (its affinity mask, on Linux), at least 1.
// On one CPU a spinner only delays the thread it waits for.
inline std::size_t usable_cpu_count() noexcept {
#if defined(__linux__)
    cpu_set_t allowed;
    if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        return static_cast<std::size_t>(std::max(CPU_COUNT(&allowed), 1));
#endif
    return std::max(std::thread::hardware_concurrency(), 1u);
}

// Spins for about `pauses` pause instructions in all, checking `done` at
// exponentially spaced points (1, 2, 4 ... 16 pauses apart), so that a
// spinner reads the shared word it watches rarely enough not to slow down
// the threads that write it. Returns whether `done` became true.
inline constexpr int longest_spin_step = 16; // pauses between two looks at most

template <class Done>
bool spin_until(int pauses, Done done) {
    for (int spent = 0, step = 1; spent < pauses;
         spent += step, step = step < longest_spin_step ? step * 2 : longest_spin_step) {
        for (int i = 0; i < step; ++i) cpu_relax();
        if (done()) return true;
    }
    return false;
}

} // namespace crew::detail

#endif
