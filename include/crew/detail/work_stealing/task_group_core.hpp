#ifndef CREW_DETAIL_WORK_STEALING_TASK_GROUP_CORE_HPP
#define CREW_DETAIL_WORK_STEALING_TASK_GROUP_CORE_HPP

// The machinery behind crew::task_group.
//
// Two ways in. On the pool's worker that made the group (the common case
// of fork-join: a task makes a group, forks and waits), run() spawns: the
// entry goes on that worker's spawn deque, owned by whoever takes it out
// (detail/work_stealing/spawn.hpp), and no pool task is made for it. Everywhere else (an
// outside thread, another worker, a pool shut down) run() makes one entry (one
// allocation: the callable, a claim flag and a count of two references) and
// hands the pool a trampoline that holds one reference; the group's list of
// entries holds the other. What follows is about the second way. Whoever claims an
// entry first (exchange on its flag) owns its fate:
//   - the trampoline, when the pool runs it: runs the callable;
//   - a waiter walking the list (wait() helps): runs it on its own thread;
//   - cancel(): drops it;
//   - the pool dropping the trampoline (abandon: a reject policy discarded
//     it, before_execute threw; or destroyed unrun: shutdown_now's list):
//     drops it and records why.
// A trampoline that loses the claim does nothing and lets its reference go,
// so it may run after the group is gone: it touches only its entry. Only a
// claim that wins touches the group, and it cannot win once the group is
// gone: the group's destructor waits until every entry is finished, helping
// (claiming) the queued ones itself.
//
// word_ packs what a finisher must see in one atomic read-modify-write:
//   bit 0         a waiter sleeps (or is about to) on cv_
//   bits 1..31    pending: entries run() but not yet finished
//   bits 32..63   linked: entries on the list (claimed or not), for pruning
// A finisher that takes pending to zero while a waiter sleeps does its
// decrement under mutex_ and notifies before unlocking, so that the waiter,
// which re-checks under mutex_, cannot see zero and destroy the group before
// the notify is done; every other decrement is a lone compare-exchange,
// after which the finisher touches nothing of the group. run() after pushing
// an entry looks at the bit (seq_cst on both sides: the waiter sets the bit,
// then looks at the list) and wakes the waiter, so that it helps with the
// new entry.

#include <crew/detail/cache_line.hpp>
#include <crew/detail/recycler.hpp>
#include <crew/detail/sync/condition_variable_on_demand.hpp>
#include <crew/detail/work_stealing/help.hpp>
#include <crew/detail/work_stealing/spawn.hpp>
#include <crew/detail/work_stealing/spawn_deque.hpp>
#include <crew/detail/work_stealing/worker_context.hpp>
#include <crew/errors.hpp>
#include <crew/task.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace crew::detail {

class task_group_core;

// How run() hands an entry on: through the pool (a trampoline and the
// group's list hold it) or spawned (a spawn deque, then its taker, holds it).
enum class entry_route : std::uint32_t { trampoline = 2, spawned = 1 };

// One run(): the callable and who claimed it. Allocated by run(), freed by
// whichever of its holders lets go last (group_entry_with, below, says
// where its memory comes from).
class group_entry : public spawned_task {
  public:
    group_entry(task_group_core& group, entry_route route) noexcept
        : spawned_task(current_isolation, &group), refs_(static_cast<std::uint32_t>(route)), group_(&group) {}
    group_entry(const group_entry&) = delete;
    group_entry& operator=(const group_entry&) = delete;

    // True for exactly one caller: the entry's fate is then that caller's.
    bool claim() noexcept { return !claimed_.exchange(true, std::memory_order_acq_rel); }
    bool claimed() const noexcept { return claimed_.load(std::memory_order_acquire); }
    void release() noexcept {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }
    // Only after a winning claim: the group is alive until this entry finishes.
    task_group_core& group() const noexcept { return *group_; }
    // A spawned entry that goes through the pool after all (its list's and
    // its trampoline's references). Requires: shared with no one yet.
    void route_through_pool() noexcept {
        refs_.store(static_cast<std::uint32_t>(entry_route::trampoline), std::memory_order_relaxed);
    }

    // Runs the callable, then destroys it; returns what escaped it.
    virtual std::exception_ptr run() noexcept = 0;
    // A spawned entry, taken out of its deque: runs it for the group.
    std::exception_ptr run_spawned() noexcept override;
    // Destroys the callable without running it.
    virtual void drop() noexcept = 0;

    // The group's list: written before the entry is pushed (or re-pushed by
    // a prune that holds it privately), read by whoever detached the list.
    group_entry* next = nullptr;

