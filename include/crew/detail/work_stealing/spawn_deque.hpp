#ifndef CREW_DETAIL_WORK_STEALING_SPAWN_DEQUE_HPP
#define CREW_DETAIL_WORK_STEALING_SPAWN_DEQUE_HPP

// Fork-join on any pool without shells (issue #32).
//
// A task_group task spawned by one of its pool's workers does not become a
// pool task of its own. It goes on that worker's spawn deque, and the pool
// gets at most `max_tickets` small tasks (tickets) per deque, each of which,
// when a worker runs it, steals the oldest spawn and posts the next ticket
// if more are left. The worker itself pops its newest spawns: while it waits
// (task_group::wait, parallel_for, future::get: detail/work_stealing/help.hpp) and between
// two pool tasks (run_worker), so a spawn it runs itself leaves nothing in
// the pool's queue, and a deque never outlives its entries unrun: whatever
// no ticket took, the owner runs. Tickets only bring the other workers in.
//
// The deque is Chase and Lev's ("Dynamic circular work-stealing deque",
// 2005) with every access to top and bottom seq_cst (the orderings of Lê et
// al., 2013, made seq_cst so that ThreadSanitizer, which models no fences,
// checks it as it runs). Its cells hold pointers, so a thief reads a cell
// before it claims it (compare-exchange on top) and forgets the copy if the
// claim fails. It grows by doubling; a thief may still read a ring the owner
// has replaced, so replaced rings are freed only with the deque.
//
// Lifetime: counted. The owner's reference is let go when its worker
// leaves (it has popped everything by then); each ticket in the pool holds
// one, so a ticket that runs late (from shutdown_now()'s list, after the
// worker left) still finds a deque, empty. Each group that spawned here holds
// one too, taken and almost always let go on the owner's thread: those the
// owner counts alone, with no read-modify-write (biased reference counting,
// Choi et al., PACT 2018), and folds into the shared count when it leaves.
//
// Who writes what: bottom_, ring_ and held_on_owner_ only the owner;
// top_ anyone, by compare-exchange; tickets_ and refs_ anyone, by
// read-modify-write.

#include <crew/detail/cache_line.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <utility>

namespace crew::detail {

// What a spawn deque holds: a task_group entry (detail/work_stealing/task_group_core.hpp).
class spawned_task {
  public:
    // Runs the task for its group (or drops it if the group was
    // cancelled), then frees it: the caller owns it alone. Returns what
    // escaped the task (its group has recorded it).
    virtual std::exception_ptr run_spawned() noexcept = 0;
    // The isolation it was spawned in (crew::isolate): a waiter inside an
    // isolated region runs only spawns of that region, and whoever runs it
    // runs it inside that region. Null outside any.
    const void* isolation() const noexcept { return isolation_; }
    // What it belongs to (its task_group): a waiter off the pool's workers
    // steals only its own group's spawns.
    const void* owner() const noexcept { return owner_; }

  protected:
    spawned_task(const void* isolation, const void* owner) noexcept : isolation_(isolation), owner_(owner) {}
    ~spawned_task() = default;

  private:
    const void* const isolation_;
    const void* const owner_;
};

class spawn_deque {
  public:
    // Posts one ticket for `deque` to the pool at `pool` (its try_execute);
    // false if refused.
    using post_fn = bool (*)(const void* pool, spawn_deque& deque);

    // Tickets in the pool per deque at most: enough to bring a second and a
    // third worker in at once (each stolen spawn posts the next ticket), few
    // enough that a deque whose owner runs everything itself leaves at most
    // this many no-op tasks behind.
    static constexpr std::uint32_t max_tickets = 2;

    // Throws std::bad_alloc.
    spawn_deque(const void* pool, post_fn post, const void* owner) : pool_(pool), post_(post), owner_(owner) {}
    spawn_deque(const spawn_deque&) = delete;
    spawn_deque& operator=(const spawn_deque&) = delete;
    ~spawn_deque() {
        for (ring* r = ring_.load(std::memory_order_relaxed); r != nullptr;) delete std::exchange(r, r->older);
    }

    const void* pool() const noexcept { return pool_; }
    // The worker context (detail/work_stealing/worker_context.hpp) of the owner.
    const void* owner() const noexcept { return owner_; }

    // A reference from any thread (a ticket's), and its release; also a
    // group's let go off the owner's thread.
    void acquire() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }
    // A group's reference, taken on the owner's thread before it leaves.
    void acquire_on_owner() noexcept { ++held_on_owner_; }
    // Let go on the owner's thread before it leaves (else: release()).
    void release_on_owner() noexcept { --held_on_owner_; }
    // The owner leaves: its own reference goes, and the groups' it counted
    // join the shared count. Owner only, once; the deque may be gone after.
    void release_owner() noexcept {
        const std::int64_t change = held_on_owner_ - owner_bias;
        if (refs_.fetch_add(change, std::memory_order_acq_rel) + change == 0) delete this;
    }

    // Owner only. Throws std::bad_alloc if the deque must grow and cannot
    // (nothing pushed then).
    void push(spawned_task* t) {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        const std::int64_t top = top_.load(std::memory_order_acquire);
        ring* r = ring_.load(std::memory_order_relaxed);
        if (b - top >= static_cast<std::int64_t>(r->size)) r = grow(r, top, b);
        r->at(b).task.store(t, std::memory_order_relaxed);
        r->at(b).owner.store(t->owner(), std::memory_order_relaxed);
        // seq_cst, not just release: the owner's next look at tickets_
        // (wants_ticket) must not come before this store, so that a ticket
        // that stops counting itself and then finds the deque empty and the
        // owner that finds every ticket still counted cannot both miss it.
        bottom_.store(b + 1, std::memory_order_seq_cst);
    }

