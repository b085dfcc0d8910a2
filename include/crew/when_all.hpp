#ifndef CREW_WHEN_ALL_HPP
#define CREW_WHEN_ALL_HPP

/// \file
/// `crew::when_all`: a future that is done once every input future is done
/// (Java's `CompletableFuture.allOf`, folly's `collectAll`).

#include <crew/detail/future/aggregate_state.hpp>
#include <crew/detail/future/future_state.hpp>
#include <crew/future.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <iterator> // the range concepts, without <ranges>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace crew {

namespace detail {

// Counts the inputs down from n + 1: the extra one is the registration
// itself, so that no input completes the aggregate (and moves the inputs
// out) while hooks are still being registered on them.
template <class R, class Derived>
class countdown_state : public aggregate_state<R, Derived> {
  public:
    void input_done(std::size_t) noexcept { count_down(); }
    void registered() noexcept { count_down(); }

  protected:
    void start(std::size_t n) noexcept { left_.store(n + 1, std::memory_order_relaxed); }

  private:
    // The last one completes the state and releases the completer's
    // reference: every hook has run, none will touch the state again.
    void count_down() noexcept {
        if (left_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        auto& self = *static_cast<Derived*>(this);
        try {
            self.set_value(std::move(self.inputs));
        } catch (...) { // a result that cannot be moved: the aggregate reports it
            self.set_exception(std::current_exception());
        }
        this->release();
    }
    std::atomic<std::size_t> left_{1};
};

template <class... T>
class when_all_of_state final : public countdown_state<std::tuple<future<T>...>, when_all_of_state<T...>> {
  public:
    explicit when_all_of_state(future<T>&&... fs) : inputs(std::move(fs)...) {}
    void cancel_inputs() noexcept { cancel_each(inputs); }
    void listen_all() noexcept {
        this->start(sizeof...(T));
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (this->attach(hooks[I], I, future_access::state(std::get<I>(inputs))), ...);
        }(std::index_sequence_for<T...>{});
        this->registered();
    }

    std::tuple<future<T>...> inputs;
    std::array<input_hook, sizeof...(T)> hooks{};
};

template <class T>
class when_all_range_state final : public countdown_state<std::vector<future<T>>, when_all_range_state<T>> {
  public:
    explicit when_all_range_state(std::vector<future<T>>&& fs)
        : inputs(std::move(fs)), hooks(std::make_unique<input_hook[]>(inputs.size())) {}
    void cancel_inputs() noexcept { cancel_each(inputs); }
    void listen_all() noexcept {
        this->start(inputs.size());
        for (std::size_t i = 0; i < inputs.size(); ++i) this->attach(hooks[i], i, future_access::state(inputs[i]));
        this->registered();
    }

    std::vector<future<T>> inputs;
    std::unique_ptr<input_hook[]> hooks;
};

// The futures of a range, moved into one vector (the range's own, if it
// is a std::vector of futures given as an rvalue).
template <class T, class Range>
std::vector<future<T>> take_futures(Range&& range) {
    if constexpr (std::is_same_v<std::remove_cvref_t<Range>, std::vector<future<T>>> &&
                  !std::is_lvalue_reference_v<Range>) {
        return std::move(range);
    } else {
        std::vector<future<T>> out;
        if constexpr (std::ranges::sized_range<Range>) out.reserve(std::ranges::size(range));
        for (auto&& f : range) out.push_back(std::move(f));
        return out;
    }
}

template <class Range>
using range_future_t = std::remove_cvref_t<std::ranges::range_reference_t<Range>>;

template <class F>
struct future_value;
template <class T>
struct future_value<future<T>> {
    using type = T;
};

} // namespace detail

/// A future of all of `fs`, handed back in a tuple once every one is done
/// (succeeded, failed or cancelled: the aggregate itself never fails; read
/// each input's outcome from its future). No thread blocks meanwhile: the
/// last input to finish completes it, on its own thread. Awaitable with
/// `co_await` like any `crew::future`. `when_all()` of nothing is done at
/// once. Throws `std::invalid_argument` if a future has no state.
template <class... T>
future<std::tuple<future<T>...>> when_all(future<T>&&... fs) {
    (detail::require_valid_input(fs, "when_all"), ...);
    auto* state = new detail::when_all_of_state<T...>(std::move(fs)...);
    future<std::tuple<future<T>...>> result = detail::future_access::make<std::tuple<future<T>...>>(state);
    state->listen_all();
    return result;
}

/// As the variadic form, for a range of `crew::future<T>` (moved from; an
/// rvalue `std::vector` is taken as is). One allocation for the state and
/// one for n hooks, made once; nothing per input after that.
template <class Range>
    requires std::ranges::input_range<Range> && requires { typename detail::future_value<detail::range_future_t<Range>>::type; }
auto when_all(Range&& futures) {
    using T = typename detail::future_value<detail::range_future_t<Range>>::type;
    std::vector<future<T>> inputs = detail::take_futures<T>(std::forward<Range>(futures));
    for (const future<T>& f : inputs) detail::require_valid_input(f, "when_all");
    auto* state = new detail::when_all_range_state<T>(std::move(inputs));
    future<std::vector<future<T>>> result = detail::future_access::make<std::vector<future<T>>>(state);
    state->listen_all();
    return result;
}

} // namespace crew

#endif
