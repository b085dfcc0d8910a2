#ifndef CREW_DETAIL_SPAWN_HPP
#define CREW_DETAIL_SPAWN_HPP

// Spawning on a pool's own worker (detail/spawn_deque.hpp has the design):
// the ticket, the spawn, and the isolation a spawn remembers.

#include <crew/detail/spawn_deque.hpp>
#include <crew/detail/worker_context.hpp>

#include <exception>
#include <utility>

namespace crew::detail {

// The innermost crew::isolate region running on this thread, or null. Any
// address unique while the region runs serves as its name.
inline thread_local const void* current_isolation = nullptr;

// True while this thread posts a ticket: a ticket the pool runs inline
// inside that post (caller_runs_policy) posts none itself, so a run of
// refusals cannot recurse once per spawn.
inline thread_local bool posting_ticket = false;

// Posts a ticket for `d` if fewer than spawn_deque::max_tickets are in the
// pool. A pool that refuses it (shut down, full: any RejectPolicy) loses
// nothing: the owner runs whatever no ticket took.
inline void post_ticket_if_room(spawn_deque& d) noexcept {
    if (posting_ticket || !d.count_ticket()) return;
    posting_ticket = true;
    try {
        d.post_ticket(); // the ticket uncounts itself however it ends
    } catch (...) {
        // Refused (abort_policy's throw) or out of memory: see above.
    }
    posting_ticket = false;
}

// The pool's task for a spawn deque: 8 bytes, stored inline in a crew::task.
// Run by a worker, it takes the oldest spawn (if any is left), posts the
// next ticket if more are left, and runs the spawn. A reporting callable,
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
        if (spawned_task* t = d->steal()) {
            // More left, on one of the pool's workers other than the owner
            // (which runs a ticket only inline, when its post was refused
            // by caller_runs_policy): bring the next worker in.
            const worker_context* const here = current_worker;
            if (here != nullptr && here->pool == d->pool() && here != d->owner() && !d->looks_empty())
                post_ticket_if_room(*d);
            error = t->run_spawned();
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
// ticket is waiting. Throws std::bad_alloc, with nothing pushed.
inline void spawn(spawn_deque& d, spawned_task* t) {
    d.push(t);
    post_ticket_if_room(d);
}

// The owner: runs its newest spawn that the current isolation may run;
// false if there is none.
inline bool run_own_spawn(worker_context& w) noexcept {
    if (w.spawns == nullptr) return false;
    spawned_task* const t = w.spawns->pop();
    if (t == nullptr) return false;
    if (t->isolation() != current_isolation && current_isolation != nullptr) {
        w.spawns->push_back(t); // cannot fail: the cell it came from is free
        return false;
    }
    (void)t->run_spawned(); // its group has the exception
    return true;
}

// The owner, between two pool tasks and before it leaves: runs every spawn
// no ticket took.
inline void run_own_spawns(worker_context& w) noexcept {
    while (run_own_spawn(w)) {
    }
}

// The worker leaves: runs what is left, then lets its deque go (tickets
// still in the pool hold it).
inline void retire_spawns(worker_context& w) noexcept {
    if (w.spawns == nullptr) return;
    run_own_spawns(w);
    std::exchange(w.spawns, nullptr)->release();
}

} // namespace crew::detail

#endif
