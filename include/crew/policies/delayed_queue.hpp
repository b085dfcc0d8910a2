#ifndef CREW_POLICIES_DELAYED_QUEUE_HPP
#define CREW_POLICIES_DELAYED_QUEUE_HPP

/// \file
/// `crew::delayed_queue`: the QueuePolicy of `scheduled_pool`, a min-heap on
/// due time with leader-follower waiting. Java: `ScheduledThreadPoolExecutor`'s
/// `DelayedWorkQueue`.

#include <crew/concepts.hpp>
#include <crew/detail/consumer_wait.hpp>
#include <crew/detail/schedule.hpp>
#include <crew/detail/time.hpp>
#include <crew/pool_options.hpp>
#include <crew/schedule_slot.hpp>
#include <crew/task.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace crew {

/// Tasks ordered by due time (`std::chrono::steady_clock`), earliest first,
/// FIFO among equal due times; a task is taken only once it is due.
///
/// \b Heap: a binary min-heap of small keys (due time, sequence number, node)
/// over a slab of nodes holding the tasks; each node knows its heap index, so
/// a cancelled task is removed in O(log n). Unbounded: it grows as needed and
/// never blocks a producer. `offer` and `put` queue a task due now.
///
/// \b Leader-follower waiting: at most one waiting thread, the leader, waits
/// timed for the head's due time; the others wait untimed. The leader that
/// takes the head wakes one follower, if tasks remain, to lead next; a new
/// earlier head wakes only the leader. So an idle pool with a task due later
/// has one timer armed, not one per thread. `wait_statistics()` counts the
/// waits and wake-ups.
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

    /// Reads the three scheduling switches and the timer slack of `options`.
    /// Throws `std::invalid_argument` if `timer_slack` is negative.
    explicit delayed_queue(const pool_options& options = {})
        : timer_slack_(validated_slack(options.timer_slack)), remove_on_cancel_(options.remove_on_cancel),
          continue_periodic_after_shutdown_(options.continue_periodic_after_shutdown),
          execute_delayed_after_shutdown_(options.execute_delayed_after_shutdown) {}

    delayed_queue(const delayed_queue&) = delete;
    delayed_queue& operator=(const delayed_queue&) = delete;

    // ---- the QueuePolicy surface ------------------------------------------

    /// Queues `t` due now; false (and `t` untouched) once closed.
    bool offer(task&& t) { return schedule(std::move(t), clock::now(), nullptr, false); }

    /// The same as `offer`: the queue is never full.
    bool put(task&& t) { return offer(std::move(t)); }

    /// Takes the head if it is due.
    bool poll(task& out) {
        std::unique_lock lock(mutex_);
        if (heap_.empty() || heap_.front().due > clock::now()) return false;
        out = pop_head();
        hand_on_leadership(lock);
        return true;
    }

    // take(out, interrupted) and poll_until(out, deadline, interrupted), from
    // consumer_waits: wait until the head is due and take it.

    /// Wakes every waiting thread so that each re-checks its interrupt flag.
    void wake_consumers() {
        { std::lock_guard lock(mutex_); } // orders the callers' flag store before our notify
        leader_wakeup_.notify_all();
        follower_wakeup_.notify_all();
    }

    /// Refuses further `offer`/`put`/`schedule` (not `requeue`).
    void close() {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }

    /// Removes and returns every queued task, due or not, in due order.
    std::vector<task> drain() {
        std::vector<task> out;
        std::lock_guard lock(mutex_);
        out.reserve(heap_.size());
        std::sort(heap_.begin(), heap_.end(), [](const key& a, const key& b) { return earlier(a, b); });
        for (const key& k : heap_) out.push_back(release_node(k.node));
        heap_.clear();
        return out;
    }

    /// Removes the tasks for which `pred(task)` holds; returns how many.
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return extract_if([&](const key&, const node& n) { return pred(std::as_const(n.work)); }).size();
    }

    /// Tasks queued, due or not.
    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return heap_.size();
    }

    /// Always `std::numeric_limits<std::size_t>::max()`.
    std::size_t capacity() const noexcept { return std::numeric_limits<std::size_t>::max(); }

    // ---- scheduling -------------------------------------------------------

    /// Queues `t` to be taken at `due`. `slot`, if given, is kept up to date
    /// with the task's place for `remove`. `periodic` marks it for the
    /// shutdown policies. False (and `t` untouched) once closed; may throw
    /// `std::bad_alloc`, also leaving `t` untouched.
    bool schedule(task&& t, clock::time_point due, schedule_slot* slot, bool periodic) {
        std::unique_lock lock(mutex_);
        if (closed_) return false;
        insert(lock, std::move(t), due, slot, periodic);
        return true;
    }

    /// Queues the next run of a periodic task, even after `close()` (the pool
    /// decides whether periodic tasks continue after shutdown). False, and
    /// `t` untouched, if its future is cancelled: checked under the queue's
    /// lock, so a `remove(slot)` racing with this either finds the task
    /// queued or comes after a cancellation this sees. May throw
    /// `std::bad_alloc`, leaving `t` untouched.
    bool requeue(task&& t, clock::time_point due, schedule_slot& slot) {
        std::unique_lock lock(mutex_);
        if (t.is_cancelled()) return false;
        insert(lock, std::move(t), due, &slot, true);
        return true;
    }

    /// Removes the task `slot` belongs to; an empty task if it is not queued.
    task remove(schedule_slot& slot) {
        std::unique_lock lock(mutex_);
        if (slot.node == schedule_slot::not_queued) return task();
        task removed = remove_key(nodes_[slot.node].heap_index);
        hand_on_leadership(lock);
        return removed;
    }

    /// Removes what the shutdown policies drop at `shutdown()`: cancelled
    /// tasks; periodic ones unless `continue_periodic_after_shutdown`; delayed
    /// ones not yet due unless `execute_delayed_after_shutdown`. Returns them.
    std::vector<task> on_shutdown() {
        const bool keep_periodic = continue_periodic_after_shutdown();
        const bool keep_delayed = execute_delayed_after_shutdown();
        const auto now = clock::now();
        return extract_if([&](const key& k, const node& n) {
            if (n.work.is_cancelled()) return true;
            return n.periodic ? !keep_periodic : !keep_delayed && k.due > now;
        });
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
        return heap_.empty() ? clock::time_point::max() : heap_.front().due;
    }

    // ---- observing the waiting ---------------------------------------------

    /// Counts of the waits in `take`/`poll_until` since construction (or
    /// since `reset_wait_statistics`), and who waits now.
    struct wait_statistics_type {
        std::uint64_t timed_waits = 0;   ///< waits with a deadline begun (the leader's, or a keep-alive)
        std::uint64_t untimed_waits = 0; ///< waits without one begun
        std::uint64_t wakeups = 0;       ///< waits ended, for any reason
        std::size_t waiting = 0;         ///< threads waiting now
        bool has_leader = false;         ///< one of them waits for the head's due time
    };

    wait_statistics_type wait_statistics() const {
        std::lock_guard lock(mutex_);
        wait_statistics_type s = counts_;
        s.waiting = leader_ + followers_;
        s.has_leader = leader_ != 0;
        return s;
    }

    void reset_wait_statistics() {
        std::lock_guard lock(mutex_);
        counts_ = {};
    }

  private:
    struct node {
        task work;
        schedule_slot* slot; // null for plain tasks
        std::size_t heap_index;
        bool periodic;
    };
    struct key {
        clock::time_point due;
        std::uint64_t sequence; // FIFO among equal due times
        std::size_t node;
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

    // Requires: lock holds mutex_. Nothrow once the room is reserved, so a
    // failed allocation leaves `t` with the caller.
    void insert(std::unique_lock<std::mutex>& lock, task&& t, clock::time_point due, schedule_slot* slot,
                bool periodic) {
        reserve_one();
        const std::size_t id = acquire_node();
        nodes_[id].work = std::move(t);
        nodes_[id].slot = slot;
        nodes_[id].periodic = periodic;
        if (slot) slot->node = id;
        heap_.push_back({due, next_sequence_++, id});
        nodes_[id].heap_index = heap_.size() - 1;
        // An earlier head: the leader re-arms its timer; with no leader, a
        // follower must come and lead. A later task wakes nobody.
        if (sift_up(heap_.size() - 1) == 0) hand_on_leadership(lock);
    }

    void reserve_one() {
        if (heap_.size() == heap_.capacity()) heap_.reserve(std::max<std::size_t>(16, heap_.capacity() * 2));
        if (free_nodes_.empty() && nodes_.size() == nodes_.capacity()) {
            const std::size_t bigger = std::max<std::size_t>(16, nodes_.capacity() * 2);
            nodes_.reserve(bigger);
            free_nodes_.reserve(bigger); // so that freeing a node never allocates
        }
    }

    std::size_t acquire_node() noexcept {
        if (!free_nodes_.empty()) {
            const std::size_t id = free_nodes_.back();
            free_nodes_.pop_back();
            return id;
        }
        nodes_.push_back(node{task(), nullptr, 0, false}); // capacity reserved: no throw
        return nodes_.size() - 1;
    }

    // Frees a node (already out of the heap) and returns its task.
    task release_node(std::size_t id) noexcept {
        node& n = nodes_[id];
        if (n.slot) n.slot->node = schedule_slot::not_queued;
        n.slot = nullptr;
        free_nodes_.push_back(id); // capacity reserved
        return std::move(n.work);
    }

    task pop_head() noexcept { return remove_key(0); }

    task remove_key(std::size_t index) noexcept {
        const std::size_t id = heap_[index].node;
        const std::size_t last = heap_.size() - 1;
        if (index != last) {
            place(index, heap_[last]);
            heap_.pop_back();
            if (sift_up(index) == index) sift_down(index);
        } else {
            heap_.pop_back();
        }
        return release_node(id);
    }

    void place(std::size_t index, const key& k) noexcept {
        heap_[index] = k;
        nodes_[k.node].heap_index = index;
    }

    std::size_t sift_up(std::size_t index) noexcept {
        const key moving = heap_[index];
        while (index > 0) {
            const std::size_t parent = (index - 1) / 2;
            if (!earlier(moving, heap_[parent])) break;
            place(index, heap_[parent]);
            index = parent;
        }
        place(index, moving);
        return index;
    }

    void sift_down(std::size_t index) noexcept {
        const key moving = heap_[index];
        const std::size_t n = heap_.size();
        for (;;) {
            std::size_t child = 2 * index + 1;
            if (child >= n) break;
            if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
            if (!earlier(heap_[child], moving)) break;
            place(index, heap_[child]);
            index = child;
        }
        place(index, moving);
    }

    // Removes every task for which pred(key, node) holds, rebuilding the heap
    // (O(n)); the tasks are returned so that they die outside the lock.
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        std::vector<task> removed;
        std::unique_lock lock(mutex_);
        removed.reserve(heap_.size());
        std::size_t kept = 0;
        for (std::size_t i = 0; i < heap_.size(); ++i) {
            const key k = heap_[i];
            if (pred(k, std::as_const(nodes_[k.node]))) removed.push_back(release_node(k.node));
            else heap_[kept++] = k;
        }
        if (removed.empty()) return removed;
        heap_.resize(kept);
        for (std::size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
        for (std::size_t i = 0; i < heap_.size(); ++i) nodes_[heap_[i].node].heap_index = i;
        hand_on_leadership(lock);
        return removed;
    }

    // Java's "finally" in DelayedWorkQueue.take: whoever leaves while tasks
    // remain and nobody leads wakes one follower to lead. The head may also
    // have changed under a leader (removed): it re-arms. Releases the lock.
    void hand_on_leadership(std::unique_lock<std::mutex>& lock) {
        if (heap_.empty()) return;
        if (leader_ != 0) {
            lock.unlock();
            leader_wakeup_.notify_one();
        } else if (followers_ != 0) {
            lock.unlock();
            follower_wakeup_.notify_one();
        }
    }

    friend detail::consumer_waits<delayed_queue>;

    // detail::wait_for_task's two steps under mutex_: the head is taken once
    // due; a sleeper leads (waits for the head's due time) if nobody does,
    // and follows (waits untimed, but for its own deadline) otherwise.
    wait_status wait_for(task& out, const interrupt_flag& interrupted, clock::time_point deadline) {
        std::unique_lock lock(mutex_);
        const wait_status status = detail::wait_for_task(
            interrupted, deadline,
            [&] {
                if (heap_.empty() || heap_.front().due > clock::now()) return false;
                out = pop_head();
                return true;
            },
            [&] {
                if (!heap_.empty() && leader_ == 0) {
                    // Lead: wait for the head, or for the own deadline if sooner.
                    const auto until = std::min(heap_.front().due, deadline);
                    apply_timer_slack();
                    ++leader_;
                    wait(leader_wakeup_, lock, until);
                    --leader_;
                } else {
                    ++followers_;
                    wait(follower_wakeup_, lock, deadline);
                    --followers_;
                }
                ++counts_.wakeups;
                return false;
            });
        if (leader_ == 0) hand_on_leadership(lock);
        return status;
    }

    // Requires: lock holds mutex_.
    void wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, clock::time_point until) {
        if (until == clock::time_point::max()) {
            ++counts_.untimed_waits;
            cv.wait(lock);
        } else {
            ++counts_.timed_waits;
            cv.wait_until(lock, until);
        }
    }

    mutable std::mutex mutex_;
    std::condition_variable leader_wakeup_;   // the leader waits here, timed
    std::condition_variable follower_wakeup_; // the others wait here, untimed
    std::vector<key> heap_;
    std::vector<node> nodes_;
    std::vector<std::size_t> free_nodes_;
    std::uint64_t next_sequence_ = 0;
    std::size_t leader_ = 0;    // 0 or 1
    std::size_t followers_ = 0;
    bool closed_ = false;
    wait_statistics_type counts_;

    const std::chrono::nanoseconds timer_slack_;
    std::atomic<bool> remove_on_cancel_;
    std::atomic<bool> continue_periodic_after_shutdown_;
    std::atomic<bool> execute_delayed_after_shutdown_;
};

static_assert(queue_policy<delayed_queue>);

} // namespace crew

#endif
