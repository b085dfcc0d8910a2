#ifndef CREW_POLICIES_DELAYED_QUEUE_HPP
#define CREW_POLICIES_DELAYED_QUEUE_HPP

/// \file
/// `crew::delayed_queue`: the QueuePolicy of `scheduled_pool`, a min-heap on
/// due time with leader-follower waiting. Java: `ScheduledThreadPoolExecutor`'s
/// `DelayedWorkQueue`.

#include <crew/concepts.hpp>
#include <crew/detail/queue/consumer_wait.hpp>
#include <crew/detail/queue/delay_heap.hpp>
#include <crew/detail/queue/due_now_fifo.hpp>
#include <crew/detail/sync/event_count.hpp>
#include <crew/detail/sync/lock_contract.hpp>
#include <crew/detail/sync/parking_word.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/detail/timer/timer_slack.hpp>
#include <crew/detail/queue/wait_roles.hpp>
#include <crew/detail/queue/wake_rule.hpp>
#include <crew/pool_options.hpp>
#include <crew/schedule_slot.hpp>
#include <crew/task.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace crew {

/// Tasks ordered by due time (`std::chrono::steady_clock`), earliest first,
/// FIFO among equal due times; a task is taken only once it is due.
///
/// \b Heap: a 4-ary min-heap of small keys over a slab of nodes holding the
/// tasks (`detail/queue/delay_heap.hpp`); removing a task (a cancelled future's)
/// empties its node at once and leaves its key for later. Unbounded: it grows
/// as needed and never blocks a producer. `offer` and `put` queue a task due
/// now.
///
/// \b Tasks due now (`offer`, `put`: a pool's `execute`) skip the heap: they
/// go to a lock-free FIFO beside it (`detail/queue/due_now_fifo.hpp`), taken
/// without the heap's lock or a clock read, so `execute` on a scheduled pool
/// costs about what it costs on a `fixed_pool`. Due order holds across the
/// two: a heap task is marked with how many tasks had entered the FIFO when
/// it was scheduled, and a due heap task goes after exactly those. So
/// `execute(a)` then `schedule(0s, b)` (or a pool's `submit(b)`) runs `a`
/// first, and the reverse `b` first, as in Java; where this differs from
/// Java's pure due-time order, and the races it leaves, see doc/scheduling.md
/// ("Due order between execute and schedule").
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
/// \b Java: `DelayedWorkQueue.take()` is `take` (from `consumer_waits`):
/// its loop is `wait_for`, its `finishPoll` is `finish_poll`, its awaits are
/// `sleep`, and its `finally` (signal a follower) is `after_take_and_unlock`
/// or `leave_and_unlock`; `poll(timeout)` is `poll_until`. Java's `offer`
/// (insert at the due time, signal if it is the new head) is `schedule` here
/// (`add`, then `wake_for`); crew's `offer` is the QueuePolicy's "queue a task
/// due now", which Java reaches through `schedule(command, 0, NANOSECONDS)`.
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
        : timer_slack_(detail::validated_timer_slack(options.timer_slack)), remove_on_cancel_(options.remove_on_cancel),
          continue_periodic_after_shutdown_(options.continue_periodic_after_shutdown),
          execute_delayed_after_shutdown_(options.execute_delayed_after_shutdown) {}

    delayed_queue(const delayed_queue&) = delete;
    delayed_queue& operator=(const delayed_queue&) = delete;

    // ---- the QueuePolicy surface ------------------------------------------

    /// Queues `t` due now (in the FIFO beside the heap: see the class
    /// comment); false (and `t` untouched) once closed. May throw
    /// `std::bad_alloc`, leaving `t` untouched.
    bool offer(task&& t) {
        if (!due_now_.offer(std::move(t))) return false; // counted in (seq_cst), then the rule is read
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
        merge_staged(lock);
        const auto now = clock::now();
        const auto due = finish_poll(lock, out, now, seen_in);
        if (!due) return false;
        after_take_and_unlock(lock, *due, now, false);
        return true;
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
        due_now_.close();
    }

    /// Removes and returns every queued task, due or not, in due order. After
    /// `close()`, also refuses every later `requeue`.
    std::vector<task> drain() {
        std::vector<task> out;
        std::unique_lock lock(mutex_);
        merge_staged(lock, true);
        {
            std::lock_guard stage(stage_mutex_);
            if (closed_) drained_after_close_ = true;
        }
        std::vector<task> fifo = due_now_.drain();
        const std::size_t keys = heap_.key_count();
        out.reserve(keys + fifo.size());
        const auto now = clock::now();
        bool fifo_placed = false;
        heap_.drain([&](clock::time_point due, task&& t) {
            if (!fifo_placed && due > now) { // the tasks due now come after those due already
                for (task& f : fifo) out.push_back(std::move(f));
                fifo_placed = true;
            }
            out.push_back(std::move(t));
        });
        if (!fifo_placed)
            for (task& f : fifo) out.push_back(std::move(f));
        committed_.fetch_sub(keys, std::memory_order_relaxed);
        heap_changed_and_unlock(lock);
        return out;
    }

    /// Removes and returns the tasks for which `pred(task)` holds: the due-now
    /// ones first, then the heap's. The pool's `purge()` destroys them after
    /// its last use of itself (a task may own the last reference to its pool).
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        // Counted out: see "Due order" in doc/scheduling.md (a mark may then be off).
        std::vector<task> removed = due_now_.extract_if([&](const task& t) { return pred(t); });
        using node = detail::delay_heap::node;
        auto heap_tasks = extract_heap_if([&](clock::time_point, const node& n) { return pred(n.work); });
        return concatenated(std::move(removed), std::move(heap_tasks));
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
        return heap_.size() + stage_.size() + due_now_.size();
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
        merge_staged(lock, true); // under the staging lock even if nothing seems staged: see requeue
        if (slot.node == schedule_slot::not_queued) return task();
        const std::size_t keys = heap_.key_count();
        task removed = heap_.remove(slot);
        committed_.fetch_sub(keys - heap_.key_count(), std::memory_order_relaxed);
        heap_changed_and_unlock(lock);
        return removed;
    }

    /// Removes what the shutdown policies drop at `shutdown()`: cancelled
    /// tasks; periodic ones unless `continue_periodic_after_shutdown`; delayed
    /// ones not yet due unless `execute_delayed_after_shutdown`. Returns them.
    std::vector<task> on_shutdown() {
        const bool keep_periodic = continue_periodic_after_shutdown();
        const bool keep_delayed = execute_delayed_after_shutdown();
        const auto now = clock::now();
        // Due now: kept unless cancelled.
        std::vector<task> dropped = due_now_.extract_if([](const task& t) { return t.is_cancelled(); });
        return concatenated(std::move(dropped),
                            extract_heap_if([&](clock::time_point due, const detail::delay_heap::node& n) {
                                if (n.work.is_cancelled()) return true;
                                return n.periodic ? !keep_periodic : !keep_delayed && due > now;
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
        auto earliest = heap_.empty() ? clock::time_point::max() : heap_.head_due();
        for (const staged& s : stage_) earliest = std::min(earliest, s.due);
        if (due_now_.size() != 0) earliest = std::min(earliest, clock::now());
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
        s.waiting = roles_.waiting();
        s.has_leader = roles_.leader_waiting();
        return s;
    }

    void reset_wait_statistics() {
        std::lock_guard lock(mutex_);
        counts_ = {};
    }

  private:
    using staged = detail::delay_heap::entry; // its mark read when staged
    using role = detail::wait_roles::role;

    // ---- producers: the staging list ---------------------------------------

    // Takes mutex_ (only if free) or stage_mutex_; mutex_ too to grow. Queues
    // `t` if `admit()` holds, checked under whichever lock it queues under.
    // With the heap's lock free and no consumer waiting for it, the task goes
    // straight into the heap (try_lock: a producer never waits for a
    // consumer, and backs off while one announced itself); otherwise it is
    // appended to the staging list, which the next holder of the heap's lock
    // moves in. Room is claimed first (claim_room), so that neither path, nor
    // the merge on a consumer, allocates. Strong guarantee: on a throw or a
    // refusal `t` is untouched.
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
                (void)merge_staged(lock);
                // The mark, after the sequence number: the FIFO tasks that
                // entered before this call go first (seq_cst: a producer's
                // count, seen by an earlier offer's caller, is seen here).
                const std::uint64_t sequence = next_sequence_.fetch_add(1, std::memory_order_relaxed);
                heap_.insert({std::move(t), due, sequence, due_now_.entered(), slot, periodic}); // room claimed
                const bool wake_follower = publish_rule_and_settle(lock);
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
            stage_.push_back(staged{std::move(t), due, sequence, due_now_.entered(), slot, periodic}); // room claimed
            staged_count_.store(stage_.size()); // seq_cst: read by wake_for, and by sleepers' re-check
        }
        wake_for(due, wake_rule_.load()); // seq_cst, after the staging's store: see wake_for
        return true;
    }

    // Lock-free. Claims room for one task in the heap and the staging lists;
    // false if there is none reserved (then grow()).
    bool claim_room() noexcept {
        const std::size_t n = committed_.fetch_add(1, std::memory_order_relaxed) + 1;
        if (n <= reserved_.load(std::memory_order_acquire)) return true;
        committed_.fetch_sub(1, std::memory_order_relaxed);
        return false;
    }

    // Takes mutex_ and stage_mutex_, so that whoever reads the new reserved_
    // and then takes either lock finds the room. Makes room for everything
    // queued, staged and claimed, twice over.
    void grow() {
        std::lock_guard lock(mutex_);
        std::lock_guard stage(stage_mutex_);
        const std::size_t want = std::max<std::size_t>(16, 2 * (committed_.load() + 1));
        if (want <= reserved_.load(std::memory_order_relaxed)) return;
        heap_.reserve(want);
        stage_.reserve(want);
        merging_.reserve(want);
        reserved_.store(want, std::memory_order_release);
    }

    // Lock-free. After queueing a task due at `due`: wakes whoever `rule`
    // names, if the task needs it. A staging producer reads the rule
    // (seq_cst) after its seq_cst store of staged_count_; a sleeper stores
    // the rule, then re-reads staged_count_: one of the two sees the other. A
    // direct insert reads the rule as it was under the heap's lock, before
    // the insert changed it.
    void wake_for(clock::time_point due, std::uint64_t rule) {
        if (detail::wake_rule::needs_wake(rule, due)) wake_by(rule);
    }

    void wake_by(std::uint64_t rule) {
        if (detail::wake_rule::wakes_leader(rule)) leader_word_.bump_and_wake(1);
        else followers_.notify_one();
    }

    // Takes mutex_ for a consumer: announced while it waits for it, so that
    // producers back off (add).
    std::unique_lock<std::mutex> lock_as_consumer() {
        std::unique_lock lock(mutex_, std::try_to_lock);
        if (!lock) {
            lock_wanted_.fetch_add(1, std::memory_order_relaxed);
            lock.lock();
            lock_wanted_.fetch_sub(1, std::memory_order_relaxed);
        }
        return lock;
    }

    // ---- the wake rule (detail/queue/wake_rule.hpp), read by producers without a lock:
    // published by the waiting (detail/queue/delayed_queue_waiting.hpp)

    bool publish_rule_and_settle(const std::unique_lock<std::mutex>& held) noexcept;
    void publish_rule(const std::unique_lock<std::mutex>& held) noexcept;

    // ---- consumers: Java's DelayedWorkQueue.take() -------------------------

    // Lock-free. A task due now, unless the heap's head is due (then the
    // locked path weighs it against the FIFO's head by its mark). No clock
    // read while the heap is empty. `seen_in`: see due_now_fifo::take.
    bool take_due_now(task& out, std::uint64_t& seen_in) {
        if (!due_now_.any_counted(seen_in)) return false;
        const clock::rep head = head_due_.load(std::memory_order_relaxed);
        if (head != no_head && head <= clock::now().time_since_epoch().count()) return false;
        return due_now_.take(out, seen_in);
    }

    // Java's finishPoll, with take()'s due check. Requires: staged tasks
    // merged. The FIFO's next task if the heap's head is not due, or entered
    // the FIFO before the head was scheduled (its mark); else the due head. A
    // FIFO task that cannot be taken now (an older cell unpublished) lets the
    // due head go first. Returns the due time of the task taken (`now` for a
    // FIFO task), to hand to after_take_and_unlock; nullopt if none.
    std::optional<clock::time_point> finish_poll(const std::unique_lock<std::mutex>& held, task& out,
                                                 clock::time_point now, std::uint64_t& seen_in) {
        detail::assert_held(held, mutex_);
        const bool head_due = !heap_.empty() && heap_.head_due() <= now;
        if (due_now_.take(out, seen_in, head_due ? heap_.head_mark() : detail::due_now_fifo::no_limit)) return now;
        if (!head_due) return std::nullopt;
        const auto due = heap_.head_due();
        const std::size_t keys = heap_.key_count();
        out = heap_.pop_head();
        committed_.fetch_sub(keys - heap_.key_count(), std::memory_order_relaxed);
        return due;
    }

    // Moves the staged tasks into the heap (room is reserved: no allocation,
    // no throw), and wakes a waiting leader whose timer they beat; returns
    // the earliest due time among them (time_point::max() if none).
    clock::time_point merge_staged(const std::unique_lock<std::mutex>& held, bool always_lock = false) noexcept {
        detail::assert_held(held, mutex_);
        clock::time_point earliest = clock::time_point::max();
        if (!always_lock && staged_count_.load() == 0) return earliest;
        {
            std::lock_guard stage(stage_mutex_);
            std::swap(stage_, merging_);
            staged_count_.store(0);
        }
        for (staged& s : merging_) {
            earliest = std::min(earliest, s.due);
            heap_.insert(std::move(s));
        }
        merging_.clear();
        // A new head before the waiting leader's timer: it re-arms. (Rare: a
        // syscall under the lock costs less than a late timer.)
        if (roles_.leader_waits_past(earliest)) leader_word_.bump_and_wake(1);
        return earliest;
    }

    // `first`, then `second`, in one vector. May throw std::bad_alloc (the
    // callers' tasks then die with the vectors, as on any failure there).
    static std::vector<task> concatenated(std::vector<task> first, std::vector<task> second) {
        if (first.empty()) return second;
        first.reserve(first.size() + second.size());
        for (task& t : second) first.push_back(std::move(t));
        return first;
    }

    // Takes mutex_. Removes every live task for which pred(due, node) holds,
    // and every removed task's key; the tasks are returned so that they die
    // outside the lock.
    template <class Pred>
    std::vector<task> extract_heap_if(Pred pred) {
        std::vector<task> removed;
        std::unique_lock lock(mutex_);
        merge_staged(lock, true); // a requeue racing a shutdown policy's change is either seen or sees it
        removed.reserve(heap_.size());
        const std::size_t keys = heap_.key_count();
        heap_.extract_if(pred, removed);
        committed_.fetch_sub(keys - heap_.key_count(), std::memory_order_relaxed);
        if (removed.empty()) return removed;
        heap_changed_and_unlock(lock);
        return removed;
    }

    // The heap lost tasks outside a take (remove, drain, purge): a waiting
    // leader re-arms for the new head; an emptied heap needs no leader.
    void heap_changed_and_unlock(std::unique_lock<std::mutex>& lock) {
        detail::assert_held(lock, mutex_);
        const bool rearm = roles_.leader_waiting();
        if (heap_.empty() && roles_.leader_busy()) roles_.release();
        const bool wake = publish_rule_and_settle(lock);
        lock.unlock();
        if (rearm) leader_word_.bump_and_wake(1);
        if (wake) followers_.notify_one();
    }

    friend detail::consumer_waits<delayed_queue>;

    // ---- the waiting: the end of a take, Java's take() loop, its await
    // (detail/queue/delayed_queue_waiting.hpp)

    void after_take_and_unlock(std::unique_lock<std::mutex>& lock, clock::time_point due, clock::time_point now,
                               bool may_lead);
    wait_status wait_for(task& out, const interrupt_flag& interrupted, clock::time_point deadline);
    bool sleep(std::unique_lock<std::mutex>& lock, role r, clock::time_point until, const interrupt_flag& interrupted,
               std::thread::id me, std::uint64_t seen_in);
    void leave_and_unlock(std::unique_lock<std::mutex>& lock, std::thread::id me);

    // The heap and the roles: consumers' lock. Order: mutex_, then stage_mutex_.
    mutable std::mutex mutex_;
    detail::delay_heap heap_;
    std::vector<staged> merging_; // the staging list's spare, swapped in by merge_staged
    detail::wait_roles roles_;
    std::atomic<std::size_t> sleepers_{0};     // consumers in sleep(); written under mutex_, read without it
    wait_statistics_type counts_;

    // The staging list: producers' lock.
    mutable std::mutex stage_mutex_;
    std::vector<staged> stage_;

    bool closed_ = false;
    bool drained_after_close_ = false; // requeue refuses: shutdown_now() handed the queue back

    // Read without a lock.
    std::atomic<std::size_t> committed_{0};      // keys in heap_ (removed tasks' too), staged, or claimed
    std::atomic<std::size_t> reserved_{0};       // room in heap_, stage_, merging_
    std::atomic<std::uint64_t> next_sequence_{0}; // FIFO among equal due times
    std::atomic<std::size_t> staged_count_{0}; // stage_.size(): "merge me"
    std::atomic<std::size_t> lock_wanted_{0};  // consumers waiting for mutex_: producers stage, not insert
    std::atomic<std::uint64_t> wake_rule_{detail::wake_rule::make(detail::wake_rule::always, false)};
    static constexpr clock::rep no_head = std::numeric_limits<clock::rep>::max();
    std::atomic<clock::rep> head_due_{no_head}; // the heap's head due time, published with the rule

    // Tasks due now (offer, put), beside the heap. [[no_unique_address]]: the
    // leader's word below may share the line of its counts.
    [[no_unique_address]] detail::due_now_fifo due_now_;
    detail::default_parking_word leader_word_; // the leader sleeps here
    detail::event_count<> followers_;          // the deputy and the followers sleep here

    const std::chrono::nanoseconds timer_slack_;
    std::atomic<bool> remove_on_cancel_;
    std::atomic<bool> continue_periodic_after_shutdown_;
    std::atomic<bool> execute_delayed_after_shutdown_;
};

static_assert(queue_policy<delayed_queue>);

} // namespace crew

#include <crew/detail/queue/delayed_queue_waiting.hpp>

#endif
