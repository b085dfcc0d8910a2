#ifndef CREW_POLICIES_WORK_STEALING_QUEUE_HPP
#define CREW_POLICIES_WORK_STEALING_QUEUE_HPP

/// \file
/// `crew::work_stealing_queue` and `crew::bounded_work_stealing_queue`: the
/// QueuePolicy of Java's `ForkJoinPool` (`Executors.newWorkStealingPool`).
///
/// \b Where a task goes. Each of the pool's workers owns a deque
/// (detail/work_stealing/work_stealing_deque.hpp). A task submitted from a worker goes to
/// that worker's deque; the worker runs its own tasks newest first, and an
/// idle worker steals the oldest. A task submitted from any other thread
/// goes to the injector: a few FIFO shards (detail/queue/segment_queue.hpp), one per
/// submitting thread, that workers drain oldest first. A deque that is full
/// (256 tasks) overflows to the injector.
///
/// \b Order. There is no FIFO across workers, nor across submitting threads:
/// the tasks one outside thread submits start in the order submitted (one
/// shard), but a task from another thread, or from a worker, may start
/// before an older one. Code that needs FIFO uses `fixed_pool`.
///
/// \b Waking. A worker that finds its deque empty looks once at the
/// injector and the other deques; finding nothing, it "searches" there,
/// briefly. A submitter wakes a parked worker only when nobody searches
/// (Go's and Tokio's throttle): the searchers will find the task, and the
/// last one to stop searching after finding work wakes one more if work is
/// still queued. A worker woken from parking searches from its first look,
/// so that the wake-ups pass along a burst. At most half the workers search
/// at once; the rest park at once.
///
/// \b Lifecycle. As every queue: `close()` refuses later offers, from
/// workers too; `drain()` returns every queued task exactly once (injector,
/// then each deque oldest first); `size()` counts every deque and shard.
///
/// All members are thread-safe.

#include <crew/concepts.hpp>
#include <crew/detail/cache_line.hpp>
#include <crew/detail/queue/consumer_wait.hpp>
#include <crew/detail/sync/event_count.hpp>
#include <crew/detail/sanitizers.hpp>
#include <crew/detail/queue/segment_queue.hpp>
#include <crew/detail/sync/spin.hpp>
#include <crew/detail/queue/task_ring.hpp>
#include <crew/detail/test_seam.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/detail/work_stealing/work_stealing_deque.hpp>
#include <crew/pool_options.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace crew {

namespace detail {

// A worker's deque and whether a worker owns it now. Slots are never freed
// before their queue (a thief may be reading one); a worker that leaves
// gives its slot back for the next.
struct work_stealing_slot {
    work_stealing_deque deque;
    std::atomic<bool> bound{false};
    work_stealing_slot* next = nullptr; // the queue's list; written before the slot is published
    std::size_t number = 0;             // which slot this is (its owner's first shard)
    std::uint32_t ticks = 0;            // owner only: finds since it last looked at the injector first
};

// The slot the calling thread owns, and in which queue.
struct work_stealing_binding {
    const void* queue = nullptr;
    work_stealing_slot* slot = nullptr;
};
inline thread_local work_stealing_binding current_work_stealing_slot;

// The shard an outside thread submits to (a number it keeps for life).
inline std::size_t submitter_number() noexcept {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t mine = next.fetch_add(1, std::memory_order_relaxed);
    return mine;
}

class work_stealing_engine : public consumer_waits<work_stealing_engine> {
  public:
    // One injector shard per 4 CPUs, at most 8: on few CPUs one FIFO.
    static std::size_t default_shards() noexcept { return std::clamp<std::size_t>(usable_cpu_count() / 4, 1, 8); }

    // Cells of each injector shard's segments: a quarter of a FIFO queue's,
    // since tasks from outside are the exception here (workers push to
    // their own deques).
    static constexpr std::size_t shard_ring_cells = 256;

    // A worker looks at the injector before its own deque once in this many
    // finds, so that a worker feeding itself cannot starve outside
    // submitters. Prime, so that it does not beat in step with a task
    // pattern of a round period.
    static constexpr unsigned injector_first_every = 61;

