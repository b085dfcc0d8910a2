#ifndef CREW_IMPL_EXECUTOR_SERVICE_HPP
#define CREW_IMPL_EXECUTOR_SERVICE_HPP

// The executor service of crew::basic_executor (Java's AbstractExecutorService):
// turning callables into tasks, submit and its future, invoke_all and
// invoke_any. Everything here goes through try_execute (impl/thread_pool.hpp)
// or, on a scheduled pool, schedule_once (impl/scheduled_executor.hpp).
//
// Included at the end of <crew/basic_executor.hpp>, whose class body declares
// (and documents) every member defined here; including this file alone
// includes that header first.

#include <crew/basic_executor.hpp>
#include <crew/detail/future/invoke_any.hpp>
#include <crew/detail/future/submit.hpp>

namespace crew {

template <class Q, class R, class TF, class L>
template <class F>
task basic_executor<Q, R, TF, L>::make_task(F&& f) const {
    return detail::make_pool_task(std::forward<F>(f), this, [this](auto&& made) {
        return this->stamped_if_observed(std::forward<decltype(made)>(made));
    });
}

// Counts `t` in rejected_task_count(), then hands it to the RejectPolicy,
// which may throw, block (block_policy: the queue's lock), or run it here.
template <class Q, class R, class TF, class L>
void basic_executor<Q, R, TF, L>::reject(task&& t) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    rejection_context<basic_executor> context(*this);
    reject_policy_.rejected_execution(std::move(t), context);
}

// A ready-made crew::task (say, from any_executor) is stamped whole, which
// costs an allocation (it no longer fits inline), and keeps its priority.
template <class Q, class R, class TF, class L>
template <class F>
task basic_executor<Q, R, TF, L>::stamped_if_observed(F&& f) const {
    if (observer_.load(std::memory_order_relaxed) != nullptr) [[unlikely]] {
        if constexpr (std::same_as<std::remove_cvref_t<F>, task>) {
            const int priority = f.priority();
            return task(prioritized<task>{priority, stamped(std::forward<F>(f))});
        } else {
            return stamped(std::forward<F>(f));
        }
    }
    return task(std::forward<F>(f));
}

// Out of line, so that execute's inlined path stays as short as with no
// observer at all.
template <class Q, class R, class TF, class L>
template <class F>
[[gnu::noinline]] task basic_executor<Q, R, TF, L>::stamped(F&& f) {
    return task(detail::stamped<std::decay_t<F>>(std::forward<F>(f), detail::clock::now()));
}

template <class Q, class R, class TF, class L>
template <class F>
auto basic_executor<Q, R, TF, L>::submit(F&& f) {
    return submit_tagged<false>(std::forward<F>(f));
}

template <class Q, class R, class TF, class L>
template <class F>
auto basic_executor<Q, R, TF, L>::try_submit(F&& f) {
    return submit_tagged<true>(std::forward<F>(f));
}

template <class Q, class R, class TF, class L>
template <bool TryOnly, class F>
auto basic_executor<Q, R, TF, L>::submit_tagged(F&& f) {
    if constexpr (detail::is_prioritized<std::remove_cvref_t<F>>) {
        const int priority = f.priority;
        return submit_with_priority<TryOnly>(std::forward<F>(f).function, priority);
    } else {
        return submit_with_priority<TryOnly>(std::forward<F>(f), 0);
    }
}

template <class Q, class R, class TF, class L>
template <bool TryOnly, class F>
auto basic_executor<Q, R, TF, L>::submit_with_priority(F&& f, int priority) {
    using D = std::decay_t<F>;
    if constexpr (!detail::submittable<D>) {
        return detail::refuse_unsubmittable<D>();
    } else if constexpr (is_scheduling) {
        (void)priority; // a delayed queue orders by due time only
        return schedule_once<TryOnly>(detail::clock::now(), std::forward<F>(f));
    } else {
        return submit_now<TryOnly>(std::forward<F>(f), priority);
    }
}

