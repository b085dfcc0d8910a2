#ifndef CREW_DETAIL_FUTURE_INVOKE_ANY_HPP
#define CREW_DETAIL_FUTURE_INVOKE_ANY_HPP

#include <crew/detail/work_stealing/worker_context.hpp>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

namespace crew::detail {

// invoke_any's bookkeeping: each wrapped task reports its index once, when
// its callable is destroyed (after running, or unrun), so the caller can
// look at the futures in the order they finish and never waits for a task
// that will not run.
class completion_tracker {
  public:
    explicit completion_tracker(std::size_t tasks) { finished_.reserve(tasks); }

    void finished(std::size_t index) noexcept {
        {
            std::lock_guard lock(mutex_);
            finished_.push_back(index); // capacity reserved: cannot throw
        }
        changed_.notify_one();
    }

    std::size_t next() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return read_ < finished_.size(); });
        return finished_[read_++];
    }

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<std::size_t> finished_;
    std::size_t read_ = 0;
};

template <class F>
class tracked_callable {
  public:
    tracked_callable(F f, std::shared_ptr<completion_tracker> tracker, std::size_t index)
        : function_(std::move(f)), tracker_(std::move(tracker)), index_(index) {}
    tracked_callable(tracked_callable&&) = default;
    ~tracked_callable() {
        if (tracker_) tracker_->finished(index_);
    }

    decltype(auto) operator()()
        requires std::is_invocable_v<F&>
    {
        return std::invoke(function_);
    }
    decltype(auto) operator()(std::stop_token token)
        requires takes_stop_token<F>
    {
        return std::invoke(function_, std::move(token));
    }

  private:
    F function_;
    std::shared_ptr<completion_tracker> tracker_;
    std::size_t index_;
};

} // namespace crew::detail

#endif