    // `capacity`: the most tasks queued in all (max(): unbounded); `shards`:
    // of the injector (tests choose more than the machine would).
    explicit work_stealing_engine(std::size_t capacity, std::size_t shards = default_shards()) : capacity_(capacity) {
        shards = std::max<std::size_t>(shards, 1);
        shards_.reserve(shards);
        for (std::size_t i = 0; i < shards; ++i)
            shards_.push_back(std::make_unique<segment_queue>(std::numeric_limits<std::size_t>::max(), shard_ring_cells));
    }

    ~work_stealing_engine() {
        for (work_stealing_slot* s = slots_.load(std::memory_order_acquire); s;) delete std::exchange(s, s->next);
    }

    work_stealing_engine(const work_stealing_engine&) = delete;
    work_stealing_engine& operator=(const work_stealing_engine&) = delete;

    // ---- the pool's workers (basic_executor, through worker_local_queue_policy)

    // The calling thread becomes one of the queue's workers: it gets a deque.
    // May throw std::bad_alloc (nothing changed).
    void attach_worker() {
        work_stealing_slot* slot = nullptr;
        for (work_stealing_slot* s = slots_.load(std::memory_order_acquire); s; s = s->next) {
            bool unbound = false;
            if (!s->bound.load(std::memory_order_relaxed) &&
                s->bound.compare_exchange_strong(unbound, true, std::memory_order_acq_rel)) {
                slot = s;
                break;
            }
        }
        if (!slot) {
            auto fresh = std::make_unique<work_stealing_slot>();
            fresh->bound.store(true, std::memory_order_relaxed);
            fresh->number = slot_count_.fetch_add(1, std::memory_order_relaxed);
            fresh->next = slots_.load(std::memory_order_relaxed);
            while (!slots_.compare_exchange_weak(fresh->next, fresh.get(), std::memory_order_release,
                                                 std::memory_order_relaxed)) {
            }
            slot = fresh.release();
        }
        slot->ticks = 0;
        current_work_stealing_slot = {this, slot};
        workers_.fetch_add(1, std::memory_order_relaxed);
    }

    // The calling worker leaves. Its deque keeps any task still in it (a
    // worker over the maximum size leaves without looking): thieves steal
    // from every deque, owned or not, and the next worker to attach owns it.
    void detach_worker() {
        work_stealing_slot* slot = own_slot();
        if (!slot) return;
        current_work_stealing_slot = {};
        slot->bound.store(false, std::memory_order_release);
        workers_.fetch_sub(1, std::memory_order_relaxed);
        if (!slot->deque.looks_empty()) wake_if_nobody_searches();
    }

    // For a worker waiting inside a task (task_group::wait(), parallel_for):
    // the newest task of its own deque, else the oldest of another worker's
    // (the other workers' fork-join work, never the injector's outside
    // tasks). False on any other thread.
    bool poll_local(task& out) noexcept {
        work_stealing_slot* slot = own_slot();
        if (!slot) return false;
        if (!slot->deque.pop(out) && !steal(out, slot)) return false;
        took_one();
        return true;
    }

    // ---- the QueuePolicy

    // False (t intact) if closed or, when bounded, full.
    bool offer(task&& t) {
        if (closed_.load(std::memory_order_acquire)) return false;
        if (!reserve()) return false;
        CREW_SEAM(work_stealing_offer_checked);
        bool queued;
        work_stealing_slot* const slot = own_slot();
        try {
            // Either way a full fence follows the publish: push_local's own,
            // or the shard's (segment_queue::published).
            queued = slot ? push_local(*slot, t) : shard_for_submitter().offer(std::move(t));
        } catch (...) {
            unreserve();
            throw;
        }
        if (!queued) {
            unreserve();
            return false;
        }
        wake_if_nobody_searches_after_fence();
        return true;
    }

    // Waits while full (bounded only); false (t intact) once closed.
    bool put(task&& t) { return put_until(std::move(t), clock::time_point::max()); }

    bool put_until(task&& t, clock::time_point deadline) {
        return put_or_park(not_full_, [&] { return offer(std::move(t)); },
                           [&] { return closed_.load(std::memory_order_seq_cst); }, deadline);
    }

    // Without waiting: the caller's own deque, the side list, the injector,
    // then the other deques.
    bool poll(task& out) { return find(out, own_slot(), false); }

