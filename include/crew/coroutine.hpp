#ifndef CREW_COROUTINE_HPP
#define CREW_COROUTINE_HPP

/// \file
/// C++20 coroutines on crew pools: `crew::coroutine<T>` (lazy),
/// `crew::spawn(pool, c)` (runs it on the pool, returns a `crew::future<T>`),
/// `co_await crew::resume_on(pool)`, `co_await future`, and
/// `co_await crew::sleep_for(scheduled_pool, d)`. No thread blocks in any
/// of them.
///
/// Ownership, which decides what happens at shutdown: a spawned coroutine
/// and the coroutines it awaits form a chain whose root frame `spawn` made.
/// While the chain is suspended on a pool (its resumption queued there, or
/// waiting for a due time), the queued task owns the chain: destroying that
/// task unrun (say, one `shutdown_now()` returned) destroys the whole chain,
/// locals included, and the spawn's future reports `cancellation_error`. A
/// resumption the RejectPolicy refuses makes the `co_await` throw
/// `rejected_execution_error` (with `abort_policy`, the policy's own).

#include <crew/concepts.hpp>
#include <crew/detail/coroutine_driver.hpp>
#include <crew/detail/future_state.hpp>
#include <crew/errors.hpp>
#include <crew/future.hpp>

#include <chrono>
#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace crew {

template <class T = void>
class coroutine;

namespace detail {

// The root of a spawned chain: its frame, and how to complete the spawn's
// future when the chain is dropped by a reject policy (destroying the frame
// alone completes it with cancellation_error).
struct coroutine_root {
    std::coroutine_handle<> frame;
    void* owner = nullptr;
    void (*reject)(void* owner, std::exception_ptr why) noexcept = nullptr;
};

// The root a coroutine's chain has, if its promise knows one (a coroutine
// of another library's does not: crew then never destroys it).
template <class Promise>
coroutine_root* root_of(std::coroutine_handle<Promise> h) noexcept {
    if constexpr (requires { h.promise().chain_root(); }) return h.promise().chain_root();
    else return nullptr;
}

// A resumption being handed to a pool from inside await_suspend, on this
// thread's stack. A resume_task dropped during that call (a reject policy
// discarding it, or abort_policy's throw unwinding it) must not destroy the
// chain, which is about to be resumed with the exception instead; it marks
// the record. Nested (caller_runs_policy resumes inline): saved and restored.
struct submission {
    std::coroutine_handle<> frame;
    bool dropped = false;
};
inline thread_local submission* current_submission = nullptr;

// The queued half of a resumption: a reporting callable (16 bytes, inline
// in a crew::task) that owns the chain until it runs.
class resume_task {
  public:
    resume_task(std::coroutine_handle<> frame, coroutine_root* root) noexcept : frame_(frame), root_(root) {}
    resume_task(resume_task&& other) noexcept
        : frame_(std::exchange(other.frame_, nullptr)), root_(other.root_) {}
    resume_task& operator=(resume_task&&) = delete;
    ~resume_task() { drop(nullptr); }

    // Gives up ownership first: once resumed, the chain belongs to whatever
    // it suspends on next, or ends.
    std::exception_ptr run_and_report(bool) {
        drive(std::exchange(frame_, nullptr));
        return {};
    }
    void operator()() { (void)run_and_report(false); }
    void abandon(std::exception_ptr why, bool) noexcept { drop(std::move(why)); }
    bool is_cancelled() const noexcept { return false; }

  private:
    void drop(std::exception_ptr why) noexcept {
        const auto frame = std::exchange(frame_, nullptr);
        if (!frame) return;
        if (current_submission && current_submission->frame == frame) {
            current_submission->dropped = true; // the co_await throws instead
            return;
        }
        if (!root_) return; // not a chain crew made: not ours to destroy
        if (why && root_->reject) root_->reject(root_->owner, std::move(why));
        root_->frame.destroy();
    }

    std::coroutine_handle<> frame_;
    coroutine_root* root_;
};

// Hands `frame`'s resumption to `submit` (which queues a resume_task on a
// pool), from inside await_suspend. A refused resumption throws from the
// co_await: the policy's exception, or rejected_execution_error.
template <class Submit>
void submit_resumption(std::coroutine_handle<> frame, Submit submit) {
    submission record{frame};
    submission* const outer = std::exchange(current_submission, &record);
    try {
        submit();
    } catch (...) {
        current_submission = outer;
        throw;
    }
    current_submission = outer;
    if (record.dropped) throw rejected_execution_error("crew: the pool refused to resume the coroutine");
}

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

template <class T>
class coroutine_promise : public coroutine_promise_base {
  public:
    coroutine<T> get_return_object() noexcept;
    template <class U>
        requires std::convertible_to<U&&, T>
    void return_value(U&& value) {
        value_.emplace(std::forward<U>(value));
    }
    T result() {
        rethrow_if_failed();
        return std::move(*value_);
    }

