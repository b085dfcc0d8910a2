#ifndef CREW_DETAIL_TIMER_TIMER_SLACK_HPP
#define CREW_DETAIL_TIMER_TIMER_SLACK_HPP

// A thread's timer slack (Linux: prctl(PR_SET_TIMERSLACK)): how late the
// kernel may end its timed sleeps, to batch wake-ups. Elsewhere a no-op.

#include <chrono>
#include <stdexcept>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace crew::detail {

// `slack`, checked: pool_options::timer_slack must not be negative.
inline std::chrono::nanoseconds validated_timer_slack(std::chrono::nanoseconds slack) {
    if (slack < std::chrono::nanoseconds::zero())
        throw std::invalid_argument("crew::delayed_queue: timer_slack must not be negative");
    return slack;
}

// Sets the calling thread's timer slack to `slack`, once per thread and
// value (a worker serves one pool); zero leaves the thread's own.
inline void apply_timer_slack([[maybe_unused]] std::chrono::nanoseconds slack) noexcept {
#if defined(__linux__)
    if (slack.count() == 0) return;
    thread_local std::chrono::nanoseconds applied{0};
    if (applied == slack) return;
    if (::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(slack.count()), 0UL, 0UL, 0UL) == 0) applied = slack;
#endif
}

} // namespace crew::detail

#endif
