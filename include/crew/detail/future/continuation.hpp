#ifndef CREW_DETAIL_FUTURE_CONTINUATION_HPP
#define CREW_DETAIL_FUTURE_CONTINUATION_HPP

// future::then: a continuation is a future's state whose callable holds the
// source future, the user's function, the executor and the completion hook
// the source runs when it is done. One allocation per then(); the source
// never blocks a thread. The hook runs on the source's completing thread and
// hands a task to the executor, which runs the function.

#include <crew/detail/future/future_state.hpp>
#include <crew/detail/future/linked_state.hpp>
#include <crew/future.hpp>
#include <crew/task.hpp>

#include <exception>
#include <functional>
#include <future>
#include <type_traits>
#include <utility>

namespace crew::detail {

// A pool is kept by address; a handle (any_executor, copyable) by value.
template <class E>
using executor_holder = std::conditional_t<std::is_copy_constructible_v<E>, E, E*>;
template <class E>
executor_holder<E> hold_executor(E& ex) noexcept {
    if constexpr (std::is_copy_constructible_v<E>) return ex;
    else return &ex;
}
template <class E>
auto& executor_in(E& held) noexcept {
    if constexpr (std::is_pointer_v<E>) return *held;
    else return held;
}

// The hand-off running on this thread. A continuation's task destroyed
// unrun inside it (an abort_policy throwing, a policy that drops the task
// silently) leaves its future pending: the hand-off completes it with what
// the executor threw, or as cancelled, not as "destroyed unrun".
struct continuation_handoff {
    const void* state;
    bool dropped = false;
    continuation_handoff* outer;
};
inline thread_local continuation_handoff* current_handoff = nullptr;

// fn(future<T>) when invocable so; else fn(T), or fn() for future<void>.
template <class T, class F>
inline constexpr bool takes_whole_future = std::is_invocable_v<F&, future<T>>;

// What fn returns, given what the source future holds; no `type` if fn
// cannot take it (then() says so in a static_assert first).
template <class T, class F>
using continuation_result = std::conditional_t<
    takes_whole_future<T, F>, std::invoke_result<F&, future<T>>,
    std::conditional_t<std::is_void_v<T>, std::invoke_result<F&>, std::invoke_result<F&, T>>>;

template <class T, class F>
inline constexpr bool continuable =
    takes_whole_future<T, F> || (std::is_void_v<T> ? std::is_invocable_v<F&> : std::is_invocable_v<F&, T>);

// The failure of a done future holding no value, read through its get()
// (so it is not reported again), and whether its state would have reported
// it unread: a link passing the failure on keeps that decision (not for a
// rejection, an error a hook was shown, or a cancellation).
template <class T>
std::exception_ptr take_failure(future<T>& f, bool& report) noexcept {
    auto* state = future_access::state(f);
    report = !state->is_cancelled() && state->reports_unread_error();
    try {
        (void)f.get();
    } catch (...) {
        return std::current_exception();
    }
    return {};
}

// Registered on the source's state; finds the continuation's own state.
struct source_hook : completion_hook {
    void* state = nullptr;
};

// A crew::future<U>, or a type derived from one (scheduled_future<U>).
template <class U>
U value_of_future(const future<U>*); // never defined: for decltype
template <class R>
concept crew_future = requires(const R* r) { detail::value_of_future(r); };

template <class R>
struct flattened {
    using type = R;
    static constexpr bool is_future = false;
};
template <crew_future R>
struct flattened<R> {
    using type = decltype(detail::value_of_future(static_cast<const R*>(nullptr)));
    static constexpr bool is_future = true;
};

// The callable in the continuation's state.
template <class T, class F, class E>
struct continuation {
    using result_type = typename continuation_result<T, F>::type;
    // What the continuation's future holds: fn's result, or U for a fn
    // returning crew::future<U> (then flattens: Java's thenCompose).
    using value_type = typename flattened<result_type>::type;
    static constexpr bool flattens = flattened<result_type>::is_future;
    using state_type = future_state_with<value_type, continuation, linked_state<value_type>>;

    template <class G>
    continuation(future<T>&& s, G&& g, executor_holder<E> e)
        : source(std::move(s)), fn(std::forward<G>(g)), executor(e) {}

    result_type operator()() {
        if constexpr (takes_whole_future<T, F>) return std::invoke(fn, std::move(source));
        else if constexpr (std::is_void_v<T>) {
            source.get();
            return std::invoke(fn);
        } else {
            return std::invoke(fn, source.get());
        }
    }

