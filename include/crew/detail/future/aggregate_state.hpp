#ifndef CREW_DETAIL_FUTURE_AGGREGATE_STATE_HPP
#define CREW_DETAIL_FUTURE_AGGREGATE_STATE_HPP

// What when_all and when_any share: a future's state that crew completes
// itself (no task runs for it), holding the input futures and one
// completion hook per input. Registering the hooks never blocks; the last
// (when_all) or first (when_any) input to finish completes the state on its
// own thread.
//
// References: the result future holds one, the inputs' hooks the other
// (the "completer"), released once every hook has run, so the hooks, which
// live in this state, outlive every input that may still call them.

#include <crew/detail/future/future_state.hpp>
#include <crew/detail/future/linked_state.hpp>
#include <crew/future.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace crew::detail {

// An input's hook: which aggregate, and which input it is.
struct input_hook : completion_hook {
    void* aggregate = nullptr;
    std::size_t index = 0;
};

// `Derived` provides `void input_done(std::size_t index) noexcept`, called
// once per input, on the thread that completed it, and
// `void cancel_inputs() noexcept`, which cancels (cancel(true)) every
// input: a cancel(true) of the aggregate flows up to its inputs. The inputs
// are still in place then: the aggregate's completion, which moves them
// out, and its cancellation exclude each other (whichever wins the state).
template <class R, class Derived>
class aggregate_state : public future_state<R> {
  public:
    aggregate_state() noexcept : future_state<R>(&destroy, nullptr) {
        this->set_cancel_hook(&on_cancel);
        step_.run = [](cancel_step& s) noexcept { static_cast<Derived*>(s.owner)->cancel_inputs(); };
        step_.release = [](cancel_step& s) noexcept { static_cast<Derived*>(s.owner)->release(); };
        step_.owner = static_cast<Derived*>(this);
    }

  protected:
    // Registers `hook` as input `index`'s on `input`; an input already done
    // counts at once, on this thread. Once every input is attached, call
    // Derived::registered().
    template <class U>
    void attach(input_hook& hook, std::size_t index, future_state<U>* input) noexcept {
        hook.on_done = &on_input_done;
        hook.aggregate = this;
        hook.index = index;
        if (!input->call_when_done(hook)) static_cast<Derived*>(this)->input_done(index);
    }

  private:
    static void on_input_done(completion_hook& h) noexcept {
        auto& hook = static_cast<input_hook&>(h);
        static_cast<Derived*>(static_cast<aggregate_state*>(hook.aggregate))->input_done(hook.index);
    }
    static void destroy(future_state<R>* self) noexcept { delete static_cast<Derived*>(self); }
    static void on_cancel(future_state<R>* self, bool interrupt) noexcept {
        if (!interrupt) return;
        auto& me = static_cast<aggregate_state&>(*self);
        run_cancel_step(me.step_, [&] { me.add_ref(); });
    }

    cancel_step step_;
};

// Calls fn(index, future) for each input of a vector or a tuple of futures.
template <class T, class Fn>
void for_each_input(std::vector<future<T>>& inputs, Fn fn) {
    for (std::size_t i = 0; i < inputs.size(); ++i) fn(i, inputs[i]);
}
template <class... T, class Fn>
void for_each_input(std::tuple<future<T>...>& inputs, Fn fn) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (fn(I, std::get<I>(inputs)), ...);
    }(std::index_sequence_for<T...>{});
}

// cancel(true) on each input (the aggregate's cancel_inputs), but `spare`.
template <class Seq>
void cancel_each(Seq& inputs, std::size_t spare = static_cast<std::size_t>(-1)) noexcept {
    for_each_input(inputs, [&](std::size_t i, auto& f) {
        if (i != spare) (void)f.cancel(true);
    });
}

// Every input must have a state: an empty one could never be done.
template <class T>
void require_valid_input(const future<T>& f, const char* who) {
    if (future_access::state(f) == nullptr)
        throw std::invalid_argument(std::string("crew: ") + who + "() needs futures with a state (not default-constructed or moved from)");
}

} // namespace crew::detail

#endif