  private:
    std::optional<T> value_;
};

template <>
class coroutine_promise<void> : public coroutine_promise_base {
  public:
    coroutine<void> get_return_object() noexcept;
    void return_void() const noexcept {}
    void result() const { rethrow_if_failed(); }
};

} // namespace detail

/// A lazy coroutine returning `T`: it starts when awaited (inline, on the
/// awaiting thread, by symmetric transfer) or spawned (`crew::spawn`), and
/// never on construction. Move-only; destroying it destroys its frame.
/// `T` is an object type or void (no references).
///
/// Thread safety: a coroutine object is owned by one thread at a time.
template <class T>
class coroutine {
    static_assert(!std::is_reference_v<T>, "crew::coroutine<T>: T must not be a reference");

  public:
    using promise_type = detail::coroutine_promise<T>;

    coroutine(coroutine&& other) noexcept : frame_(std::exchange(other.frame_, nullptr)) {}
    coroutine& operator=(coroutine&& other) noexcept {
        if (this != &other) {
            if (frame_) frame_.destroy();
            frame_ = std::exchange(other.frame_, nullptr);
        }
        return *this;
    }
    coroutine(const coroutine&) = delete;
    coroutine& operator=(const coroutine&) = delete;
    ~coroutine() {
        if (frame_) frame_.destroy();
    }

    /// Awaiting runs the coroutine on this thread until it suspends or ends;
    /// its result (or exception) is the `co_await`'s.
    auto operator co_await() && noexcept { return awaiter{frame_}; }
    auto operator co_await() & noexcept { return awaiter{frame_}; }

  private:
    friend promise_type;

    explicit coroutine(std::coroutine_handle<promise_type> frame) noexcept : frame_(frame) {}

    struct awaiter {
        std::coroutine_handle<promise_type> frame;
        bool await_ready() const noexcept { return false; }
        template <class Promise>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> parent) noexcept {
            frame.promise().start_as_child(parent, detail::root_of(parent));
            return detail::transfer(parent, frame);
        }
        T await_resume() { return frame.promise().result(); }
    };

    std::coroutine_handle<promise_type> frame_;
};

namespace detail {

template <class T>
coroutine<T> coroutine_promise<T>::get_return_object() noexcept {
    return coroutine<T>(std::coroutine_handle<coroutine_promise>::from_promise(*this));
}
inline coroutine<void> coroutine_promise<void>::get_return_object() noexcept {
    return coroutine<void>(std::coroutine_handle<coroutine_promise>::from_promise(*this));
}

// The state behind a spawn's future.
template <class T>
class coroutine_state final : public future_state<T> {
  public:
    coroutine_state() noexcept : future_state<T>(&destroy, nullptr) {}

  private:
    static void destroy(future_state<T>* self) noexcept { delete static_cast<coroutine_state*>(self); }
};

// The root frame's hold on the spawn's future: completes it with the
// chain's result, or, destroyed first, with cancellation_error.
template <class T>
class spawn_owner {
  public:
    explicit spawn_owner(future_state<T>* state) noexcept : state_(state) {}
    spawn_owner(spawn_owner&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
    spawn_owner& operator=(spawn_owner&&) = delete;
    ~spawn_owner() {
        if (!state_) return;
        state_->cancel_unrun(); // no effect once completed
        state_->release();
    }

    template <class... U>
    void set_value(U&&... u) {
        state_->set_value(std::forward<U>(u)...);
    }
    void set_exception(std::exception_ptr error) noexcept { state_->set_exception(std::move(error), true); }

    static void reject(void* self, std::exception_ptr why) noexcept {
        static_cast<spawn_owner*>(self)->state_->set_exception(std::move(why));
    }

  private:
    future_state<T>* state_;
};

// The frame `spawn` makes around the user's coroutine: it starts it, hands
// its outcome to the future, and frees itself at the end. Nothing escapes it.
class spawn_root {
  public:
    class promise_type {
      public:
        template <class C, class T>
        promise_type(C&, spawn_owner<T>& owner) noexcept
            : root_{std::coroutine_handle<promise_type>::from_promise(*this), &owner, &spawn_owner<T>::reject} {}

        spawn_root get_return_object() noexcept { return spawn_root(std::coroutine_handle<promise_type>::from_promise(*this)); }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        std::suspend_never final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); } // the body catches everything

        coroutine_root* chain_root() noexcept { return &root_; }

      private:
        coroutine_root root_;
    };

    std::coroutine_handle<promise_type> frame;

  private:
    explicit spawn_root(std::coroutine_handle<promise_type> f) noexcept : frame(f) {}
};

