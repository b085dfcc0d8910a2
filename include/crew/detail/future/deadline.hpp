#ifndef CREW_DETAIL_FUTURE_DEADLINE_HPP
#define CREW_DETAIL_FUTURE_DEADLINE_HPP

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

#include <crew/detail/timer/deadline_timer.hpp>
#include <crew/detail/future/linked_state.hpp>
#include <crew/detail/timer/time.hpp>
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
        node_.due = saturating_deadline(timeout);
        if (node_.due == clock::time_point::max()) return never_fires();
        timer_kind_ = timer::user;
        bool dropped;
        try {
            auto scheduled = timers.schedule(timeout, fire_task{this});
            timer_.reset(future_access::state(scheduled));
            dropped = !scheduled_now();
        } catch (...) {
            if (!scheduled_now()) this->release(); // the dropped task left us its reference
            throw;
        }
        // Dropped unrun inside schedule (a discarding policy): the
        // process-wide timer keeps the deadline instead.
        if (dropped) arm_process_timer();
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

    // The scheduled task: fires when run. Destroyed unrun, it hands the
    // timer's reference on: released if the deadline was settled (the
    // source was done first: disarm cancelled it), else the deadline moves
    // to the process-wide timer (the user's pool dropped it, shutting
    // down: the future must not wait for ever), or, while schedule() is
    // still running, to arm(), which decides.
    struct fire_task {
        deadline_state* state;
        explicit fire_task(deadline_state* s) noexcept : state(s) {}
        fire_task(fire_task&& other) noexcept : state(std::exchange(other.state, nullptr)) {}
        fire_task& operator=(fire_task&&) = delete;
        ~fire_task() {
            if (state) state->timer_task_dropped();
        }
        void operator()() { std::exchange(state, nullptr)->fire(); }
    };

    enum : int { scheduling, scheduled, dropped_while_scheduling };

    // arm(): schedule() returned or threw; false if the task was dropped meanwhile.
    bool scheduled_now() noexcept {
        int expected = scheduling;
        return schedule_phase_.compare_exchange_strong(expected, scheduled, std::memory_order_acq_rel);
    }
    void timer_task_dropped() noexcept {
        int expected = scheduling;
        if (schedule_phase_.compare_exchange_strong(expected, dropped_while_scheduling, std::memory_order_acq_rel))
            return; // arm() decides
        if (phase_.load(std::memory_order_acquire) == settled) {
            this->release();
            return;
        }
        try {
            arm_process_timer();
        } catch (...) {
            fire(); // no memory for the timer's heap: better early than never
        }
    }
    void arm_process_timer() {
        on_process_timer_.store(true); // seq_cst: before the insert, against disarm
        deadline_timer::instance().insert(node_);
    }

    struct node : timer_node {
        deadline_state* state = nullptr;
    };

    static void destroy(future_state<T>* self) noexcept { delete static_cast<deadline_state*>(self); }
    // From the recycler, as a submit's state: made and freed on different threads.
  public:
    static void* operator new(std::size_t size) { return recycler::allocate(size, alignof(deadline_state)); }
    static void operator delete(void* p, std::size_t size) noexcept { recycler::deallocate(p, size, alignof(deadline_state)); }

  private:

    static void fire_node(timer_node& n) noexcept { static_cast<node&>(n).state->fire(); }

    // The deadline passed: complete (if the source did not) and cancel the
    // source; then drop the timer's reference.
    void fire() noexcept {
        phase_.store(settled, std::memory_order_release);
        if (this->claim_completion()) {
            // The source is cancelled before anyone wakes (as cancel()
            // requests a stop first): a get() that throws timeout_error
            // finds it cancelled. Its relay, meanwhile, finds this state
            // completing and passes nothing.
            this->cancel_upstreams_now();
            if constexpr (std::is_void_v<T>) {
                if (with_value_) this->set_claimed_value();
                else this->set_claimed_exception(timeout());
            } else if constexpr (std::is_reference_v<T>) {
                this->set_claimed_exception(timeout()); // on_timeout takes no reference
            } else {
                if (with_value_) this->set_claimed_value(std::move(*fallback_));
                else this->set_claimed_exception(timeout());
            }
        }
        this->release();
    }
    static std::exception_ptr timeout() noexcept {
        try {
            return std::make_exception_ptr(timeout_error("crew: the future's deadline passed"));
        } catch (...) {
            return std::current_exception(); // bad_alloc
        }
    }

    // The relay passed the source's outcome on (or found this done).
    static void source_done(linked_state<T>& base) noexcept {
        auto& self = static_cast<deadline_state&>(base);
        if (self.phase_.exchange(settled, std::memory_order_acq_rel) == armed_phase) self.disarm();
    }

    void disarm() noexcept {
        if (timer_kind_ == timer::user) timer_.cancel(); // the task's end hands the timer's reference on
        // A user's deadline moved here (its task dropped) is removed too; one
        // being moved right now is inserted after this look, and fires in
        // vain at its time (the state completed already).
        if ((timer_kind_ == timer::process || on_process_timer_.load()) && deadline_timer::instance().remove(node_))
            this->release(); // it never fires
    }

    node node_;
    upstream_ref timer_; // the scheduled task's state, with a user's pool
    timer timer_kind_ = timer::none; // set by arm, before the state is shared
    std::atomic<int> schedule_phase_{scheduling}; // a user's timer task: see fire_task
    std::atomic<bool> on_process_timer_{false};   // a user's deadline moved to the process-wide timer
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
