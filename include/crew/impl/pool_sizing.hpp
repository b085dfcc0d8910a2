#ifndef CREW_IMPL_POOL_SIZING_HPP
#define CREW_IMPL_POOL_SIZING_HPP

// Sizing and statistics of crew::basic_executor: the setters that change the
// pool's bounds while it runs, prestarting, and the counts it reports.
//
// Included at the end of <crew/basic_executor.hpp>, whose class body declares
// (and documents) every member defined here; including this file alone
// includes that header first.

#include <crew/basic_executor.hpp>

namespace crew {

// ---- sizing -------------------------------------------------------------------

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::set_core_pool_size(std::size_t size) {
    std::size_t old;
    {
        unique_lock lock(main_lock_);
        validate(size, maximum_pool_size_.load(), keep_alive(), allows_core_thread_timeout());
        old = core_pool_size_.exchange(size);
    }
    if (detail::ctl::worker_count_of(ctl_.load()) > size) {
        interrupt_idle_workers(false);
    } else if (size > old) {
        // Start as many new workers as there are queued tasks, but no more.
        for (auto k = std::min(size - old, queue_.size()); k > 0; --k) {
            task none;
            if (!add_worker(none, true) || queue_.size() == 0) break;
        }
    }
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::set_maximum_pool_size(std::size_t size) {
    {
        unique_lock lock(main_lock_);
        validate(core_pool_size_.load(), size, keep_alive(), allows_core_thread_timeout());
        maximum_pool_size_.store(size);
    }
    if (detail::ctl::worker_count_of(ctl_.load()) > size) interrupt_idle_workers(false);
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::set_keep_alive(std::chrono::nanoseconds keep_alive) {
    std::int64_t old;
    {
        unique_lock lock(main_lock_);
        validate(core_pool_size_.load(), maximum_pool_size_.load(), keep_alive, allows_core_thread_timeout());
        old = keep_alive_ns_.exchange(keep_alive.count());
    }
    if (keep_alive.count() < old) interrupt_idle_workers(false); // waiting workers re-arm their timers
}

template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::allow_core_thread_timeout(bool allow) {
    bool old;
    {
        unique_lock lock(main_lock_);
        validate(core_pool_size_.load(), maximum_pool_size_.load(), keep_alive(), allow);
        old = allow_core_thread_timeout_.exchange(allow);
    }
    if (allow && !old) interrupt_idle_workers(false);
}

template <class Q, class R, class TF, class L>
bool basic_executor<Q, R, TF, L>::prestart_core_thread() {
    task none;
    return detail::ctl::worker_count_of(ctl_.load()) < core_pool_size_.load() && add_worker(none, true);
}

template <class Q, class R, class TF, class L>
std::size_t basic_executor<Q, R, TF, L>::prestart_all_core_threads() {
    std::size_t started = 0;
    for (task none; add_worker(none, true);) ++started;
    return started;
}

// ---- statistics ---------------------------------------------------------------

template <class Q, class R, class TF, class L>
std::size_t basic_executor<Q, R, TF, L>::pool_size() const {
    unique_lock lock(main_lock_);
    return detail::ctl::run_state_at_least(ctl_.load(), detail::ctl::tidying) ? 0 : live_worker_count(lock);
}

// workers_ still lists a worker that has left the count (it timed out and is
// on its way to process_worker_exit); the count already includes one that
// add_worker has yet to register. Neither is a thread the pool can use, and
// the smaller of the two never exceeds maximum_pool_size.
template <class Q, class R, class TF, class L>
std::size_t basic_executor<Q, R, TF, L>::live_worker_count(const unique_lock& held) const {
    detail::assert_held(held, main_lock_);
    return std::min<std::size_t>(workers_.size(), detail::ctl::worker_count_of(ctl_.load()));
}

template <class Q, class R, class TF, class L>
std::size_t basic_executor<Q, R, TF, L>::active_count() const {
    unique_lock lock(main_lock_);
    return static_cast<std::size_t>(
        std::count_if(workers_.begin(), workers_.end(), [](const worker& w) { return w.running.load(); }));
}

template <class Q, class R, class TF, class L>
std::size_t basic_executor<Q, R, TF, L>::largest_pool_size() const {
    unique_lock lock(main_lock_);
    // The count may have risen since the last registration (see live_worker_count).
    return std::max(largest_pool_size_, live_worker_count(lock));
}

template <class Q, class R, class TF, class L>
std::uint64_t basic_executor<Q, R, TF, L>::completed_task_count() const {
    unique_lock lock(main_lock_);
    return completed(lock);
}

template <class Q, class R, class TF, class L>
std::size_t basic_executor<Q, R, TF, L>::purge() {
    const auto cancelled = [](const task& t) { return t.is_cancelled(); };
    // Where the queue can hand the tasks back, they die last, on return: a
    // cancelled task may own the last reference to this pool.
    std::vector<task> extracted;
    const std::size_t removed = hooks::remove_queued_if(*this, cancelled, extracted);
    if (removed) count_out_unrun(removed);
    try_terminate(); // the queue may have emptied after shutdown
    return removed;
}

} // namespace crew

#endif
