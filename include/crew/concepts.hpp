#ifndef CREW_CONCEPTS_HPP
#define CREW_CONCEPTS_HPP

/// \file
/// The four policy slots of `basic_executor` as C++20 concepts. Each concept
/// is a conjunction of small named pieces (in `crew::detail`: they are how
/// a compiler error names the piece, and member, a type lacks, not names to
/// use), plus two optional queue traits a queue of your own may model
/// (`grow_first_queue_policy`, `worker_local_queue_policy`).

#include <crew/pool_options.hpp>
#include <crew/schedule_slot.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <thread>
#include <vector>

namespace crew {

// ---- QueuePolicy ---------------------------------------------------------

namespace detail {
/// `Q(const pool_options&)`: a queue is built from the pool's options.
template <class Q>
concept queue_constructible_from_options = std::constructible_from<Q, const pool_options&>;

/// `q.offer(std::move(t)) -> bool`: enqueue without blocking; false when full
/// or closed, and then `t` is left untouched.
template <class Q>
concept task_offerable = requires(Q& q, task&& t) {
    { q.offer(std::move(t)) } -> std::same_as<bool>;
};

/// `q.poll(out) -> bool`: dequeue without blocking.
template <class Q>
concept task_pollable = requires(Q& q, task& out) {
    { q.poll(out) } -> std::same_as<bool>;
};

/// `q.take(out, flag)` and `q.poll_until(out, deadline, flag)`: blocking
/// dequeues that return `interrupted` once `flag` is set and
/// `q.wake_consumers()` is called.
template <class Q>
concept task_blocking_takeable =
    requires(Q& q, task& out, const interrupt_flag& flag, std::chrono::steady_clock::time_point deadline) {
        { q.take(out, flag) } -> std::same_as<wait_status>;
        { q.poll_until(out, deadline, flag) } -> std::same_as<wait_status>;
        q.wake_consumers();
    };

/// `q.put(std::move(t)) -> bool`: enqueue, waiting for room; false (and `t`
/// untouched) once the queue is closed. Used by `block_policy`.
template <class Q>
concept task_puttable = requires(Q& q, task&& t) {
    { q.put(std::move(t)) } -> std::same_as<bool>;
};

/// `q.put_until(std::move(t), deadline) -> bool`: as `put`, but gives up at
/// `deadline` (false, `t` untouched). Optional: `block_policy{timeout}` needs
/// it; every shipped queue has it.
template <class Q>
concept task_puttable_until = requires(Q& q, task&& t, std::chrono::steady_clock::time_point deadline) {
    { q.put_until(std::move(t), deadline) } -> std::same_as<bool>;
};
} // namespace detail

/// A QueuePolicy that asks the pool to start workers before it queues
/// (`grow_first_queue`): `q.has_idle_consumer()` says whether a consumer
/// waits that no queued task has claimed yet. The pool queues a task only
/// for such a consumer, or once it runs `maximum_pool_size` workers.
template <class Q>
concept grow_first_queue_policy = requires(const Q& cq) {
    requires Q::grows_first;
    { cq.has_idle_consumer() } noexcept -> std::same_as<bool>;
};

/// Optional: a QueuePolicy whose workers own part of it
/// (`work_stealing_queue`). Each worker calls `q.attach_worker()` as it
/// starts and `q.detach_worker()` as it leaves (never after a task destroyed
/// the pool), on its own thread; `q.poll_local(out)` takes the newest task
/// of the calling worker's own part, which a waiting worker
/// (`task_group::wait()`, `parallel_for`, `future::get()`) runs first, before
/// whatever `q.poll(out)` finds.
template <class Q>
concept worker_local_queue_policy = requires(Q& q, task& out) {
    q.attach_worker();
    q.detach_worker();
    { q.poll_local(out) } -> std::same_as<bool>;
};

namespace detail {
/// `q.close()` refuses further offers and puts (and wakes blocked puts);
/// `q.drain()` removes and returns every queued task, in queue order.
template <class Q>
concept task_closable = requires(Q& q) {
    q.close();
    { q.drain() } -> std::same_as<std::vector<task>>;
};

/// `q.size()`, `q.capacity()` and `q.remove_if(pred)` (returns how many).
template <class Q>
concept task_countable = requires(Q& q, const Q& cq, bool (*pred)(const task&)) {
    { cq.size() } -> std::convertible_to<std::size_t>;
    { cq.capacity() } -> std::convertible_to<std::size_t>;
    { q.remove_if(pred) } -> std::convertible_to<std::size_t>;
};

/// Optional: `q.extract_if(pred)` removes the tasks `remove_if` would and
/// returns them instead of destroying them. `purge()` uses it where a queue
/// has it, so that the removed tasks die after the pool's last use of itself
/// (a task may own the last reference to its pool); every shipped queue has it.
template <class Q>
concept task_extractable = requires(Q& q, bool (*pred)(const task&)) {
    { q.extract_if(pred) } -> std::same_as<std::vector<task>>;
};
} // namespace detail

/// The QueuePolicy slot: a thread-safe blocking queue of tasks that owns its
/// storage and its waiting. See `policies/queue.hpp` for the shipped ones.
template <class Q>
concept queue_policy = detail::queue_constructible_from_options<Q> && detail::task_offerable<Q> && detail::task_pollable<Q> &&
                       detail::task_blocking_takeable<Q> && detail::task_puttable<Q> && detail::task_closable<Q> &&
                       detail::task_countable<Q>;

/// A QueuePolicy that orders tasks by due time, which `basic_executor`'s
/// `schedule*` members need (`delayed_queue`): `schedule` (queue at a due
/// time; false once closed), `requeue` (a periodic task's next run, even when
/// closed, but not once drained after `close()`; false if the task is
/// cancelled, checked under the queue's lock),
/// `remove(slot)`, `on_shutdown()` (what the shutdown policies drop)
/// and the three shutdown switches. Every name it uses is public
/// (`crew::schedule_slot` says what a queue must do with a slot), so a queue
/// of your own can model it.
template <class Q>
concept scheduling_queue_policy =
    queue_policy<Q> && requires(Q& q, const Q& cq, task&& t, std::chrono::steady_clock::time_point due,
                                schedule_slot& slot, bool on) {
        { q.schedule(std::move(t), due, &slot, on) } -> std::same_as<bool>;
        { q.requeue(std::move(t), due, slot) } -> std::same_as<bool>;
        { q.remove(slot) } -> std::same_as<task>;
        { q.on_shutdown() } -> std::same_as<std::vector<task>>;
        { cq.remove_on_cancel() } -> std::same_as<bool>;
        { cq.continue_periodic_after_shutdown() } -> std::same_as<bool>;
        { cq.execute_delayed_after_shutdown() } -> std::same_as<bool>;
        q.set_remove_on_cancel(on);
        q.set_continue_periodic_after_shutdown(on);
        q.set_execute_delayed_after_shutdown(on);
    };

// ---- RejectPolicy --------------------------------------------------------

namespace detail {
// The narrow surface of the executor that a reject policy may use; a policy
// is checked against this archetype, so it cannot depend on anything else.
struct rejection_surface_archetype {
    bool is_shutdown() const;       // the pool no longer accepts tasks
    bool try_execute(task& t);      // execute without rejecting; false leaves t
    bool discard_oldest_queued();   // drop (reject) the queue's head, if any
    bool remove_oldest_queued(task& oldest); // take the head out, for the caller to reject
    bool put(task& t);              // wait for room; false if shut down meanwhile
    bool put_until(task& t, std::chrono::steady_clock::time_point deadline); // put, giving up at deadline
    bool called_from_own_worker() const; // the calling thread is one of this pool's workers
};

/// `p.rejected_execution(std::move(t), context)`: decide the fate of a task
/// the pool refused. The context (`crew::rejection_context`, documented in
/// crew/rejection_context.hpp) offers `is_shutdown()`, `try_execute(task&)`,
/// `discard_oldest_queued()` (and `remove_oldest_queued(task&)`, which hands
/// the head to the policy, to reject after its last use of the pool),
/// `put(task&)`, `put_until(task&, deadline)` and `called_from_own_worker()`
/// (and `is_paused()` and `pool()`); write the member as a template over the
/// context type. Java: `RejectedExecutionHandler`.
template <class P>
concept rejects_tasks = requires(P& p, task&& t, detail::rejection_surface_archetype& e) {
    p.rejected_execution(std::move(t), e);
};
} // namespace detail

/// The RejectPolicy slot: a movable type with `rejected_execution`.
template <class P>
concept reject_policy = std::move_constructible<P> && detail::rejects_tasks<P>;

// ---- ThreadFactoryPolicy -------------------------------------------------

namespace detail {
/// `f.new_thread(std::move(body)) -> std::thread`: start a thread running `body`.
template <class F>
concept thread_creating = requires(F& f, task&& body) {
    { f.new_thread(std::move(body)) } -> std::same_as<std::thread>;
};
} // namespace detail

/// The ThreadFactoryPolicy slot: a movable type with `new_thread`.
template <class F>
concept thread_factory = std::move_constructible<F> && detail::thread_creating<F>;

// ---- LockPolicy ----------------------------------------------------------

namespace detail {
/// `l.lock()`, `l.unlock()` and `l.try_lock() -> bool`: the standard *Lockable*.
template <class L>
concept lockable = requires(L& l) {
    l.lock();
    l.unlock();
    { l.try_lock() } -> std::convertible_to<bool>;
};
} // namespace detail

/// The LockPolicy slot: a default-constructible *Lockable*, such as
/// `std::mutex` or `crew::spin_lock`.
template <class L>
concept lock_policy = std::default_initializable<L> && detail::lockable<L>;

namespace detail {
/// `basic_executor`'s slot checks, one `static_assert` per slot, each naming
/// the slot a wrong policy was given in (the compiler adds the unsatisfied
/// requirement). True when all four hold.
template <class Queue, class Reject, class Factory, class Lock>
consteval bool policy_slots_checked() {
    static_assert(queue_policy<Queue>,
                  "crew::basic_executor: the QueuePolicy slot (1st template argument) must model "
                  "crew::queue_policy; see the unsatisfied requirement below");
    static_assert(reject_policy<Reject>,
                  "crew::basic_executor: the RejectPolicy slot (2nd template argument) must model "
                  "crew::reject_policy: movable, with a member template rejected_execution(crew::task&&, Executor&)");
    static_assert(thread_factory<Factory>,
                  "crew::basic_executor: the ThreadFactoryPolicy slot (3rd template argument) must model "
                  "crew::thread_factory: movable, with a member std::thread new_thread(crew::task)");
    static_assert(lock_policy<Lock>,
                  "crew::basic_executor: the LockPolicy slot (4th template argument) must model "
                  "crew::lock_policy: default-constructible with lock(), unlock() and try_lock()");
    return queue_policy<Queue> && reject_policy<Reject> && thread_factory<Factory> && lock_policy<Lock>;
}
} // namespace detail

} // namespace crew

#endif
