#ifndef CREW_DETAIL_CACHE_LINE_HPP
#define CREW_DETAIL_CACHE_LINE_HPP

// The size crew aligns its contended words to, so that two words written by
// different threads never share a cache line: 64 bytes (x86-64, most ARM
// cores). Not std::hardware_destructive_interference_size, whose value GCC
// warns may differ between translation units: in a header-only library that
// would give one class two layouts. A cross-cutting header: every room may
// include it.

#include <cstddef>

namespace crew::detail {

inline constexpr std::size_t cache_line = 64;

} // namespace crew::detail

#endif