  protected:
    virtual ~group_entry() = default;

  private:
    std::atomic<std::uint32_t> refs_; // the list's and the trampoline's, or the spawn's one
    std::atomic<bool> claimed_{false};
    task_group_core* group_;
};

// The shared part of a task_group (it lives inside the group, not on the
// heap). Requires of its users: no member call overlaps the destructor.
class task_group_core {
  public:
    task_group_core() = default;
    task_group_core(const task_group_core&) = delete;
    task_group_core& operator=(const task_group_core&) = delete;
    // Requires: nothing pending (wait_all() returned).
    ~task_group_core() {
        // Nothing overlaps the destructor: a load, no read-modify-write.
        unlink(head_.load(std::memory_order_acquire));
        if (spawn_deque* d = home_deque_.load(std::memory_order_acquire)) {
            if (current_worker != nullptr && current_worker->spawns == d) d->release_on_owner();
            else d->release();
        }
    }

    // The worker (detail/work_stealing/worker_context.hpp) that made the group, or null:
    // only its run() calls spawn (task_group::run). A spawn waits on its
    // maker's deque until a ticket or a waiter takes it, and a waiter off
    // that worker takes only its own group's spawns, from the oldest end:
    // a task that spawned into a group made elsewhere and then blocked
    // outside crew could otherwise strand it behind another group's.
    const void* home() const noexcept { return home_; }

