#ifndef CREW_DETAIL_DEADLINE_HPP
#define CREW_DETAIL_DEADLINE_HPP

// future::within and future::on_timeout: a relay state that takes its
// source's outcome, unless a timer fires first; then it fails with
// timeout_error (within) or takes the fallback value (on_timeout), and
// cancels the source (cancel(true)).
//
// References: the result future's, and the timer's (the state's "task"
// reference), which whoever disarms or fires the timer releases, once. The
// relay hook holds a third while it is registered (linked_state).
//
// The timer is armed before the source is linked, so a refused schedule
// leaves the caller's future intact. `phase_` settles the race between the
// source finishing and the creator arming: whichever of the two comes
// second disarms the timer.

#include <crew/detail/deadline_timer.hpp>
#include <crew/detail/linked_state.hpp>
#include <crew/detail/time.hpp>
#include <crew/errors.hpp>
#include <crew/future.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <type_traits>
#include <utility>

namespace crew::detail {

template <class T>
class deadline_state final : public linked_state<T> {
  public:
    using value_type = std::conditional_t<std::is_void_v<T> || std::is_reference_v<T>, char, T>;

    // `fallback`: on_timeout's value (absent for within).
    explicit deadline_state(std::optional<value_type> fallback, bool completes_with_value) noexcept(
        std::is_nothrow_move_constructible_v<value_type>)
        : linked_state<T>(&destroy, nullptr), fallback_(std::move(fallback)), with_value_(completes_with_value) {
        this->after_relay_ = &source_done;
        node_.state = this;
        node_.fire = &fire_node;
    }

    // The process-wide timer; a deadline that never comes arms nothing.
    // Throws only bad_alloc (the timer's reference then dropped).
    template <class Rep, class Period>
    void arm(std::chrono::duration<Rep, Period> timeout) {
        node_.due = saturating_deadline(timeout);
        if (node_.due == clock::time_point::max()) return never_fires();
        timer_kind_ = timer::process;
        try {
            deadline_timer::instance().insert(node_);
        } catch (...) {
            this->release();
            throw;
        }
    }

    // A scheduled pool of the caller's: a task at `timeout` that fires.
    // Throws what its schedule throws (its RejectPolicy; the task's end
    // then dropped the timer's reference).
    template <class Rep, class Period, class Timers>
    void arm(std::chrono::duration<Rep, Period> timeout, Timers& timers) {
        if (saturating_deadline(timeout) == clock::time_point::max()) return never_fires();
        auto scheduled = timers.schedule(timeout, fire_task{this});
        timer_.reset(future_access::state(scheduled));
        timer_kind_ = timer::user;
    }

    // After relay_from: the timer is armed unless the source was done first.
    void armed() noexcept {
        int expected = arming;
        if (!phase_.compare_exchange_strong(expected, armed_phase)) disarm();
    }

  private:
    enum : int { arming, armed_phase, settled };
    enum class timer : unsigned char { none, process, user };

    void never_fires() noexcept { this->release(); } // the timer's reference

    // The scheduled task: fires when run, releases the timer's reference
    // however it ends (run, cancelled, dropped by a shutdown).
    struct fire_task {
        deadline_state* state;
        explicit fire_task(deadline_state* s) noexcept : state(s) {}
        fire_task(fire_task&& other) noexcept : state(std::exchange(other.state, nullptr)) {}
        fire_task& operator=(fire_task&&) = delete;
        ~fire_task() {
            if (state) state->release();
        }
        void operator()() { std::exchange(state, nullptr)->fire(); }
    };

    struct node : timer_node {
        deadline_state* state = nullptr;
    };

    static void destroy(future_state<T>* self) noexcept { delete static_cast<deadline_state*>(self); }

    static void fire_node(timer_node& n) noexcept { static_cast<node&>(n).state->fire(); }

    // The deadline passed: complete (if the source did not) and cancel the
    // source; then drop the timer's reference.
    void fire() noexcept {
        phase_.store(settled, std::memory_order_release);
        bool won;
        if (with_value_) {
            if constexpr (std::is_void_v<T>) won = this->set_value();
            else if constexpr (std::is_reference_v<T>) won = false;
            else {
                try {
                    won = this->set_value(std::move(*fallback_));
                } catch (...) {
                    won = this->set_exception(std::current_exception());
                }
            }
        } else {
            won = this->set_exception(std::make_exception_ptr(timeout_error("crew: the future's deadline passed")));
        }
        if (won) this->cancel_upstreams_now();
        this->release();
    }

    // The relay passed the source's outcome on (or found this done).
    static void source_done(linked_state<T>& base) noexcept {
        auto& self = static_cast<deadline_state&>(base);
        if (self.phase_.exchange(settled, std::memory_order_acq_rel) == armed_phase) self.disarm();
    }

    void disarm() noexcept {
        if (timer_kind_ == timer::user) {
            timer_.cancel(); // the task's end releases the timer's reference
        } else if (timer_kind_ == timer::process && deadline_timer::instance().remove(node_)) {
            this->release(); // it never fires
        }
    }

    node node_;
    upstream_ref timer_; // the scheduled task's state, with a user's pool
    timer timer_kind_ = timer::none; // set by arm, before the state is shared
    std::atomic<int> phase_{arming};
    std::optional<value_type> fallback_;
    bool with_value_;
};

template <class T, class Arm>
future<T> make_deadline(future<T>&& source, std::optional<typename deadline_state<T>::value_type> fallback,
                        bool with_value, Arm arm) {
    auto* state = new deadline_state<T>(std::move(fallback), with_value);
    try {
        arm(*state);
    } catch (...) { // the timer's reference is gone; the result's was never handed out
        state->release();
        throw;
    }
    future<T> result = future_access::make<T>(state);
    state->relay_from(future_access::take(source));
    state->armed();
    return result;
}

} // namespace crew::detail

#endif
