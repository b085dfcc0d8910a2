#ifndef CREW_DETAIL_FUTURE_LINKED_STATE_HPP
#define CREW_DETAIL_FUTURE_LINKED_STATE_HPP

// A future's state derived from other futures (then, within, on_timeout,
// when_all and the rest): what it needs to pass an outcome on and to cancel
// what it waits for.
//
// - cancel_step: cancelling the end of a chain cancels (cancel(true)) the
//   futures it waits for, which cancel theirs in turn. Nested that way a
//   100,000-link chain would take a frame per link, so past a few nested
//   steps on one thread the next waits in the thread's list and the
//   outermost step runs it (as run_hooks bounds completion hooks).
// - upstream_ref: a counted reference to a state of any result type, kept
//   only to cancel it (then's source, whose result type differs).
// - linked_state<T>: a state that cancels its upstream with it, and that
//   may take its outcome from another future<T> (relay_from: a flattening
//   then's inner future, within's source).
// - pass_outcome: moves a done state's outcome into another, keeping the
//   source's decision to report an unread error.

#include <crew/detail/future/future_state.hpp>

#include <atomic>
#include <exception>
#include <type_traits>
#include <utility>

namespace crew::detail {

// One cancellation of the futures a state waits for, deferrable.
struct cancel_step {
    void (*run)(cancel_step&) noexcept = nullptr;     // cancels the upstreams
    void (*release)(cancel_step&) noexcept = nullptr; // drops the reference a deferred step holds
    void* owner = nullptr;
    cancel_step* next = nullptr;
};

struct cancel_walk {
    static constexpr int inline_depth = 16; // nested steps before they wait
    cancel_step* waiting = nullptr;
    int depth = 0;
};
inline thread_local cancel_walk this_thread_cancels;

// Runs `step` now, or, `inline_depth` steps deep, after the outermost one:
// `keep` (called then) must keep the step's owner alive until its release.
template <class Keep>
void run_cancel_step(cancel_step& step, Keep keep) noexcept {
    cancel_walk& walk = this_thread_cancels;
    if (walk.depth >= cancel_walk::inline_depth) {
        keep();
        step.next = std::exchange(walk.waiting, &step);
        return;
    }
    ++walk.depth;
    step.run(step);
    if (walk.depth == 1)
        while (cancel_step* const waiting = walk.waiting) {
            walk.waiting = waiting->next;
            waiting->run(*waiting);
            waiting->release(*waiting);
        }
    --walk.depth;
}

// A counted reference to a future's state, of any result type, to cancel
// it with. Set once, before the state that holds it is shared; then taken
// once, by whichever comes first: a cancel, or a drop once the upstream is
// done (a chain keeps no link alive behind the one it waits for, and its
// end never frees a hundred thousand links in one recursion).
class upstream_ref {
  public:
    upstream_ref() noexcept = default;
    upstream_ref(const upstream_ref&) = delete;
    upstream_ref& operator=(const upstream_ref&) = delete;
    ~upstream_ref() { drop(); }

    template <class U>
    void reset(future_state<U>* state) noexcept {
        state->add_ref();
        cancel_ = [](void* s) noexcept { (void)static_cast<future_state<U>*>(s)->cancel(true); };
        release_ = [](void* s) noexcept { static_cast<future_state<U>*>(s)->release(); };
        state_.store(state, std::memory_order_release);
    }
    void cancel() noexcept {
        if (void* s = state_.exchange(nullptr, std::memory_order_acq_rel)) {
            cancel_(s);
            release_(s);
        }
    }
    void drop() noexcept {
        if (void* s = state_.exchange(nullptr, std::memory_order_acq_rel)) release_(s);
    }

