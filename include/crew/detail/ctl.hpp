#ifndef CREW_DETAIL_CTL_HPP
#define CREW_DETAIL_CTL_HPP

#include <cstdint>

namespace crew::detail {

// Java's ctl: one word packing the run state (high 3 bits) and the worker
// count (the rest), so that both change together in one CAS. Unlike Java's
// int, the word is unsigned and RUNNING is 0, so states still order by value.
namespace ctl {

using word = std::uint64_t;

inline constexpr int count_bits = 61;
inline constexpr word count_mask = (word{1} << count_bits) - 1;

inline constexpr word running = word{0} << count_bits;
inline constexpr word shutdown = word{1} << count_bits;
inline constexpr word stop = word{2} << count_bits;
inline constexpr word tidying = word{3} << count_bits;
inline constexpr word terminated = word{4} << count_bits;

constexpr word run_state_of(word c) noexcept { return c & ~count_mask; }
constexpr word worker_count_of(word c) noexcept { return c & count_mask; }
constexpr word of(word run_state, word worker_count) noexcept { return run_state | worker_count; }

constexpr bool run_state_less_than(word c, word s) noexcept { return c < s; }
constexpr bool run_state_at_least(word c, word s) noexcept { return c >= s; }
constexpr bool is_running(word c) noexcept { return c < shutdown; }

} // namespace ctl
} // namespace crew::detail

#endif
