#ifndef CREW_POLICIES_DELAYED_QUEUE_HPP
#define CREW_POLICIES_DELAYED_QUEUE_HPP

/// \file
/// `crew::delayed_queue`: the QueuePolicy of `scheduled_pool`, a min-heap on
/// due time with leader-follower waiting. Java: `ScheduledThreadPoolExecutor`'s
/// `DelayedWorkQueue`.

#include <crew/concepts.hpp>
#include <crew/detail/consumer_wait.hpp>
#include <crew/detail/event_count.hpp>
#include <crew/detail/parking_word.hpp>
#include <crew/detail/schedule.hpp>
#include <crew/detail/spill_queue.hpp>
#include <crew/detail/time.hpp>
#include <crew/pool_options.hpp>
#include <crew/schedule_slot.hpp>
#include <crew/task.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace crew {

/// Tasks ordered by due time (`std::chrono::steady_clock`), earliest first,
/// FIFO among equal due times; a task is taken only once it is due.
///
/// \b Heap: a 4-ary min-heap of small keys (due time, sequence number, node:
/// four children in 96 contiguous bytes) over a slab of nodes holding the
/// tasks. Removing a task (a cancelled future's) empties its node at once and
/// leaves its key to be dropped when it reaches the head, or when such keys
/// outnumber the live ones (a rebuild): so no move in the heap writes to a
/// node. Unbounded: it grows as needed and never blocks a producer.
/// `offer` and `put` queue a task due now.
///
/// \b Tasks due now (`offer`, `put`: a pool's `execute`) skip the heap: they
/// go to a lock-free FIFO beside it (the spill queue of `unbounded_queue`)
/// and are taken from it without the heap's lock. So `execute` on a
/// scheduled pool costs about what it costs on a `fixed_pool`, and no clock
/// is read for it. Due order holds across the two: a heap task, when
/// inserted (or staged), is marked with how many tasks had entered the FIFO
/// by then; a heap task that is due and a FIFO task compete by that mark, so
/// a FIFO task that entered before the heap task was scheduled goes first,
/// one that entered after goes second. So `execute(a)` then `schedule(0s, b)`
/// (or a pool's `submit(b)`) runs `a` first, and the reverse `b` first, as in
/// Java, where both are due "now" and the earlier submission wins. Where
/// this differs from Java's pure due-time order, and the races it leaves,
/// see doc/scheduling.md ("Due order between execute and schedule").
///
/// \b Producers never wait for the heap's lock: a producer that finds it free
/// (and no consumer waiting for it) inserts directly; otherwise it appends to
/// a staging list under a lock of its own, and whoever next holds the heap's
/// lock moves the staged tasks in. So a burst of `schedule` calls does not
/// queue a due task's taker behind it.
///
/// \b Leader-follower waiting: at most one thread, the leader, waits timed
/// for the head's due time; the others wait untimed. The leader that takes a
/// task keeps the leadership while it runs it ("busy") and comes back to wait
/// for the next head itself, so a steady stream of timers costs one timed
/// wake-up per task, not a hand-off to another thread. A follower is woken
/// only when there is work for it: several tasks due at once, a new head
/// earlier than the one the busy leader will come back for, or no leader. A
/// busy leader's absence is covered by one deputy, a follower that waits
/// timed for the head's due time plus `leader_grace`: if the head is still
/// waiting then, the deputy takes it and the leadership with it. An idle pool
/// with a task due later has one timer armed, not one per thread.
/// `wait_statistics()` counts the waits and wake-ups.
///
/// \b Shutdown policies (from `pool_options`, changeable at run time through
/// the pool): `remove_on_cancel`, `continue_periodic_after_shutdown`,
/// `execute_delayed_after_shutdown`; `on_shutdown()` applies the last two.
///
/// Thread-safe. Used through `basic_executor`, whose `schedule*` members exist
/// only with this queue.
class delayed_queue : public detail::consumer_waits<delayed_queue> {
  public:
    using clock = std::chrono::steady_clock;

    /// How long a busy leader may keep the leadership past the head's due
    /// time before the deputy takes over: the most a task running long on the
    /// leader delays the tasks due after it, while other threads are idle.
    static constexpr std::chrono::nanoseconds leader_grace = std::chrono::milliseconds(1);

    /// Reads the three scheduling switches and the timer slack of `options`.
    /// Throws `std::invalid_argument` if `timer_slack` is negative.
    explicit delayed_queue(const pool_options& options = {})
        : timer_slack_(validated_slack(options.timer_slack)), remove_on_cancel_(options.remove_on_cancel),
          continue_periodic_after_shutdown_(options.continue_periodic_after_shutdown),
          execute_delayed_after_shutdown_(options.execute_delayed_after_shutdown) {}

    delayed_queue(const delayed_queue&) = delete;
    delayed_queue& operator=(const delayed_queue&) = delete;

    // ---- the QueuePolicy surface ------------------------------------------

    /// Queues `t` due now; false (and `t` untouched) once closed. Tasks due
    /// now skip the heap: they go to a lock-free FIFO (the spill queue of
    /// `unbounded_queue`), and are taken after the heap tasks due already
    /// that were scheduled before them, before those scheduled after them.
    /// May throw `std::bad_alloc`, leaving `t` untouched.
    bool offer(task&& t) {
        if (!now_.offer(std::move(t))) return false;
        // Counted once published: a consumer that saw the count finds the
        // task (unless an older cell is still unpublished: it then sleeps
        // until that producer counts its own). seq_cst: then the rule; a
        // sleeper stores the rule, then reads this.
        now_in_.fetch_add(1);
        wake_by(wake_rule_.load()); // a task due now is before any rule's time
        return true;
    }

