#ifndef CREW_IMPL_QUEUE_HOOKS_HPP
#define CREW_IMPL_QUEUE_HOOKS_HPP

// The hooks a QueuePolicy's optional traits select, written once, beside
// the scheduled-executor hooks (impl/scheduled_executor.hpp): every
// `if constexpr` on a queue trait in the pool lives here, so the thread
// pool's steps (impl/thread_pool.hpp) read as Java's do. For a queue without
// the trait each hook is a no-op (or the thread pool's default), which the
// compiler drops.
//
// - grow_first_queue_policy (grow_first_queue): start a worker before
//   queueing unless an idle one will take the task; after queueing, and when
//   a worker leaves or the pool resumes, start one for a task that no idle
//   worker waits for.
// - worker_local_queue_policy (work_stealing_queue): a worker attaches to its
//   own part of the queue as it starts and detaches as it leaves; a waiting
//   worker helps with its own part first.
// - task_puttable_until, task_extractable: block_policy's timed put and
//   purge()'s hand-back, where the queue has them.
//
// The pool calls them as `hooks::name(*this, ...)`; basic_executor befriends
// this struct. Included at the end of <crew/basic_executor.hpp>; including
// this file alone includes that header first.

#include <crew/basic_executor.hpp>

namespace crew::detail {

template <class Q, class R, class TF, class L>
struct queue_hooks<basic_executor<Q, R, TF, L>> {
    using pool_type = basic_executor<Q, R, TF, L>;

    // try_execute, before it queues a task that found the pool at its core size
    // or above. grow_first_queue: a new worker takes `t`, unless an idle one will
    // (true: `t` went to the new worker; `c` is reloaded after a try).
    static bool before_queueing(pool_type& pool, [[maybe_unused]] task& t, [[maybe_unused]] ctl::word& c) {
        if constexpr (grow_first_queue_policy<Q>) {
            if (!pool.paused_.load() && !pool.queue_.has_idle_consumer() && pool.add_worker(t, false)) return true;
            c = pool.ctl_.load();
        }
        return false;
    }

    // try_execute, after it queued a task. grow_first_queue: the idle worker
    // before_queueing saw may have been claimed by another task meanwhile; a
    // queued task must not wait while the pool may still grow.
    static void after_queued(pool_type& pool) {
        if constexpr (grow_first_queue_policy<Q>) {
            CREW_SEAM(grow_first_checked);
            if (!pool.paused_.load(std::memory_order_relaxed) && pool.queue_.has_unclaimed_task()) {
                task none;
                pool.add_worker(none, false);
            }
        }
    }

    // grow_first_queue: whether a queued task lacks a waiting consumer, after a
    // full fence (false for every other queue). Asked twice: by may_leave, before
    // a timed-out worker's count goes down, and by process_worker_exit, after.
    // A task queued while this worker was leaving (after its may_leave look,
    // before its count went down) may have found the pool at its maximum, this
    // worker still counted, and started nobody: it would wait for a busy worker
    // while the pool is below its maximum (issue #31: 2 runs in 6 of a
    // keep-alive probe). The count's decrement (a seq_cst RMW), the fence, then
    // this look; the producer's offer, then its look at the count in
    // add_worker: either it saw this worker gone and started one, or this sees
    // its task, and the exit starts a replacement.
    static bool task_left_without_worker(pool_type& pool) {
        if constexpr (grow_first_queue_policy<Q>) {
            full_fence(pool.ctl_);
            return pool.queue_.has_unclaimed_task();
        } else {
            return false;
        }
    }

    // Whether a worker that timed out (or is over the maximum) may leave.
    // Java: the queue is empty, or another worker remains to drain it. With
    // grow_first_queue "another worker remains" is not enough: the others may
    // all be busy, and a producer that counted this worker as idle (it was
    // still inside its poll) neither started a worker nor will: its task would
    // wait for a busy worker while the pool is below its maximum. So a
    // grow_first worker leaves only while no queued task lacks a waiting
    // consumer. This worker is no longer counted as waiting (its poll returned);
    // the fence pairs with the seq_cst RMW of the producer's offer and its
    // seq_cst load of the waiting count (has_unclaimed_task): either the producer
    // sees this worker gone and starts one, or this worker sees its task and stays.
    static bool may_leave(pool_type& pool, std::uint64_t wc, bool over_maximum) {
        if constexpr (grow_first_queue_policy<Q>) {
            if (!over_maximum) return !task_left_without_worker(pool);
        }
        return pool.queue_.size() == 0 || (wc > 1 && (over_maximum || pool.may_leave_waiters()));
    }

    // resume(). grow_first_queue: tasks queued while paused did not start
    // workers; they do now, one per task no idle worker waits for, up to the
    // maximum.
    static void on_resume(pool_type& pool) {
        if constexpr (grow_first_queue_policy<Q>) {
            for (auto n = pool.queue_.size(); n > 0 && pool.queue_.has_unclaimed_task(); --n) {
                task none;
                if (!pool.add_worker(none, false)) break;
            }
        }
    }

    // A worker starts (run_worker, on its own thread, before its first task).
    static void on_worker_start(pool_type& pool) {
        if constexpr (worker_local_queue_policy<Q>) pool.queue_.attach_worker();
    }

    // A worker leaves (on its own thread; never after a task destroyed the pool).
    static void on_worker_exit(pool_type& pool) {
        if constexpr (worker_local_queue_policy<Q>) pool.queue_.detach_worker();
    }

    // help_one: a waiting worker's next task, from its own part of the queue
    // first (newest first), where it has one.
    static bool poll_for_helper(pool_type& pool, task& out) {
        if constexpr (worker_local_queue_policy<Q>) {
            if (pool.queue_.poll_local(out)) return true;
        }
        return pool.queue_.poll(out);
    }

    // put_until's enqueue: block_policy with a timeout needs a queue with
    // put_until; without one, only an unlimited wait is possible.
    static bool put_in_queue(pool_type& pool, task& t, std::chrono::steady_clock::time_point deadline) {
        if constexpr (task_puttable_until<Q>) return pool.queue_.put_until(std::move(t), deadline);
        else if (deadline == clock::time_point::max()) return pool.queue_.put(std::move(t));
        else throw std::logic_error("crew::block_policy: a timeout needs a QueuePolicy with put_until(task&&, deadline)");
    }

    // purge()'s removal: where the queue can hand the tasks back (extract_if),
    // they go to `out`, to die on purge()'s return, after the pool's last use of
    // itself (a cancelled task may own the last reference to this pool);
    // otherwise the queue destroys them. Returns how many were removed.
    template <class Pred>
    static std::size_t remove_queued_if(pool_type& pool, Pred pred, [[maybe_unused]] std::vector<task>& out) {
        if constexpr (task_extractable<Q>) {
            out = pool.queue_.extract_if(pred);
            return out.size();
        } else {
            return pool.queue_.remove_if(pred);
        }
    }
};

} // namespace crew::detail

#endif
