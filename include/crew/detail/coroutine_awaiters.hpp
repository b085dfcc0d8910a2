#ifndef CREW_DETAIL_COROUTINE_AWAITERS_HPP
#define CREW_DETAIL_COROUTINE_AWAITERS_HPP

// The awaiters behind crew::resume_on, crew::sleep_for and co_await on a
// crew::future (crew/coroutine.hpp documents them).

#include <crew/detail/coroutine_chain.hpp>
#include <crew/detail/coroutine_driver.hpp>
#include <crew/detail/future_state.hpp>
#include <crew/future.hpp>

#include <chrono>
#include <coroutine>

namespace crew::detail {

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

// The awaiter lives in the suspended coroutine's frame, so it is the
// completion hook itself: awaiting allocates nothing.
template <class T>
class future_awaiter : completion_hook {
  public:
    explicit future_awaiter(future<T>& f) noexcept : completion_hook{&resume, nullptr}, future_(f) {}
    bool await_ready() const noexcept { return future_.is_done(); }
    bool await_suspend(std::coroutine_handle<> self) {
        auto* state = future_access::state(future_);
        if (state == nullptr) return false; // await_resume's get() throws no_state
        awaiting_ = self;
        return state->call_when_done(*this);
    }
    T await_resume() const { return future_.get(); }

  private:
    // On the completing thread, through the trampoline (constant stack).
    static void resume(completion_hook& self) noexcept { drive(static_cast<future_awaiter&>(self).awaiting_); }

    future<T>& future_;
    std::coroutine_handle<> awaiting_;
};

template <class T>
class owning_future_awaiter : public future_awaiter<T> {
  public:
    explicit owning_future_awaiter(future<T>&& f) noexcept : future_awaiter<T>(owned_), owned_(std::move(f)) {}
    owning_future_awaiter(const owning_future_awaiter&) = delete;

  private:
    future<T> owned_;
};

} // namespace crew::detail

#endif
