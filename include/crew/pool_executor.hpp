#ifndef CREW_POOL_EXECUTOR_HPP
#define CREW_POOL_EXECUTOR_HPP

/// \file
/// `crew::pool_executor<Pool>`: what `basic_executor::get_executor()` returns,
/// a cheap, copyable, non-owning handle to a pool. With `<crew/asio.hpp>` it
/// is an executor for Boost.Asio; without it, a plain handle (nothing here
/// needs Asio).

#include <crew/detail/worker_context.hpp>

#include <memory>
#include <utility>

namespace crew {

/// A handle to a pool: copyable, two pointers' worth, never owning. The
/// pool must outlive every handle used. Two handles are equal when they
/// refer to the same pool.
///
/// Thread safety: a handle may be copied and used from any thread; each
/// call is the pool's own (see `basic_executor`).
template <class Pool>
class pool_executor {
  public:
    explicit pool_executor(Pool& pool) noexcept : pool_(std::addressof(pool)) {}

    /// The pool.
    Pool& context() const noexcept { return *pool_; }

    /// True when called on one of the pool's own workers.
    bool running_in_this_thread() const noexcept { return pool_->called_from_own_worker(); }

    /// `pool.execute(f)`: the pool's RejectPolicy applies. Called on one of
    /// the pool's own workers, it runs `f` at once instead, and what `f`
    /// throws propagates, unless the handle was made with
    /// `inline_on_own_thread(false)` (what Asio's `post` and `defer` ask
    /// for). Inline by default, as Asio's own executors are (`dispatch`
    /// from Boost 1.81 uses the executor as given).
    template <class F>
    void execute(F&& f) const {
        if (inline_ && running_in_this_thread()) std::forward<F>(f)();
        else pool_->execute(std::forward<F>(f));
    }

    /// A copy that runs work inline when called on the pool's own workers
    /// (`true`, the default), or always queues it (`false`).
    pool_executor inline_on_own_thread(bool runs_inline) const noexcept {
        pool_executor copy = *this;
        copy.inline_ = runs_inline;
        return copy;
    }
    bool runs_inline_on_own_thread() const noexcept { return inline_; }

    /// Same pool. (Whether work may run inline does not count: both handles
    /// reach the same workers.)
    friend bool operator==(const pool_executor& a, const pool_executor& b) noexcept { return a.pool_ == b.pool_; }

  private:
    Pool* pool_;
    bool inline_ = true;
};

} // namespace crew

#endif
