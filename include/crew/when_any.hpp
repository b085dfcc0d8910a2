#ifndef CREW_WHEN_ANY_HPP
#define CREW_WHEN_ANY_HPP

/// \file
/// `crew::when_any`: a future that is done once the first of its input
/// futures is done (Java's `CompletableFuture.anyOf`, folly's `collectAny`),
/// handing every input back with the first one's index.

#include <crew/detail/future/aggregate_state.hpp>
#include <crew/detail/future/future_state.hpp>
#include <crew/future.hpp>
#include <crew/when_all.hpp> // the range helpers

#include <atomic>
#include <cstddef>
#include <limits>
#include <memory>
#include <tuple>
#include <stdexcept>
#include <utility>
#include <vector>

namespace crew {

/// What `when_any` hands back: every input future, and the index of the
/// first to be done (the others may still be running).
template <class Seq>
struct when_any_result {
    std::size_t index; ///< the first input to be done
    Seq futures;       ///< the inputs, in their order
};

/// Tag for `when_any(futures, crew::cancel_rest)`: once the first input is
/// done, the others are cancelled with `cancel(true)`.
struct cancel_rest_t {
    explicit cancel_rest_t() = default;
};
inline constexpr cancel_rest_t cancel_rest{};

namespace detail {

// Two things complete it, in either order: the registration's end and the
// first input to finish (the winner). The state outlives the hooks left on
// the losers: the completer's reference goes once every hook has run.
// `Seq`: a vector or a tuple of futures.
template <class Seq>
class when_any_state final : public aggregate_state<when_any_result<Seq>, when_any_state<Seq>> {
  public:
    when_any_state(Seq&& fs, std::size_t n, bool cancel_rest)
        : inputs_(std::move(fs)), hooks_(std::make_unique<input_hook[]>(n)), left_(n + 1), cancel_rest_(cancel_rest) {}

    void listen_all() noexcept {
        for_each_input(inputs_, [&](std::size_t i, auto& f) { this->attach(hooks_[i], i, future_access::state(f)); });
        if (ready_.fetch_sub(1, std::memory_order_acq_rel) == 1) complete();
    }

    void input_done(std::size_t index) noexcept {
        std::size_t none = no_winner;
        if (winner_.compare_exchange_strong(none, index, std::memory_order_acq_rel) &&
            ready_.fetch_sub(1, std::memory_order_acq_rel) == 1)
            complete();
        drop();
    }

    void cancel_inputs() noexcept { cancel_each(inputs_); }

  private:
    static constexpr std::size_t no_winner = std::numeric_limits<std::size_t>::max();

    void complete() noexcept {
        const std::size_t winner = winner_.load(std::memory_order_acquire);
        if (cancel_rest_) cancel_each(inputs_, winner); // before the inputs move out
        try {
            // Built inside the state, and only if it wins: a cancel(true)
            // racing with this one reads the inputs where they are.
            (void)this->set_value(winner, std::move(inputs_));
        } catch (...) {
            (void)this->set_exception(std::current_exception());
        }
        drop();
    }
    void drop() noexcept {
        if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) this->release();
    }

    Seq inputs_;
    std::unique_ptr<input_hook[]> hooks_;
    std::atomic<std::size_t> winner_{no_winner};
    std::atomic<int> ready_{2};      // the registration's end, and the winner
    std::atomic<std::size_t> left_;  // hooks yet to run, plus the completion
    bool cancel_rest_;
};

template <class Seq>
future<when_any_result<Seq>> make_when_any(Seq&& inputs, std::size_t n, bool cancel_rest) {
    using R = when_any_result<Seq>;
    auto* state = new when_any_state<Seq>(std::move(inputs), n, cancel_rest);
    future<R> result = future_access::make<R>(state);
    state->listen_all();
    return result;
}

template <class Range>
auto when_any_of_range(Range&& futures, bool cancel_rest) {
    using T = typename future_value<range_future_t<Range>>::type;
    std::vector<future<T>> inputs = take_futures<T>(std::forward<Range>(futures));
    if (inputs.empty()) throw std::invalid_argument("crew: when_any() needs at least one future");
    for (const future<T>& f : inputs) require_valid_input(f, "when_any");
    const std::size_t n = inputs.size();
    return make_when_any(std::move(inputs), n, cancel_rest);
}

} // namespace detail

/// A future of the first of `futures` (a range of `crew::future<T>`, moved
/// from) to be done: succeeded, failed or cancelled. It hands back every
/// input, in order, with that one's index; the aggregate itself never fails.
/// No thread blocks meanwhile: the first input to finish completes it, on
/// its own thread. The bookkeeping (a few words per input) lives until every
/// input is done. Awaitable with `co_await`. `cancel(true)` on the result
/// cancels every input. Throws `std::invalid_argument` for an empty range
/// or a future without a state.
template <class Range>
    requires std::ranges::input_range<Range> && requires { typename detail::future_value<detail::range_future_t<Range>>::type; }
auto when_any(Range&& futures) {
    return detail::when_any_of_range(std::forward<Range>(futures), false);
}

/// As `when_any(futures)`, and once the first is done the others are
/// cancelled with `cancel(true)` (their stop tokens requested): the race's
/// losers stop working. They are handed back, cancelled or done.
template <class Range>
    requires std::ranges::input_range<Range> && requires { typename detail::future_value<detail::range_future_t<Range>>::type; }
auto when_any(Range&& futures, cancel_rest_t) {
    return detail::when_any_of_range(std::forward<Range>(futures), true);
}

/// As the range form, for futures of different types, handed back in a
/// tuple. At least one future.
template <class T0, class... T>
future<when_any_result<std::tuple<future<T0>, future<T>...>>> when_any(future<T0>&& f0, future<T>&&... fs) {
    detail::require_valid_input(f0, "when_any");
    (detail::require_valid_input(fs, "when_any"), ...);
    return detail::make_when_any(std::tuple<future<T0>, future<T>...>(std::move(f0), std::move(fs)...),
                                 1 + sizeof...(T), false);
}

} // namespace crew

#endif