    void wake_consumers() { not_empty_.notify_all(); }

    // Refuses later offers. A worker's push that raced with it either is
    // taken back (refused) or was queued before it (push_local). An outside
    // offer that found the flag clear may still land in its shard until
    // that shard closes, so close() holds maintenance_ throughout: a drain
    // or extract_if overlapping it would otherwise miss a task whose offer
    // succeeds (ordered before the close) and pushes behind the drain.
    void close() {
        std::lock_guard exclusive(maintenance_);
        closed_.store(true, std::memory_order_seq_cst);
        CREW_SEAM(work_stealing_close_flagged);
        for (auto& shard : shards_) shard->close();
        not_full_.notify_all();
    }

    // Every queued task, exactly once: the side list, the shards (each
    // oldest first), then each deque oldest first.
    std::vector<task> drain() {
        // One close, drain or extract_if at a time (see close()): a drain overlapping an
        // extract_if would miss the tasks it holds.
        std::lock_guard exclusive(maintenance_);
        std::vector<task> out;
        take_aside_into(out);
        for (auto& shard : shards_) {
            std::vector<task> part = shard->drain();
            out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
        }
        for (work_stealing_slot* s = slots_.load(std::memory_order_acquire); s; s = s->next)
            for (task t; steal_from(*s, t);) out.push_back(std::move(t));
        unreserve(out.size());
        if (!out.empty()) not_full_.notify_all();
        return out;
    }

    // Removes and returns the queued tasks for which pred(task) holds. The
    // shards keep their survivors in place, in order. A deque can be written
    // by its owner only, so its tasks are stolen, tested, and the survivors
    // go to the side list, where any worker finds them first. Room is made
    // there before anything is taken: a throwing predicate (or a failed
    // allocation) leaves every task queued.
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        std::lock_guard exclusive(maintenance_); // see drain()
        std::vector<task> removed;
        for (auto& shard : shards_) {
            std::vector<task> part = shard->extract_if(pred);
            removed.insert(removed.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
        }
        {
            std::lock_guard lock(aside_mutex_);
            std::size_t bound = aside_.size();
            for (work_stealing_slot* s = slots_.load(std::memory_order_acquire); s; s = s->next)
                bound += s->deque.size();
            std::vector<task> taken;
            taken.reserve(bound);
            aside_.reserve(bound);
            std::vector<char> drop(bound);
            removed.reserve(removed.size() + bound);
            aside_.drain_into(taken); // reserved: nothing allocates from here on
            // size() must go on counting the tasks in hand (a worker that
            // saw the queue empty after shutdown() would leave, and the pool
            // could terminate with them unrun): aside_count_ counts them,
            // each before it leaves its deque (an over-count, never under),
            // until the survivors are back and the count exact again.
            for (work_stealing_slot* s = slots_.load(std::memory_order_acquire); s; s = s->next)
                for (task t; taken.size() < bound;) {
                    aside_count_.fetch_add(1, std::memory_order_acq_rel);
                    if (!steal_from(*s, t)) {
                        aside_count_.fetch_sub(1, std::memory_order_acq_rel);
                        break;
                    }
                    taken.push_back(std::move(t));
                }
            try {
                for (std::size_t i = 0; i < taken.size(); ++i) drop[i] = pred(std::as_const(taken[i])) ? 1 : 0;
            } catch (...) {
                for (task& t : taken) aside_.push(std::move(t));
                aside_count_.store(aside_.size(), std::memory_order_release);
                throw;
            }
            for (std::size_t i = 0; i < taken.size(); ++i) {
                if (drop[i]) removed.push_back(std::move(taken[i]));
                else aside_.push(std::move(taken[i]));
            }
            aside_count_.store(aside_.size(), std::memory_order_release);
        }
        unreserve(removed.size());
        if (!removed.empty()) not_full_.notify_all();
        if (aside_count_.load(std::memory_order_relaxed) != 0) wake_if_nobody_searches();
        return removed; // the removed tasks die outside every lock
    }

    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return extract_if(std::move(pred)).size();
    }

