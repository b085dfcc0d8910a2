#ifndef CREW_DETAIL_SUBMIT_HPP
#define CREW_DETAIL_SUBMIT_HPP

// What execute() and submit() do to a callable before a pool sees it, shared
// by basic_executor and any_executor (which must not include the pool).

#include <crew/detail/future_state.hpp>
#include <crew/detail/worker_context.hpp>
#include <crew/future.hpp>
#include <crew/task.hpp>

#include <concepts>
#include <stdexcept>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace crew::detail {

// An empty std::function, null function pointer or empty task.
template <class F>
bool is_empty_callable(const F& f) noexcept {
    if constexpr (std::is_pointer_v<F> || std::is_member_pointer_v<F>) return f == nullptr;
    else if constexpr (requires { f.operator bool(); }) return !static_cast<bool>(f);
    else return false;
}

// `f` as the queues hold it, with the checks execute() makes: a crew::task
// (not empty), a with_priority tag kept, a callable taking a stop token
// bound to `pool`'s stop requests. `wrap(callable or task&&) -> task` makes
// the task (the pool stamps it there for a task observer).
template <class F, class Wrap>
task make_pool_task(F&& f, const void* pool, Wrap wrap) {
    using D = std::remove_cvref_t<F>;
    if constexpr (std::same_as<D, task>) {
        static_assert(!std::is_lvalue_reference_v<F>, "crew: pass a crew::task by std::move: tasks are move-only");
        if (!f) throw std::invalid_argument("crew: execute() needs a non-empty callable");
        return wrap(std::move(f));
    } else if constexpr (is_prioritized<D>) {
        return task(prioritized<task>{f.priority, make_pool_task(std::forward<F>(f).function, pool, wrap)});
    } else {
        if constexpr (std::invocable<D&>) {
            if (is_empty_callable(f)) throw std::invalid_argument("crew: execute() needs a non-empty callable");
            return wrap(std::forward<F>(f));
        } else if constexpr (std::invocable<D&, std::stop_token>) {
            if (is_empty_callable(f)) throw std::invalid_argument("crew: execute() needs a non-empty callable");
            return wrap([fn = D(std::forward<F>(f)), pool]() mutable { (void)invoke_with_stop_token(fn, pool); });
        } else {
            static_assert(sizeof(D) == 0, "crew: execute() needs a callable as f() or f(std::stop_token)");
            return task();
        }
    }
}

// A callable submit() accepts: f() or f(std::stop_token).
template <class D>
inline constexpr bool submittable = std::invocable<D&> || std::invocable<D&, std::stop_token>;

// Instantiated only where `submittable<D>` is false, so that this assertion
// is the only error the user sees.
template <class D>
future<void> refuse_unsubmittable() {
    static_assert(submittable<D>, "crew: submit() needs a callable as f() or f(std::stop_token); this one takes "
                                  "other arguments, or cannot be called");
    return future<void>();
}

// submit()'s half that basic_executor and any_executor share: checks `f`,
// makes the state with its future, and the task that completes it (made by
// `wrap`, which may stamp it, and tagged with `priority`), which it hands
// to `hand(task&)` to run or reject. Returns the future.
template <class F, class Wrap, class Hand>
auto submit_through(F&& f, int priority, const void* pool, Wrap wrap, Hand hand) {
    using D = std::decay_t<F>;
    using result = task_result_t<D>;
    if (is_empty_callable(f)) throw std::invalid_argument("crew: submit() needs a non-empty callable");
    auto* state = new future_state_with<result, D>(std::forward<F>(f));
    future<result> handle = future_access::make<result>(state);
    task t(prioritized<task>{priority, wrap(future_task<result, D>(state, pool))});
    hand(t);
    return handle;
}

} // namespace crew::detail

#endif
