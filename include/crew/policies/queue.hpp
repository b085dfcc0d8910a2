#ifndef CREW_POLICIES_QUEUE_HPP
#define CREW_POLICIES_QUEUE_HPP

/// \file
/// The blocking queue policies for the QueuePolicy slot:
/// `unbounded_queue`, `bounded_queue`, `grow_first_queue`, `synchronous_queue`,
/// `priority_queue`.
/// (`lockfree_queue<C>` and `delayed_queue` have headers of their own.)
///
/// Each models `crew::queue_policy`; all members are thread-safe.

#include <crew/concepts.hpp>
#include <crew/detail/queue/blocking_queue.hpp>
#include <crew/detail/queue/consumer_wait.hpp>
#include <crew/detail/sync/event_count.hpp>
#include <crew/detail/sync/lock_contract.hpp>
#include <crew/detail/queue/locked_tasks.hpp>
#include <crew/detail/queue/segment_queue.hpp>
#include <crew/detail/queue/task_heap.hpp>
#include <crew/detail/queue/task_ring.hpp>
#include <crew/detail/test_seam.hpp>
#include <crew/pool_options.hpp>
#include <crew/task.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace crew {

/// FIFO that never fills: offers always succeed, so a pool on it never grows
/// past its core size (Java's trap with `LinkedBlockingQueue`; hence
/// `fixed_pool` sets core = max). Java: `LinkedBlockingQueue`.
///
/// Lock-free at any backlog: linked rings of 1024 cells, the first
/// allocated at construction, more linked as the backlog grows and reused
/// once emptied, so the steady state allocates nothing; FIFO across
/// producers by construction (detail/queue/segment_queue.hpp).
class unbounded_queue : public detail::segment_queue {
  public:
    explicit unbounded_queue(const pool_options& = {}) : segment_queue(std::numeric_limits<std::size_t>::max()) {}

    /// Always `std::numeric_limits<std::size_t>::max()`.
    std::size_t capacity() const noexcept { return std::numeric_limits<std::size_t>::max(); }
};

/// FIFO holding at most `pool_options::queue_capacity` tasks. When it is full
/// the pool grows towards its maximum size, then rejects. Java: `ArrayBlockingQueue`.
///
/// Lock-free, as `unbounded_queue` (linked rings of min(capacity, 1024)
/// cells), with the capacity kept exactly by permits: an offer reserves one
/// before it claims a cell (detail/queue/segment_queue.hpp).
class bounded_queue : public detail::segment_queue {
  public:
    /// Throws `std::invalid_argument` if `options.queue_capacity` is 0.
    explicit bounded_queue(const pool_options& options = {})
        : segment_queue(validated(options.queue_capacity)), capacity_(options.queue_capacity) {}

    /// The `queue_capacity` it was built with.
    std::size_t capacity() const noexcept { return capacity_; }

  private:
    static std::size_t validated(std::size_t capacity) {
        if (capacity == 0) throw std::invalid_argument("crew::bounded_queue: queue_capacity must be positive");
        return capacity;
    }
    std::size_t capacity_;
};

/// FIFO holding at most `pool_options::queue_capacity` tasks, whose pool
/// grows before it queues: above the core size, a task goes to an idle worker
/// if one waits, else to a new worker up to `maximum_pool_size`, and waits in
/// the queue only once the pool is at its maximum (or the RejectPolicy gets
/// it, when the queue is full too). The fix for Java's best-known trap, where
/// a pool on an unbounded queue never grows past its core size. Java:
/// Tomcat's `TaskQueue`. Keep-alive culls the extra workers as usual.
///
/// It counts the consumers waiting in `take`/`poll_until`, which
/// `has_idle_consumer()` compares with the tasks queued.
class grow_first_queue : public detail::segment_queue {
  public:
    /// Tells `basic_executor` to start workers before it queues.
    static constexpr bool grows_first = true;

    /// Throws `std::invalid_argument` if `options.queue_capacity` is 0.
    explicit grow_first_queue(const pool_options& options = {})
        : segment_queue(validated(options.queue_capacity)), capacity_(options.queue_capacity) {}

