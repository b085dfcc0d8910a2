#ifndef CREW_DETAIL_TEST_SEAM_HPP
#define CREW_DETAIL_TEST_SEAM_HPP

// Test-only seams: named points between two steps of a protocol where a test
// may stop a thread (say, a producer between claiming a ring cell and
// publishing it), to reach a race window on purpose instead of hoping a
// stress test hits it.
//
// Compiled out unless CREW_TEST_SEAMS is defined (the test suites define it;
// users never do): then CREW_SEAM(name) is `((void)0)`, no load, no branch.
// With it defined, each seam is one acquire load of a hook pointer that is
// null unless a test installed one (test/common/seams.hpp).

#if defined(CREW_TEST_SEAMS)

#include <atomic>

namespace crew::detail {

// Where a thread may be stopped. Each names the two steps it sits between.
enum class seam {
    ring_claimed,        // segment_queue's push: a cell claimed, the task not yet in it
    ring_pop_claimed,    // segment_queue's pop: a cell claimed, its task not yet moved out nor the cell freed
    task_ran,            // basic_executor::run_task: the task ran, not yet destroyed
    task_destroyed,      // basic_executor::run_task: the task destroyed, the worker goes on
    worker_took_task,    // run_worker: a task taken from the queue, before the pause check
    grow_first_checked,  // try_execute (grow_first_queue): queued, before the "unclaimed" check
    consumer_timed_out,  // get_task: a timed poll came back empty, before the exit check
    worker_may_leave,    // get_task: allowed to leave, the worker count not yet decremented
    sync_consumer_counted, // synchronous_queue: a consumer counted as waiting, before its first look
    lockfree_offer_entered, // lockfree_queue's offer: counted at the gate, the task not yet pushed
    lockfree_close_marked,  // lockfree_queue::close: the closed bit set, before waiting for entered offers
    coroutine_timer_queued,    // sleep_awaiter::await_suspend: the timer scheduled, the wait not yet armed
    coroutine_wait_registered, // state_wait::arm: the hook registered, the stop callback not yet
    coroutine_wait_settling,   // state_wait::wake: the hook taken (by the completer, or back by a stop), before the phase exchange
    work_stealing_offer_checked, // work_stealing_queue's offer: found open, the task not yet in a deque or shard
    work_stealing_close_flagged, // work_stealing_queue::close: the closed flag set, the shards not yet closed
    work_stealing_search_counted, // work_stealing_queue's search: just counted in searching_, before it looks
    work_stealing_search_failed, // work_stealing_queue's search: found nothing, still counted as searching
    consumer_woken,      // event_count::commit_wait (woken) or cancel_wait (a wake-up in flight to take): not yet withdrawn
    segment_linking,     // segment_queue's linker: the last segment closed, its successor set up, not yet linked
    segment_drained,     // segment_queue's pop: the first segment's successor read, the segment found drained, not yet held
    segment_linked,      // segment_queue's linker: the successor linked and made the last, not yet opened
    segment_retiring,    // segment_queue's pop: the drained first segment held, the queue's head not yet moved to its successor
};

using seam_hook = void (*)(seam) noexcept;

// The installed hook; null when no test is looking.
inline std::atomic<seam_hook> installed_seam_hook{nullptr};

inline void at_seam(seam s) noexcept {
    if (const seam_hook hook = installed_seam_hook.load(std::memory_order_acquire)) hook(s);
}

} // namespace crew::detail

#define CREW_SEAM(name) ::crew::detail::at_seam(::crew::detail::seam::name)

namespace crew::detail {
// For a seam that needs a look first: the look is compiled out with it.
inline constexpr bool test_seams_compiled = true;
} // namespace crew::detail

#else

#define CREW_SEAM(name) ((void)0)

namespace crew::detail {
inline constexpr bool test_seams_compiled = false;
} // namespace crew::detail

#endif

#endif
