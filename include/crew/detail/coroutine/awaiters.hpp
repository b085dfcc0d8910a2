#ifndef CREW_DETAIL_COROUTINE_AWAITERS_HPP
#define CREW_DETAIL_COROUTINE_AWAITERS_HPP

// The awaiters behind crew::resume_on, crew::sleep_for and co_await on a
// crew::future (crew/coroutine.hpp documents them). Each checks the chain's
// stop request before it suspends and again when it resumes.

#include <crew/detail/coroutine/chain.hpp>
#include <crew/detail/coroutine/driver.hpp>
#include <crew/detail/coroutine/stop.hpp>
#include <crew/detail/future/future_state.hpp>
#include <crew/future.hpp>

#include <chrono>
#include <coroutine>
#include <exception>
#include <utility>

namespace crew::detail {

// No early wake-up: a stop requested while the resumption is queued is seen
// when it runs.
template <class Pool>
class resume_on_awaiter {
  public:
    explicit resume_on_awaiter(Pool& pool) noexcept : pool_(pool) {}
    bool await_ready() const noexcept { return false; }
    template <class Promise>
    bool await_suspend(std::coroutine_handle<Promise> self) {
        coroutine_root* const root = root_of(self);
        stop_ = chain_stop(root);
        if (stop_requested(stop_)) return false; // await_resume throws
        Pool& pool = pool_; // this awaiter lives in the frame, which may be gone once queued
        submit_resumption(self, [&] { pool.execute(resume_task(self, root)); });
        return true;
    }
    void await_resume() const { throw_if_stopped(stop_); }

  private:
    Pool& pool_;
    const std::stop_source* stop_ = nullptr;
};

// The queued half of a sleep: it does nothing; its completing the timer's
// state (the awaiter is its completion hook) resumes the coroutine.
struct timer_tick {
    void operator()() const noexcept {}
};

// A sleep is a scheduled no-op whose state the coroutine waits on, so that
// a stop request can take the wait back (forget_hook), cancel the timer and
// resume the coroutine at once. The timer task dropped unrun (shutdown_now's
// list destroyed, a shutdown policy) or refused after it was queued
// (discard_oldest_policy) drops the chain, as a queued resume_task does.
template <class Pool>
class sleep_awaiter : held_future<void>, public state_wait<void> {
  public:
    sleep_awaiter(Pool& pool, std::chrono::nanoseconds delay) noexcept
        : state_wait<void>(&on_timer, &cancel_timer), pool_(pool), delay_(delay) {}
    bool await_ready() const noexcept { return false; }
    template <class Promise>
    bool await_suspend(std::coroutine_handle<Promise> self) {
        bind(root_of(self));
        if (stop_requested()) return false; // await_resume throws
        held = pool_.schedule(delay_, timer_tick{}); // abort_policy throws from the co_await
        future_state<void>& timer = *future_access::state(held);
        CREW_SEAM(coroutine_timer_queued);
        switch (arm(timer, self)) {
        case armed_as::suspended: return true;
        case armed_as::woken: return false;
        case armed_as::done_before: break;
        }
        if (timer.has_value()) { // due at once, and run before we could wait: continue on the pool all the same
            Pool& pool = pool_;
            coroutine_root* const chain = root();
            submit_resumption(self, [&] { pool.execute(resume_task(self, chain)); });
            return true;
        }
        if (timer.is_cancelled()) { // dropped unrun already
            abandon_chain(root(), nullptr);
            return true;
        }
        return false; // refused: await_resume rethrows the policy's rejected_execution_error
    }
    void await_resume() {
        disarm();
        throw_if_stopped();
        if (!future_access::state(held)->has_value()) (void)held.get();
    }

  private:
    static sleep_awaiter& self_of(completion_hook& hook) noexcept {
        return static_cast<sleep_awaiter&>(static_cast<state_wait<void>&>(hook));
    }
    static void on_timer(completion_hook& hook) noexcept {
        sleep_awaiter& self = self_of(hook);
        future_state<void>& timer = *future_access::state(self.held);
        if (timer.has_value()) return self.wake();
        std::exception_ptr why;
        if (!timer.is_cancelled()) {
            try {
                self.held.get();
            } catch (...) {
                why = std::current_exception();
            }
        }
        self.drop(std::move(why));
    }
    // It leaves the queue (remove_on_cancel), or shutdown() drops it.
    static void cancel_timer(state_wait<void>& self) noexcept {
        (void)static_cast<sleep_awaiter&>(self).held.cancel(false);
    }

    Pool& pool_;
    std::chrono::nanoseconds delay_;
};

// The awaiter lives in the suspended coroutine's frame, so it is the
// completion hook itself: awaiting allocates nothing.
template <class T>
class future_awaiter : public state_wait<T> {
  public:
    explicit future_awaiter(future<T>& f) noexcept : state_wait<T>(&state_wait<T>::wake_on_done, nullptr), future_(f) {}
    bool await_ready() const noexcept { return false; } // await_suspend reads the chain's stop first
    template <class Promise>
    bool await_suspend(std::coroutine_handle<Promise> self) {
        this->bind(root_of(self));
        if (this->stop_requested()) return false; // await_resume throws
        auto* state = future_access::state(future_);
        if (state == nullptr || state->is_done()) return false; // await_resume's get() throws no_state, or returns
        return this->arm(*state, self) == state_wait<T>::armed_as::suspended;
    }
    T await_resume() {
        this->disarm();
        this->throw_if_stopped();
        return future_.get();
    }

  private:
    future<T>& future_;
};

template <class T>
class owning_future_awaiter : held_future<T>, public future_awaiter<T> {
  public:
    explicit owning_future_awaiter(future<T>&& f) noexcept
        : held_future<T>{std::move(f)}, future_awaiter<T>(this->held) {}
};

} // namespace crew::detail

#endif