    // Owner only: the newest, or null.
    spawned_task* pop() noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        ring* const r = ring_.load(std::memory_order_relaxed);
        bottom_.store(b, std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (t > b) { // empty
            bottom_.store(b + 1, std::memory_order_relaxed);
            return nullptr;
        }
        spawned_task* task = r->at(b).task.load(std::memory_order_relaxed);
        if (t == b) { // the last one: a thief may be claiming it too
            if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
                task = nullptr;
            bottom_.store(b + 1, std::memory_order_relaxed);
        }
        return task;
    }

    // Owner only: puts back what pop() just returned (a waiter that may not
    // run it: another isolation's).
    void push_back(spawned_task* t) { push(t); }

    // Anyone: the oldest, or null (empty, or lost a race to another taker).
    spawned_task* steal() noexcept {
        return steal_if([](const void*) { return true; });
    }

    // As steal(), but only a spawn whose owner() `wanted(owner)` accepts.
    // The owner is kept in the cell beside the spawn: a spawn read before
    // its claim may be another taker's already, even freed.
    template <class Wanted>
    spawned_task* steal_if(Wanted wanted) noexcept {
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        if (t >= b) return nullptr;
        ring* const r = ring_.load(std::memory_order_acquire);
        // Both read before the claim and forgotten if it fails (the owner
        // may have reused the cell); neither is dereferenced before it.
        spawned_task* const task = r->at(t).task.load(std::memory_order_relaxed);
        if (!wanted(r->at(t).owner.load(std::memory_order_relaxed))) return nullptr;
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
            return nullptr;
        return task;
    }

    // A snapshot: whether the oldest spawn's owner() is `owner`.
    bool oldest_is(const void* owner) const noexcept {
        const std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (t >= bottom_.load(std::memory_order_seq_cst)) return false;
        return ring_.load(std::memory_order_acquire)->at(t).owner.load(std::memory_order_relaxed) == owner;
    }

    // A snapshot; exact for the owner when it says empty.
    bool looks_empty() const noexcept {
        return bottom_.load(std::memory_order_seq_cst) <= top_.load(std::memory_order_seq_cst);
    }

    // Counts one more ticket if fewer than max_tickets are in the pool; the
    // caller then posts it (post_ticket) or, if posting fails, uncounts it.
    bool count_ticket() noexcept {
        std::uint32_t n = tickets_.load(std::memory_order_seq_cst);
        while (n < max_tickets)
            if (tickets_.compare_exchange_weak(n, n + 1, std::memory_order_seq_cst, std::memory_order_seq_cst))
                return true;
        return false;
    }
    // A ticket ran, was dropped, or was never posted.
    void uncount_ticket() noexcept { tickets_.fetch_sub(1, std::memory_order_seq_cst); }
    // References held now (the owner's, its groups', the tickets'): for
    // tests, on the owner's thread before it leaves.
    std::int64_t references() const noexcept {
        return refs_.load(std::memory_order_acquire) - owner_bias + 1 + held_on_owner_;
    }
    // Tickets in the pool now: for tests.
    std::uint32_t tickets() const noexcept { return tickets_.load(std::memory_order_relaxed); }

    // Posts a counted ticket through the pool's try_execute; false if the
    // pool refused it (the ticket has uncounted itself then). Throws
    // std::bad_alloc.
    bool post_ticket() { return post_(pool_, *this); }

  private:
    struct cell {
        std::atomic<spawned_task*> task{nullptr};
        std::atomic<const void*> owner{nullptr}; // task->owner(), readable before the claim
    };
    struct ring {
        explicit ring(std::size_t n, ring* older_ring)
            : size(n), cells(std::make_unique<cell[]>(n)), older(older_ring) {}
        cell& at(std::int64_t i) noexcept { return cells[static_cast<std::size_t>(i) & (size - 1)]; }
        const std::size_t size; // a power of two
        const std::unique_ptr<cell[]> cells;
        ring* const older; // replaced rings, freed with the deque
    };

    ring* grow(ring* r, std::int64_t top, std::int64_t bottom) {
        auto* bigger = new ring(r->size * 2, r);
        for (std::int64_t i = top; i < bottom; ++i) {
            bigger->at(i).task.store(r->at(i).task.load(std::memory_order_relaxed), std::memory_order_relaxed);
            bigger->at(i).owner.store(r->at(i).owner.load(std::memory_order_relaxed), std::memory_order_relaxed);
        }
        ring_.store(bigger, std::memory_order_release);
        return bigger;
    }

    static constexpr std::size_t first_size = 64;

    alignas(cache_line) std::atomic<std::int64_t> top_{0};
    alignas(cache_line) std::atomic<std::int64_t> bottom_{0};
    std::atomic<ring*> ring_{new ring(first_size, nullptr)};
    alignas(cache_line) std::atomic<std::uint32_t> tickets_{0};
    // The shared count: each ticket's, each group's let go off the owner's
    // thread (a decrement), and while the owner is here owner_bias for it
    // and the groups it counts (so that those decrements never reach zero).
    static constexpr std::int64_t owner_bias = std::int64_t(1) << 40;
    std::atomic<std::int64_t> refs_{owner_bias};
    std::int64_t held_on_owner_ = 0; // groups' references taken less let go on the owner's thread
    const void* const pool_;
    const post_fn post_;
    const void* const owner_;
};

} // namespace crew::detail

#endif
