#ifndef CREW_DETAIL_QUEUE_WAKE_RULE_HPP
#define CREW_DETAIL_QUEUE_WAKE_RULE_HPP

// delayed_queue's wake rule: one word that tells a producer, without a lock,
// whom a new task needs woken. A task due before `until` needs a wake-up: of
// the waiting leader (whose timer is later) if the word says so, or else of
// one follower. One word, so that a producer reads both at once. `until` is
// rounded up to even: a task due in the same nanosecond may wake someone
// needlessly, never the other way.

#include <crew/detail/timer/time.hpp>

#include <cstdint>
#include <limits>

namespace crew::detail::wake_rule {

inline constexpr std::uint64_t wake_leader_bit = 1;

// An `until` that every due time is before: any new task needs a wake-up.
inline constexpr clock::rep always = std::numeric_limits<clock::rep>::max();

constexpr std::uint64_t make(clock::rep until, bool wake_leader) noexcept {
    auto u = static_cast<std::uint64_t>(until) ^ (std::uint64_t(1) << 63); // order-preserving
    if ((u & wake_leader_bit) != 0 && u != std::numeric_limits<std::uint64_t>::max()) ++u;
    return (u & ~wake_leader_bit) | (wake_leader ? wake_leader_bit : 0);
}

constexpr clock::rep until(std::uint64_t rule) noexcept {
    return static_cast<clock::rep>((rule & ~wake_leader_bit) ^ (std::uint64_t(1) << 63));
}

constexpr bool wakes_leader(std::uint64_t rule) noexcept { return (rule & wake_leader_bit) != 0; }

// A task due at `due` needs a wake-up by `rule`.
constexpr bool needs_wake(std::uint64_t rule, clock::time_point due) noexcept {
    return due.time_since_epoch().count() < until(rule);
}

} // namespace crew::detail::wake_rule

#endif