    /// The same as `offer`: the queue is never full.
    bool put(task&& t) { return offer(std::move(t)); }
    /// The same as `offer`: the queue is never full.
    bool put_until(task&& t, clock::time_point) { return offer(std::move(t)); }

    /// Takes the head if it is due. Takes the heap's lock.
    bool poll(task& out) {
        std::uint64_t seen_in = 0;
        if (take_due_now(out, seen_in)) return true;
        std::unique_lock lock = lock_as_consumer();
        merge_staged();
        const auto now = clock::now();
        return take_locked(lock, out, now, seen_in, false);
    }

    // take(out, interrupted) and poll_until(out, deadline, interrupted), from
    // consumer_waits: wait until the head is due and take it.

    /// Wakes every waiting thread so that each re-checks its interrupt flag.
    /// Lock-free: the callers' flag store comes before the parking words move.
    void wake_consumers() {
        leader_word_.bump_and_wake(1);
        followers_.notify_all();
    }

    /// Refuses further `offer`/`put`/`schedule` (not `requeue`).
    void close() {
        std::lock_guard lock(mutex_); // both locks: a producer holds one of them when it looks
        std::lock_guard stage(stage_mutex_);
        closed_ = true;
        now_.close();
    }

    /// Removes and returns every queued task, due or not, in due order. After
    /// `close()`, also refuses every later `requeue`.
    std::vector<task> drain() {
        std::vector<task> out;
        std::unique_lock lock(mutex_);
        merge_staged(true);
        {
            std::lock_guard stage(stage_mutex_);
            if (closed_) drained_after_close_ = true;
        }
        std::vector<task> due_now = now_.drain();
        now_out_.fetch_add(due_now.size());
        out.reserve(heap_.size() + due_now.size());
        std::sort(heap_.begin(), heap_.end(), [](const key& a, const key& b) { return earlier(a, b); });
        const auto now = clock::now();
        bool fifo_placed = false;
        for (const key& k : heap_) {
            if (!fifo_placed && k.due > now) { // the tasks due now come after those due already
                for (task& t : due_now) out.push_back(std::move(t));
                fifo_placed = true;
            }
            const bool dead = nodes_[k.node].dead;
            task t = release_node(k.node);
            if (!dead) out.push_back(std::move(t));
        }
        if (!fifo_placed)
            for (task& t : due_now) out.push_back(std::move(t));
        committed_.fetch_sub(heap_.size(), std::memory_order_relaxed);
        heap_.clear();
        dead_ = 0;
        heap_changed(lock);
        return out;
    }

