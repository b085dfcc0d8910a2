#ifndef CREW_DETAIL_COROUTINE_STOP_HPP
#define CREW_DETAIL_COROUTINE_STOP_HPP

// A spawned chain's stop request (crew/coroutine.hpp documents it): where a
// co_await reads it, crew::get_stop_token's awaiter, and how a coroutine
// suspended on a future state (a crew::future, or sleep_for's timer) is
// woken early by it.

#include <crew/detail/coroutine/chain.hpp>
#include <crew/detail/coroutine/driver.hpp>
#include <crew/detail/future/future_state.hpp>
#include <crew/detail/test_seam.hpp>
#include <crew/errors.hpp>
#include <crew/future.hpp>

#include <atomic>
#include <coroutine>
#include <exception>
#include <optional>
#include <stop_token>
#include <utility>


namespace crew::detail {

inline const std::stop_source* chain_stop(const coroutine_root* root) noexcept { return root ? root->stop : nullptr; }

// Two loads: no stop source (a chain crew did not spawn) never stops.
inline bool stop_requested(const std::stop_source* stop) noexcept { return stop && stop->stop_requested(); }

inline void throw_if_stopped(const std::stop_source* stop) {
    if (stop_requested(stop)) throw cancellation_error("crew: the coroutine was cancelled");
}

// co_await crew::get_stop_token(): reads the root from the awaiting promise
// and never suspends.
class stop_token_awaiter {
  public:
    bool await_ready() const noexcept { return false; }
    template <class Promise>
    bool await_suspend(std::coroutine_handle<Promise> self) noexcept {
        if (const std::stop_source* stop = chain_stop(root_of(self))) token_ = stop->get_token();
        return false;
    }
    std::stop_token await_resume() noexcept { return std::move(token_); }

  private:
    std::stop_token token_;
};

// A coroutine waiting for a future state: it is the state's completion hook
// and, in a chain that can be stopped, a stop callback too. Lives in the
// suspended frame, so waiting allocates nothing.
//
// Who resumes the coroutine, exactly once:
// - the completer (the hook runs) or the stop callback, whichever the state
//   decides: the stop callback resumes only if forget_hook() takes the hook
//   back before the completer takes it, and the completer runs the hook only
//   if it was not taken back;
// - and that one, or the thread still arming the wait (await_suspend), by
//   phase_: the waker that finds `armed` resumes; one that finds `arming`
//   leaves it to the armer, which then does not suspend (or, for a dropped
//   timer, destroys the chain itself).
// The loser touches nothing afterwards: once the hook is taken, the
// completer owns the frame; a stop callback still running when the frame
// resumes elsewhere is waited for by ~stop_callback (disarm()), which is why
// the stop callback must die before whatever holds the state.
template <class T>
class state_wait : protected completion_hook {
  public:
    state_wait(const state_wait&) = delete;
    state_wait& operator=(const state_wait&) = delete;

  protected:
    using stopped_fn = void (*)(state_wait& self) noexcept;

    // `done`: the hook (wake_on_done() or the derived awaiter's); `stopped`:
    // what a stop does before it resumes the coroutine (or null).
    state_wait(void (*done)(completion_hook&) noexcept, stopped_fn stopped) noexcept
        : completion_hook{done}, stopped_(stopped) {}
    ~state_wait() = default;

    // How arm() left the coroutine.
    enum class armed_as : unsigned char {
        done_before, // the state was done first: no hook, no stop callback; the awaiter decides
        suspended,   // await_suspend returns true (it may have been resumed or destroyed meanwhile)
        woken,       // woken while arming: await_suspend returns false
    };

    // First in await_suspend: which chain this is.
    void bind(coroutine_root* root) noexcept {
        root_ = root;
        stop_ = chain_stop(root);
    }
    bool stop_requested() const noexcept { return detail::stop_requested(stop_); }
    void throw_if_stopped() const { detail::throw_if_stopped(stop_); }

    // Registers the hook, then the stop callback. Precondition: bind().
    armed_as arm(future_state<T>& state, std::coroutine_handle<> self) noexcept {
        awaiting_ = self;
        state_ = &state;
        if (!state.call_when_done(*this)) return armed_as::done_before;
        // From here the completer may run the hook at any moment; it leaves
        // the coroutine to us until we publish `armed`.
        CREW_SEAM(coroutine_wait_registered);
        if (stop_ != nullptr && stop_->stop_possible())
            stop_callback_.emplace(stop_->get_token(), stop_waker{this}); // runs it here if stop came meanwhile
        switch (phase_.exchange(armed, std::memory_order_acq_rel)) {
        case arming: return armed_as::suspended;
        case woken: return armed_as::woken;
        default: { // dropped: the hook found the timer dropped unrun, after it was queued
            coroutine_root* const root = root_;
            std::exception_ptr why = std::move(why_);
            abandon_chain(root, std::move(why)); // the awaiter dies with the frame
            return armed_as::suspended;
        }
        }
    }

    // First in await_resume: waits for a stop callback still running
    // elsewhere (it touches nothing once it lost) and unregisters it.
    void disarm() noexcept { stop_callback_.reset(); }

    // The completer, or a stop callback that took the hook back.
    void wake() noexcept {
        CREW_SEAM(coroutine_wait_settling);
        if (phase_.exchange(woken, std::memory_order_acq_rel) == armed) drive(awaiting_);
    }
    static void wake_on_done(completion_hook& self) noexcept { static_cast<state_wait&>(self).wake(); }

    // The completer, when the state says the chain's resumption was dropped
    // (a timer destroyed unrun, or refused after it was queued): the chain
    // goes with it, as with a dropped resume_task.
    void drop(std::exception_ptr why) noexcept {
        why_ = std::move(why); // read by the armer only after it sees `dropped`
        if (phase_.exchange(dropped, std::memory_order_acq_rel) != armed) return;
        coroutine_root* const root = root_;
        std::exception_ptr reason = std::move(why_);
        abandon_chain(root, std::move(reason));
    }

    coroutine_root* root() const noexcept { return root_; }

  private:
    enum : unsigned char { arming, armed, woken, dropped };

    struct stop_waker {
        state_wait* self;
        void operator()() const noexcept { self->on_stop(); }
    };

    // On the thread that requested stop (or the armer's, if it came first).
    void on_stop() noexcept {
        if (!state_->forget_hook(*this)) return; // the completer has it: it resumes
        if (stopped_) stopped_(*this);
        wake();
    }

    stopped_fn stopped_;
    coroutine_root* root_ = nullptr;
    const std::stop_source* stop_ = nullptr;
    future_state<T>* state_ = nullptr;
    std::coroutine_handle<> awaiting_;
    std::atomic<unsigned char> phase_{arming};
    std::exception_ptr why_; // see drop()
    std::optional<std::stop_callback<stop_waker>> stop_callback_;
};

// Holds a future for an awaiter, as its first base: constructed before the
// state_wait that points into it, destroyed after the stop callback.
template <class T>
struct held_future {
    future<T> held;
};

} // namespace crew::detail

#endif
