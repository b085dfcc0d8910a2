#ifndef CREW_DETAIL_QUEUE_DELAYED_QUEUE_WAITING_HPP
#define CREW_DETAIL_QUEUE_DELAYED_QUEUE_WAITING_HPP

// crew::delayed_queue's waiting: the leader-follower machinery behind its
// take and poll_until (Java's DelayedWorkQueue.take(): the loop, its awaits,
// its finally), and the wake rule each change of the roles publishes for
// producers to read without the lock. One concept, written apart from the
// heap, the staging list and the QueuePolicy surface that
// <crew/policies/delayed_queue.hpp> holds (issue #34: one concept per
// header); detail/queue/wait_roles.hpp keeps the roles themselves.
//
// Included at the end of <crew/policies/delayed_queue.hpp>, whose class body
// declares every member defined here (the class comment there describes the
// leader-follower waiting); including this file alone includes that header
// first.

#include <crew/policies/delayed_queue.hpp>

namespace crew {

// Publishes the wake rule, then moves in whatever was staged meanwhile:
// its producers may have read the rule before, and so woken the wrong
// thread or none. Returns true if, by the rule now, those tasks need a
// follower woken (merge_staged re-arms a waiting leader itself). Every
// path that changes the roles and does not go on to sleep ends here; one
// that sleeps re-checks the staging list instead.
inline bool delayed_queue::publish_rule_and_settle(const std::unique_lock<std::mutex>& held) noexcept {
    detail::assert_held(held, mutex_);
    bool wake = false;
    for (;;) {
        publish_rule(held);
        // Tasks due now whose producers read the rule before: one
        // follower looks (it finds them, or they were taken).
        if (due_now_.pending() > 0) wake = true;
        if (staged_count_.load() == 0) return wake; // seq_cst, after the rule's store
        const std::uint64_t rule = wake_rule_.load(std::memory_order_relaxed);
        const clock::time_point earliest = merge_staged(held);
        if (!detail::wake_rule::wakes_leader(rule) && detail::wake_rule::needs_wake(rule, earliest)) wake = true;
    }
}

// Publishes who must be woken for a new task, from the leader's state
// and the head.
inline void delayed_queue::publish_rule(const std::unique_lock<std::mutex>& held) noexcept {
    detail::assert_held(held, mutex_);
    const clock::time_point head = heap_.empty() ? clock::time_point() : heap_.head_due();
    head_due_.store(heap_.empty() ? no_head : head.time_since_epoch().count(), std::memory_order_relaxed);
    wake_rule_.store(roles_.rule(!heap_.empty(), head)); // seq_cst: see wake_for
}

// The end of Java's take() (its finally: signal a follower). The caller
// just took a task due at `due` (`may_lead`: from a wait, so it will come
// back; poll's caller will not) and keeps, takes or gives up the
// leadership (wait_roles::took). A follower is woken if another task is
// due already, or to become the deputy of a busy leader.
inline void delayed_queue::after_take_and_unlock(std::unique_lock<std::mutex>& lock, clock::time_point due,
                                                 clock::time_point now, bool may_lead) {
    detail::assert_held(lock, mutex_);
    roles_.took(std::this_thread::get_id(), heap_.empty(), may_lead, due, now, leader_grace);
    bool wake = publish_rule_and_settle(lock);
    if (!heap_.empty()) wake = wake || heap_.head_due() <= now || roles_.wants_follower();
    lock.unlock();
    if (wake) followers_.notify_one();
}

// Takes mutex_ (but while asleep). Java's take() loop, with
// wait_for_task's rule (at the first look a task wins, then the
// interrupt, then the deadline; after a sleep the interrupt comes first)
// and the leadership above.
inline wait_status delayed_queue::wait_for(task& out, const interrupt_flag& interrupted, clock::time_point deadline) {
    const auto me = std::this_thread::get_id();
    const bool timed = deadline != clock::time_point::max();
    std::uint64_t seen_in = 0; // FIFO entries counted at the last look
    if (take_due_now(out, seen_in)) return wait_status::taken;
    bool woke = false;  // the last sleep ended: a next sleep makes it an idle wake-up
    bool slept = false; // announced as a sleeper at least once: the interrupt comes first now
    std::unique_lock lock = lock_as_consumer();
    for (;;) {
        merge_staged(lock);
        if (slept && interrupted.load(std::memory_order_seq_cst)) {
            leave_and_unlock(lock, me);
            return wait_status::interrupted;
        }
        const auto now = clock::now();
        if (const auto due = finish_poll(lock, out, now, seen_in)) {
            after_take_and_unlock(lock, *due, now, true);
            return wait_status::taken;
        }
        const bool stop = interrupted.load(std::memory_order_seq_cst);
        if (stop || (timed && now >= deadline)) {
            leave_and_unlock(lock, me);
            return stop ? wait_status::interrupted : wait_status::timed_out;
        }
        clock::time_point until;
        const role r = roles_.choose(me, !heap_.empty(), heap_.empty() ? clock::time_point() : heap_.head_due(),
                                     deadline, leader_grace, until);
        if (woke) ++counts_.idle_wakeups;
        woke = sleep(lock, r, until, interrupted, me, seen_in);
        slept = true;
    }
}

// Java's available.await/awaitNanos. Requires `lock` held; releases it
// while asleep and holds it again on return, as a condition variable's
// wait does. Takes role `r`, publishes the wake rule, re-checks the
// staging list, the FIFO and the interrupt, and sleeps until `until`
// unless one changed; true if it slept. detail::park_consumer's
// announce/re-check/park, written out: the announcement (role and rule)
// is made under mutex_, released between re-check and sleep, and the
// leader parks on a word of its own, not on the event count.
inline bool delayed_queue::sleep(std::unique_lock<std::mutex>& lock, role r, clock::time_point until,
                                 const interrupt_flag& interrupted, std::thread::id me, std::uint64_t seen_in) {
    detail::assert_held(lock, mutex_);
    const bool timed = until != clock::time_point::max();
    std::uint32_t seen = 0;
    typename decltype(followers_)::key key{};
    roles_.enter(r, me, until);
    sleepers_.fetch_add(1, std::memory_order_relaxed);
    publish_rule(lock);
    if (r == role::lead) {
        seen = leader_word_.load();
        detail::apply_timer_slack(timer_slack_);
    } else {
        key = followers_.prepare_wait();
    }
    // A FIFO task counted in since the last look: look again (not "the
    // count is above zero", which would spin: see due_now_fifo::take).
    const bool recheck =
        staged_count_.load() != 0 || due_now_.entered() != seen_in || interrupted.load(std::memory_order_seq_cst);
    if (!recheck) {
        ++(timed ? counts_.timed_waits : counts_.untimed_waits);
        lock.unlock();
        if (r == role::lead) leader_word_.wait(seen, until);
        else followers_.commit_wait(key, until);
        lock = lock_as_consumer();
        ++counts_.wakeups;
    } else if (r != role::lead) {
        followers_.cancel_wait();
    }
    roles_.exit(r, me);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return !recheck;
}

// The end of Java's take() without a task (interrupted, timed out): the
// consumer gives up any leadership, and with tasks queued someone else
// must lead.
inline void delayed_queue::leave_and_unlock(std::unique_lock<std::mutex>& lock, std::thread::id me) {
    detail::assert_held(lock, mutex_);
    roles_.leave(me);
    const bool wake = publish_rule_and_settle(lock) || (!heap_.empty() && roles_.nobody_leads());
    lock.unlock();
    if (wake) followers_.notify_one();
}

} // namespace crew

#endif