    /// Removes and returns the tasks for which `pred(task)` holds: the due-now
    /// ones first, then the heap's. The pool's `purge()` destroys them after
    /// its last use of itself (a task may own the last reference to its pool).
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        std::vector<task> removed = now_.extract_if([&](const task& t) { return pred(t); });
        now_out_.fetch_add(removed.size()); // see "Due order" in doc/scheduling.md: a mark may then be off
        return concatenated(std::move(removed),
                            extract_heap_if([&](const key&, const node& n) { return pred(std::as_const(n.work)); }));
    }

    /// Removes the tasks for which `pred(task)` holds; returns how many.
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return extract_if(pred).size();
    }

    /// Tasks queued, due or not (staged ones included).
    std::size_t size() const {
        std::lock_guard lock(mutex_);
        std::lock_guard stage(stage_mutex_);
        return heap_.size() - dead_ + stage_.size() + now_.size();
    }

    /// Always `std::numeric_limits<std::size_t>::max()`.
    std::size_t capacity() const noexcept { return std::numeric_limits<std::size_t>::max(); }

    // ---- scheduling -------------------------------------------------------

    /// Queues `t` to be taken at `due`. `slot`, if given, is kept up to date
    /// with the task's place for `remove`. `periodic` marks it for the
    /// shutdown policies. False (and `t` untouched) once closed; may throw
    /// `std::bad_alloc`, also leaving `t` untouched. Never waits for the
    /// heap's lock (but, rarely, to grow the heap): it inserts if the lock is
    /// free, and stages the task otherwise.
    bool schedule(task&& t, clock::time_point due, schedule_slot* slot, bool periodic) {
        return add(t, due, slot, periodic, [&] { return !closed_; });
    }

    /// Queues the next run of a periodic task, even after `close()` (the pool
    /// decides whether periodic tasks continue after shutdown), but not once
    /// `drain()` ran after `close()` (`shutdown_now()`: the next run either
    /// got in first and was handed back by the drain, or is refused). False,
    /// and `t` untouched, if refused so or if its future is cancelled: both
    /// checked under the heap's lock or the staging lock, both of which
    /// `remove(slot)` and `drain()` also take, so a `remove` racing with this
    /// either finds the task queued or comes after a cancellation this sees.
    /// May throw `std::bad_alloc`, leaving `t` untouched.
    bool requeue(task&& t, clock::time_point due, schedule_slot& slot) {
        return add(t, due, &slot, true, [&] { return !drained_after_close_ && !t.is_cancelled(); });
    }

    /// Removes the task `slot` belongs to; an empty task if it is not queued.
    task remove(schedule_slot& slot) {
        std::unique_lock lock(mutex_);
        merge_staged(true); // under the staging lock even if nothing seems staged: see requeue
        if (slot.node == schedule_slot::not_queued) return task();
        node& n = nodes_[slot.node];
        task removed = std::move(n.work);
        n.slot = nullptr;
        n.dead = true;
        slot.node = schedule_slot::not_queued;
        ++dead_;
        drop_dead_heads();
        if (dead_ >= 32 && 2 * dead_ > heap_.size()) rebuild([](const key&, const node&) { return false; });
        heap_changed(lock);
        return removed;
    }

    /// Removes what the shutdown policies drop at `shutdown()`: cancelled
    /// tasks; periodic ones unless `continue_periodic_after_shutdown`; delayed
    /// ones not yet due unless `execute_delayed_after_shutdown`. Returns them.
    std::vector<task> on_shutdown() {
        const bool keep_periodic = continue_periodic_after_shutdown();
        const bool keep_delayed = execute_delayed_after_shutdown();
        const auto now = clock::now();
        std::vector<task> dropped = now_.extract_if([](const task& t) { return t.is_cancelled(); }); // due now: kept unless cancelled
        now_out_.fetch_add(dropped.size());
        return concatenated(std::move(dropped), extract_heap_if([&](const key& k, const node& n) {
                                if (n.work.is_cancelled()) return true;
                                return n.periodic ? !keep_periodic : !keep_delayed && k.due > now;
                            }));
    }

    bool remove_on_cancel() const noexcept { return remove_on_cancel_.load(); }
    void set_remove_on_cancel(bool on) noexcept { remove_on_cancel_.store(on); }
    bool continue_periodic_after_shutdown() const noexcept { return continue_periodic_after_shutdown_.load(); }
    void set_continue_periodic_after_shutdown(bool on) noexcept { continue_periodic_after_shutdown_.store(on); }
    bool execute_delayed_after_shutdown() const noexcept { return execute_delayed_after_shutdown_.load(); }
    void set_execute_delayed_after_shutdown(bool on) noexcept { execute_delayed_after_shutdown_.store(on); }

    /// The due time of the head, or `time_point::max()` if empty.
    clock::time_point next_due() const {
        std::lock_guard lock(mutex_);
        std::lock_guard stage(stage_mutex_);
        auto earliest = heap_.empty() ? clock::time_point::max() : heap_.front().due;
        for (const staged& s : stage_) earliest = std::min(earliest, s.due);
        if (now_.size() != 0) earliest = std::min(earliest, clock::now());
        return earliest;
    }

    // ---- observing the waiting ---------------------------------------------

    /// A consumer waits in `take`/`poll_until` now (as the leader, the deputy
    /// or a follower), so a task that falls due will be taken without
    /// waiting for a busy one: an elastic scheduled pool asks this before it
    /// starts one more worker. A snapshot, read without the lock.
    bool has_idle_consumer() const noexcept { return sleepers_.load(std::memory_order_relaxed) != 0; }

    /// Counts of the waits in `take`/`poll_until` since construction (or
    /// since `reset_wait_statistics`), and who waits now.
    struct wait_statistics_type {
        std::uint64_t timed_waits = 0;   ///< waits with a deadline begun (the leader's, the deputy's, or a keep-alive)
        std::uint64_t untimed_waits = 0; ///< waits without one begun
        std::uint64_t wakeups = 0;       ///< waits ended, for any reason
        std::uint64_t idle_wakeups = 0;  ///< wake-ups after which the thread waited again without taking a task
        std::size_t waiting = 0;         ///< threads waiting now
        bool has_leader = false;         ///< one of them waits for the head's due time
    };

    wait_statistics_type wait_statistics() const {
        std::lock_guard lock(mutex_);
        wait_statistics_type s = counts_;
        s.waiting = (leader_ == leader_state::waiting ? 1 : 0) + (deputy_ ? 1 : 0) + followers_waiting_;
        s.has_leader = leader_ == leader_state::waiting;
        return s;
    }

    void reset_wait_statistics() {
        std::lock_guard lock(mutex_);
        counts_ = {};
    }

  private:
    struct node {
        task work;
        schedule_slot* slot = nullptr; // null for plain tasks
        bool periodic = false;
        bool dead = false; // removed: its key is still in the heap
        std::uint64_t mark = 0; // FIFO tasks counted in (now_in_) when it was scheduled: those go first
    };

    // The nodes, in chunks that never move: growing allocates a chunk and
    // moves no task. Ids are dense; size() of them are in use or free.
    class node_slab {
      public:
        node& operator[](std::size_t id) noexcept { return chunks_[id / chunk][id % chunk]; }
        const node& operator[](std::size_t id) const noexcept { return chunks_[id / chunk][id % chunk]; }
        std::size_t size() const noexcept { return size_; }
        // Room for `n` nodes. Strong guarantee.
        void reserve(std::size_t n) {
            const std::size_t chunks = (n + chunk - 1) / chunk;
            if (chunks <= chunks_.size()) return;
            chunks_.reserve(chunks);
            while (chunks_.size() < chunks) chunks_.push_back(std::make_unique<node[]>(chunk)); // capacity reserved
        }
        // A new id. Requires: room reserved.
        std::size_t add() noexcept { return size_++; }

      private:
        static constexpr std::size_t chunk = 1024;
        std::vector<std::unique_ptr<node[]>> chunks_;
        std::size_t size_ = 0;
    };
    struct key {
        clock::time_point due;
        std::uint64_t sequence; // FIFO among equal due times
        std::size_t node;
    };
    struct staged {
        task work;
        clock::time_point due;
        std::uint64_t sequence;
        std::uint64_t mark; // as node::mark, read when staged
        schedule_slot* slot;
        bool periodic;
    };
    static constexpr std::size_t arity = 4;

    enum class leader_state : unsigned char {
        none,    // nobody times the head: the next thread to wait leads
        waiting, // the leader sleeps until the head is due
        busy,    // the leader runs a task it took and will come back to lead
    };

    static std::chrono::nanoseconds validated_slack(std::chrono::nanoseconds slack) {
        if (slack < std::chrono::nanoseconds::zero())
            throw std::invalid_argument("crew::delayed_queue: timer_slack must not be negative");
        return slack;
    }

    // Sets the calling thread's timer slack once (a worker serves one pool).
    void apply_timer_slack() const noexcept {
#if defined(__linux__)
        if (timer_slack_.count() == 0) return;
        thread_local std::chrono::nanoseconds applied{0};
        if (applied == timer_slack_) return;
        if (::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(timer_slack_.count()), 0UL, 0UL, 0UL) == 0)
            applied = timer_slack_;
