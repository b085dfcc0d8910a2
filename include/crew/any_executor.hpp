#ifndef CREW_ANY_EXECUTOR_HPP
#define CREW_ANY_EXECUTOR_HPP

/// \file
/// `crew::any_executor`: a copyable, non-owning, type-erased handle to any
/// `basic_executor`, so that library code can take "an executor" without
/// being a template over the pool's policies (Java's `ExecutorService` as a
/// value).

#include <crew/detail/future/bound_call.hpp>
#include <crew/detail/future/pool_link.hpp>
#include <crew/detail/future/schedule.hpp>
#include <crew/detail/future/submit.hpp>
#include <crew/detail/timer/time.hpp>
#include <crew/fwd.hpp>
#include <crew/future.hpp>
#include <crew/schedule_slot.hpp>
#include <crew/task.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace crew {

/// A handle to a pool of any policies. Every `basic_executor` converts to
/// it; a temporary pool does not (the handle would dangle). There is no
/// empty handle. The pool must outlive every handle used.
///
/// Each member behaves exactly as the pool's own, RejectPolicy included;
/// `execute`, `submit`, `try_execute` and `try_submit` accept what the
/// pool's accept (`with_priority`, a stop-token callable, a `crew::task`).
/// One indirect call per member, through a table per pool type; `execute`
/// and `try_execute` of a small callable allocate nothing, `submit` and
/// `try_submit` what the pool's do (nothing in steady state: the state comes
/// from a recycler). On a scheduled pool `submit` is
/// the pool's: a task scheduled with zero delay (in the heap, in due order
/// with the pool's own `execute`, `submit` and `schedule`, and taken out of
/// the queue at once by `cancel()` under `remove_on_cancel`), returned as a
/// plain `future` (the pool's `scheduled_future` less `delay()`).
///
/// Thread safety: as the pool's members; copies may be used concurrently.
class any_executor {
  public:
    template <class Q, class R, class TF, class L>
    any_executor(basic_executor<Q, R, TF, L>& pool) noexcept // NOLINT(google-explicit-constructor): a conversion
        : pool_(std::addressof(pool)), table_(&table_for<basic_executor<Q, R, TF, L>>) {}

    template <class Q, class R, class TF, class L>
    any_executor(basic_executor<Q, R, TF, L>&&) = delete; // crew: an any_executor of a temporary pool would dangle

    /// As `pool.execute(f)`.
    template <class F>
    void execute(F&& f) const {
        table_->execute(pool_, detail::make_pool_task(std::forward<F>(f), pool_, as_task));
    }

    /// As `pool.submit(f)`: a future of `f`'s result (`crew::future<R>`).
    template <class F>
    auto submit(F&& f) const {
        if constexpr (detail::is_prioritized<std::remove_cvref_t<F>>) {
            const int priority = f.priority;
            return submit_with_priority<false>(std::forward<F>(f).function, priority);
        } else {
            return submit_with_priority<false>(std::forward<F>(f), 0);
        }
    }

    /// As `pool.submit(f, args...)` and `pool.execute(f, args...)`.
    template <class F, class A, class... Args>
    auto submit(F&& f, A&& a, Args&&... args) const {
        return submit(detail::bind_call(std::forward<F>(f), std::forward<A>(a), std::forward<Args>(args)...));
    }
    template <class F, class A, class... Args>
    void execute(F&& f, A&& a, Args&&... args) const {
        execute(detail::bind_call(std::forward<F>(f), std::forward<A>(a), std::forward<Args>(args)...));
    }

    /// As `pool.try_execute(f)`: false, with `f` destroyed unrun, where
    /// `execute` would call the RejectPolicy (which is not consulted, and
    /// the refusal not counted in `rejected_task_count()`).
    template <class F>
    bool try_execute(F&& f) const {
        return table_->try_execute(pool_, detail::make_pool_task(std::forward<F>(f), pool_, as_task));
    }

