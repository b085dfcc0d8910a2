#ifndef CREW_ANY_EXECUTOR_HPP
#define CREW_ANY_EXECUTOR_HPP

/// \file
/// `crew::any_executor`: a copyable, non-owning, type-erased handle to any
/// `basic_executor`, so that library code can take "an executor" without
/// being a template over the pool's policies (Java's `ExecutorService` as a
/// value).

#include <crew/basic_executor.hpp>
#include <crew/future.hpp>
#include <crew/task.hpp>

#include <chrono>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace crew {

/// A handle to a pool of any policies. Every `basic_executor` converts to
/// it; a temporary pool does not (the handle would dangle). There is no
/// empty handle. The pool must outlive every handle used.
///
/// Each member behaves exactly as the pool's own, RejectPolicy included;
/// `execute` and `submit` accept what the pool's accept (`with_priority`,
/// a stop-token callable, a `crew::task`). One indirect call per member,
/// through a table per pool type; `execute` of a small callable allocates
/// nothing, `submit` once, as on the pool. On a scheduled pool `submit`
/// means "due now" and returns a plain `future`.
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
            return submit_with_priority(std::forward<F>(f).function, priority);
        } else {
            return submit_with_priority(std::forward<F>(f), 0);
        }
    }

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

    /// Same pool.
    friend bool operator==(const any_executor& a, const any_executor& b) noexcept { return a.pool_ == b.pool_; }

  private:
    struct table {
        void (*execute)(void* pool, task&& t);
        void (*shutdown)(void* pool);
        std::vector<task> (*shutdown_now)(void* pool);
        bool (*await_termination)(void* pool, std::chrono::nanoseconds timeout);
        bool (*is_shutdown)(const void* pool) noexcept;
        bool (*is_terminated)(const void* pool) noexcept;
    };

    template <class Pool>
    static constexpr table table_for{
        [](void* pool, task&& t) { static_cast<Pool*>(pool)->execute(std::move(t)); },
        [](void* pool) { static_cast<Pool*>(pool)->shutdown(); },
        [](void* pool) { return static_cast<Pool*>(pool)->shutdown_now(); },
        [](void* pool, std::chrono::nanoseconds timeout) {
            return static_cast<Pool*>(pool)->await_termination(timeout);
        },
        [](const void* pool) noexcept { return static_cast<const Pool*>(pool)->is_shutdown(); },
        [](const void* pool) noexcept { return static_cast<const Pool*>(pool)->is_terminated(); },
    };

    // The pool's submit, with the task handed over through the table: the
    // pool's execute stamps it for an observer and runs or rejects it as it
    // would its own.
    template <class F>
    auto submit_with_priority(F&& f, int priority) const {
        using D = std::decay_t<F>;
        if constexpr (!detail::submittable<D>) {
            return detail::refuse_unsubmittable<D>();
        } else {
            return detail::submit_through(std::forward<F>(f), priority, pool_, as_task,
                                          [this](task& t) { table_->execute(pool_, std::move(t)); });
        }
    }

    // The handle's tasks are plain: the pool stamps them, if it observes.
    static constexpr auto as_task = [](auto&& made) { return task(std::forward<decltype(made)>(made)); };

    void* pool_;
    const table* table_;
};

} // namespace crew

#endif
