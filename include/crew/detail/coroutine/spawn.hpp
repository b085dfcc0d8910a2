#ifndef CREW_DETAIL_COROUTINE_SPAWN_HPP
#define CREW_DETAIL_COROUTINE_SPAWN_HPP

// What crew::spawn builds around a user's coroutine: the root frame that
// starts it and completes the spawn's future with its outcome.

#include <crew/detail/coroutine/chain.hpp>
#include <crew/detail/coroutine/promise.hpp>
#include <crew/detail/future/future_state.hpp>

#include <coroutine>
#include <exception>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace crew::detail {

// The state behind a spawn's future, with the chain's stop source, which
// cancel(true) requests (as a stop-token task's state does). Its shared
// state is the one allocation that cancellation adds to a spawn.
template <class T>
class coroutine_state final : public future_state<T> {
  public:
    coroutine_state() : future_state<T>(&destroy, &stop_) {}

  private:
    static void destroy(future_state<T>* self) noexcept { delete static_cast<coroutine_state*>(self); }

    std::stop_source stop_; // constructed after the base, which only keeps its address
};

// The root frame's hold on the spawn's future: completes it with the
// chain's result, or, destroyed first, with cancellation_error.
template <class T>
class spawn_owner {
  public:
    explicit spawn_owner(future_state<T>* state) noexcept : state_(state) {}
    spawn_owner(spawn_owner&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
    spawn_owner& operator=(spawn_owner&&) = delete;
    ~spawn_owner() {
        if (!state_) return;
        state_->cancel_unrun(); // no effect once completed
        state_->release();
    }

    template <class... U>
    void set_value(U&&... u) {
        state_->set_value(std::forward<U>(u)...);
    }
    void set_exception(std::exception_ptr error) noexcept { state_->set_exception(std::move(error), true); }
    const std::stop_source* stop_source() const noexcept { return state_->stop_source(); }

    static void reject(void* self, std::exception_ptr why) noexcept {
        static_cast<spawn_owner*>(self)->state_->set_exception(std::move(why));
    }

  private:
    future_state<T>* state_;
};

// The frame `spawn` makes around the user's coroutine: it starts it, hands
// its outcome to the future, and frees itself at the end. Nothing escapes it.
class spawn_root {
  public:
    class promise_type {
      public:
        template <class C, class T>
        promise_type(C&, spawn_owner<T>& owner) noexcept
            : root_{std::coroutine_handle<promise_type>::from_promise(*this), &owner, &spawn_owner<T>::reject,
                    owner.stop_source()} {}

        spawn_root get_return_object() noexcept { return spawn_root(std::coroutine_handle<promise_type>::from_promise(*this)); }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        std::suspend_never final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); } // the body catches everything

        coroutine_root* chain_root() noexcept { return &root_; }

      private:
        coroutine_root root_;
    };

    std::coroutine_handle<promise_type> frame;

  private:
    explicit spawn_root(std::coroutine_handle<promise_type> f) noexcept : frame(f) {}
};

template <class T>
spawn_root run_spawned(coroutine<T> c, spawn_owner<T> owner) {
    // cancel(true) before the start: the body never runs (its frame is
    // destroyed unstarted), as a queued task cancelled never runs.
    if (owner.stop_source()->stop_requested()) co_return;
    try {
        if constexpr (std::is_void_v<T>) {
            co_await std::move(c);
            owner.set_value();
        } else {
            owner.set_value(co_await std::move(c));
        }
    } catch (...) {
        owner.set_exception(std::current_exception());
    }
}

} // namespace crew::detail

#endif
