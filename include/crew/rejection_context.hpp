#ifndef CREW_REJECTION_CONTEXT_HPP
#define CREW_REJECTION_CONTEXT_HPP

/// \file
/// What a RejectPolicy sees of the pool that refused a task: the second
/// argument of its `rejected_execution(task&&, Context&)`. Java hands its
/// RejectedExecutionHandler the whole ThreadPoolExecutor; crew hands the few
/// steps a policy may take on the refused task's behalf, which the pool keeps
/// private, plus the pool's public surface through `pool()`. The members are
/// those of the archetype every RejectPolicy is checked against
/// (`crew::reject_policy` in concepts.hpp), and `is_paused()`.

#include <crew/task.hpp>

#include <chrono>

namespace crew {

/// The refusing pool, as its RejectPolicy sees it. Made by the pool for one
/// call of `rejected_execution` and gone when it returns: a policy keeps
/// `pool()` if it must remember the pool, never the context (nor its
/// address, which differs from call to call). It holds a reference to the
/// pool and nothing else. No member takes the pool's lock except where it
/// says so.
template <class Pool>
class rejection_context {
  public:
    explicit rejection_context(Pool& pool) noexcept : pool_(pool) {}

    /// The pool, for its public queries (`queue_size()`, `pool_size()`, ...).
    Pool& pool() const noexcept { return pool_; }

    /// The pool no longer accepts tasks (shut down).
    bool is_shutdown() const noexcept { return pool_.is_shutdown(); }

    /// The pool is paused (`pause()`): its workers start no task.
    bool is_paused() const noexcept { return pool_.is_paused(); }

    /// Java's three steps of `execute` without the rejection: false, leaving
    /// `t` untouched, where `execute` would reject. Precondition: `t` is not
    /// empty. It neither checks nor stamps `t` for a task observer: this is a
    /// retry of a task `execute` made already.
    bool try_execute(task& t) { return pool_.try_execute(t); }

    /// Removes the oldest queued task and rejects it (its future reports
    /// `rejected_execution_error`). False if nothing was queued.
    bool discard_oldest_queued() { return pool_.discard_oldest_queued(); }

    /// Removes the oldest queued task into `oldest` (which should be empty),
    /// counted out of the pool, without rejecting it: the policy rejects it
    /// (`task::reject()`) after its last use of the pool, since a task may
    /// own the last reference to its pool. False if nothing was queued.
    bool remove_oldest_queued(task& oldest) { return pool_.remove_oldest_queued(oldest); }

    /// Enqueues `t`, waiting for room (the queue's lock only). False, `t`
    /// untouched, if the pool is or becomes shut down first.
    bool put(task& t) { return pool_.put(t); }

    /// As `put`, but gives up at `deadline` (false, `t` untouched).
    bool put_until(task& t, std::chrono::steady_clock::time_point deadline) { return pool_.put_until(t, deadline); }

    /// The calling thread is one of this pool's workers (a task or a hook of
    /// it): `block_policy` then runs the task rather than wait for room only
    /// this pool's workers can make.
    bool called_from_own_worker() const noexcept { return pool_.called_from_own_worker(); }

  private:
    Pool& pool_;
};

} // namespace crew

#endif
