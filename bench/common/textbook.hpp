// The textbook pool, the yardstick every workload runs: a mutex, a condition
// variable and a std::deque of std::function. Apart from pools.hpp (which
// also builds the textbook scheduled pool on textbook_base) because it needs
// no crew header: bench/ab_workloads.cpp, built against older revisions of
// crew's headers, uses it too.
#ifndef CREW_BENCH_TEXTBOOK_HPP
#define CREW_BENCH_TEXTBOOK_HPP

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace bench {

// What both textbook pools are made of: one mutex, one condition variable
// (notified when work arrives or the pool stops), a stop flag and the
// threads. A pool's destructor calls stop_and_join() while its own queue
// still exists.
class textbook_base {
  protected:
    template <class Loop>
    void start(int n, Loop loop) {
        for (int i = 0; i < n; ++i) threads_.emplace_back(loop);
    }
    void stop_and_join() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        for (auto& t : threads_) t.join();
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    bool stop_ = false;

  private:
    std::vector<std::thread> threads_;
};

// A mutex, a condition variable and a std::deque of std::function.
class textbook_pool : textbook_base {
  public:
    explicit textbook_pool(int n) {
        start(n, [this] {
            for (;;) {
                std::function<void()> f;
                {
                    std::unique_lock lock(mutex_);
                    changed_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
                    if (tasks_.empty()) return;
                    f = std::move(tasks_.front());
                    tasks_.pop_front();
                }
                f();
            }
        });
    }
    ~textbook_pool() { stop_and_join(); }
    template <class F>
    void execute(F&& f) {
        {
            std::lock_guard lock(mutex_);
            tasks_.emplace_back(std::forward<F>(f));
        }
        changed_.notify_one();
    }

  private:
    std::deque<std::function<void()>> tasks_;
};

} // namespace bench

#endif
