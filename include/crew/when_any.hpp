#ifndef CREW_WHEN_ANY_HPP
#define CREW_WHEN_ANY_HPP

/// \file
/// `crew::when_any`: a future that is done once the first of its input
/// futures is done (Java's `CompletableFuture.anyOf`, folly's `collectAny`),
/// handing every input back with the first one's index.

#include <crew/detail/aggregate_state.hpp>
#include <crew/detail/future_state.hpp>
#include <crew/future.hpp>
#include <crew/when_all.hpp> // the range helpers

#include <atomic>
#include <cstddef>
#include <limits>
#include <memory>
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

namespace detail {

// Two things complete it, in either order: the registration's end and the
// first input to finish (the winner). The state outlives the hooks left on
// the losers: the completer's reference goes once every hook has run.
template <class T>
class when_any_range_state final
    : public aggregate_state<when_any_result<std::vector<future<T>>>, when_any_range_state<T>> {
  public:
    explicit when_any_range_state(std::vector<future<T>>&& fs)
        : inputs_(std::move(fs)), hooks_(std::make_unique<input_hook[]>(inputs_.size())), left_(inputs_.size() + 1) {}

    void listen_all() noexcept {
        for (std::size_t i = 0; i < inputs_.size(); ++i) this->attach(hooks_[i], i, future_access::state(inputs_[i]));
        if (ready_.fetch_sub(1, std::memory_order_acq_rel) == 1) complete();
    }

    void input_done(std::size_t index) noexcept {
        std::size_t none = no_winner;
        if (winner_.compare_exchange_strong(none, index, std::memory_order_acq_rel) &&
            ready_.fetch_sub(1, std::memory_order_acq_rel) == 1)
            complete();
        drop();
    }

  private:
    static constexpr std::size_t no_winner = std::numeric_limits<std::size_t>::max();

    void complete() noexcept {
        try {
            this->set_value(when_any_result<std::vector<future<T>>>{winner_.load(std::memory_order_acquire),
                                                                    std::move(inputs_)});
        } catch (...) {
            this->set_exception(std::current_exception());
        }
        drop();
    }
    void drop() noexcept {
        if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) this->release();
    }

    std::vector<future<T>> inputs_;
    std::unique_ptr<input_hook[]> hooks_;
    std::atomic<std::size_t> winner_{no_winner};
    std::atomic<int> ready_{2};      // the registration's end, and the winner
    std::atomic<std::size_t> left_;  // hooks yet to run, plus the completion
};

} // namespace detail

/// A future of the first of `futures` (a range of `crew::future<T>`, moved
/// from) to be done: succeeded, failed or cancelled. It hands back every
/// input, in order, with that one's index; the aggregate itself never fails.
/// No thread blocks meanwhile: the first input to finish completes it, on
/// its own thread. The bookkeeping (a few words per input) lives until every
/// input is done. Awaitable with `co_await`. Throws `std::invalid_argument`
/// for an empty range or a future without a state.
template <class Range>
    requires std::ranges::input_range<Range> && requires { typename detail::future_value<detail::range_future_t<Range>>::type; }
auto when_any(Range&& futures) {
    using T = typename detail::future_value<detail::range_future_t<Range>>::type;
    using R = when_any_result<std::vector<future<T>>>;
    std::vector<future<T>> inputs = detail::take_futures<T>(std::forward<Range>(futures));
    if (inputs.empty()) throw std::invalid_argument("crew: when_any() needs at least one future");
    for (const future<T>& f : inputs) detail::require_valid_input(f, "when_any");
    auto* state = new detail::when_any_range_state<T>(std::move(inputs));
    future<R> result = detail::future_access::make<R>(state);
    state->listen_all();
    return result;
}

} // namespace crew

#endif