#endif
    }

    static bool earlier(const key& a, const key& b) noexcept {
        return a.due < b.due || (a.due == b.due && a.sequence < b.sequence);
    }

    // ---- producers: the staging list ---------------------------------------

    // Queues `t` if `admit()` holds, checked under whichever lock it queues
    // under. With the heap's lock free and no consumer waiting for it, the
    // task goes straight into the heap (try_lock: a producer never waits for
    // a consumer, and backs off while one announced itself); otherwise it is
    // appended to the staging list, which the next holder of the heap's lock
    // moves in. Room is claimed first (claim_room), so that neither path, nor
    // the merge on a consumer, allocates; growing is the only time a producer
    // waits for mutex_. Strong guarantee: on a throw or a refusal `t` is
    // untouched.
    template <class Admit>
    bool add(task& t, clock::time_point due, schedule_slot* slot, bool periodic, Admit admit) {
        while (!claim_room()) grow();
        if (lock_wanted_.load(std::memory_order_relaxed) == 0) {
            std::unique_lock lock(mutex_, std::try_to_lock);
            if (lock) {
                if (!admit()) {
                    committed_.fetch_sub(1, std::memory_order_relaxed);
                    return false;
                }
                const std::uint64_t rule = wake_rule_.load(std::memory_order_relaxed); // written under mutex_ only
                (void)merge_staged();
                // The mark, after the sequence number: the FIFO tasks that
                // entered before this call go first (seq_cst: a producer's
                // count, seen by an earlier offer's caller, is seen here).
                const std::uint64_t sequence = next_sequence_.fetch_add(1, std::memory_order_relaxed);
                insert(std::move(t), due, sequence, now_in_.load(), slot, periodic);
                const bool wake_follower = publish_rule_and_settle();
                lock.unlock();
                wake_for(due, rule);
                if (wake_follower) followers_.notify_one();
                return true;
            }
        }
        {
            std::lock_guard lock(stage_mutex_);
            if (!admit()) {
                committed_.fetch_sub(1, std::memory_order_relaxed);
                return false;
            }
            const std::uint64_t sequence = next_sequence_.fetch_add(1, std::memory_order_relaxed);
            stage_.push_back(staged{std::move(t), due, sequence, now_in_.load(), slot, periodic}); // room claimed
            staged_count_.store(stage_.size()); // seq_cst: read by wake_for, and by sleepers' re-check
        }
        wake_for(due, wake_rule_.load()); // seq_cst, after the staging's store: see wake_for
        return true;
    }

    // Claims room for one task in the heap and the staging lists; false if
    // there is none reserved (then grow()).
    bool claim_room() noexcept {
        const std::size_t n = committed_.fetch_add(1, std::memory_order_relaxed) + 1;
        if (n <= reserved_.load(std::memory_order_acquire)) return true;
        committed_.fetch_sub(1, std::memory_order_relaxed);
        return false;
    }

    // Makes room for everything queued, staged and claimed, twice over.
    // Under both locks, so that whoever reads the new reserved_ and then
    // takes either lock finds the room.
    void grow() {
        std::lock_guard lock(mutex_);
        std::lock_guard stage(stage_mutex_);
        const std::size_t want = std::max<std::size_t>(16, 2 * (committed_.load() + 1));
        if (want <= reserved_.load(std::memory_order_relaxed)) return;
        heap_.reserve(want);
        nodes_.reserve(want);
        free_nodes_.reserve(want); // so that freeing a node never allocates
        stage_.reserve(want);
        merging_.reserve(want);
        reserved_.store(want, std::memory_order_release);
    }

    // After queueing a task due at `due`: wakes whoever `rule` names, if the
    // task needs it. A staging producer reads the rule (seq_cst) after its
    // seq_cst store of staged_count_; a sleeper stores the rule, then re-reads
    // staged_count_: one of the two sees the other. A direct insert reads the
    // rule as it was under the heap's lock, before the insert changed it.
    void wake_for(clock::time_point due, std::uint64_t rule) {
        if (due.time_since_epoch().count() < rule_until(rule)) wake_by(rule);
    }

    void wake_by(std::uint64_t rule) {
        if (rule_wakes_leader(rule)) leader_word_.bump_and_wake(1);
        else followers_.notify_one();
    }

    // The heap's lock for a consumer: announced while it waits for it, so
    // that producers back off (add).
    std::unique_lock<std::mutex> lock_as_consumer() {
        std::unique_lock lock(mutex_, std::try_to_lock);
        if (!lock) {
            lock_wanted_.fetch_add(1, std::memory_order_relaxed);
            lock.lock();
            lock_wanted_.fetch_sub(1, std::memory_order_relaxed);
        }
        return lock;
    }

    // ---- the wake rule, read by producers without a lock --------------------

    // A task due before `until` needs a wake-up: of the waiting leader (whose
    // timer is later), or else of one follower. One word, so that a producer
    // reads both at once. `until` is rounded up to even: a task due in the
    // same nanosecond may wake someone needlessly, never the other way.
    static constexpr std::uint64_t wake_leader_bit = 1;
    static std::uint64_t make_rule(clock::rep until, bool wake_leader) noexcept {
        auto u = static_cast<std::uint64_t>(until) ^ (std::uint64_t(1) << 63); // order-preserving
        if ((u & wake_leader_bit) != 0 && u != std::numeric_limits<std::uint64_t>::max()) ++u;
        return (u & ~wake_leader_bit) | (wake_leader ? wake_leader_bit : 0);
    }
    static clock::rep rule_until(std::uint64_t rule) noexcept {
        return static_cast<clock::rep>((rule & ~wake_leader_bit) ^ (std::uint64_t(1) << 63));
    }
    static bool rule_wakes_leader(std::uint64_t rule) noexcept { return (rule & wake_leader_bit) != 0; }
    static constexpr clock::rep always = std::numeric_limits<clock::rep>::max();

    // Requires: mutex_ held. Publishes the wake rule, then moves in whatever
    // was staged meanwhile: its producers may have read the rule before, and
    // so woken the wrong thread or none. Returns true if, by the rule now,
    // those tasks need a follower woken (merge_staged re-arms a waiting
    // leader itself). Every path that changes the roles and does not go on
    // to sleep ends here; one that sleeps re-checks the staging list instead.
    bool publish_rule_and_settle() noexcept {
        bool wake = false;
        for (;;) {
            publish_rule();
            // Tasks due now whose producers read the rule before: one
            // follower looks (it finds them, or they were taken).
            if (pending_now() > 0) wake = true;
            if (staged_count_.load() == 0) return wake; // seq_cst, after the rule's store
            const std::uint64_t rule = wake_rule_.load(std::memory_order_relaxed);
            const clock::time_point earliest = merge_staged();
            if (!rule_wakes_leader(rule) && earliest.time_since_epoch().count() < rule_until(rule)) wake = true;
        }
    }

    // Requires: mutex_ held. Publishes who must be woken for a new task, from
    // the leader's state and the head.
    void publish_rule() noexcept {
        head_due_.store(heap_.empty() ? no_head : heap_.front().due.time_since_epoch().count(),
                        std::memory_order_relaxed);
        std::uint64_t rule;
        if (leader_ == leader_state::waiting) rule = make_rule(leader_until_.time_since_epoch().count(), true);
        else if (leader_ == leader_state::busy && !heap_.empty())
            rule = make_rule(heap_.front().due.time_since_epoch().count(), false); // an earlier head needs a hand
        else rule = make_rule(always, false);
        wake_rule_.store(rule); // seq_cst: see wake_for
    }

    // ---- consumers ---------------------------------------------------------

    // Tasks in the FIFO as producers and consumers have counted them: a
    // moment behind it either way (it may read below zero).
    std::int64_t pending_now() const noexcept {
        const std::uint64_t in = now_in_.load();
        return static_cast<std::int64_t>(in - now_out_.load());
    }

    // A task due now, without the heap's lock, unless the heap's head is due
    // (then the locked path weighs it against the FIFO's head by its mark).
    // No clock read while the heap is empty. `seen_in`: see take_from_fifo.
    bool take_due_now(task& out, std::uint64_t& seen_in) {
        seen_in = now_in_.load();
        if (static_cast<std::int64_t>(seen_in - now_out_.load(std::memory_order_relaxed)) <= 0) return false;
        const clock::rep head = head_due_.load(std::memory_order_relaxed);
        if (head != no_head && head <= clock::now().time_since_epoch().count()) return false;
        return take_from_fifo(out, seen_in);
    }

    static constexpr std::uint64_t no_limit = std::numeric_limits<std::uint64_t>::max();

    // Takes the FIFO's next task if one is counted in and it is among the
    // first `limit` ever to enter (a due heap head's mark: those entered
    // before the head was scheduled). The claim (now_out_) comes before the
    // poll, so that a consumer weighing a mark counts every take under way;
    // a poll that finds nothing to take (an older cell claimed by a producer
    // but not yet filled) gives the claim back. `seen_in` is set to the
    // entries counted before the look: a consumer that found nothing sleeps
    // only while that count stands, as each producer counts its task after
    // publishing it and then wakes by the rule (so it does not spin while a
    // cell is unpublished, nor miss the task once it is).
    bool take_from_fifo(task& out, std::uint64_t& seen_in, std::uint64_t limit = no_limit) {
        seen_in = now_in_.load();
        const std::uint64_t bound = std::min(seen_in, limit);
        if (limit == no_limit) {
            if (now_out_.load(std::memory_order_relaxed) >= bound) return false;
            if (now_out_.fetch_add(1) >= bound) {
                now_out_.fetch_sub(1, std::memory_order_relaxed);
                return false;
            }
        } else {
            std::uint64_t claimed = now_out_.load();
            do {
                if (claimed >= bound) return false;
            } while (!now_out_.compare_exchange_weak(claimed, claimed + 1));
        }
        if (now_.poll(out)) return true;
        now_out_.fetch_sub(1, std::memory_order_relaxed);
        return false;
    }

    // Requires: lock holds mutex_, staged tasks merged; releases it if it
    // takes a task. The locked take: the FIFO's next task if the heap's head
    // is not due, or entered the FIFO before the head was scheduled (its
    // mark); else the due head. A FIFO task that cannot be taken now (an
    // older cell unpublished) lets the due head go first.
    bool take_locked(std::unique_lock<std::mutex>& lock, task& out, clock::time_point now, std::uint64_t& seen_in,
                     bool may_lead) {
        const bool head_due = !heap_.empty() && heap_.front().due <= now;
        if (take_from_fifo(out, seen_in, head_due ? nodes_[heap_.front().node].mark : no_limit)) {
            after_take(lock, now, now, may_lead);
            return true;
        }
        if (!head_due) return false;
        const auto due = heap_.front().due;
        out = pop_head();
        after_take(lock, due, now, may_lead);
        return true;
    }

    // Requires: mutex_ held. Moves the staged tasks into the heap (room is
    // reserved: no allocation, no throw), and wakes a waiting leader whose
    // timer they beat; returns the earliest due time among them
    // (time_point::max() if none).
    clock::time_point merge_staged(bool always_lock = false) noexcept {
        clock::time_point earliest = clock::time_point::max();
        if (!always_lock && staged_count_.load() == 0) return earliest;
        {
            std::lock_guard stage(stage_mutex_);
            std::swap(stage_, merging_);
            staged_count_.store(0);
        }
        for (staged& s : merging_) {
            earliest = std::min(earliest, s.due);
            insert(std::move(s.work), s.due, s.sequence, s.mark, s.slot, s.periodic);
        }
        merging_.clear();
        // A new head before the waiting leader's timer: it re-arms. (Rare: a
        // syscall under the lock costs less than a late timer.)
        if (leader_ == leader_state::waiting && earliest < leader_until_) leader_word_.bump_and_wake(1);
        return earliest;
    }

    // Requires: mutex_ held, room claimed.
    void insert(task&& t, clock::time_point due, std::uint64_t sequence, std::uint64_t mark, schedule_slot* slot,
                bool periodic) noexcept {
        const std::size_t id = acquire_node();
        node& n = nodes_[id];
        n.work = std::move(t);
        n.slot = slot;
        n.periodic = periodic;
        n.dead = false;
        n.mark = mark;
        if (slot) slot->node = id;
        heap_.push_back({due, sequence, id});
        sift_up(heap_.size() - 1);
    }

    std::size_t acquire_node() noexcept {
        if (!free_nodes_.empty()) {
            const std::size_t id = free_nodes_.back();
            free_nodes_.pop_back();
            return id;
        }
        return nodes_.add(); // room reserved
    }

    // Frees a node (already out of the heap) and returns its task.
    task release_node(std::size_t id) noexcept {
        node& n = nodes_[id];
        if (n.slot) n.slot->node = schedule_slot::not_queued;
        n.slot = nullptr;
        free_nodes_.push_back(id); // capacity reserved
        return std::move(n.work);
    }

    // Takes the head (live: see drop_dead_heads) out of the heap.
    task pop_head() noexcept {
        task t = pop_key();
        drop_dead_heads();
        return t;
    }

    task pop_key() noexcept {
        const std::size_t id = heap_.front().node;
        const key last = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) {
            heap_.front() = last;
            sift_down(0);
        }
        committed_.fetch_sub(1, std::memory_order_relaxed);
        return release_node(id);
    }

    // Requires: mutex_ held. Keeps the invariant that the head, if any, is a
    // live task: the heap is empty exactly when no task is queued in it.
    void drop_dead_heads() noexcept {
        while (!heap_.empty() && nodes_[heap_.front().node].dead) {
            (void)pop_key();
            --dead_;
        }
    }

    void sift_up(std::size_t index) noexcept {
        const key moving = heap_[index];
        while (index > 0) {
            const std::size_t parent = (index - 1) / arity;
            if (!earlier(moving, heap_[parent])) break;
            heap_[index] = heap_[parent];
            index = parent;
        }
        heap_[index] = moving;
    }

    void sift_down(std::size_t index) noexcept {
        const key moving = heap_[index];
        const std::size_t n = heap_.size();
        for (;;) {
            const std::size_t first = arity * index + 1;
            if (first >= n) break;
            std::size_t best = first;
            const std::size_t end = std::min(first + arity, n);
            for (std::size_t c = first + 1; c < end; ++c)
                if (earlier(heap_[c], heap_[best])) best = c;
            if (!earlier(heap_[best], moving)) break;
            heap_[index] = heap_[best];
            index = best;
        }
        heap_[index] = moving;
    }

    // `first`, then `second`, in one vector. May throw std::bad_alloc (the
    // callers' tasks then die with the vectors, as on any failure there).
    static std::vector<task> concatenated(std::vector<task> first, std::vector<task> second) {
        if (first.empty()) return second;
        first.reserve(first.size() + second.size());
        for (task& t : second) first.push_back(std::move(t));
        return first;
    }

    // Removes every live task for which pred(key, node) holds, and every
    // removed task's key; the tasks are returned so that they die outside the
    // lock.
    template <class Pred>
    std::vector<task> extract_heap_if(Pred pred) {
        std::vector<task> removed;
        std::unique_lock lock(mutex_);
        merge_staged(true); // a requeue racing a shutdown policy's change is either seen or sees it
        removed.reserve(heap_.size() - dead_);
        rebuild([&](const key& k, const node& n) {
            if (!pred(k, n)) return false;
            removed.push_back(std::move(nodes_[k.node].work)); // capacity reserved
            return true;
        });
        if (removed.empty()) return removed;
        heap_changed(lock);
        return removed;
    }

    // Requires: mutex_ held. Drops the removed tasks' keys and the live tasks
    // for which pred(key, node) holds (pred moves out what it keeps), then
    // restores the heap in O(n).
    template <class Pred>
    void rebuild(Pred pred) {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < heap_.size(); ++i) {
            const key k = heap_[i];
            const node& n = nodes_[k.node];
            if (n.dead || pred(k, n)) (void)release_node(k.node);
            else heap_[kept++] = k;
        }
        dead_ = 0;
        committed_.fetch_sub(heap_.size() - kept, std::memory_order_relaxed);
        heap_.resize(kept);
        for (std::size_t i = heap_.size() / arity + 1; i-- > 0;)
            if (i < heap_.size()) sift_down(i);
    }

    // Requires: lock holds mutex_; releases it. The heap lost tasks outside a
    // take (remove, drain, purge): a waiting leader re-arms for the new head;
    // an emptied heap needs no leader.
    void heap_changed(std::unique_lock<std::mutex>& lock) {
        const bool rearm = leader_ == leader_state::waiting;
        if (heap_.empty() && leader_ == leader_state::busy) release_leadership();
        const bool wake = publish_rule_and_settle();
        lock.unlock();
        if (rearm) leader_word_.bump_and_wake(1);
        if (wake) followers_.notify_one();
    }

    // Requires: lock holds mutex_; releases it. The caller just took a task
    // due at `due` (`may_lead`: from a wait, so it will come back; poll's
    // caller will not). The leader (or, with nobody leading, the taker) keeps
    // or takes the leadership while it runs the task; a taker that found its
    // task left waiting past the grace period, the leader busy, takes the
    // leadership over. A follower is woken if another task is due already,
    // or to become the deputy of a busy leader.
    void after_take(std::unique_lock<std::mutex>& lock, clock::time_point due, clock::time_point now, bool may_lead) {
        const auto me = std::this_thread::get_id();
        const bool leads = leader_id_ == me;
        if (heap_.empty()) {
            if (leads || leader_ != leader_state::waiting) release_leadership();
        } else if (may_lead && (leads || leader_ == leader_state::none ||
                                (leader_ == leader_state::busy && detail::saturating_deadline(leader_grace, due) <= now))) {
            leader_ = leader_state::busy;
            leader_id_ = me;
        }
        bool wake = publish_rule_and_settle();
        if (!heap_.empty()) {
            const bool more_due = heap_.front().due <= now;
            const bool needs_deputy = leader_ == leader_state::busy && !deputy_;
            wake = wake || more_due || needs_deputy || leader_ == leader_state::none;
        }
        lock.unlock();
        if (wake) followers_.notify_one();
    }

    // Requires: mutex_ held.
    void release_leadership() noexcept {
        leader_ = leader_state::none;
        leader_id_ = std::thread::id();
    }

    friend detail::consumer_waits<delayed_queue>;

    // How the caller waits, chosen under mutex_.
    enum class role : unsigned char { lead, deputise, follow };

    // wait_for_task's rule (a task wins, then the interrupt, then the
    // deadline) with the leadership above. Under mutex_, except the sleep.
    wait_status wait_for(task& out, const interrupt_flag& interrupted, clock::time_point deadline) {
        const auto me = std::this_thread::get_id();
        const bool timed = deadline != clock::time_point::max();
        std::uint64_t seen_in = 0; // FIFO entries counted at the last look
        if (take_due_now(out, seen_in)) return wait_status::taken;
        bool woke = false; // the last sleep ended: a next sleep makes it an idle wake-up
        std::unique_lock lock = lock_as_consumer();
        for (;;) {
            merge_staged();
            const auto now = clock::now();
            if (take_locked(lock, out, now, seen_in, true)) return wait_status::taken;
            const bool stop = interrupted.load(std::memory_order_seq_cst);
            if (stop || (timed && now >= deadline)) {
                leave(lock, me);
                return stop ? wait_status::interrupted : wait_status::timed_out;
            }
            // Choose a role. The leader (or anyone, when nobody leads) waits
            // for the head; with a leader busy elsewhere, one deputy waits for
            // the head plus the grace; everyone else waits untimed.
            role r = role::follow;
            auto until = deadline;
            if (!heap_.empty()) {
                const auto head = heap_.front().due;
                if (leader_id_ == me || leader_ == leader_state::none) {
                    r = role::lead;
                    until = std::min(head, deadline);
                } else if (!deputy_) {
                    r = role::deputise;
                    until = std::min(detail::saturating_deadline(leader_grace, head), deadline);
                }
            } else if (leader_id_ == me) {
                release_leadership();
            }
            if (woke) ++counts_.idle_wakeups;
            woke = sleep(lock, r, until, interrupted, me, seen_in);
        }
    }

    // Requires: lock holds mutex_; holds it again on return. Takes role `r`,
    // publishes the wake rule, re-checks the staging list and the interrupt,
    // and sleeps until `until` unless either changed. True if it slept.
    bool sleep(std::unique_lock<std::mutex>& lock, role r, clock::time_point until, const interrupt_flag& interrupted,
               std::thread::id me, std::uint64_t seen_in) {
        const bool timed = until != clock::time_point::max();
        std::uint32_t seen = 0;
        typename decltype(followers_)::key key{};
        switch (r) {
        case role::lead:
            leader_ = leader_state::waiting;
            leader_id_ = me;
            leader_until_ = until;
            break;
        case role::deputise: deputy_ = true; break;
        case role::follow: ++followers_waiting_; break;
        }
        sleepers_.fetch_add(1, std::memory_order_relaxed);
        publish_rule();
        if (r == role::lead) {
            seen = leader_word_.load();
            apply_timer_slack();
        } else {
            key = followers_.prepare_wait();
        }
        // A FIFO task counted in since the last look: look again. Not "the
        // count is above zero": a task counted but stuck behind a cell whose
        // producer has not published it yet cannot be taken, and looking
        // again until then would spin. That producer counts its task after
        // publishing it, then reads the rule stored above and wakes us.
        const bool recheck =
            staged_count_.load() != 0 || now_in_.load() != seen_in || interrupted.load(std::memory_order_seq_cst);
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
        switch (r) {
        case role::lead:
            if (leader_id_ == me) leader_ = leader_state::none; // still ours: it leads again or takes the head
            break;
        case role::deputise: deputy_ = false; break;
        case role::follow: --followers_waiting_; break;
        }
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        return !recheck;
    }

    // Requires: lock holds mutex_; releases it. A consumer leaves without a
    // task (interrupted, timed out): it gives up any leadership, and with
    // tasks queued someone else must lead.
    void leave(std::unique_lock<std::mutex>& lock, std::thread::id me) {
        if (leader_id_ == me) release_leadership();
        const bool wake = publish_rule_and_settle() || (!heap_.empty() && leader_ == leader_state::none);
        lock.unlock();
        if (wake) followers_.notify_one();
    }

    // The heap and the roles: consumers' lock. Order: mutex_, then stage_mutex_.
    mutable std::mutex mutex_;
    std::vector<key> heap_;
    node_slab nodes_;
    std::vector<std::size_t> free_nodes_;
    std::vector<staged> merging_; // the staging list's spare, swapped in by merge_staged
    leader_state leader_ = leader_state::none;
    std::thread::id leader_id_;                // the waiting or busy leader
    clock::time_point leader_until_{};         // the waiting leader's timer
    bool deputy_ = false;                      // a follower waits timed for the head plus the grace
    std::size_t followers_waiting_ = 0;
    std::atomic<std::size_t> sleepers_{0};     // consumers in sleep(); written under mutex_, read without it
    std::size_t dead_ = 0; // keys in heap_ of removed tasks (never the head)
    wait_statistics_type counts_;

    // The staging list: producers' lock.
    mutable std::mutex stage_mutex_;
    std::vector<staged> stage_;

    bool closed_ = false;
    bool drained_after_close_ = false; // requeue refuses: shutdown_now() handed the queue back

    // Read without a lock.
    std::atomic<std::size_t> committed_{0};      // tasks in heap_ (removed ones' keys too), staged, or claimed
    std::atomic<std::size_t> reserved_{0};       // room in heap_, nodes_, free_nodes_, stage_, merging_
    std::atomic<std::uint64_t> next_sequence_{0}; // FIFO among equal due times
    std::atomic<std::size_t> staged_count_{0}; // stage_.size(): "merge me"
    std::atomic<std::size_t> lock_wanted_{0};  // consumers waiting for mutex_: producers stage, not insert
    std::atomic<std::uint64_t> wake_rule_{make_rule(always, false)};
    static constexpr clock::rep no_head = std::numeric_limits<clock::rep>::max();
    std::atomic<clock::rep> head_due_{no_head}; // the heap's head due time, published with the rule

    // Tasks due now (offer, put): a lock-free FIFO beside the heap, and two
    // counts: the tasks that entered it (counted by producers after the
    // push; then they read the rule; sleepers publish the rule and then read
    // this), and the takes claimed from it plus the tasks removed (counted by
    // consumers before the poll). Their difference is what it holds, a moment
    // behind either way; the first, read when a heap task is scheduled, is
    // that task's mark. One line, as the single count was: a producer
    // writes it once per task, a consumer once per take.
    detail::spill_queue now_{std::numeric_limits<std::size_t>::max()};
    std::atomic<std::uint64_t> now_in_{0};
    std::atomic<std::uint64_t> now_out_{0};
    detail::default_parking_word leader_word_; // the leader sleeps here
    detail::event_count<> followers_;          // the deputy and the followers sleep here

    const std::chrono::nanoseconds timer_slack_;
    std::atomic<bool> remove_on_cancel_;
    std::atomic<bool> continue_periodic_after_shutdown_;
    std::atomic<bool> execute_delayed_after_shutdown_;
};

static_assert(queue_policy<delayed_queue>);

} // namespace crew

#endif
