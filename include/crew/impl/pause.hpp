#ifndef CREW_IMPL_PAUSE_HPP
#define CREW_IMPL_PAUSE_HPP

// Pausing crew::basic_executor (beyond Java): a worker that took a task while
// the pool is paused holds it in worker::held until resume(), and
// shutdown_now() collects what the workers hold. The queue's room counts the
// held tasks.
//
// Included at the end of <crew/basic_executor.hpp>, whose class body declares
// (and documents) every member defined here; including this file alone
// includes that header first.

#include <crew/basic_executor.hpp>

namespace crew {

// A paused pool's workers hold tasks they took from the queue; they still
// count against queue_capacity() (queue_size() counts them), so the queue's
// room is not room while they do. One relaxed load of held_count_, which is 0
// unless paused. (A synchronous_queue, capacity 0, holds nothing: skipped.)
template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::full_counting_held() const {
    const std::size_t held = held_count_.load(std::memory_order_relaxed);
    if (held == 0) [[likely]]
        return false;
    const std::size_t capacity = queue_.capacity();
    return capacity != 0 && (held >= capacity || queue_.size() >= capacity - held);
}

// The worker took `t` while the pool is paused: it holds it in w.held (under
// main_lock_) until resume(), or until shutdown_now() takes it (then `t` is
// left empty).
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::hold_while_paused(worker& w, task& t) {
    unique_lock lock(main_lock_);
    if (!paused_.load()) return;
    // STOP seen: a shutdown_now() that found the pool paused waits (see
    // take_held_tasks) until this worker holds its task or runs one, so
    // it has not collected yet and will return this task. One that found
    // the pool running (pause() came later) collected already: the task
    // then runs, its stop token requested, as Java runs a task a worker
    // took before shutdownNow.
    if (held_collected_) return;
    w.held = std::move(t);
    held_count_.fetch_add(1, std::memory_order_relaxed);
    state_changed_.notify_all(); // a shutdown_now() may wait for this worker
    state_changed_.wait(lock, [&] { return !paused_.load() || !w.held; });
    if (w.held) {
        t = std::move(w.held);
        held_count_.fetch_sub(1, std::memory_order_relaxed);
    }
}

// shutdown_now() on a paused pool must return every task a worker took from
// the queue while paused, not only those already held: a worker may have
// taken one (the queue is empty) and not yet read paused_ or reached
// main_lock_ (the worker_took_task window). Such a worker is neither running
// (w.running is set only after the pause check) nor holding. So, STOP set,
// this waits under main_lock_ until every registered worker runs a task,
// holds one, or has left workers_ (one in get_task sees STOP and exits;
// process_worker_exit notifies). A worker in the window goes on to
// hold_while_paused, which under this lock sees STOP and held_collected_
// still false, so it holds (and notifies) rather than run; the only state
// that does not notify is a worker that read paused_ false just before the
// pause and is about to set w.running: a few instructions with no wait,
// hence the short poll. Not paused (read under the lock): no wait; a worker
// that sees the pause afterwards finds held_collected_ set and runs its
// task, stop token requested. The hot path pays nothing: the wait reads the
// flags workers already write.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::take_held_tasks(std::vector<task>& out) {
    {
        unique_lock lock(main_lock_);
        const auto settled = [this] {
            if (!paused_.load()) return true; // resume() released them all
            return std::all_of(workers_.begin(), workers_.end(), [](const worker& w) {
                return w.running.load(std::memory_order_acquire) || static_cast<bool>(w.held);
            });
        };
        while (!settled()) state_changed_.wait_for(lock, std::chrono::milliseconds(1));
        held_collected_ = true;
        out.reserve(held_count_.load());
        for (worker& w : workers_) {
            if (!w.held) continue;
            out.push_back(std::move(w.held)); // reserved: every held task is counted in held_count_
            held_count_.fetch_sub(1, std::memory_order_relaxed);
        }
    }
    state_changed_.notify_all();
    if (!out.empty()) count_out_unrun(out.size());
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::resume() {
    {
        unique_lock lock(main_lock_);
        paused_.store(false);
    }
    state_changed_.notify_all();
    // Tasks queued while paused by a pool that had no worker (a refusing
    // thread factory) need one now.
    ensure_worker_for_queue();
    hooks::on_resume(*this); // grow_first_queue: workers for the tasks queued while paused
}

} // namespace crew

#endif
