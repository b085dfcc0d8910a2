#ifndef CREW_DETAIL_FUTURE_BOUND_CALL_HPP
#define CREW_DETAIL_FUTURE_BOUND_CALL_HPP

// submit(fn, args...) and execute(fn, args...): the callable and its
// arguments, decay-copied as std::thread and std::async copy them, and
// passed as rvalues when the task runs (once).

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace crew::detail {

template <class F, class... Args>
struct bound_call {
    F fn;
    std::tuple<Args...> args;

    decltype(auto) operator()() {
        return std::apply([this](Args&... a) -> decltype(auto) { return std::invoke(std::move(fn), std::move(a)...); },
                          args);
    }
};

template <class F, class... Args>
auto bind_call(F&& fn, Args&&... args) {
    static_assert(std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...>,
                  "crew: submit(fn, args...) needs fn callable with (decayed copies of) args, as std::thread");
    return bound_call<std::decay_t<F>, std::decay_t<Args>...>{std::forward<F>(fn), {std::forward<Args>(args)...}};
}

} // namespace crew::detail

#endif