    /// The `queue_capacity` it was built with.
    std::size_t capacity() const noexcept { return capacity_; }

    /// A consumer waits that no queued task has claimed yet (a snapshot: a
    /// consumer counts from the start of its `take` until it returns).
    bool has_idle_consumer() const noexcept { return waiting_.load(std::memory_order_acquire) > size(); }

    /// More tasks are queued than consumers wait: one waits for a worker.
    /// The load is seq_cst (a plain load on x86): with the offer's RMW
    /// before it, and a timed-out worker's decrement and fence before its
    /// own look, either the producer sees the worker gone or the worker
    /// sees the task (basic_executor::may_leave).
    bool has_unclaimed_task() const noexcept { return size() > waiting_.load(std::memory_order_seq_cst); }

    /// `segment_queue`'s waits, counted in `has_idle_consumer()`.
    wait_status take(task& out, const interrupt_flag& interrupted) {
        const waiting_scope scope(waiting_);
        return segment_queue::take(out, interrupted);
    }
    wait_status poll_until(task& out, std::chrono::steady_clock::time_point deadline,
                           const interrupt_flag& interrupted) {
        const waiting_scope scope(waiting_);
        return segment_queue::poll_until(out, deadline, interrupted);
    }

  private:
    static std::size_t validated(std::size_t capacity) {
        if (capacity == 0) throw std::invalid_argument("crew::grow_first_queue: queue_capacity must be positive");
        return capacity;
    }
    struct waiting_scope {
        explicit waiting_scope(std::atomic<std::size_t>& count) noexcept : count_(count) { count_.fetch_add(1); }
        ~waiting_scope() { count_.fetch_sub(1); }
        waiting_scope(const waiting_scope&) = delete;
        waiting_scope& operator=(const waiting_scope&) = delete;
        std::atomic<std::size_t>& count_;
    };

    std::size_t capacity_;
    std::atomic<std::size_t> waiting_{0}; // consumers inside take/poll_until
};

/// Unbounded queue that runs the highest `with_priority` first and keeps FIFO
/// order among equal priorities (an untagged task has priority 0).
/// Java: `PriorityBlockingQueue` with a stable comparator.
class priority_queue : public detail::blocking_queue<detail::task_heap> {
  public:
    explicit priority_queue(const pool_options& = {}) {}

    /// Always `std::numeric_limits<std::size_t>::max()`.
    std::size_t capacity() const noexcept { return std::numeric_limits<std::size_t>::max(); }
};

