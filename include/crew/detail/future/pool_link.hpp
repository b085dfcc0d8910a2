#ifndef CREW_DETAIL_FUTURE_POOL_LINK_HPP
#define CREW_DETAIL_FUTURE_POOL_LINK_HPP

// The link from a scheduled future back to its pool, through which cancel()
// takes the queued task out. A future may outlive its pool, so the pool cuts
// the link before it dies, and every use of it holds the link's mutex; a
// cancel after the pool died does nothing.
//
// The link lives in a process-wide table of entries that are never freed, so
// that a future keeps a plain (entry, generation) pair instead of a counted
// pointer: scheduling copies two words and touches no shared count. A pool
// takes an entry when it is built and gives it back as it dies, bumping the
// generation, so a future of a dead pool whose entry now serves another pool
// no longer matches it. The table holds as many entries as there were
// scheduled pools alive at once.
//
// The names, from the future's end to the pool's:
// - link_ticket: what a scheduled future keeps (entry, generation);
// - link_table, link_entry: the process-wide table and its never-freed slots;
// - link_registration: a pool's hold on one entry, cut as the pool dies;
// - pool_link: the pool's end, the one virtual call (on_cancelled);
// - basic_executor's cancel_link (its pool_link), link_holder (a scheduled
//   pool's member: cancel_link + registration) and no_link (what a pool
//   without a delayed_queue holds instead: nothing).
//
// Each entry has its own mutex, so that cancels on two pools never wait for,
// or deadlock on, each other. Recursive: the pool may run user code
// (on_terminated) that cancels another scheduled future of the same pool
// while the link is held.

#include <crew/schedule_slot.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace crew::detail {

// The pool's end of the link (one virtual call, on cancel only).
class pool_link {
  public:
    pool_link() = default;
    pool_link(const pool_link&) = delete;
    pool_link& operator=(const pool_link&) = delete;

    // A scheduled task's future was cancelled. `held` is the link entry's
    // mutex, held by link_ticket::cancelled while the pool is alive.
    virtual void on_cancelled(const std::unique_lock<std::recursive_mutex>& held, schedule_slot& slot) noexcept = 0;

  protected:
    ~pool_link() = default;
};

// One slot of the table; never freed, as a future may hold it for ever.
struct link_entry {
    std::recursive_mutex mutex;
    pool_link* live = nullptr;       // the pool using the entry, or null; guarded by mutex
    std::uint64_t generation = 0;    // bumped as each pool lets go; guarded by mutex
    link_entry* next_free = nullptr; // guarded by the table's mutex
};

// The entries, allocated in chunks and recycled through a free list.
// Immortal and reachable (LeakSanitizer stays quiet): futures may be
// cancelled during static destruction.
class link_table {
  public:
    static link_table& instance() {
        static link_table& table = *new link_table;
        return table;
    }

    // An entry no pool uses. Takes the table's mutex; may throw std::bad_alloc.
    link_entry& acquire() {
        std::lock_guard lock(mutex_);
        if (!free_) {
            auto* fresh = new chunk;
            fresh->next = chunks_;
            chunks_ = fresh;
            for (link_entry& e : fresh->entries) {
                e.next_free = free_;
                free_ = &e;
            }
        }
        link_entry& e = *free_;
        free_ = e.next_free;
        e.next_free = nullptr;
        return e;
    }

    // Requires: `e` cut (live null). Takes the table's mutex.
    void release(link_entry& e) noexcept {
        std::lock_guard lock(mutex_);
        e.next_free = free_;
        free_ = &e;
    }

  private:
    struct chunk {
        link_entry entries[32];
        chunk* next = nullptr;
    };
    link_table() = default;

    std::mutex mutex_;
    link_entry* free_ = nullptr; // guarded by mutex_
    chunk* chunks_ = nullptr;    // every chunk, kept reachable; guarded by mutex_
};

// What a scheduled future's state keeps: the entry and the generation its
// pool had it in. Copied freely; valid for ever.
class link_ticket {
  public:
    // A scheduled task's future was cancelled: tells its pool, if that pool
    // still holds the entry. Takes the entry's mutex.
    void cancelled(schedule_slot& slot) const noexcept {
        std::unique_lock lock(entry_->mutex);
        if (entry_->generation == generation_ && entry_->live) entry_->live->on_cancelled(lock, slot);
    }

    // Which entry (for tests: a new pool may be given a dead one's).
    const link_entry* entry() const noexcept { return entry_; }

  private:
    friend class link_registration;
    link_ticket(link_entry& entry, std::uint64_t generation) noexcept : entry_(&entry), generation_(generation) {}

    link_entry* entry_;
    std::uint64_t generation_;
};

// A pool's hold on its entry, from construction to destruction.
class link_registration {
  public:
    // Takes the table's mutex, then the entry's (a stale future may be
    // looking at it). May throw std::bad_alloc.
    explicit link_registration(pool_link& pool) : entry_(link_table::instance().acquire()) {
        std::lock_guard lock(entry_.mutex);
        entry_.live = &pool;
        generation_ = entry_.generation;
    }
    link_registration(const link_registration&) = delete;
    link_registration& operator=(const link_registration&) = delete;

    // Cuts the link as the pool dies: waits for any cancel in progress (the
    // entry's mutex), then gives the entry back (the table's mutex).
    ~link_registration() {
        {
            std::lock_guard lock(entry_.mutex);
            entry_.live = nullptr;
            ++entry_.generation;
        }
        link_table::instance().release(entry_);
    }

    // Lock-free: the pair is fixed while the pool lives.
    link_ticket ticket() const noexcept { return {entry_, generation_}; }

  private:
    link_entry& entry_;
    std::uint64_t generation_; // written once, by the constructor
};

} // namespace crew::detail

#endif
