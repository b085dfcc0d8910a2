#ifndef CREW_WHEN_ALL_SUCCEED_HPP
#define CREW_WHEN_ALL_SUCCEED_HPP

/// \file
/// `crew::when_all_succeed`: the values of every input future, or the first
/// failure as soon as it happens (folly's `collect`; Java's `allOf` with a
/// fail-fast check written by hand).

#include <crew/detail/future/aggregate_state.hpp>
#include <crew/detail/future/future_state.hpp>
#include <crew/future.hpp>
#include <crew/when_all.hpp> // the range helpers

#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace crew {

namespace detail {

// Counts the inputs down from n + 1, as when_all does (the extra one is the
// registration). The first input to fail or be cancelled completes the
// state with its error at once and cancels (cancel(true)) the others; the
// last to finish, if none failed, moves the values out.
template <class R, class Seq>
class succeed_state final : public aggregate_state<R, succeed_state<R, Seq>> {
  public:
    explicit succeed_state(Seq&& inputs) : inputs_(std::move(inputs)) {
        std::size_t n = 0;
        for_each_input(inputs_, [&](std::size_t, auto&) { ++n; });
        hooks_ = std::make_unique<input_hook[]>(n);
        left_.store(n + 1, std::memory_order_relaxed);
    }

    void listen_all() noexcept {
        for_each_input(inputs_, [&](std::size_t i, auto& f) { this->attach(hooks_[i], i, future_access::state(f)); });
        count_down();
    }

    void input_done(std::size_t index) noexcept {
        for_each_input(inputs_, [&](std::size_t i, auto& f) {
            if (i == index) check(f);
        });
        count_down();
    }

    void cancel_inputs() noexcept { cancel_each(inputs_); }

  private:
    template <class T>
    void check(future<T>& f) noexcept {
        if (future_access::state(f)->has_value()) return;
        bool report;
        std::exception_ptr error = take_failure(f, report);
        if (!failed_.exchange(true, std::memory_order_acq_rel)) {
            (void)this->set_exception(std::move(error), report);
            cancel_each(inputs_); // their outcomes are no longer wanted
        }
    }

    void count_down() noexcept {
        if (left_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        if (!failed_.load(std::memory_order_acquire) && this->is_pending()) {
            try {
                if constexpr (std::is_void_v<R>) {
                    for_each_input(inputs_, [](std::size_t, auto& f) { f.get(); });
                    (void)this->set_value();
                } else {
                    (void)this->set_value(values());
                }
            } catch (...) { // a value that could not be moved
                (void)this->set_exception(std::current_exception());
            }
        }
        this->release(); // the completer's: every hook has run
    }

    R values() {
        if constexpr (std::is_same_v<Seq, std::tuple<>>) {
            return R{};
        } else if constexpr (requires { inputs_.size(); }) {
            R out;
            out.reserve(inputs_.size());
            for (auto& f : inputs_) out.push_back(f.get());
            return out;
        } else {
            return std::apply([](auto&... f) { return R(f.get()...); }, inputs_);
        }
    }

    Seq inputs_;
    std::unique_ptr<input_hook[]> hooks_;
    std::atomic<std::size_t> left_{1};
    std::atomic<bool> failed_{false};
};

template <class R, class Seq>
future<R> make_succeed(Seq&& inputs) {
    auto* state = new succeed_state<R, Seq>(std::move(inputs));
    future<R> result = future_access::make<R>(state);
    state->listen_all();
    return result;
}

} // namespace detail

/// A future of the values of `futures` (a range of `crew::future<T>`, moved
/// from), in order, once every one has succeeded; or the first failure
/// (a cancelled input fails it with `cancellation_error`) as soon as it
/// happens, the inputs still pending then cancelled with `cancel(true)`.
/// folly: `collect`. For `future<void>` inputs the result is a
/// `future<void>`. No thread blocks meanwhile. `cancel(true)` on the result
/// cancels every input. Empty: done at once. Throws `std::invalid_argument`
/// for a future without a state.
template <class Range>
    requires std::ranges::input_range<Range> && requires { typename detail::future_value<detail::range_future_t<Range>>::type; }
auto when_all_succeed(Range&& futures) {
    using T = typename detail::future_value<detail::range_future_t<Range>>::type;
    using R = std::conditional_t<std::is_void_v<T>, void, std::vector<T>>;
    static_assert(!std::is_reference_v<T>, "crew: when_all_succeed() of future<T&>: collect the pointers yourself");
    std::vector<future<T>> inputs = detail::take_futures<T>(std::forward<Range>(futures));
    for (const future<T>& f : inputs) detail::require_valid_input(f, "when_all_succeed");
    return detail::make_succeed<R>(std::move(inputs));
}

/// As the range form, for futures of different types: a tuple of their
/// values. Every `T` must be an object type (use the range form, or
/// `when_all`, for `future<void>`).
template <class... T>
future<std::tuple<T...>> when_all_succeed(future<T>&&... fs) {
    static_assert((std::is_object_v<T> && ...),
                  "crew: when_all_succeed(futures...) needs futures of values (not void, not references)");
    (detail::require_valid_input(fs, "when_all_succeed"), ...);
    return detail::make_succeed<std::tuple<T...>>(std::tuple<future<T>...>(std::move(fs)...));
}

} // namespace crew

#endif
