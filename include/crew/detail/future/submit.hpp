#ifndef CREW_DETAIL_FUTURE_SUBMIT_HPP
#define CREW_DETAIL_FUTURE_SUBMIT_HPP

// What execute() and submit() do to a callable before a pool sees it, shared
// by basic_executor and any_executor (which must not include the pool).

#include <crew/detail/future/future_state.hpp>
#include <crew/detail/work_stealing/worker_context.hpp>
#include <crew/future.hpp>
#include <crew/task.hpp>

#include <concepts>
#include <iterator> // std::ranges::range_reference_t (not <ranges>: no views needed)
#include <stdexcept>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace crew {

template <class T>
class coroutine; // crew/coroutine.hpp

} // namespace crew

namespace crew::detail {

template <class>
inline constexpr bool is_coroutine = false;
template <class T>
inline constexpr bool is_coroutine<coroutine<T>> = true;

// What a call that a static_assert refuses returns (a submit of a callable
// it cannot call, an invoke_all of callables it cannot take): in the shape
// of a future, of try_submit's optional and of a vector of them, so that
// the ordinary uses of the result compile and the assertion is the one
// error the user reads, not "void value not ignored" before it. Declared,
// never defined: a program that reaches it does not compile anyway.
struct refused_result {
    template <class T>
    operator T() const;
    const refused_result* operator->() const;
    const refused_result& operator*() const;
    template <class I>
    const refused_result& operator[](I&&) const;
    const refused_result* begin() const;
    const refused_result* end() const;
    template <class... A>
    refused_result get(A&&...) const;
    template <class... A>
    refused_result wait(A&&...) const;
    template <class... A>
    refused_result wait_for(A&&...) const;
    template <class... A>
    refused_result wait_until(A&&...) const;
    template <class... A>
    refused_result is_done(A&&...) const;
    template <class... A>
    refused_result cancel(A&&...) const;
    template <class... A>
    refused_result is_cancelled(A&&...) const;
    template <class... A>
    refused_result valid(A&&...) const;
    template <class... A>
    refused_result then(A&&...) const;
    template <class... A>
    refused_result delay(A&&...) const;
    template <class... A>
    refused_result has_value(A&&...) const;
    template <class... A>
    refused_result value(A&&...) const;
    template <class... A>
    refused_result size(A&&...) const;
    template <class... A>
    refused_result empty(A&&...) const;
    // The result's value in an expression (`v += f.get()`, `f.get() == 1`,
    // `out << f.get()`).
    template <class T>
    friend refused_result operator+(const refused_result&, T&&);
    template <class T>
    friend refused_result operator-(const refused_result&, T&&);
    template <class T>
    friend refused_result operator*(const refused_result&, T&&);
    template <class T>
    friend refused_result operator/(const refused_result&, T&&);
    template <class T>
    friend bool operator==(const refused_result&, T&&);
    template <class T>
    friend bool operator<(const refused_result&, T&&);
    template <class T>
    friend bool operator>(const refused_result&, T&&);
    template <class T>
    friend T& operator+=(T&, const refused_result&);
    template <class T>
    friend T& operator-=(T&, const refused_result&);
    template <class T>
    friend T& operator<<(T&, const refused_result&);
};

// The element submit_each hands on for each of a range's callables: an
// lvalue range's are copied, an rvalue range's moved.
template <class Range>
using range_element_t = std::conditional_t<std::is_lvalue_reference_v<Range>, std::ranges::range_reference_t<Range>,
                                           std::remove_reference_t<std::ranges::range_reference_t<Range>>&&>;

// Whether a task can take each callable of `Range` (copied or moved).
template <class Range>
inline constexpr bool takes_its_callables =
    std::is_constructible_v<std::decay_t<range_element_t<Range>>, range_element_t<Range>>;

// Instantiated only where `takes_its_callables<Range>` is false: the one
// error for invoke_all() or invoke_any() of move-only callables in an
// lvalue range.
template <class Range>
refused_result refuse_untakable_callables() {
    static_assert(takes_its_callables<Range>,
                  "crew: invoke_all() and invoke_any() copy each callable of an lvalue range, and these cannot be "
                  "copied: pass an rvalue (std::move(tasks)) so that they are moved into the pool");
    return {};
}

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
            static_assert(!is_coroutine<std::remove_cvref_t<std::invoke_result_t<D&>>>,
                          "crew: execute() drops what the callable returns, and this one returns a crew::coroutine, "
                          "which is lazy: it would be destroyed without ever starting. Use crew::spawn(pool, f()) "
                          "to run it, or submit(f) to get it back");
            if (is_empty_callable(f)) throw std::invalid_argument("crew: execute() needs a non-empty callable");
            return wrap(std::forward<F>(f));
        } else if constexpr (std::invocable<D&, std::stop_token>) {
            static_assert(!is_coroutine<std::remove_cvref_t<std::invoke_result_t<D&, std::stop_token>>>,
                          "crew: execute() drops what the callable returns, and this one returns a crew::coroutine, "
                          "which is lazy: it would be destroyed without ever starting. Use crew::spawn(pool, f()) "
                          "to run it, or submit(f) to get it back");
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
// is the only error the user sees (its result, a refused_result, lets the
// caller's use of the future compile).
template <class D>
refused_result refuse_unsubmittable() {
    static_assert(submittable<D>, "crew: submit() needs a callable as f() or f(std::stop_token); this one takes "
                                  "other arguments, or cannot be called");
    return {};
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
