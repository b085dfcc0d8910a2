#ifndef CREW_PERIODIC_OPTIONS_HPP
#define CREW_PERIODIC_OPTIONS_HPP

/// \file
/// `crew::periodic_options`: how a periodic schedule treats runs that fell
/// behind and runs that throw. The optional last argument of
/// `schedule_at_fixed_rate` and `schedule_with_fixed_delay`.

namespace crew {

/// What a fixed-rate schedule does with runs it could not start on time.
enum class missed_runs : unsigned char {
    /// Java's fixed rate: runs that fell behind run back to back until the
    /// schedule is on time again.
    catch_up,
    /// A run that starts late moves the next due time to the first
    /// `initial + k * period` after its start: missed runs are dropped,
    /// never bunched, and the schedule stays on its grid.
    skip,
};

/// What a periodic schedule does when a run throws. Either way the run's
/// exception is reported at once, on the worker that ran it: to
/// `after_execute`, or with no hook to standard error (never later, when the
/// future is destroyed).
enum class periodic_failure : unsigned char {
    /// Java's: the schedule ends, and the future's `get()` rethrows (the
    /// report above happens too, where Java says nothing until `get()`).
    cancel,
    /// The exception goes to `after_execute` (or standard error) and the
    /// schedule goes on; `get()` only ever reports cancellation.
    keep_running,
};

/// The options of a periodic schedule. Fixed delay ignores `missed` (its
/// next run is always due `delay` after the last one ended).
struct periodic_options {
    missed_runs missed = missed_runs::catch_up;
    periodic_failure on_failure = periodic_failure::cancel;
};

} // namespace crew

#endif