    // Every queued task (a snapshot; a task moving from a deque to a thief
    // is counted until the thief claims it).
    std::size_t size() const noexcept {
        std::size_t n = aside_count_.load(std::memory_order_acquire);
        for (const auto& shard : shards_) n += shard->size();
        for (const work_stealing_slot* s = slots_.load(std::memory_order_acquire); s; s = s->next)
            n += s->deque.size();
        return n;
    }

    std::size_t capacity() const noexcept { return capacity_; }

    // Workers attached now, and consumers parked (or about to park) now:
    // for statistics and tests.
    std::size_t attached_workers() const noexcept { return workers_.load(std::memory_order_relaxed); }
    std::size_t parked_consumers() const noexcept { return not_empty_.waiters(); }

  private:
    friend consumer_waits<work_stealing_engine>;

    bool bounded() const noexcept { return capacity_ != std::numeric_limits<std::size_t>::max(); }

    // Counts a task against the capacity (bounded only).
    // A compare-exchange, not an increment undone on failure: an undone
    // increment would make other offers see the queue full for a moment
    // (and, undone, owe a blocked put a wake-up).
    bool reserve() noexcept {
        if (!bounded()) return true;
        std::size_t n = queued_.load(std::memory_order_relaxed);
        do {
            if (n >= capacity_) return false;
        } while (!queued_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel, std::memory_order_relaxed));
        return true;
    }
    void unreserve(std::size_t n = 1) noexcept {
        if (bounded() && n != 0) queued_.fetch_sub(n, std::memory_order_acq_rel);
    }
    // A task left the queue: room for a blocked put (bounded only).
    void took_one() {
        if (!bounded()) return;
        queued_.fetch_sub(1, std::memory_order_acq_rel);
        not_full_.notify_one();
    }

    work_stealing_slot* own_slot() const noexcept {
        const work_stealing_binding& b = current_work_stealing_slot;
        return b.queue == this ? b.slot : nullptr;
    }

    segment_queue& shard_for_submitter() noexcept { return *shards_[submitter_number() % shards_.size()]; }

    // The owner's push, or the injector's when its deque is full. The push
    // and the look at closed_ are ordered (seq_cst) against close()'s store
    // and drain()'s steals: either drain sees the task, or this sees the
    // close and takes the task back, unless a thief took it first (then it
    // was queued before the close, and runs or is drained as any other).
    //
    // The fence is what makes it so: the push's store to bottom is a release,
    // and a store followed by a load of another location may be reordered
    // (x86's store buffer does it), so without it the push and close() could
    // each miss the other. It is also the fence wake_if_nobody_searches needs.
    bool push_local(work_stealing_slot& slot, task& t) {
        if (!slot.deque.push(t)) return shard_for_submitter().offer(std::move(t));
        full_fence(searching_);
        if (!closed_.load(std::memory_order_seq_cst)) return true;
        return !slot.deque.pop(t);
    }


    // After a task became visible: wake a parked worker, unless a worker is
    // searching (it will find the task, or wake one as it stops). The
    // publish, then the look at searching_: a full barrier between, paired
    // with the searcher's decrement before its last look (end_search, park).
    // A search that began longer ago than detail::wake_age_bound no longer
    // counts: its searcher may be descheduled (or moving a slow task out),
    // and every task submitted meanwhile would wait for it while others
    // sleep. Only a publish that finds a searcher reads the clock.
    void wake_if_nobody_searches() {
        full_fence(searching_);
        wake_if_nobody_searches_after_fence();
    }
    void wake_if_nobody_searches_after_fence() {
        if (load_after_full_fence(searching_) != 0 && search_is_live()) return;
        not_empty_.notify_one_after_fence();
    }
    bool search_is_live() const noexcept {
        return steady_now_ns() - search_began_ns_.load(std::memory_order_relaxed) < wake_age_bound.count();
    }

    // The side list: survivors extract_if took out of a deque. Rare; a mutex.
    bool take_aside(task& out) {
        if (aside_count_.load(std::memory_order_acquire) == 0) return false;
        std::lock_guard lock(aside_mutex_);
        if (aside_.empty()) return false;
        out = aside_.pop();
        aside_count_.store(aside_.size(), std::memory_order_release);
        return true;
    }
    void take_aside_into(std::vector<task>& out) {
        std::lock_guard lock(aside_mutex_);
        aside_.drain_into(out);
        aside_count_.store(0, std::memory_order_release);
    }

    static bool steal_from(work_stealing_slot& s, task& out) noexcept {
        for (;;) {
            if (s.deque.looks_empty()) return false;
            if (s.deque.steal(out)) return true; // else lost a race: look again
        }
    }

    bool take_injected(task& out, std::size_t first) {
        if (take_aside(out)) return true;
        for (std::size_t i = 0; i < shards_.size(); ++i)
            if (shards_[(first + i) % shards_.size()]->poll(out)) return true;
        return false;
    }

    // Steals one task from the other deques, starting after `mine`.
    bool steal(task& out, work_stealing_slot* mine) {
        work_stealing_slot* const head = slots_.load(std::memory_order_acquire);
        work_stealing_slot* const start = mine && mine->next ? mine->next : head;
        for (work_stealing_slot* s = start; s; s = s->next)
            if (s != mine && steal_from(*s, out)) return true;
        for (work_stealing_slot* s = head; s && s != start; s = s->next)
            if (s != mine && steal_from(*s, out)) return true;
        return false;
    }

    // One look everywhere but the caller's own deque.
    bool scan(task& out, work_stealing_slot* mine) {
        return take_injected(out, mine ? mine->number : 0) || steal(out, mine);
    }

    // The caller's own deque first (except every injector_first_every-th time, when the
    // injector goes first, so that a worker feeding itself cannot starve
    // outside submitters), then everything else; `may_search`: if nothing
    // is found at once, search a while, counted in searching_. A worker
    // that finds work at once is not counted (Go's findrunnable checks its
    // run queues before it spins too): a count taken and dropped around
    // every injected task was two read-modify-writes on the word every
    // submitter reads, 14 % of the CPU of 10^6 tasks from outside. Except a
    // worker just `woken` from parking (Go's woken M starts spinning): it
    // counts itself first, so that finding work it wakes one more, since a
    // submitter that saw a searcher woke nobody and the wake-up that reached
    // this worker may be the only one for several tasks.
    bool find(task& out, work_stealing_slot* mine, bool may_search, bool woken = false) {
        bool found = false;
        if (mine) {
            found = ++mine->ticks % injector_first_every == 0 && take_injected(out, mine->number);
            if (!found) found = mine->deque.pop(out);
        }
        if (!found && !(may_search && woken)) found = scan(out, mine); // at once, uncounted
        if (!found && may_search) {
            if (begin_search()) {
                CREW_SEAM(work_stealing_search_counted);
                // Counted: a submitter that has seen the count since wakes
                // nobody, and relies on this look to find its task.
                found = scan(out, mine);
                if (!found && spin_while_searching_) {
                    found = spin_until(search_spin_pauses, [&] { return scan(out, mine); });
                }
                if (!found) CREW_SEAM(work_stealing_search_failed);
                end_search(found);
            } else if (woken) {
                found = scan(out, mine); // half the workers search already: one plain look
            }
        }
        if (found) took_one();
        return found;
    }

    // At most half the workers (and at least one) search at a time.
    bool begin_search() noexcept {
        const std::uint32_t now = searching_.load(std::memory_order_relaxed);
        const std::size_t workers = std::max<std::size_t>(workers_.load(std::memory_order_relaxed), 1);
        if (now != 0 && 2 * static_cast<std::size_t>(now) >= workers) return false;
        // The age is the oldest search's: stamped when searching_ leaves 0.
        // Stamped by each new search, a held searcher's age would hide behind
        // a fresh one that has since ended (the adversarial review of #31). A
        // submitter that reads the count before the stamp wakes one more.
        if (searching_.fetch_add(1, std::memory_order_seq_cst) == 0)
            search_began_ns_.store(steady_now_ns(), std::memory_order_relaxed);
        return true;
    }

    // The last searcher to stop after finding work wakes one more worker if
    // work is still visible: a submitter that saw it searching woke nobody.
    // (One that found nothing parks next, and its park looks once more.)
    void end_search(bool found) {
        if (searching_.fetch_sub(1, std::memory_order_seq_cst) != 1 || !found) return;
        wake_if_work_visible();
    }

    bool work_visible() const noexcept {
        if (aside_count_.load(std::memory_order_seq_cst) != 0) return true;
        for (const auto& shard : shards_)
            if (shard->size() != 0) return true;
        for (const work_stealing_slot* s = slots_.load(std::memory_order_acquire); s; s = s->next)
            if (s->deque.size() != 0) return true;
        return false;
    }

    // detail::wait_for_task's two steps: find (searching a while); else
    // announce, look once more without counting as a searcher (a submitter
    // that saw a searcher relies on that look), sleep.
    //
    // A task found by that last look may be one a submitter woke nobody for
    // (it saw this worker searching), with more behind it: as a searcher
    // that found work, it wakes one more if work is still visible.
    wait_status wait_for(task& out, const interrupt_flag& interrupted, clock::time_point deadline) {
        work_stealing_slot* const mine = own_slot();
        bool woken = false;
        return wait_for_task(interrupted, deadline, [&] { return find(out, mine, true, woken); }, [&] {
            woken = true; // the next look follows a sleep (or a look that found nothing)
            if (!park_consumer(not_empty_, interrupted, deadline, [&] { return find(out, mine, false); }))
                return false;
            wake_if_work_visible(); // after cancel_wait: this worker no longer counts as asleep
            return true;
        });
    }

    void wake_if_work_visible() {
        full_fence(searching_);
        if (work_visible()) not_empty_.notify_one_after_fence();
    }

    // How long a searcher spins (detail::spin_until's pauses) before it
    // parks: a few microseconds, the time a busy worker takes to publish the
    // next task (doc/benchmarks.md, "Many cores").
    static constexpr int search_spin_pauses = 256;

    const std::size_t capacity_;
    const bool spin_while_searching_ = usable_cpu_count() > 1;
    std::atomic<bool> closed_{false};
    std::vector<std::unique_ptr<segment_queue>> shards_;      // the injector; fixed after construction
    std::atomic<work_stealing_slot*> slots_{nullptr};        // every deque ever made; only grows
    alignas(detail::cache_line) std::atomic<std::uint32_t> searching_{0};    // workers searching now
    std::atomic<std::int64_t> search_began_ns_{0};           // when searching_ last left 0 (steady clock, ns)
    std::atomic<std::size_t> workers_{0};                    // workers attached now
    std::atomic<std::size_t> slot_count_{0};                 // slots made
    alignas(detail::cache_line) std::atomic<std::size_t> queued_{0};         // bounded only: tasks queued in all
    alignas(detail::cache_line) std::atomic<std::size_t> aside_count_{0};    // aside_.size(); written under aside_mutex_
    std::mutex maintenance_; // one close, drain or extract_if at a time; taken before aside_mutex_
    std::mutex aside_mutex_;
    task_ring aside_; // guarded by aside_mutex_
    event_count<> not_empty_; // workers park here
    event_count<> not_full_;  // put() parks here (bounded only)
};

} // namespace detail

