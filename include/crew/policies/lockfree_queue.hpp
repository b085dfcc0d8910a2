#ifndef CREW_POLICIES_LOCKFREE_QUEUE_HPP
#define CREW_POLICIES_LOCKFREE_QUEUE_HPP

/// \file
/// `crew::lockfree_queue<Capacity>`: a bounded FIFO for the QueuePolicy slot
/// on Boost.Lockfree's multi-producer, multi-consumer queue.
///
/// A lock-free queue is not a lock-free pool. Boost.Lockfree never blocks,
/// but an idle worker must sleep and a submitter must wake it, so this header
/// adds a blocking layer on top: a worker that finds the queue empty spins
/// briefly, then parks on a futex (Linux) until a producer publishes a task,
/// its interrupt flag is raised, or its deadline passes. A producer makes a
/// system call only when a parked worker is needed, so a busy pool submits
/// and runs tasks without any.

#include <crew/concepts.hpp>
#include <crew/detail/queue/lockfree_engine.hpp>
#include <crew/pool_options.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <chrono>
#include <cstddef>
#include <utility>
#include <vector>

namespace crew {

/// Bounded FIFO of at most `Capacity` tasks on `boost::lockfree::queue`
/// (multi-producer, multi-consumer). When it is full, the pool grows towards
/// its maximum size, then rejects (as with `bounded_queue`).
/// Java has no counterpart; `ArrayBlockingQueue` is the nearest.
///
/// \b Requirements: `1 <= Capacity <= 65534` (Boost.Lockfree's compile-time
/// capacity). `pool_options::queue_capacity` is ignored.
///
/// \b Storage: `Capacity` task slots (64 bytes each), Boost's node array (64
/// bytes per slot) and a free list (4 bytes per slot) are allocated once, by
/// the constructor, and touched there: about 8.5 MB at the largest capacity.
/// Offering and taking tasks never allocates.
///
/// \b Blocking: Boost.Lockfree never blocks, so waiting is a layer on top. A
/// consumer that finds the queue empty spins for some microseconds (one
/// consumer at a time, and only when the process may use more than one CPU),
/// then parks on an event count (a futex on Linux; elsewhere a condition
/// variable): an idle worker uses no CPU. A producer that finds nobody parked
/// pays one fence and one load, and writes nothing the consumers write. `put`
/// (for `block_policy`) parks the same way until a slot is free.
///
/// \b Cost: besides Boost's queue, an offer pops a free slot and passes a
/// gate on the producers' own cache line (two read-modify-writes); a poll
/// pushes the slot back and counts itself on the consumers' own line. With
/// one producer a `bounded_queue` is often as fast. See doc/benchmarks.md.
///
/// \b Differences from the mutex-based queues: `remove_if` (for `purge()`)
/// takes the queued tasks out, tests them, and puts the survivors back in
/// order, so tasks offered meanwhile may overtake them; `close()` waits for
/// offers already under way to finish.
///
/// All members are thread-safe.
template <std::size_t Capacity>
class lockfree_queue : public detail::basic_lockfree_queue<Capacity, detail::default_parking_word> {
    using base = detail::basic_lockfree_queue<Capacity, detail::default_parking_word>;

  public:
    /// Allocates the slots and nodes. `options` is ignored (the capacity is
    /// the template argument). Throws `std::bad_alloc`.
    explicit lockfree_queue(const pool_options& options = {}) : base(options) {}

    /// Enqueues `t` without blocking. Returns false, leaving `t` intact, when
    /// all `Capacity` slots are taken or the queue is closed.
    bool offer(task&& t) { return base::offer(std::move(t)); }

    /// Enqueues `t`, waiting for a free slot. Returns false, leaving `t`
    /// intact, if the queue is or becomes closed.
    bool put(task&& t) { return base::put(std::move(t)); }

    /// As `put`, but gives up (false, `t` intact) at `deadline`.
    bool put_until(task&& t, std::chrono::steady_clock::time_point deadline) {
        return base::put_until(std::move(t), deadline);
    }

    /// Dequeues the oldest task into `out` without blocking; false if empty.
    bool poll(task& out) { return base::poll(out); }

    /// Dequeues the oldest task, waiting as long as it takes. Returns
    /// `interrupted` (with `out` untouched) once `interrupted` is set and
    /// `wake_consumers()` called, unless a task is queued: a task wins.
    wait_status take(task& out, const interrupt_flag& interrupted) { return base::take(out, interrupted); }

    /// As `take`, but returns `timed_out` at `deadline` (never before it)
    /// when nothing came. `time_point::max()` waits without limit.
    wait_status poll_until(task& out, std::chrono::steady_clock::time_point deadline,
                           const interrupt_flag& interrupted) {
        return base::poll_until(out, deadline, interrupted);
    }

    /// Wakes every parked consumer so that those whose flag is set return
    /// `interrupted`; the others park again.
    void wake_consumers() { base::wake_consumers(); }

    /// Refuses further offers and puts, wakes blocked puts (which fail), and
    /// returns once no offer is under way. Queued tasks can still be taken.
    /// Idempotent.
    void close() { base::close(); }

    /// Removes and returns every queued task, oldest first.
    std::vector<task> drain() { return base::drain(); }

    /// Removes (and destroys, unrun) the queued tasks for which
    /// `pred(const task&)` is true; returns how many. Survivors keep their
    /// order among themselves, but tasks offered during the call may get
    /// ahead of them. If `pred` throws, every task stays queued, in order
    /// (again behind any offered during the call).
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return base::remove_if(std::move(pred));
    }

    /// As `remove_if`, but returns the removed tasks instead of destroying
    /// them (the pool's `purge()` destroys them after its last use of itself).
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        return base::extract_if(std::move(pred));
    }

    /// Tasks queued (a snapshot).
    std::size_t size() const noexcept { return base::size(); }

    /// `Capacity`.
    std::size_t capacity() const noexcept { return Capacity; }
};

static_assert(queue_policy<lockfree_queue<1>>);
static_assert(queue_policy<lockfree_queue<detail::lockfree_queue_max_capacity>>);

} // namespace crew


#endif
