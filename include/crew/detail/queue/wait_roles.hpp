#ifndef CREW_DETAIL_QUEUE_WAIT_ROLES_HPP
#define CREW_DETAIL_QUEUE_WAIT_ROLES_HPP

// The roles of delayed_queue's waiting consumers (doc/leader-follower.dot):
// at most one leader, which waits timed for the head's due time, or runs a
// task it took and will come back to lead ("busy"); while it is busy, at most
// one deputy, which waits timed for the head plus a grace period; and any
// number of followers, which wait untimed. From the roles and the head
// follows the wake rule (detail/queue/wake_rule.hpp) that producers read.
//
// Not thread-safe: its owner's mutex guards it.

#include <crew/detail/timer/time.hpp>
#include <crew/detail/queue/wake_rule.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

namespace crew::detail {

class wait_roles {
  public:
    // How a consumer waits.
    enum class role : unsigned char { lead, deputise, follow };

    // The role for `me`, about to wait until `deadline` (the head due at
    // `head` if `has_head`), and until when it waits in it (`until`). The
    // leader (or anyone, when nobody leads) waits for the head; with a leader
    // busy elsewhere, one deputy waits for the head plus `grace`; everyone
    // else waits untimed. A leader facing an empty heap gives up the lead.
    role choose(std::thread::id me, bool has_head, clock::time_point head, clock::time_point deadline,
                std::chrono::nanoseconds grace, clock::time_point& until) noexcept {
        until = deadline;
        if (has_head) {
            if (leader_id_ == me || leader_ == leader_state::none) {
                until = std::min(head, deadline);
                return role::lead;
            }
            if (!deputy_) {
                until = std::min(saturating_deadline(grace, head), deadline);
                return role::deputise;
            }
        } else if (leader_id_ == me) {
            release();
        }
        return role::follow;
    }

    // `me` goes to sleep in role `r` until `until`.
    void enter(role r, std::thread::id me, clock::time_point until) noexcept {
        switch (r) {
        case role::lead:
            leader_ = leader_state::waiting;
            leader_id_ = me;
            leader_until_ = until;
            break;
        case role::deputise: deputy_ = true; break;
        case role::follow: ++followers_waiting_; break;
        }
    }

    // `me` woke (or did not sleep) in role `r`.
    void exit(role r, std::thread::id me) noexcept {
        switch (r) {
        case role::lead:
            if (leader_id_ == me) leader_ = leader_state::none; // still ours: it leads again or takes the head
            break;
        case role::deputise: deputy_ = false; break;
        case role::follow: --followers_waiting_; break;
        }
    }

    // `me` just took a task due at `due` (`may_lead`: from a wait, so it will
    // come back). The leader (or, with nobody leading, the taker) keeps or
    // takes the leadership while it runs the task; a taker that found its
    // task left waiting past `grace`, the leader busy, takes the leadership
    // over. With the heap now empty, a leader that is not waiting gives up.
    void took(std::thread::id me, bool heap_empty, bool may_lead, clock::time_point due, clock::time_point now,
              std::chrono::nanoseconds grace) noexcept {
        const bool leads = leader_id_ == me;
        if (heap_empty) {
            if (leads || leader_ != leader_state::waiting) release();
        } else if (may_lead && (leads || leader_ == leader_state::none ||
                                (leader_ == leader_state::busy && saturating_deadline(grace, due) <= now))) {
            leader_ = leader_state::busy;
            leader_id_ = me;
        }
    }

    // `me` leaves without a task: it gives up any leadership.
    void leave(std::thread::id me) noexcept {
        if (leader_id_ == me) release();
    }

    void release() noexcept {
        leader_ = leader_state::none;
        leader_id_ = std::thread::id();
    }

    // The wake rule for a new task, the head due at `head` if `has_head`.
    std::uint64_t rule(bool has_head, clock::time_point head) const noexcept {
        if (leader_ == leader_state::waiting) return wake_rule::make(leader_until_.time_since_epoch().count(), true);
        if (leader_ == leader_state::busy && has_head)
            return wake_rule::make(head.time_since_epoch().count(), false); // an earlier head needs a hand
        return wake_rule::make(wake_rule::always, false);
    }

    bool nobody_leads() const noexcept { return leader_ == leader_state::none; }
    bool leader_waiting() const noexcept { return leader_ == leader_state::waiting; }
    bool leader_busy() const noexcept { return leader_ == leader_state::busy; }
    // A waiting leader whose timer is later than `due`.
    bool leader_waits_past(clock::time_point due) const noexcept {
        return leader_ == leader_state::waiting && due < leader_until_;
    }
    // Nobody leads, or the leader is busy with no deputy: a follower is wanted.
    bool wants_follower() const noexcept {
        return (leader_ == leader_state::busy && !deputy_) || leader_ == leader_state::none;
    }
    // Threads waiting now.
    std::size_t waiting() const noexcept {
        return (leader_ == leader_state::waiting ? 1 : 0) + (deputy_ ? 1 : 0) + followers_waiting_;
    }

  private:
    enum class leader_state : unsigned char {
        none,    // nobody times the head: the next thread to wait leads
        waiting, // the leader sleeps until the head is due
        busy,    // the leader runs a task it took and will come back to lead
    };

    leader_state leader_ = leader_state::none;
    std::thread::id leader_id_;        // the waiting or busy leader
    clock::time_point leader_until_{}; // the waiting leader's timer
    bool deputy_ = false;              // a follower waits timed for the head plus the grace
    std::size_t followers_waiting_ = 0;
};

} // namespace crew::detail

#endif