    /// As `pool.try_submit(f)`: a `std::optional<crew::future<R>>`, empty
    /// (with `f` destroyed unrun) where `submit` would call the
    /// RejectPolicy.
    template <class F>
    auto try_submit(F&& f) const {
        if constexpr (detail::is_prioritized<std::remove_cvref_t<F>>) {
            const int priority = f.priority;
            return submit_with_priority<true>(std::forward<F>(f).function, priority);
        } else {
            return submit_with_priority<true>(std::forward<F>(f), 0);
        }
    }

    /// As `pool.maximum_pool_size()`: how many workers it may run at most
    /// (say, to size blocks of work).
    std::size_t maximum_pool_size() const noexcept { return table_->maximum_pool_size(pool_); }
    /// As `pool.core_pool_size()`.
    std::size_t core_pool_size() const noexcept { return table_->core_pool_size(pool_); }

    /// As `pool.shutdown()`.
    void shutdown() const { table_->shutdown(pool_); }
    /// As `pool.shutdown_now()`.
    std::vector<task> shutdown_now() const { return table_->shutdown_now(pool_); }
    /// As `pool.await_termination(timeout)` (saturating).
    template <class Rep, class Period>
    bool await_termination(std::chrono::duration<Rep, Period> timeout) const {
        return table_->await_termination(pool_, detail::saturating_nanoseconds(timeout));
    }
    /// As `pool.is_shutdown()`.
    bool is_shutdown() const noexcept { return table_->is_shutdown(pool_); }
    /// As `pool.is_terminated()`.
    bool is_terminated() const noexcept { return table_->is_terminated(pool_); }

    /// The address of the pool this handle refers to: for telling pools
    /// apart (two handles to one pool give the same address), never for
    /// reaching the pool.
    const void* pool_address() const noexcept { return pool_; }

    /// Same pool.
    friend bool operator==(const any_executor& a, const any_executor& b) noexcept { return a.pool_ == b.pool_; }

  private:
    struct table {
        void (*execute)(void* pool, task&& t);
        bool (*try_execute)(void* pool, task&& t);
        std::size_t (*maximum_pool_size)(const void* pool) noexcept;
        std::size_t (*core_pool_size)(const void* pool) noexcept;
        void (*shutdown)(void* pool);
        std::vector<task> (*shutdown_now)(void* pool);
        bool (*await_termination)(void* pool, std::chrono::nanoseconds timeout);
        bool (*is_shutdown)(const void* pool) noexcept;
        bool (*is_terminated)(const void* pool) noexcept;
        // A scheduled pool's submit (null on other pools): the ticket of the
        // pool's cancel link, and the pool's schedule_once after its state
        // is made (queue `t` due at `due` with its slot; if refused, reject
        // it, or with `try_only` leave it with the caller). True if queued.
        detail::link_ticket (*ticket)(const void* pool) noexcept;
        bool (*schedule)(void* pool, task& t, detail::clock::time_point due, schedule_slot& slot, bool try_only);
    };

    // The pool's scheduling internals, reached as a friend of
    // basic_executor (which declares `friend class any_executor;`; without
    // it, this is false and submit takes the execute path: a due-now task in
    // the FIFO, which cancel() does not remove).
    template <class Pool>
    static constexpr bool reaches_schedule = requires(Pool& p, task& t, schedule_slot& slot) {
        p.link_.registration.ticket();
        p.queue_.schedule(std::move(t), detail::clock::now(), &slot, false);
    };

    template <class Pool>
    static constexpr auto ticket_for() noexcept -> detail::link_ticket (*)(const void*) noexcept {
        if constexpr (reaches_schedule<Pool>)
            return [](const void* pool) noexcept { return static_cast<const Pool*>(pool)->link_.registration.ticket(); };
        else return nullptr;
    }