    bool is_cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }
    std::size_t pending() const noexcept { return pending_of(word_.load(std::memory_order_acquire)); }
    std::size_t completed() const noexcept {
        return completed_at_home_.load(std::memory_order_acquire) + completed_.load(std::memory_order_acquire);
    }

    // Counts `e` as pending and links it; wakes a sleeping waiter so that it
    // helps; prunes the list when claimed entries crowd it. Lock-free unless
    // a waiter sleeps or a prune re-links entries.
    void add(group_entry* e) noexcept { link(e, word_.fetch_add(pending_one + linked_one, std::memory_order_acq_rel)); }

    // A spawn (counted by add_spawned) taken back from its deque because
    // the pool had no room for a ticket: from now on a trampoline entry,
    // linked as add() links one. Requires: `e` shared with no one.
    void readd_as_trampoline(group_entry* e) noexcept {
        e->route_through_pool();
        link(e, word_.fetch_add(linked_one, std::memory_order_acq_rel));
    }

  private:
    void link(group_entry* e, std::uint64_t before) noexcept {
        push(e, e);
        wake_sleeper();
        // Entries that trampolines ran stay linked until a waiter walks the
        // list; a group that runs many tasks between waits drops them here
        // (amortised: at most one walk per prune_slack runs).
        if (linked_of(before) >= 2 * pending_of(before) + prune_slack) prune();
    }

  public:

    // Counts a spawned entry (entry_route::spawned) as pending, before it is
    // pushed anywhere a thief could take it. Lock-free: one read-modify-write.
    void add_spawned() noexcept { word_.fetch_add(pending_one, std::memory_order_acq_rel); }

    // After a spawn's push (seq_cst): wakes a waiter that went to sleep
    // before it could see it, so that it steals it (the owner may block).
    void spawned() noexcept { wake_sleeper(); }

    // Whether this group's entries may be spawned on `d`, the home
    // worker's deque: true once the group holds it, for any waiter to steal
    // from. A spawn's owner may block outside any crew wait (a latch its own
    // spawn counts down): its spawns must still be reachable by whoever
    // waits for the group, and a pool of one has no other worker to run the
    // tickets. False for another deque (a later thread whose record sits
    // where the home's did): that spawn goes through the pool. Called only
    // on the home worker (task_group::run), the only writer.
    bool knows_deque(spawn_deque& d) noexcept {
        const spawn_deque* const known = home_deque_.load(std::memory_order_acquire);
        if (known != nullptr) return known == &d;
        d.acquire_on_owner(); // the group's, let go by the destructor
        home_deque_.store(&d, std::memory_order_release);
        return true;
    }

    // Until nothing is pending: helps (detail/work_stealing/help.hpp: on one of a pool's
    // workers its own spawns and the pool's queued tasks; anywhere, the
    // entries of the list) and sleeps while the rest run elsewhere. Does not
    // rethrow.
    void wait_all() {
        bool slept = false;
        help_until([this] { return pending_of(word_.load(std::memory_order_acquire)) == 0; },
                   [this] {
                       group_entry* list = head_.exchange(nullptr, std::memory_order_acq_rel);
                       if (list) help(list);
                       return list != nullptr || steal_spawn();
                   },
                   [this, &slept](std::chrono::microseconds nap) {
                       slept = true;
                       (void)sleep_while_running(nap);
                   });
        // pending read zero without mutex_: a finisher that took it to zero
        // under mutex_ (it saw the sleeper bit) may still be notifying. Let
        // it leave before the caller may destroy the group. Only a waiter
        // that set the bit needs to: any other waiter that set it does this
        // itself before returning, and the group is not destroyed before
        // every wait has returned. (Taken every time, this lock was a fifth
        // of fib's CPU.)
        if (slept) {
            std::lock_guard handshake(mutex_);
        }
    }

    // The first exception since the last call, or null. Takes mutex_ only
    // if one was recorded: every wait() calls it.
    std::exception_ptr take_error() {
        if (!failed_.load(std::memory_order_acquire)) return nullptr;
        std::lock_guard lock(mutex_);
        failed_.store(false, std::memory_order_relaxed);
        return std::exchange(error_, nullptr);
    }

    // Marks the group cancelled (queued entries no longer run), requests
    // stop, and drops what is queued now.
    void cancel() {
        cancelled_.store(true, std::memory_order_seq_cst);
        std::stop_source source(std::nostopstate);
        {
            std::lock_guard lock(mutex_);
            if (stop_) source = *stop_;
        }
        // Outside mutex_: a stop callback may call back into the group.
        source.request_stop();
        drop_queued(head_.exchange(nullptr, std::memory_order_acq_rel));
    }

    // The group's token; its source is made on first use (most groups never
    // need one, and a std::stop_source allocates). Requested by cancel().
    std::stop_token stop_token() {
        if (!stop_ready_.load(std::memory_order_acquire)) {
            std::lock_guard lock(mutex_);
            if (!stop_) {
                stop_.emplace();
                if (cancelled_.load(std::memory_order_relaxed)) stop_->request_stop(); // no callbacks yet
                stop_ready_.store(true, std::memory_order_release);
            }
        }
        return stop_->get_token();
    }

    // After a winning claim: runs `e` unless the group is cancelled, records
    // what escaped it, finishes it. Returns the exception (the pool shows it
    // to after_execute). Touches nothing of the group after finishing.
    std::exception_ptr run_claimed(group_entry& e) noexcept {
        if (is_cancelled()) {
            e.drop();
            finish(false);
            return {};
        }
        std::exception_ptr error = e.run();
        if (error) record(error);
        finish(true);
        return error;
    }

    // A failure that belongs to no entry any more (run()'s own entry,
    // dropped by the executor inside execute()): recorded unless cancelled.
    void report(std::exception_ptr why) noexcept {
        if (!is_cancelled()) record(std::move(why));
    }

    // After a winning claim: drops `e`; `why` becomes the group's exception
    // unless the group is cancelled (then dropping is what the user asked).
    void drop_claimed(group_entry& e, std::exception_ptr why) noexcept {
        e.drop();
        if (why && !is_cancelled()) record(std::move(why));
        finish(false);
    }

  private:
    static constexpr std::uint64_t sleeper = 1;
    static constexpr std::uint64_t pending_one = 2;
    static constexpr std::uint64_t linked_one = std::uint64_t(1) << 32;
    static constexpr std::uint64_t prune_slack = 64;
    static std::uint64_t pending_of(std::uint64_t w) noexcept { return (w >> 1) & 0x7fffffffu; }
    static std::uint64_t linked_of(std::uint64_t w) noexcept { return w >> 32; }

    void record(std::exception_ptr e) noexcept {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::move(e);
        failed_.store(true, std::memory_order_release);
    }

    // One entry fewer pending; `ran`: it ran (completed() counts it).
    void finish(bool ran) noexcept {
        if (ran) count_completed(); // made visible by the release below
        std::uint64_t w = word_.load(std::memory_order_relaxed);
        for (;;) {
            if (pending_of(w) == 1 && (w & sleeper) != 0) {
                // The last one, with a waiter asleep: see the file comment.
                // Under mutex_ the bit is stable (only holders change it),
                // but a wake-up may have cleared it since it was read.
                std::lock_guard lock(mutex_);
                if ((word_.load(std::memory_order_relaxed) & sleeper) == 0) {
                    word_.fetch_sub(pending_one, std::memory_order_acq_rel);
                    return;
                }
                word_.fetch_sub(pending_one | sleeper, std::memory_order_acq_rel);
                cv_.notify_all();
                return;
            }
            if (word_.compare_exchange_weak(w, w - pending_one, std::memory_order_acq_rel, std::memory_order_relaxed))
                return;
        }
    }

    // One more task ran to the end. The home worker, which runs most of a
    // forking group's tasks itself, is the only writer of its own count: a
    // load and a store, where a shared count costs a read-modify-write per
    // task (half of finish()'s CPU in fib). A thread whose worker record
    // sits where the home's did starts after the home's thread ended.
    void count_completed() noexcept {
        if (current_worker != nullptr && current_worker == home_)
            completed_at_home_.store(completed_at_home_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        else
            completed_.fetch_add(1, std::memory_order_relaxed);
    }

    // Pushes the chain first..last (linked through next) onto the list.
    void push(group_entry* first, group_entry* last) noexcept {
        last->next = head_.load(std::memory_order_relaxed);
        while (!head_.compare_exchange_weak(last->next, first, std::memory_order_seq_cst, std::memory_order_relaxed)) {
        }
    }

    // After a push: a waiter that went to sleep before seeing it wakes. The
    // seq_cst load pairs with the waiter's seq_cst bit-set and list load.
    void wake_sleeper() noexcept {
        if ((word_.load(std::memory_order_seq_cst) & sleeper) == 0) return;
        std::lock_guard lock(mutex_);
        if ((word_.load(std::memory_order_relaxed) & sleeper) == 0) return;
        word_.fetch_and(~sleeper, std::memory_order_relaxed);
        cv_.notify_all();
    }

    // Sleeps until woken (a finish took pending to zero, or an entry was
    // pushed). Returns false when nothing is pending.
    // `at_most` (nonzero): wakes after that long anyway, for a waiter that
    // can take work from elsewhere (a pool's worker: detail/work_stealing/help.hpp).
    bool sleep_while_running(std::chrono::microseconds at_most = {}) {
        std::unique_lock lock(mutex_);
        std::uint64_t w = word_.load(std::memory_order_seq_cst);
        for (;;) {
            if (pending_of(w) == 0) return false;
            if ((w & sleeper) != 0) break;
            if (word_.compare_exchange_weak(w, w | sleeper, std::memory_order_seq_cst, std::memory_order_seq_cst))
                break;
        }
        // An entry pushed before the bit was seen: help instead (the bit
        // stays set; another waiter may rely on it).
        if (head_.load(std::memory_order_seq_cst) != nullptr || spawn_to_steal()) return true;
        std::condition_variable& cv = cv_.to_wait_on(lock);
        if (at_most.count() == 0) cv.wait(lock);
        else cv.wait_for(lock, at_most);
        return true;
    }

    // Runs (or, once cancelled, drops) every entry of `list` it can claim,
    // oldest first, the order the pool's FIFO queues start them in: in the
    // usual fork (run the bigger half, then the smaller, then wait) the
    // waiter takes the bigger half and a worker that comes later the
    // smaller, so the waiter seldom has to sleep for a stolen one.
    void help(group_entry* list) noexcept {
        group_entry* oldest_first = nullptr;
        while (list) { // the list is ours alone: relink it reversed
            group_entry* e = list;
            list = e->next;
            e->next = oldest_first;
            oldest_first = e;
        }
        list = oldest_first;
        std::uint64_t walked = 0;
        while (list) {
            group_entry* e = list;
            list = e->next;
            ++walked;
            if (e->claim()) (void)run_claimed(*e);
            e->release();
        }
        word_.fetch_sub(walked * linked_one, std::memory_order_relaxed);
    }

    // The home deque if this waiter may steal from it: not its owner (that
    // one pops its own: detail/work_stealing/help.hpp), and not inside crew::isolate,
    // whose waits run only the region's own spawns. Else null.
    spawn_deque* deque_to_steal_from() const noexcept {
        spawn_deque* const d = home_deque_.load(std::memory_order_acquire);
        if (d == nullptr || current_isolation != nullptr || d->owner() == current_worker) return nullptr;
        return d;
    }

    // Whether steal_spawn() may find something now: the oldest spawn of the
    // home deque is this group's (seq_cst loads: see spawned()).
    bool spawn_to_steal() const noexcept {
        const spawn_deque* const d = deque_to_steal_from();
        return d != nullptr && d->oldest_is(this);
    }

    // A waiter's help with this group's spawns on the home deque: steals
    // the oldest if it is this group's, and runs it. Never another group's:
    // a wait off the pool's workers runs only its own group's tasks, and
    // one on a worker reaches the rest through the pool (the deque's
    // tickets).
    bool steal_spawn() noexcept {
        spawn_deque* const d = deque_to_steal_from();
        if (d == nullptr) return false;
        const void* const mine = this;
        spawned_task* const t = d->steal_if([mine](const void* owner) { return owner == mine; });
        if (t == nullptr) return false;
        (void)run_in_its_isolation(t); // its group has the exception
        return true;
    }

    void drop_queued(group_entry* list) noexcept {
        std::uint64_t walked = 0;
        while (list) {
            group_entry* e = list;
            list = e->next;
            ++walked;
            if (e->claim()) {
                e->drop();
                finish(false);
            }
            e->release();
        }
        word_.fetch_sub(walked * linked_one, std::memory_order_relaxed);
    }

    // Unlinks the claimed entries and re-links the rest, in their order.
    void prune() noexcept {
        group_entry* list = head_.exchange(nullptr, std::memory_order_acq_rel);
        group_entry* kept = nullptr;
        group_entry* kept_last = nullptr;
        std::uint64_t unlinked = 0;
        while (list) {
            group_entry* e = list;
            list = e->next;
            if (e->claimed()) {
                e->release();
                ++unlinked;
            } else {
                e->next = nullptr;
                (kept_last ? kept_last->next : kept) = e;
                kept_last = e;
            }
        }
        word_.fetch_sub(unlinked * linked_one, std::memory_order_relaxed);
        if (kept) {
            push(kept, kept_last);
            wake_sleeper(); // a waiter may have found the list empty meanwhile
        }
    }

    static void unlink(group_entry* list) noexcept {
        while (list) {
            group_entry* e = list;
            list = e->next;
            e->release();
        }
    }

    // run() pushes, waiters and cancel() detach the whole list at once
    // (exchange), so there is no ABA: nobody pops single entries.
    const void* const home_ = current_worker;

    // The home worker's spawn deque once a spawn went there (knows_deque),
    // held; written by the home worker only.
    std::atomic<spawn_deque*> home_deque_{nullptr};

    alignas(cache_line) std::atomic<group_entry*> head_{nullptr};
    std::atomic<std::uint64_t> word_{0};
    std::atomic<std::size_t> completed_{0};         // ran on any thread but the home worker
    std::atomic<std::size_t> completed_at_home_{0}; // ran on the home worker; written by it alone
    std::atomic<bool> cancelled_{false};
    std::atomic<bool> stop_ready_{false}; // stop_ is made and stays
    std::mutex mutex_;                    // guards error_, making stop_; the sleep and its wake-ups
    condition_variable_on_demand cv_;      // made by the first waiter to sleep, under mutex_
    std::exception_ptr error_;             // guarded by mutex_
    std::atomic<bool> failed_{false};      // error_ is set; written under mutex_
    std::optional<std::stop_source> stop_; // made once under mutex_
};

