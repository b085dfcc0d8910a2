#ifndef CREW_DETAIL_WORK_STEALING_SPAWN_HPP
#define CREW_DETAIL_WORK_STEALING_SPAWN_HPP

// Spawning on a pool's own worker (detail/work_stealing/spawn_deque.hpp has the design):
// the ticket, the spawn, and the isolation a spawn remembers.

#include <crew/detail/scoped_record.hpp>
#include <crew/detail/work_stealing/spawn_deque.hpp>
#include <crew/detail/work_stealing/worker_context.hpp>

#include <exception>
#include <utility>

namespace crew::detail {

// The innermost crew::isolate region running on this thread, or null. Any
// address unique while the region runs serves as its name.
inline thread_local const void* current_isolation = nullptr;

// Posts a ticket for `d` if fewer than spawn_deque::max_tickets are in the
// pool. Through the pool's try_execute, never its RejectPolicy: a ticket
// the pool has no room for (full, shut down) loses nothing, since the owner
// runs whatever no ticket took, and a policy must not run a ticket inline
// (caller_runs_policy: an old spawn nested in run()), drop a user's task
// for it (discard_oldest_policy) or count it as rejected.
// Returns false if the pool refused it: no ticket may be out for the
// newest spawn then.
inline bool post_ticket_if_room(spawn_deque& d) noexcept {
    if (!d.count_ticket()) return true; // max_tickets are out already
    try {
        return d.post_ticket(); // the ticket uncounts itself however it ends
    } catch (...) {
        return false; // out of memory: as a refusal
    }
}

// Runs `t` inside the isolation it was spawned in, whoever runs it: a
// spawn of an isolated region that another worker steals keeps its waits
// to the region's spawns there too (TBB does the same).
inline std::exception_ptr run_in_its_isolation(spawned_task* t) noexcept {
    const scoped_record<const void*> inside(current_isolation, t->isolation());
    return t->run_spawned();
}

// The pool's task for a spawn deque: 8 bytes, stored inline in a crew::task.
// Run by a worker, it takes the oldest spawn (if any is left), posts the
// next ticket if more are left, and runs the spawn (in its isolation). A reporting callable,
// so that after_execute sees the spawn's exception; dropped unrun, it only
// lets go (the owner runs what is left).
class spawn_ticket {
  public:
    // Requires: a ticket counted (count_ticket) for `d`.
    explicit spawn_ticket(spawn_deque& d) noexcept : deque_(&d) { d.acquire(); }
    spawn_ticket(spawn_ticket&& other) noexcept : deque_(std::exchange(other.deque_, nullptr)) {}
    spawn_ticket& operator=(spawn_ticket&&) = delete;
    ~spawn_ticket() { let_go(); }

    void operator()() { (void)run_and_report(false); }

    std::exception_ptr run_and_report(bool) noexcept {
        spawn_deque* const d = deque_;
        d->uncount_ticket(); // before the look below: see spawn_deque::push
        std::exception_ptr error;
        // A steal that loses its race (to another ticket, to a waiter's
        // steal) looks again while spawns are left: a ticket that gave up
        // then could leave one with no ticket.
        spawned_task* t = d->steal();
        while (t == nullptr && !d->looks_empty()) t = d->steal();
        if (t != nullptr) {
            // More left, on one of the pool's workers (not from
            // shutdown_now()'s list, run after the pool may be gone): bring
            // the next worker in.
            const worker_context* const here = current_worker;
            if (here != nullptr && here->pool == d->pool() && !d->looks_empty()) (void)post_ticket_if_room(*d);
            error = run_in_its_isolation(t);
        }
        deque_ = nullptr;
        d->release();
        return error;
    }

    void abandon(std::exception_ptr, bool) noexcept { let_go(); }

    // Never: a ticket costs 8 bytes of queue, and purging one whose deque
    // looks empty could race with a spawn that counted on it.
    bool is_cancelled() const noexcept { return false; }

  private:
    void let_go() noexcept {
        if (spawn_deque* const d = std::exchange(deque_, nullptr)) {
            d->uncount_ticket();
            d->release();
        }
    }

    spawn_deque* deque_;
};

// The worker's spawn deque, made on its first spawn. Throws std::bad_alloc.
inline spawn_deque& spawns_of(worker_context& w) {
    if (w.spawns == nullptr) w.spawns = new spawn_deque(w.pool, w.post_ticket, &w);
    return *w.spawns;
}

// The owner: puts `t` on its spawn deque `d` and brings a worker in if no
// ticket is waiting. Throws std::bad_alloc, with nothing pushed. Returns
// false if the pool had no room for a ticket: the caller then takes `t`
// back if it can (pop()) and goes through the pool's RejectPolicy, as
// before spawning (a saturated pool: caller_runs_policy runs it inline,
// abort_policy throws), so that a spawner that blocks outside crew cannot
// strand it with no ticket out.
[[nodiscard]] inline bool spawn(spawn_deque& d, spawned_task* t) {
    d.push(t);
    return post_ticket_if_room(d);
}

// The owner: runs its newest spawn that the current isolation may run;
// false if there is none.
inline bool run_own_spawn(worker_context& w) noexcept {
    if (w.spawns == nullptr) return false;
    spawned_task* const t = w.spawns->pop();
    if (t == nullptr) return false;
    if (t->isolation() != current_isolation && current_isolation != nullptr) {
        w.spawns->push_back(t); // cannot fail: the cell it came from is free
        // A ticket or a waiter that found the deque empty meanwhile gave
        // up on it: make sure a ticket is out for it.
        (void)post_ticket_if_room(*w.spawns);
        return false;
    }
    (void)run_in_its_isolation(t); // its group has the exception
    return true;
}

// The owner, between two pool tasks and before it leaves: runs every spawn
// no ticket took. Out of line: the worker loop calls it only after a task
// that spawned, and keeps its shape.
[[gnu::noinline]] inline void run_own_spawns(worker_context& w) noexcept {
    while (run_own_spawn(w)) {
    }
}

// The worker leaves: runs what is left, then lets its deque go (tickets
// still in the pool hold it).
[[gnu::noinline]] inline void retire_spawns(worker_context& w) noexcept {
    if (w.spawns == nullptr) return;
    run_own_spawns(w);
    std::exchange(w.spawns, nullptr)->release_owner();
}

} // namespace crew::detail

#endif