  private:
    std::atomic<void*> state_{nullptr};
    void (*cancel_)(void*) noexcept = nullptr;
    void (*release_)(void*) noexcept = nullptr;
};

// Moves the outcome of `from` (done; its result not yet taken) into `to`:
// a value, the error (reported if unread only where `from` would have
// reported it), or a cancellation. A no-op on a `to` already done.
template <class T>
void pass_outcome(future_state<T>& from, future_state<T>& to) noexcept {
    if (from.is_cancelled()) {
        (void)to.cancel_unrun();
        return;
    }
    const bool report = from.reports_unread_error();
    const bool has_value = from.has_value();
    try {
        if constexpr (std::is_void_v<T>) {
            from.get();
            to.set_value();
        } else {
            to.set_value(from.get());
        }
    } catch (...) {
        to.set_exception(std::current_exception(), !has_value && report);
    }
}

// A state derived from other futures. Cancelled with cancel(true), it
// cancels its upstream (link) and the future it takes its outcome from
// (relay_from); cancel(false) cancels only itself.
template <class T>
class linked_state : public future_state<T> {
  public:
    linked_state(typename future_state<T>::destroy_fn destroy, std::stop_source* stop) noexcept
        : future_state<T>(destroy, stop) {
        this->set_cancel_hook(&on_cancel);
        step_.run = &cancel_upstreams;
        step_.release = &release_owner;
        step_.owner = this;
    }
    ~linked_state() { drop_relayed(); }

    // Cancelled with this one. Call before the state is shared.
    template <class U>
    void link(future_state<U>* upstream) noexcept {
        upstream_.reset(upstream);
    }
    // The upstream is done: nothing left to cancel there.
    void unlink() noexcept { upstream_.drop(); }

    // This state takes the outcome of `from` once it is done, on the thread
    // that completes it (or here, if done already), unless it is done first
    // (a timeout, a cancel). Takes over the caller's reference to `from`.
    // Once: a flattening then's task, or within() before it is shared.
    void relay_from(future_state<T>* from) noexcept {
        // The hook's own reference to `from`: a cancel may take relayed_'s
        // at once, and a hook run deferred (past 16 nested runs) may run
        // after its completer let go.
        from->add_ref();
        relay_hook_.state = this;
        relay_hook_.from = from;
        relay_hook_.on_done = &relay_done;
        relayed_.store(from); // seq_cst: against on_cancel's store and load
        if (cancel_upstream_.load()) cancel_relayed(); // cancelled first: on_cancel may have missed it
        this->add_ref();                               // the hook's
        if (!from->call_when_done(relay_hook_)) relay_done(relay_hook_);
    }

    // Cancels (cancel(true)) the upstreams now, or, for one relay_from has
    // not taken yet, as soon as it does: a deadline that fired.
    void cancel_upstreams_now() noexcept {
        cancel_upstream_.store(true);
        run_cancel_step(step_, [&] { this->add_ref(); });
    }

  protected:
    // Called on the relaying thread once the relayed outcome was passed on
    // (or dropped: this state was done first).
    void (*after_relay_)(linked_state&) noexcept = nullptr;

  private:
    struct back_hook : completion_hook {
        linked_state* state = nullptr;
        future_state<T>* from = nullptr; // a reference of the hook's own
    };

    static void relay_done(completion_hook& hook) noexcept {
        auto& h = static_cast<back_hook&>(hook);
        linked_state& self = *h.state;
        pass_outcome(*h.from, self);
        h.from->release();
        self.drop_relayed();
        if (self.after_relay_) self.after_relay_(self);
        self.release();
    }

    void cancel_relayed() noexcept {
        if (future_state<T>* from = relayed_.exchange(nullptr)) {
            (void)from->cancel(true);
            from->release();
        }
    }
    void drop_relayed() noexcept {
        if (future_state<T>* from = relayed_.exchange(nullptr)) from->release();
    }

    static void on_cancel(future_state<T>* self, bool interrupt) noexcept {
        if (!interrupt) return;
        auto& me = static_cast<linked_state&>(*self);
        me.cancel_upstream_.store(true); // seq_cst: see relay_from
        run_cancel_step(me.step_, [&] { me.add_ref(); });
    }
    static void cancel_upstreams(cancel_step& step) noexcept {
        auto& me = *static_cast<linked_state*>(step.owner);
        me.upstream_.cancel();
        me.cancel_relayed();
    }
    static void release_owner(cancel_step& step) noexcept { static_cast<linked_state*>(step.owner)->release(); }

    upstream_ref upstream_;
    std::atomic<future_state<T>*> relayed_{nullptr};
    std::atomic<bool> cancel_upstream_{false};
    back_hook relay_hook_;
    cancel_step step_;
};

} // namespace crew::detail

#endif