inline std::exception_ptr group_entry::run_spawned() noexcept {
    std::exception_ptr error = group().run_claimed(*this);
    delete this; // a spawn's only holder is its taker: no count to drop
    return error;
}

// run()'s entry: the callable, stored in place and destroyed as soon as it
// ran or was dropped (not when the entry's memory goes), so that what it
// holds is released before wait() returns.
template <class F>
class group_entry_with final : public group_entry {
  public:
    template <class G>
    group_entry_with(task_group_core& group, entry_route route, G&& g)
        : group_entry(group, route), fn_(std::forward<G>(g)) {}
    ~group_entry_with() override {} // fn_ is gone already

    // From the recycler's per-thread caches (detail/recycler.hpp), as a
    // future's state: a spawn is freed on whichever thread ran it, and
    // malloc's arenas pay for that pattern (7 % of fib's CPU). Final, so the
    // size a `delete` through the base's virtual destructor passes is exact;
    // also chosen for an over-aligned F, so the alignment is passed on here.
    static void* operator new(std::size_t size) { return recycler::allocate(size, alignof(group_entry_with)); }
    static void operator delete(void* p, std::size_t size) noexcept {
        recycler::deallocate(p, size, alignof(group_entry_with));
    }

    std::exception_ptr run() noexcept override {
        std::exception_ptr error;
        try {
            if constexpr (takes_stop_token<F>) (void)std::invoke(fn_, group().stop_token());
            else (void)std::invoke(fn_);
        } catch (...) {
            error = std::current_exception();
        }
        fn_.~F();
        return error;
    }
    void drop() noexcept override { fn_.~F(); }

  private:
    union {
        F fn_;
    };
};

} // namespace crew::detail

#endif
