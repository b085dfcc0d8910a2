#ifndef CREW_DETAIL_QUEUE_CONSUMER_WAIT_HPP
#define CREW_DETAIL_QUEUE_CONSUMER_WAIT_HPP

// Room detail/queue/ (README): the engines behind the QueuePolicies of
// crew/policies/: the lock-free FIFO core (segment_queue), Boost.Lockfree's
// engine, the locked containers (ring, heap) and priority_queue's blocking
// queue, delayed_queue's heap, due-now FIFO, waiting roles and wake rule,
// and the rule every blocking consumer follows (this header). It may include
// detail/sync/ and detail/timer/, never a future or a pool.

// The rule every queue's blocking consumer (take, poll_until) follows,
// written once: at the first look a task the queue can hand out wins, then
// the interrupt, then the deadline; once the consumer has announced itself
// as a sleeper, the interrupt comes first. (Java's take and poll throw on an
// interrupt even with tasks queued; getTask then retries.) The second half
// is what makes a shrink take effect: set_maximum_pool_size flags every idle
// worker before it returns, so a surplus worker that sleeps, or is on its way
// to sleep, sees its flag before it can take a task submitted after the call
// returned (a task that was queued when it first looked is one it may run).
// A queue brings its two steps:
//   take():  takes a task if one can be taken now; true if it did.
//   sleep(): blocks until woken (a task came, wake_consumers) or `deadline`
//            passes (time_point::max(): never); true only if the sleep
//            itself took a task (a queue whose waiting claims one).
// Whatever lock the steps need, the queue holds around the call.

#include <crew/detail/timer/time.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <atomic>

namespace crew::detail {

template <class Take, class Sleep>
wait_status wait_for_task(const interrupt_flag& interrupted, clock::time_point deadline, Take take, Sleep sleep) {
    const bool timed = deadline != clock::time_point::max();
    for (;;) {
        if (take()) return wait_status::taken;
        // seq_cst: a queue that parks without a lock pairs this load with
        // the store-then-wake of wake_consumers' caller.
        if (interrupted.load(std::memory_order_seq_cst)) return wait_status::interrupted;
        // The clock is read after the look: a task queued before the
        // deadline but after that look is taken now, not lost to the
        // time-out (the look comes after the clock read this time).
        if (timed && clock::now() >= deadline) return take() ? wait_status::taken : wait_status::timed_out;
        if (sleep()) return wait_status::taken;
        if (interrupted.load(std::memory_order_seq_cst)) return wait_status::interrupted; // woken: see above
    }
}

// The sleep step of wait_for_task for a queue whose consumers park on an
// event count (detail/sync/event_count.hpp): announce, re-check (the interrupt,
// then a task), then sleep until woken or `deadline`. True if the re-check
// took a task. The announcement comes before the re-check, so a task
// published or an interrupt raised (flag store, then notify) after it wakes
// this sleep; the interrupt is looked at first (wait_for_task's rule).
template <class EventCount, class Take>
bool park_consumer(EventCount& ec, const interrupt_flag& interrupted, clock::time_point deadline, Take take) {
    const auto key = ec.prepare_wait();
    if (interrupted.load(std::memory_order_seq_cst)) {
        ec.cancel_wait();
        return false;
    }
    if (take()) {
        ec.cancel_wait();
        return true;
    }
    ec.commit_wait(key, deadline);
    return false;
}

// What one try of an offer found.
enum class offer_result { offered, full, closed };

// A blocking put for a queue whose producers park on an event count while
// it is full: try; else announce, try again, and sleep unless the queue was
// closed meanwhile (then false, the task intact) or `deadline` has passed
// (then false too: block_policy's time-out). `try_offer(announced)` tries
// once and says what it found; before the announcement it may say `full`
// for a closed queue (a queue whose offer cannot tell the two apart looks at
// its closed flag only once announced). Whoever frees room or closes the
// queue notifies `not_full` after doing so. The clock is read only with a
// deadline, and after a `full`: an offer wins over the time-out, as a task
// wins over it in wait_for_task.
template <class EventCount, class TryOffer>
bool put_or_park(EventCount& not_full, TryOffer try_offer, clock::time_point deadline) {
    const bool timed = deadline != clock::time_point::max();
    for (;;) {
        offer_result found = try_offer(false);
        if (found != offer_result::full) return found == offer_result::offered;
        if (timed && clock::now() >= deadline) return false;
        const auto key = not_full.prepare_wait();
        found = try_offer(true);
        if (found != offer_result::full) {
            not_full.cancel_wait();
            return found == offer_result::offered;
        }
        not_full.commit_wait(key, deadline);
    }
}

// As above, for a queue whose `offer()` says only whether it took the task:
// `closed()` is asked after a refusal once announced.
template <class EventCount, class Offer, class Closed>
bool put_or_park(EventCount& not_full, Offer offer, Closed closed, clock::time_point deadline) {
    return put_or_park(
        not_full,
        [&](bool announced) {
            if (offer()) return offer_result::offered;
            return announced && closed() ? offer_result::closed : offer_result::full;
        },
        deadline);
}

// The QueuePolicy's two blocking members, for a queue whose (private, friend
// of this base) wait_for(out, interrupted, deadline) follows wait_for_task.
template <class Queue>
class consumer_waits {
  public:
    /// Waits for a task it can hand out and takes it; `interrupted` once the
    /// flag is set and `wake_consumers()` called (a task queued at the first
    /// look wins; once it has slept, the interrupt wins).
    wait_status take(task& out, const interrupt_flag& interrupted) {
        return static_cast<Queue&>(*this).wait_for(out, interrupted, clock::time_point::max());
    }

    /// As `take`, but gives up with `timed_out` at `deadline` (never before).
    wait_status poll_until(task& out, clock::time_point deadline, const interrupt_flag& interrupted) {
        return static_cast<Queue&>(*this).wait_for(out, interrupted, deadline);
    }
};

} // namespace crew::detail

#endif