/// Direct hand-off: holds nothing. `offer` succeeds only while a worker is
/// waiting to take, so a pool on it starts a new worker (up to its maximum)
/// whenever none is idle. Java: `SynchronousQueue`.
///
/// Tasks accepted for a waiting worker but not yet picked up count in
/// `size()`; `capacity()` is 0.
class synchronous_queue : public detail::consumer_waits<synchronous_queue>,
                          public detail::locked_tasks<detail::task_ring> {
  public:
    explicit synchronous_queue(const pool_options& = {}) {}

    /// What `basic_executor<synchronous_queue>()` uses: core 0, maximum
    /// unbounded, keep-alive 60 s (Java's `newCachedThreadPool`).
    static pool_options default_options() {
        pool_options options;
        options.core_pool_size = 0;
        options.maximum_pool_size = std::numeric_limits<std::size_t>::max();
        options.keep_alive = std::chrono::seconds(60);
        return options;
    }

    /// Hands `t` to a waiting consumer; false if none waits or the queue is closed.
    bool offer(task&& t) {
        {
            std::unique_lock lock(mutex_);
            if (closed_ || !consumer_available(lock)) return false;
            tasks_.push(std::move(t));
        }
        handed_off_.notify_one();
        return true;
    }

    /// Waits until a consumer is waiting, then hands `t` over; false if closed.
    bool put(task&& t) { return put_until(std::move(t), std::chrono::steady_clock::time_point::max()); }

    /// As `put`, but gives up (false, `t` intact) at `deadline`.
    bool put_until(task&& t, std::chrono::steady_clock::time_point deadline) {
        return detail::put_or_park(consumer_arrived_, [&] { return offer(std::move(t)); },
                                   [&] { return is_closed(); }, deadline);
    }

    /// Takes a task already handed off, if any.
    bool poll(task& out) {
        {
            std::lock_guard lock(mutex_);
            if (tasks_.empty()) return false;
            out = tasks_.pop();
        }
        consumer_freed();
        return true;
    }

    void wake_consumers() { handed_off_.notify_all(); }

    void close() {
        mark_closed();
        consumer_arrived_.notify_all();
    }

    /// Removes and returns the tasks handed off and not yet picked up.
    std::vector<task> drain() { return consumers_freed_by(locked_tasks::drain()); }

    /// Removes and returns the handed-off tasks for which `pred(task)` holds.
    template <class Pred>
    std::vector<task> extract_if(Pred pred) {
        return consumers_freed_by(locked_tasks::extract_if(std::move(pred)));
    }

    /// As `extract_if`, destroying what it removes; returns how many.
    template <class Pred>
    std::size_t remove_if(Pred pred) {
        return extract_if(std::move(pred)).size();
    }

    // size: detail::locked_tasks's, over the handed-off tasks.

    /// Always 0: nothing waits in a synchronous queue.
    std::size_t capacity() const noexcept { return 0; }

  private:
    // tasks_ holds the tasks handed off and not yet picked up.
    // Invariant (under mutex_): tasks_.size() <= waiting_consumers_: each
    // handed-off task has a waiting consumer committed to it. So a consumer
    // stops being counted only as it takes a task, or, leaving without one
    // (time-out, interrupt), only if no task is waiting; else it takes one.
    bool consumer_available(const std::unique_lock<std::mutex>& held) const noexcept {
        detail::assert_held(held, mutex_);
        return waiting_consumers_ > tasks_.size();
    }

    // A handed-off task taken by anyone but its consumer (poll, drain,
    // extract_if) leaves that consumer waiting and free again: a put()
    // parked because every waiting consumer had a task must look again.
    void consumer_freed() { consumer_arrived_.notify_all(); }
    std::vector<task> consumers_freed_by(std::vector<task> removed) {
        if (!removed.empty()) consumer_freed();
        return removed;
    }

    // Requires: this consumer counted in waiting_consumers_. Takes mutex_;
    // a task taken and the consumer's count go together.
    bool take_handed_off(task& out) {
        std::lock_guard lock(mutex_);
        if (tasks_.empty()) return false;
        out = tasks_.pop();
        --waiting_consumers_;
        return true;
    }

    friend detail::consumer_waits<synchronous_queue>;

    // A waiting consumer is counted for its whole wait (consumer_available),
    // around detail::wait_for_task's two steps; it parks on handed_off_.
    wait_status wait_for(task& out, const interrupt_flag& interrupted, std::chrono::steady_clock::time_point deadline) {
        {
            std::lock_guard lock(mutex_);
            ++waiting_consumers_;
        }
        consumer_arrived_.notify_one(); // a put() may be waiting for us
        CREW_SEAM(sync_consumer_counted);
        const auto take = [&] { return take_handed_off(out); };
        const wait_status status = detail::wait_for_task(
            interrupted, deadline, take,
            [&] { return detail::park_consumer(handed_off_, interrupted, deadline, take); });
        if (status == wait_status::taken) return status;
        std::lock_guard lock(mutex_);
        if (!tasks_.empty()) { // offered to us after our last look: it wins
            out = tasks_.pop();
            --waiting_consumers_;
            return wait_status::taken;
        }
        --waiting_consumers_;
        return status;
    }

    std::size_t waiting_consumers_ = 0;       // guarded by mutex_
    detail::event_count<> handed_off_;       // consumers park here
    detail::event_count<> consumer_arrived_; // put() parks here
};

static_assert(queue_policy<unbounded_queue>);
static_assert(queue_policy<bounded_queue>);
static_assert(queue_policy<priority_queue>);
static_assert(queue_policy<synchronous_queue>);
static_assert(queue_policy<grow_first_queue> && grow_first_queue_policy<grow_first_queue>);

} // namespace crew

#endif