/// Java's `ForkJoinPool` queueing (`Executors.newWorkStealingPool`): a deque
/// per worker and a sharded injector for outside submitters; see the file
/// comment for the order it keeps (none across workers). Never full: a pool
/// on it never grows past its core size, as with `unbounded_queue`.
class work_stealing_queue : public detail::work_stealing_engine {
  public:
    explicit work_stealing_queue(const pool_options& = {})
        : work_stealing_engine(std::numeric_limits<std::size_t>::max()) {}
};

/// As `work_stealing_queue`, holding at most `pool_options::queue_capacity`
/// tasks in all (deques and injector): when full, the pool grows towards its
/// maximum size, then the RejectPolicy gets the task.
class bounded_work_stealing_queue : public detail::work_stealing_engine {
  public:
    /// Throws `std::invalid_argument` if `options.queue_capacity` is 0.
    explicit bounded_work_stealing_queue(const pool_options& options = {})
        : work_stealing_engine(validated(options.queue_capacity)) {}

  private:
    static std::size_t validated(std::size_t capacity) {
        if (capacity == 0)
            throw std::invalid_argument("crew::bounded_work_stealing_queue: queue_capacity must be positive");
        return capacity;
    }
};

static_assert(queue_policy<work_stealing_queue> && worker_local_queue_policy<work_stealing_queue>);
static_assert(queue_policy<bounded_work_stealing_queue>);

} // namespace crew

#endif