    future<T> source;
    F fn;
    executor_holder<E> executor;
    source_hook hook;
};

// The continuation's task: a future_task that, destroyed unrun inside its
// own hand-off, leaves the future to the hand-off (continuation_handoff).
// A flattening one hands the future its function returned to the state,
// which takes that future's outcome once it is done (relay_from).
template <class G>
class continuation_task : public future_task<typename G::value_type, G, linked_state<typename G::value_type>> {
    using base = future_task<typename G::value_type, G, linked_state<typename G::value_type>>;

  public:
    using base::base;
    continuation_task(continuation_task&&) noexcept = default;
    ~continuation_task() {
        continuation_handoff* handoff = current_handoff;
        if (this->state_ && this->alive_ && handoff && handoff->state == this->state_) {
            handoff->dropped = true;
            this->drop_function(); // the base then only releases its reference
        }
    }

    std::exception_ptr run_and_report(bool heard) {
        if constexpr (!G::flattens) {
            return base::run_and_report(heard);
        } else {
            if (!this->alive_) return {};
            if (!this->state_->claim_run()) return this->skip(); // cancelled while queued
            try {
                auto inner = this->invoke();
                this->drop_function();
                if (future_access::state(inner) == nullptr)
                    throw std::future_error(std::future_errc::no_state); // fn returned an empty future
                if (!inner.valid()) throw std::future_error(std::future_errc::future_already_retrieved);
                this->state_->relay_from(future_access::take(inner));
                return {};
            } catch (...) {
                return this->fail(heard);
            }
        }
    }
    void operator()() { (void)run_and_report(false); }
};

// Runs on the thread that completed the source (or in then(), if it was
// done already). Touches the continuation's callable only before handing it
// off: a worker may run and destroy it at once.
template <class T, class F, class E>
void source_done(completion_hook& hook) noexcept {
    using G = continuation<T, F, E>;
    using state_type = typename G::state_type;
    auto* state = static_cast<state_type*>(static_cast<source_hook&>(hook).state);
    state->unlink(); // the source is done: a cancel has nothing left to reach there
    G& g = state->function();
    if constexpr (!takes_whole_future<T, F>) {
        auto* source = future_access::state(g.source);
        if (!source->has_value()) { // fn never runs: the source's outcome is the answer
            bool report;
            std::exception_ptr why = take_failure(g.source, report);
            continuation_task<G>(state, nullptr).abandon(std::move(why), report);
            return;
        }
    }
    if (state->is_cancelled()) { // cancelled before fn could start: drop it
        continuation_task<G> dropped(state, nullptr);
        return;
    }
    executor_holder<E> executor = g.executor;
    state->add_ref(); // held across the hand-off, which may complete the state
    continuation_handoff handoff{state, false, current_handoff};
    current_handoff = &handoff;
    try {
        executor_in(executor).execute(task(continuation_task<G>(state, nullptr)));
    } catch (...) {
        current_handoff = handoff.outer;
        state->set_exception(std::current_exception()); // a no-op if the task completed it
        state->release();
        return;
    }
    current_handoff = handoff.outer;
    if (handoff.dropped) state->cancel_unrun();
    state->release();
}

template <class T, class E, class F>
auto make_continuation(future<T>&& source, E& ex, F&& fn) {
    using D = std::decay_t<F>;
    using G = continuation<T, D, E>;
    using V = typename G::value_type;
    auto* state = new typename G::state_type(G(std::move(source), std::forward<F>(fn), hold_executor(ex)));
    future<V> result = future_access::make<V>(state);
    G& g = state->function();
    state->link(future_access::state(g.source)); // cancel(true) on the result reaches the source
    g.hook.on_done = &source_done<T, D, E>;
    g.hook.state = state;
    // Done already: the hand-off runs here and now, never deferred to an
    // outer hook run (code sixteen hooks deep that then waits for the
    // result would wait for itself).
    if (!future_access::state(g.source)->call_when_done(g.hook)) g.hook.on_done(g.hook);
    return result;
}

} // namespace crew::detail

namespace crew {

template <class T>
template <class Executor, class F>
auto future<T>::then(Executor&& ex, F&& fn) && {
    using E = std::remove_reference_t<Executor>;
    static_assert(detail::continuable<T, std::decay_t<F>>,
                  "crew: then() needs fn(T) (fn() for a future<void>) or fn(crew::future<T>)");
    static_assert(requires(E& e, task t) { e.execute(std::move(t)); },
                  "crew: then() needs an executor: a crew pool or a crew::any_executor");
    require_state();
    if (retrieved_) throw std::future_error(std::future_errc::future_already_retrieved);
    return detail::make_continuation(std::move(*this), ex, std::forward<F>(fn));
}

} // namespace crew

#endif
