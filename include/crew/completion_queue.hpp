#ifndef CREW_COMPLETION_QUEUE_HPP
#define CREW_COMPLETION_QUEUE_HPP

/// \file
/// `crew::completion_queue<T>`: tasks submitted through an executor, their
/// futures handed back in the order the tasks finish. Java's
/// `ExecutorCompletionService`.

#include <crew/any_executor.hpp>
#include <crew/detail/future/future_state.hpp>
#include <crew/detail/sync/lock_contract.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/detail/work_stealing/worker_context.hpp>
#include <crew/future.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

namespace crew {

/// Submits tasks through an executor and hands their futures back, done, in
/// completion order.
///
/// `submit` returns the task's future as `ex.submit` does; the queue keeps a
/// second future of the same task, which `take`/`poll` return once the task
/// is done (succeeded, failed, cancelled, or rejected by a discarding
/// policy: nothing submitted is missing from the queue, and no `take` waits
/// for a task that will never finish). The two futures share one result:
/// the first `get()` on either takes it, a second throws
/// `std::future_error` (`future_already_retrieved`). Waiting, `is_done` and
/// `cancel` work on both.
///
/// No thread blocks in the bookkeeping: the task's completion pushes its
/// future onto the queue (one short lock), on the completing thread. The
/// queue's state is reference-counted, so the queue may be destroyed while
/// tasks still run; their futures are then dropped.
///
/// Thread safety: every member may be called from any thread, concurrently.
/// The executor must outlive every `submit`.
template <class T>
class completion_queue {
  public:
    /// Submits through `ex`: any pool (it converts) or a `crew::any_executor`.
    explicit completion_queue(any_executor ex) : executor_(ex), core_(new core) {}
    completion_queue(const completion_queue&) = delete;
    completion_queue& operator=(const completion_queue&) = delete;
    ~completion_queue() { core_->release(); }

    /// As `ex.submit(fn)`, RejectPolicy included (an abort_policy's refusal
    /// throws here, and nothing is queued); `fn()` or `fn(std::stop_token)`
    /// must return `T`. The future is queued for `take` once done.
    template <class F>
    future<T> submit(F&& fn) {
        static_assert(std::is_same_v<detail::task_result_t<std::decay_t<F>>, T>,
                      "crew: completion_queue<T>::submit(fn) needs fn() (or fn(std::stop_token)) returning T");
        future<T> f = executor_.submit(std::forward<F>(fn));
        auto* state = detail::future_access::state(f);
        state->add_ref(); // the queue's own future of the task
        auto* e = new entry(detail::future_access::make<T>(state), core_);
        if (!state->call_when_done(*e)) entry::done(*e);
        return f;
    }

    /// The next future to be done, in completion order; waits for one.
    future<T> take() {
        std::unique_lock lock(core_->mutex);
        core_->ready.wait(lock, [&] { return core_->head != nullptr; });
        return pop(lock);
    }

    /// The next done future, if there is one now; never waits.
    std::optional<future<T>> poll() {
        std::unique_lock lock(core_->mutex);
        if (!core_->head) return std::nullopt;
        return pop(lock);
    }

    /// As `take`, waiting at most `timeout` (never returns empty early).
    template <class Rep, class Period>
    std::optional<future<T>> poll_for(std::chrono::duration<Rep, Period> timeout) {
        std::unique_lock lock(core_->mutex);
        if (!core_->ready.wait_until(lock, detail::saturating_deadline(timeout), [&] { return core_->head != nullptr; }))
            return std::nullopt;
        return pop(lock);
    }

    /// As `take`, waiting until `deadline` (on any clock) at most; a past
    /// deadline only looks. Never returns empty early.
    template <class Clock, class Duration>
    std::optional<future<T>> poll_until(std::chrono::time_point<Clock, Duration> deadline) {
        return poll_for(detail::saturating_time_until(deadline));
    }

    /// How many done futures wait to be taken.
    std::size_t size() const {
        std::lock_guard lock(core_->mutex);
        return core_->count;
    }

  private:
    struct entry;

    // What the queue and its pending entries share. The done entries form
    // an intrusive FIFO, so that a completion allocates nothing.
    struct core {
        std::atomic<int> refs{1};
        mutable std::mutex mutex;
        std::condition_variable ready;
        entry* head = nullptr; // the oldest done entry; guarded by mutex
        entry* tail = nullptr; // guarded by mutex
        std::size_t count = 0; // guarded by mutex
        void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
        void release() noexcept {
            if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
        }
        ~core() {
            while (head) delete std::exchange(head, head->later);
        }
    };

    // One submitted task: its hook queues the entry once the task is done.
    struct entry : detail::completion_hook {
        entry(future<T>&& f, core* c) noexcept : completion_hook{&done, nullptr}, handle(std::move(f)), owner(c) {
            owner->add_ref();
        }
        static void done(completion_hook& hook) noexcept {
            auto* e = static_cast<entry*>(&hook);
            core* const c = e->owner;
            {
                std::lock_guard lock(c->mutex);
                (c->tail ? c->tail->later : c->head) = e;
                c->tail = e;
                ++c->count;
            }
            c->ready.notify_one();
            c->release(); // the entry is the core's now; the last release frees both
        }
        future<T> handle;
        core* owner;
        entry* later = nullptr; // the next done entry; guarded by owner->mutex
    };

    // Requires: core_->mutex held (`held`), an entry done.
    future<T> pop(const std::unique_lock<std::mutex>& held) {
        detail::assert_held(held, core_->mutex);
        entry* e = core_->head;
        core_->head = e->later;
        if (!core_->head) core_->tail = nullptr;
        --core_->count;
        future<T> f = std::move(e->handle);
        delete e;
        return f;
    }

    any_executor executor_;
    core* core_;
};

} // namespace crew

#endif
