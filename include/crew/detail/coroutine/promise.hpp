#ifndef CREW_DETAIL_COROUTINE_PROMISE_HPP
#define CREW_DETAIL_COROUTINE_PROMISE_HPP

// Room detail/coroutine/ (README): the machinery of crew::coroutine and
// crew::spawn: promises (this header), the trampoline that resumes frames,
// the chain that owns suspended frames, the awaiters and the stop requests.
// It may include detail/future/ (a spawned chain completes a future) and
// detail/sync/.

#include <crew/detail/coroutine/chain.hpp>
#include <crew/detail/coroutine/driver.hpp>

#include <concepts>
#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

namespace crew {

template <class T>
class coroutine; // crew/coroutine.hpp

namespace detail {

// What every crew::coroutine promise shares: laziness, the awaiting parent
// (resumed by symmetric transfer at the end), the chain's root, the error.
class coroutine_promise_base {
  public:
    std::suspend_always initial_suspend() const noexcept { return {}; }

    struct final_awaiter {
        bool await_ready() const noexcept { return false; }
        template <class Promise>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> self) noexcept {
            return transfer(self, self.promise().continuation_);
        }
        void await_resume() const noexcept {}
    };
    final_awaiter final_suspend() const noexcept { return {}; }

    void unhandled_exception() noexcept { error_ = std::current_exception(); }

    coroutine_root* chain_root() const noexcept { return root_; }
    void start_as_child(std::coroutine_handle<> parent, coroutine_root* root) noexcept {
        continuation_ = parent;
        root_ = root;
    }

  protected:
    void rethrow_if_failed() const {
        if (error_) std::rethrow_exception(error_);
    }

  private:
    std::coroutine_handle<> continuation_ = std::noop_coroutine();
    coroutine_root* root_ = nullptr;
    std::exception_ptr error_;
};

// Where a coroutine's co_return puts its value: return_value and the value
// for an object type, return_void for void (a promise may have only one).
template <class T>
class coroutine_return {
  public:
    template <class U>
        requires std::convertible_to<U&&, T>
    void return_value(U&& value) {
        value_.emplace(std::forward<U>(value));
    }

  protected:
    T take_value() { return std::move(*value_); }

  private:
    std::optional<T> value_;
};

template <>
class coroutine_return<void> {
  public:
    void return_void() const noexcept {}

  protected:
    void take_value() const noexcept {}
};

// The promise_type of crew::coroutine<T>.
template <class T>
class coroutine_promise : public coroutine_promise_base, public coroutine_return<T> {
  public:
    coroutine<T> get_return_object() noexcept {
        return coroutine<T>(std::coroutine_handle<coroutine_promise>::from_promise(*this));
    }
    T result() {
        rethrow_if_failed();
        return this->take_value();
    }
};

} // namespace detail

} // namespace crew

#endif
