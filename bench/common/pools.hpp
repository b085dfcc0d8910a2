// The thread pools under test, behind one small interface:
//
//   Pool(int threads)           threads started by the constructor (or lazily
//                               by the first tasks, where the pool insists)
//   execute(f)                  fire and forget
//   round_trip(f)               submit f and wait for its result (the pool's
//                               own future where it has one, else std::promise)
//   schedule_at(time_point, f)  (scheduling pools only) run f at that time
//
// Each pool is torn down only after the benchmark has seen every task finish.
#ifndef CREW_BENCH_POOLS_HPP
#define CREW_BENCH_POOLS_HPP

#include "harness.hpp"
#include "textbook.hpp"

#include <crew/crew.hpp>
#include <crew/policies/lockfree_queue.hpp>

#include <crew/work_stealing_pool.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/thread/executors/basic_thread_pool.hpp>
#include <boost/thread/executors/scheduled_thread_pool.hpp>
#include <boost/thread/future.hpp>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <concurrentqueue/blockingconcurrentqueue.h>

#include <sys/prctl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <type_traits>
#include <vector>

namespace bench {

using time_point = std::chrono::steady_clock::time_point;

// ---- crew -------------------------------------------------------------------

template <class Executor>
class crew_pool {
  public:
    explicit crew_pool(crew::pool_options options) : pool_(std::move(options)) { pool_.prestart_all_core_threads(); }
    template <class F>
    void execute(F&& f) {
        pool_.execute(std::forward<F>(f));
    }
    template <class F>
    auto round_trip(F&& f) {
        return pool_.submit(std::forward<F>(f)).get();
    }
    template <class F>
    void schedule_at(time_point when, F&& f)
        requires requires(Executor& e, F&& g) { e.schedule_at(when, std::forward<F>(g)); }
    {
        (void)pool_.schedule_at(when, std::forward<F>(f));
    }

  protected:
    Executor pool_;
};

inline crew::pool_options crew_sized(int threads, std::size_t queue_capacity = 1024) {
    crew::pool_options o;
    o.core_pool_size = o.maximum_pool_size = static_cast<std::size_t>(threads);
    o.queue_capacity = queue_capacity;
    return o;
}

struct crew_fixed : crew_pool<crew::fixed_pool> {
    explicit crew_fixed(int n) : crew_pool(crew_sized(n)) {}
};
struct crew_work_stealing : crew_pool<crew::work_stealing_pool> {
    explicit crew_work_stealing(int n) : crew_pool(crew_sized(n)) {}
};
struct crew_lockfree_block : crew_pool<crew::basic_executor<crew::lockfree_queue<4096>, crew::block_policy>> {
    explicit crew_lockfree_block(int n) : crew_pool(crew_sized(n)) {}
};
struct crew_lockfree_caller_runs
    : crew_pool<crew::basic_executor<crew::lockfree_queue<1024>, crew::caller_runs_policy>> {
    explicit crew_lockfree_caller_runs(int n) : crew_pool(crew_sized(n)) {}
};
struct crew_bounded_caller_runs : crew_pool<crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy>> {
    explicit crew_bounded_caller_runs(int n) : crew_pool(crew_sized(n, 1024)) {}
};
#if CREW_BENCH_HAVE_SCHEDULED
struct crew_scheduled : crew_pool<crew::scheduled_pool> {
    explicit crew_scheduled(int n) : crew_pool(crew_sized(n)) {}
};
// With pool_options::timer_slack = SlackNs instead of crew's default (10 us);
// 0 leaves the system's (50 us unless configured).
inline crew::pool_options with_timer_slack(crew::pool_options o, std::chrono::nanoseconds slack) {
    o.timer_slack = slack;
    return o;
}
template <long SlackNs>
struct crew_scheduled_slack : crew_pool<crew::scheduled_pool> {
    explicit crew_scheduled_slack(int n)
        : crew_pool(with_timer_slack(crew_sized(n), std::chrono::nanoseconds(SlackNs))) {}
};
using crew_scheduled_precise = crew_scheduled_slack<1'000>;
#endif

// ---- Boost.Asio ---------------------------------------------------------------

class asio_pool {
  public:
    explicit asio_pool(int n) : pool_(static_cast<std::size_t>(n)) {}
    ~asio_pool() { pool_.join(); }
    template <class F>
    void execute(F&& f) {
        boost::asio::post(pool_, std::forward<F>(f));
    }
    template <class F>
    auto round_trip(F f) {
        return boost::asio::post(pool_, boost::asio::use_future(std::move(f))).get();
    }
    template <class F>
    void schedule_at(time_point when, F f) {
        auto timer = std::make_shared<boost::asio::steady_timer>(pool_, when);
        timer->async_wait([timer, f = std::move(f)](const boost::system::error_code&) mutable { f(); });
    }