template <class T>
spawn_root run_spawned(coroutine<T> c, spawn_owner<T> owner) {
    try {
        if constexpr (std::is_void_v<T>) {
            co_await std::move(c);
            owner.set_value();
        } else {
            owner.set_value(co_await std::move(c));
        }
    } catch (...) {
        owner.set_exception(std::current_exception());
    }
}

template <class Pool>
class resume_on_awaiter {
  public:
    explicit resume_on_awaiter(Pool& pool) noexcept : pool_(pool) {}
    bool await_ready() const noexcept { return false; }
    template <class Promise>
    void await_suspend(std::coroutine_handle<Promise> self) {
        Pool& pool = pool_; // this awaiter lives in the frame, which may be gone once queued
        submit_resumption(self, [&] { pool.execute(resume_task(self, root_of(self))); });
    }
    void await_resume() const noexcept {}

  private:
    Pool& pool_;
};

template <class Pool>
class sleep_awaiter {
  public:
    sleep_awaiter(Pool& pool, std::chrono::nanoseconds delay) noexcept : pool_(pool), delay_(delay) {}
    bool await_ready() const noexcept { return false; }
    template <class Promise>
    void await_suspend(std::coroutine_handle<Promise> self) {
        Pool& pool = pool_;
        const auto delay = delay_;
        submit_resumption(self, [&] { (void)pool.schedule(delay, resume_task(self, root_of(self))); });
    }
    void await_resume() const noexcept {}

  private:
    Pool& pool_;
    std::chrono::nanoseconds delay_;
};

template <class T>
class future_awaiter {
  public:
    explicit future_awaiter(future<T>& f) noexcept : future_(f) {}
    bool await_ready() const noexcept { return future_.is_done(); }
    bool await_suspend(std::coroutine_handle<> self) const {
        auto* state = future_access::state(future_);
        if (state == nullptr) return false; // await_resume's get() throws no_state
        return state->resume_when_done(self.address());
    }
    T await_resume() const { return future_.get(); }

  private:
    future<T>& future_;
};

template <class T>
class owning_future_awaiter : public future_awaiter<T> {
  public:
    explicit owning_future_awaiter(future<T>&& f) noexcept : future_awaiter<T>(owned_), owned_(std::move(f)) {}
    owning_future_awaiter(const owning_future_awaiter&) = delete;

  private:
    future<T> owned_;
};

} // namespace detail

/// Runs `c` on one of `pool`'s threads and returns a future of its result
/// or exception; no exception escapes into a worker. The start follows the
/// pool's RejectPolicy as `submit` does (`abort_policy` throws here; a
/// discarded start's future reports `rejected_execution_error`).
template <class Pool, class T>
future<T> spawn(Pool& pool, coroutine<T> c) {
    auto* state = new detail::coroutine_state<T>();
    future<T> result = detail::future_access::make<T>(state);
    detail::spawn_root root = detail::run_spawned<T>(std::move(c), detail::spawn_owner<T>(state));
    pool.execute(detail::resume_task(root.frame, root.frame.promise().chain_root()));
    return result;
}

/// `co_await crew::resume_on(pool)` continues the coroutine on one of
/// `pool`'s threads. A resumption the pool refuses throws from the
/// `co_await`: `rejected_execution_error` (or what `abort_policy` throws).
template <class Pool>
detail::resume_on_awaiter<Pool> resume_on(Pool& pool) noexcept {
    return detail::resume_on_awaiter<Pool>(pool);
}

/// `co_await crew::sleep_for(pool, d)` continues the coroutine on `pool` (a
/// scheduled pool) once `d` has passed; no thread blocks meanwhile. `d`
/// saturates as `schedule`'s delay does.
template <class Pool, class Rep, class Period>
    requires scheduling_queue_policy<typename Pool::queue_type>
detail::sleep_awaiter<Pool> sleep_for(Pool& pool, std::chrono::duration<Rep, Period> d) noexcept {
    return detail::sleep_awaiter<Pool>(pool, detail::saturating_nanoseconds(d));
}

/// `co_await f` on a `crew::future<T>` (or `scheduled_future<T>`): suspends
/// without blocking a thread until the task completes, then resumes on the
/// thread that completed it (a worker, or the thread that cancelled), and
/// returns `f.get()`: the result, the task's exception, or
/// `cancellation_error`. An awaited lvalue future is then retrieved.
template <class T>
detail::future_awaiter<T> operator co_await(future<T>& f) noexcept {
    return detail::future_awaiter<T>(f);
}
template <class T>
detail::owning_future_awaiter<T> operator co_await(future<T>&& f) noexcept {
    return detail::owning_future_awaiter<T>(std::move(f));
}

} // namespace crew

#endif