// try_submit: a refused task dies unrun inside submit_through, which
// cancels the state; its future is dropped here, unseen.
template <class Q, class R, class TF, class L>
template <bool TryOnly, class F>
auto basic_executor<Q, R, TF, L>::submit_now(F&& f, int priority) {
    const auto stamp = [this](auto&& made) { return this->stamped_if_observed(std::forward<decltype(made)>(made)); };
    if constexpr (TryOnly) {
        bool accepted = false;
        auto handle = detail::submit_through(std::forward<F>(f), priority, this, stamp,
                                             [this, &accepted](task& t) { accepted = try_execute(t); });
        using answer = std::optional<decltype(handle)>;
        return accepted ? answer(std::move(handle)) : answer();
    } else {
        return detail::submit_through(std::forward<F>(f), priority, this, stamp, [this](task& t) {
            if (!try_execute(t)) reject(std::move(t));
        });
    }
}

// Submits each element of `tasks` (`wrap(element, index)` may decorate it);
// on a throw, cancels what was submitted.
template <class Q, class R, class TF, class L>
template <class Range, class Wrap>
auto basic_executor<Q, R, TF, L>::submit_each(Range&& tasks, Wrap wrap) {
    // Elements are moved from an rvalue range, so that move-only callables work.
    using element = detail::range_element_t<Range>;
    using handle = decltype(submit(wrap(std::declval<element>(), std::size_t{})));
    std::vector<handle> futures;
    if constexpr (std::ranges::sized_range<Range>) futures.reserve(std::ranges::size(tasks));
    // A future that cannot be stored (out of memory) cancels its task first.
    auto keep = [&futures](handle&& submitted) {
        try {
            futures.push_back(std::move(submitted));
        } catch (...) {
            submitted.cancel(true);
            throw;
        }
    };
    try {
        for (auto&& f : tasks) {
            if constexpr (std::is_lvalue_reference_v<Range>) keep(submit(wrap(f, futures.size())));
            else keep(submit(wrap(std::move(f), futures.size())));
        }
    } catch (...) {
        for (auto& f : futures) f.cancel(true);
        throw;
    }
    return futures;
}

// An lvalue range of move-only callables is refused with one sentence
// (detail::refuse_untakable_callables) before anything else is instantiated.
template <class Q, class R, class TF, class L>
template <class Range>
auto basic_executor<Q, R, TF, L>::invoke_all(Range&& tasks) {
    if constexpr (!detail::takes_its_callables<Range>) {
        return detail::refuse_untakable_callables<Range>();
    } else {
        auto futures = submit_each(std::forward<Range>(tasks), [](auto&& f, std::size_t) -> decltype(auto) {
            return std::forward<decltype(f)>(f);
        });
        for (auto& f : futures) f.wait();
        return futures;
    }
}

template <class Q, class R, class TF, class L>
template <class Range>
auto basic_executor<Q, R, TF, L>::invoke_any(Range&& tasks) {
    if constexpr (!detail::takes_its_callables<Range>) {
        return detail::refuse_untakable_callables<Range>();
    } else {
        if (std::ranges::empty(tasks)) throw std::invalid_argument("crew: invoke_any() needs at least one task");
        auto tracker = std::make_shared<detail::completion_tracker>(std::ranges::size(tasks));
        auto futures = submit_each(std::forward<Range>(tasks), [&tracker](auto&& f, std::size_t index) {
            using F = std::decay_t<decltype(f)>;
            return detail::tracked_callable<F>(std::forward<decltype(f)>(f), tracker, index);
        });
        // The losers' outcomes are deliberately ignored: a failure among them is
        // not an exception that vanished.
        auto cancel_others = [&futures] {
            for (auto& f : futures) {
                if (!f.valid()) continue;
                f.cancel(true);
                f.state()->forget_error();
            }
        };
        std::exception_ptr last_failure;
        for (std::size_t finished = 0; finished < futures.size(); ++finished) {
            auto& candidate = futures[tracker->next()];
            try {
                using result = decltype(candidate.get());
                if constexpr (std::is_void_v<result>) {
                    candidate.get();
                    cancel_others();
                    return;
                } else {
                    result value = candidate.get();
                    cancel_others();
                    return value;
                }
            } catch (...) {
                last_failure = std::current_exception();
            }
        }
        std::rethrow_exception(last_failure);
    }
}

} // namespace crew

#endif