  private:
    boost::asio::thread_pool pool_;
};

// ---- Boost.Thread ---------------------------------------------------------------

class boost_basic_pool {
  public:
    explicit boost_basic_pool(int n) : pool_(static_cast<unsigned>(n)) {}
    template <class F>
    void execute(F&& f) {
        pool_.submit(std::forward<F>(f));
    }
    template <class F>
    auto round_trip(F f) {
        return boost::async(pool_, std::move(f)).get();
    }

  private:
    boost::executors::basic_thread_pool pool_;
};

class boost_scheduled_pool {
  public:
    explicit boost_scheduled_pool(int n) : pool_(static_cast<std::size_t>(n)) {}
    // It has no submit(): "now" is a due time like any other.
    template <class F>
    void execute(F&& f) {
        pool_.submit_at(std::forward<F>(f), boost::chrono::steady_clock::now());
    }
    template <class F>
    void schedule_at(time_point when, F f) {
        // Both clocks read CLOCK_MONOTONIC: the same epoch.
        pool_.submit_at(std::move(f), boost::chrono::steady_clock::time_point(
                                          boost::chrono::nanoseconds(when.time_since_epoch().count())));
    }

  private:
    boost::executors::scheduled_thread_pool pool_;
};

// ---- oneTBB ------------------------------------------------------------------------

// An arena of n worker threads (none reserved for the submitting thread,
// which only submits); the global limit lets TBB start that many workers.
class tbb_arena_pool {
  public:
    explicit tbb_arena_pool(int n)
        : limit_(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(n) + 1), arena_(n, 0) {
        arena_.initialize();
    }
    template <class F>
    void execute(F&& f) {
        arena_.enqueue(std::forward<F>(f));
    }

  protected:
    tbb::global_control limit_;
    tbb::task_arena arena_;
};

class tbb_group_pool : public tbb_arena_pool {
  public:
    explicit tbb_group_pool(int n) : tbb_arena_pool(n) {}
    ~tbb_group_pool() {
        arena_.execute([this] { group_.wait(); });
    }
    template <class F>
    void execute(F&& f) {
        arena_.enqueue(group_.defer(std::forward<F>(f)));
    }

  private:
    tbb::task_group group_;
};

// ---- moodycamel::BlockingConcurrentQueue -------------------------------------------

class moodycamel_pool {
  public:
    explicit moodycamel_pool(int n) {
        for (int i = 0; i < n; ++i)
            threads_.emplace_back([this] {
                std::function<void()> f;
                for (;;) {
                    queue_.wait_dequeue(f);
                    if (!f) return; // an empty function tells a worker to leave
                    f();
                }
            });
    }
    ~moodycamel_pool() {
        for (std::size_t i = 0; i < threads_.size(); ++i) queue_.enqueue(std::function<void()>());
        for (auto& t : threads_) t.join();
    }
    template <class F>
    void execute(F&& f) {
        queue_.enqueue(std::function<void()>(std::forward<F>(f)));
    }

  private:
    moodycamel::BlockingConcurrentQueue<std::function<void()>> queue_;
    std::vector<std::thread> threads_;
};

// ---- the textbook pools -------------------------------------------------------------

// The same with a min-heap on due time: workers sleep until the earliest is
// due. A non-zero `timer_slack` is set on every worker thread
// (prctl(PR_SET_TIMERSLACK)); zero leaves the system's default (50 us).
class textbook_scheduled_pool : textbook_base {
  public:
    explicit textbook_scheduled_pool(int n, std::chrono::nanoseconds timer_slack = {}) {
        start(n, [this, timer_slack] {
            if (timer_slack.count() > 0)
                (void)::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(timer_slack.count()), 0UL, 0UL, 0UL);
            std::unique_lock lock(mutex_);
            for (;;) {
                if (heap_.empty()) {
                    if (stop_) return;
                    changed_.wait(lock);
                    continue;
                }
                const time_point due = heap_.top().due;
                if (std::chrono::steady_clock::now() < due) {
                    changed_.wait_until(lock, due);
                    continue;
                }
                std::function<void()> f = std::move(const_cast<entry&>(heap_.top()).f);
                heap_.pop();
                lock.unlock();
                f();
                lock.lock();
            }
        });
    }
    ~textbook_scheduled_pool() { stop_and_join(); }
    template <class F>
    void execute(F&& f) {
        schedule_at(std::chrono::steady_clock::now(), std::forward<F>(f));
    }
    template <class F>
    void schedule_at(time_point when, F&& f) {
        bool earliest;
        {
            std::lock_guard lock(mutex_);
            earliest = heap_.empty() || when < heap_.top().due;
            heap_.push(entry{when, sequence_++, std::function<void()>(std::forward<F>(f))});
        }
        if (earliest) changed_.notify_one();
    }

