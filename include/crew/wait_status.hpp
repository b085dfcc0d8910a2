#ifndef CREW_WAIT_STATUS_HPP
#define CREW_WAIT_STATUS_HPP

/// \file
/// The vocabulary of a queue's blocking calls (`take`, `poll_until`): how a
/// wait ended, and the flag that interrupts it. What a QueuePolicy of your
/// own needs besides `crew::task`.

#include <atomic>

namespace crew {

/// How a blocking wait in a queue ended.
enum class wait_status {
    taken,       ///< a task was moved into the output argument
    timed_out,   ///< the deadline passed with nothing to take
    interrupted, ///< the caller's interrupt flag was set (see `wake_consumers`)
};

/// The flag a worker hands to a queue's blocking calls; setting it and then
/// calling `wake_consumers()` makes the worker's wait return `interrupted`.
/// A queue must let a task it can hand out win over a set flag.
using interrupt_flag = std::atomic<bool>;

} // namespace crew

#endif