    // As the pool's schedule_once, once the state exists: delayed_execute,
    // and the RejectPolicy for a refused task.
    template <class Pool>
    static constexpr auto schedule_for() noexcept
        -> bool (*)(void*, task&, detail::clock::time_point, schedule_slot&, bool) {
        if constexpr (reaches_schedule<Pool>)
            return [](void* pool, task& t, detail::clock::time_point due, schedule_slot& slot, bool try_only) {
                Pool& p = *static_cast<Pool*>(pool);
                if (p.delayed_execute([&] { return p.queue_.schedule(std::move(t), due, &slot, false); }))
                    return true;
                if (!try_only) p.reject(std::move(t));
                return false;
            };
        else return nullptr;
    }

    template <class Pool>
    static constexpr table table_for{
        [](void* pool, task&& t) { static_cast<Pool*>(pool)->execute(std::move(t)); },
        [](void* pool, task&& t) { return static_cast<Pool*>(pool)->try_execute(std::move(t)); },
        [](const void* pool) noexcept { return static_cast<const Pool*>(pool)->maximum_pool_size(); },
        [](const void* pool) noexcept { return static_cast<const Pool*>(pool)->core_pool_size(); },
        [](void* pool) { static_cast<Pool*>(pool)->shutdown(); },
        [](void* pool) { return static_cast<Pool*>(pool)->shutdown_now(); },
        [](void* pool, std::chrono::nanoseconds timeout) {
            return static_cast<Pool*>(pool)->await_termination(timeout);
        },
        [](const void* pool) noexcept { return static_cast<const Pool*>(pool)->is_shutdown(); },
        [](const void* pool) noexcept { return static_cast<const Pool*>(pool)->is_terminated(); },
        ticket_for<Pool>(),
        schedule_for<Pool>(),
    };

    // The pool's submit, with the task handed over through the table: the
    // pool's execute stamps it for an observer and runs or rejects it as it
    // would its own. TryOnly (try_submit): the pool's try_execute instead,
    // and an optional future, empty if refused (the task died unrun).
    template <bool TryOnly, class F>
    auto submit_with_priority(F&& f, int priority) const {
        using D = std::decay_t<F>;
        if constexpr (!detail::submittable<D>) {
            return detail::refuse_unsubmittable<D>();
        } else if constexpr (TryOnly) {
            using answer = std::optional<future<detail::task_result_t<D>>>;
            if (table_->schedule) return submit_scheduled<true>(std::forward<F>(f));
            bool accepted = false;
            auto handle = detail::submit_through(
                std::forward<F>(f), priority, pool_, as_task,
                [this, &accepted](task& t) { accepted = table_->try_execute(pool_, std::move(t)); });
            return accepted ? answer(std::move(handle)) : answer();
        } else {
            if (table_->schedule) return submit_scheduled<false>(std::forward<F>(f));
            return detail::submit_through(std::forward<F>(f), priority, pool_, as_task,
                                          [this](task& t) { table_->execute(pool_, std::move(t)); });
        }
    }

    // A scheduled pool's submit, as basic_executor::schedule_once(now, f)
    // makes it (a delayed queue orders by due time only: no priority).
    template <bool TryOnly, class F>
    auto submit_scheduled(F&& f) const {
        using D = std::decay_t<F>;
        using result = detail::task_result_t<D>;
        using base = detail::scheduled_state<result>;
        if (detail::is_empty_callable(f)) throw std::invalid_argument("crew: schedule() needs a non-empty callable");
        auto* state = new detail::future_state_with<result, D, base>(std::forward<F>(f), detail::clock::now(),
                                                                     table_->ticket(pool_));
        future<result> handle = detail::future_access::make<result>(state);
        task t(detail::future_task<result, D, base>(state, pool_));
        const bool queued = table_->schedule(pool_, t, state->due(), state->slot(), TryOnly);
        if constexpr (TryOnly) {
            using answer = std::optional<future<result>>;
            return queued ? answer(std::move(handle)) : answer(); // refused: `t` dies on return, unrun
        } else {
            (void)queued; // refused: the RejectPolicy had it
            return handle;
        }
    }

    // The handle's tasks are plain: the pool stamps them, if it observes.
    static constexpr auto as_task = [](auto&& made) { return task(std::forward<decltype(made)>(made)); };

    void* pool_;
    const table* table_;
};

} // namespace crew

#endif