  private:
    struct entry {
        time_point due;
        std::uint64_t sequence;
        std::function<void()> f;
        bool operator<(const entry& o) const { return due != o.due ? due > o.due : sequence > o.sequence; }
    };
    std::priority_queue<entry> heap_;
    std::uint64_t sequence_ = 0;
};

template <long SlackNs>
struct textbook_scheduled_slack : textbook_scheduled_pool {
    explicit textbook_scheduled_slack(int n) : textbook_scheduled_pool(n, std::chrono::nanoseconds(SlackNs)) {}
};

// ---- round trips for pools without a future of their own -----------------------------

template <class Pool, class F>
auto round_trip(Pool& pool, F f) {
    count_tasks(1); // for --counters (common/counters.hpp): a relaxed add to a line only this thread writes
    if constexpr (requires { pool.round_trip(f); }) {
        return pool.round_trip(std::move(f));
    } else {
        using R = std::invoke_result_t<F&>;
        std::promise<R> promise;
        auto result = promise.get_future();
        pool.execute([&promise, &f] { promise.set_value(f()); });
        return result.get();
    }
}

// ---- the list -----------------------------------------------------------------------

// Which pools a workload runs.
enum class pool_set {
    execute,     // every pool (W1-W3, W5, W6)
    schedule,    // the pools with schedule_at (W4); crew scheduled_pool and the textbook heap also with a 1 us timer slack
    slack_sweep, // the same peers, crew's scheduled_pool at timer_slack default (10 us), 1, 5, 50 us and 0 (W4 --slack-sweep)
};

// Calls visit.template operator()<Pool>(name, is_crew) for every pool of Set.
template <pool_set Set = pool_set::execute, class Visit>
void for_each_pool(Visit&& visit) {
    constexpr bool Scheduling = Set != pool_set::execute;
    if constexpr (!Scheduling) {
        visit.template operator()<crew_fixed>("crew fixed_pool", true);
        visit.template operator()<crew_work_stealing>("crew work_stealing_pool", true);
        visit.template operator()<crew_lockfree_block>("crew lockfree_queue<4096>+block", true);
        visit.template operator()<crew_lockfree_caller_runs>("crew lockfree_queue<1024>+caller_runs", true);
        visit.template operator()<crew_bounded_caller_runs>("crew bounded_queue(1024)+caller_runs", true);
    }
#if CREW_BENCH_HAVE_SCHEDULED
    visit.template operator()<crew_scheduled>("crew scheduled_pool", true);
    if constexpr (Scheduling)
        visit.template operator()<crew_scheduled_precise>("crew scheduled_pool, timer_slack 1 us", true);
    if constexpr (Set == pool_set::slack_sweep) {
        visit.template operator()<crew_scheduled_slack<5'000>>("crew scheduled_pool, timer_slack 5 us", true);
        visit.template operator()<crew_scheduled_slack<50'000>>("crew scheduled_pool, timer_slack 50 us", true);
        visit.template operator()<crew_scheduled_slack<0>>("crew scheduled_pool, timer_slack 0 (system's)", true);
    }
#endif
    visit.template operator()<asio_pool>("asio thread_pool", false);
    if constexpr (!Scheduling) visit.template operator()<boost_basic_pool>("boost basic_thread_pool", false);
    visit.template operator()<boost_scheduled_pool>("boost scheduled_thread_pool", false);
    if constexpr (!Scheduling) {
        visit.template operator()<tbb_arena_pool>("tbb task_arena", false);
        visit.template operator()<tbb_group_pool>("tbb task_group", false);
        visit.template operator()<moodycamel_pool>("moodycamel BlockingConcurrentQueue", false);
        visit.template operator()<textbook_pool>("textbook mutex+cv+deque", false);
    } else {
        visit.template operator()<textbook_scheduled_pool>("textbook mutex+cv+heap", false);
        visit.template operator()<textbook_scheduled_slack<1'000>>("textbook mutex+cv+heap, timer_slack 1 us", false);
    }
}

// The contenders of a workload: every pool that for_each_pool<Set> visits,
// each run by `measure.template operator()<Pool>(options)`, then, when the
// command line gave a Java classpath, CrewPeers' `java_impls` running
// `workload` with `n_metrics` results.
template <pool_set Set = pool_set::execute, class Measure>
std::vector<contender> contenders(const options& o, const std::string& workload, std::size_t n_metrics,
                                  Measure measure, std::initializer_list<const char*> java_impls = {"tpe", "stpe"}) {
    std::vector<contender> cs;
    for_each_pool<Set>([&]<class Pool>(const char* name, bool is_crew) {
        cs.push_back(
            {name, is_crew, [measure](const options& opts) { return measure.template operator()<Pool>(opts); }});
    });
    if (!o.java.empty())
        for (const char* impl : java_impls) cs.push_back(java_peer(workload, impl, n_metrics));
    return cs;
}

} // namespace bench

#endif
