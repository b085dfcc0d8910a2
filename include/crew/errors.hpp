#ifndef CREW_ERRORS_HPP
#define CREW_ERRORS_HPP

/// \file
/// The exceptions crew throws besides `std::invalid_argument`.

#include <stdexcept>

namespace crew {

/// Thrown when a pool refuses a task: by `abort_policy`, by `block_policy` once
/// the pool shuts down, and from `future::get()` of a task a policy discarded.
/// Java: `RejectedExecutionException`.
class rejected_execution_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Thrown from `future::get()` when the task was cancelled, or destroyed
/// without ever running (for example dropped from `shutdown_now()`'s list).
/// Java: `CancellationException`.
class cancellation_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// The failure of a future whose deadline passed first: `future::within`.
/// Java: `TimeoutException` (through `orTimeout`).
class timeout_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Thrown from `future::get()` of a `crew::promise`'s future when the promise
/// was destroyed without a value or an exception. (`std::promise` reports
/// the same as `std::future_error` with `broken_promise`.)
class broken_promise : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

} // namespace crew

#endif
