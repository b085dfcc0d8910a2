#ifndef CREW_PROMISE_HPP
#define CREW_PROMISE_HPP

/// \file
/// `crew::promise<T>`: a future completed by hand (Java: a `CompletableFuture`
/// made with `new`; folly: `Promise`), and `make_ready_future` /
/// `make_exceptional_future`, futures done from the start.

#include <crew/detail/future/future_state.hpp>
#include <crew/errors.hpp>
#include <crew/future.hpp>

#include <exception>
#include <future>
#include <type_traits>
#include <utility>

namespace crew {

namespace detail {

// A state no task owns: the promise holds the "task" reference, and the
// future's until get_future() hands it out.
template <class T>
class promise_state final : public future_state<T> {
  public:
    promise_state() noexcept : future_state<T>(&destroy, nullptr) {}

  public:
    // From the recycler, as a submit's state: made and freed on different threads.
    static void* operator new(std::size_t size) { return recycler::allocate(size, alignof(promise_state)); }
    static void operator delete(void* p, std::size_t size) noexcept { recycler::deallocate(p, size, alignof(promise_state)); }

  private:
    static void destroy(future_state<T>* self) noexcept { delete static_cast<promise_state*>(self); }
};

} // namespace detail

/// The producer's end of a `crew::future<T>`.
///
/// Move-only. `get_future()` may be called once (a second call throws
/// `std::future_error`, `future_already_retrieved`); `set_value` or
/// `set_exception` once (a second throws `std::future_error`,
/// `promise_already_satisfied`). A promise destroyed unset completes its
/// future with `crew::broken_promise`. The future behaves as any crew
/// future (`then`, `when_all`, `co_await`, `within`); if its holder
/// cancels it, a later `set_value` is dropped without error, and
/// `is_cancelled()` tells the producer it may stop.
///
/// Thread safety: `set_*` and `is_cancelled` may be called from any thread,
/// concurrently with anything done on the future; one thread at a time
/// calls the promise's own members.
template <class T>
class promise {
  public:
    promise() : state_(new detail::promise_state<T>) {}
    promise(promise&& other) noexcept
        : state_(std::exchange(other.state_, nullptr)), retrieved_(other.retrieved_), satisfied_(other.satisfied_) {}
    promise& operator=(promise&& other) noexcept {
        if (this != &other) {
            abandon();
            state_ = std::exchange(other.state_, nullptr);
            retrieved_ = other.retrieved_;
            satisfied_ = other.satisfied_;
        }
        return *this;
    }
    promise(const promise&) = delete;
    promise& operator=(const promise&) = delete;
    ~promise() { abandon(); }

    /// The future this promise completes; once.
    future<T> get_future() {
        require_state();
        if (retrieved_) throw std::future_error(std::future_errc::future_already_retrieved);
        retrieved_ = true; // the state's second reference is the future's
        return detail::future_access::make<T>(static_cast<detail::future_state<T>*>(state_));
    }

    /// Completes the future with a value (`set_value()` for `promise<void>`).
    template <class... U>
        requires(std::is_void_v<T> ? sizeof...(U) == 0 : sizeof...(U) == 1)
    void set_value(U&&... value) {
        claim();
        (void)state_->set_value(std::forward<U>(value)...);
    }

    /// Completes the future with `error`, which its `get()` rethrows.
    void set_exception(std::exception_ptr error) {
        claim();
        (void)state_->set_exception(std::move(error));
    }

    /// True once the future was cancelled (its value would be dropped).
    bool is_cancelled() const noexcept { return state_ && state_->is_cancelled(); }

  private:
    void require_state() const {
        if (!state_) throw std::future_error(std::future_errc::no_state);
    }
    void claim() {
        require_state();
        if (satisfied_) throw std::future_error(std::future_errc::promise_already_satisfied);
        satisfied_ = true;
    }
    void abandon() noexcept {
        if (!state_) return;
        if (!satisfied_)
            (void)state_->set_exception(std::make_exception_ptr(broken_promise("crew: the promise was destroyed unset")));
        if (!retrieved_) state_->release(); // the future's, never handed out
        std::exchange(state_, nullptr)->release();
    }

    detail::promise_state<T>* state_;
    bool retrieved_ = false;
    bool satisfied_ = false;
};

/// A future done at once with `value`. Java: `completedFuture`; folly: `makeFuture`.
template <class T>
future<std::decay_t<T>> make_ready_future(T&& value) {
    promise<std::decay_t<T>> p;
    future<std::decay_t<T>> f = p.get_future();
    p.set_value(std::forward<T>(value));
    return f;
}

/// A `future<void>` done at once.
inline future<void> make_ready_future() {
    promise<void> p;
    future<void> f = p.get_future();
    p.set_value();
    return f;
}

/// A future failed at once with `error`. Java: `failedFuture`.
template <class T>
future<T> make_exceptional_future(std::exception_ptr error) {
    promise<T> p;
    future<T> f = p.get_future();
    p.set_exception(std::move(error));
    return f;
}

} // namespace crew

#endif
