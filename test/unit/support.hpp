// Helpers shared by the queue unit tests (queues.cpp, lockfree_queue.cpp,
// delayed_queue.cpp): the queue policies under test as type lists, the tasks
// they queue, and the threads that wait on them.
#ifndef CREW_TEST_UNIT_SUPPORT_HPP
#define CREW_TEST_UNIT_SUPPORT_HPP

#include <crew/concepts.hpp>
#include <crew/detail/queue/segment_queue.hpp>
#include <crew/policies/delayed_queue.hpp>
#include <crew/policies/lockfree_queue.hpp>
#include <crew/policies/queue.hpp>
#include <crew/policies/work_stealing_queue.hpp>
#include <crew/pool_options.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include "../common/time_factor.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <condition_variable>
#include <future>
#include <latch>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace crew_unit_test {

using namespace std::chrono_literals;
using crew::wait_status;
using steady = std::chrono::steady_clock;

// One reading of CREW_TEST_TIME_FACTOR for every suite (see the header).
using crew_test_common::scaled;
using crew_test_common::time_factor;
using crew_test_common::eventually;

// A bound on every wait that only a broken queue can reach.
inline steady::duration generous() { return scaled(30s); }

// Not synchronisation: gives a thread that ought to be blocked a chance to
// run (and to misbehave), so that a queue which does not block is likely
// caught. A correct queue passes whatever the scheduling. Bounded in time
// as well as in count: on a busy machine each yield may hand a CPU-bound
// thread a whole time slice, and 5000 of those took minutes (CI, 2026-11-29).
template <class Pred>
void give_a_chance(Pred done) {
    const auto until = steady::now() + std::chrono::milliseconds(20);
    for (int i = 0; i < 5000 && !done() && steady::now() < until; ++i) std::this_thread::yield();
}

// `n` threads that can go on only together: each arrive_and_wait() blocks
// (it does not spin: on a busy machine a spinning one would keep the others
// off the CPU) until all `n` have arrived, generous() at most. Shared
// through a std::shared_ptr by tasks that may outlive a failed test.
class rendezvous {
  public:
    explicit rendezvous(int n) : n_(n) {}

    // True if all `n` arrived in time.
    bool arrive_and_wait() {
        std::unique_lock lock(mutex_);
        if (++arrived_ == n_) changed_.notify_all();
        const bool met = changed_.wait_until(lock, steady::now() + generous(), [&] { return arrived_ == n_; });
        if (met) ++met_;
        ++left_;
        changed_.notify_all();
        return met;
    }

    // How many arrive_and_wait calls returned true so far.
    int met() {
        std::lock_guard lock(mutex_);
        return met_;
    }

    // True once all `n` have left arrive_and_wait (generous() at most).
    bool all_left_in_time() {
        std::unique_lock lock(mutex_);
        return changed_.wait_until(lock, steady::now() + 2 * generous(), [&] { return left_ == n_; });
    }

  private:
    const int n_;
    int arrived_ = 0; // guarded by mutex_
    int met_ = 0;     // guarded by mutex_
    int left_ = 0;    // guarded by mutex_
    std::mutex mutex_;
    std::condition_variable changed_;
};

// Runs `f` when the scope ends: releases threads a failed REQUIRE would
// otherwise leave blocked, before their futures join them.
template <class F>
class scope_guard {
  public:
    explicit scope_guard(F f) : f_(std::move(f)) {}
    scope_guard(const scope_guard&) = delete;
    scope_guard& operator=(const scope_guard&) = delete;
    ~scope_guard() { f_(); }

  private:
    F f_;
};

// Consumers announced in `q`'s take or poll_until, on their way to sleep or
// asleep: a wake-up issued from now on is one they must receive.
template <class Q>
std::size_t parked_consumers_of(const Q& q) {
    if constexpr (requires { q.parked_consumers(); })
        return q.parked_consumers();
    else
        return q.wait_statistics().waiting;
}

template <class F>
auto run_async(F f) {
    return std::async(std::launch::async, std::move(f));
}

template <class Future>
bool ready_in_time(Future& f) {
    return f.wait_for(generous()) == std::future_status::ready;
}

// Sets `flag` and wakes every consumer of `q`: how a pool stops its idle
// workers. Tests also use it to release consumers a failed REQUIRE leaves
// waiting.
template <class Q>
void interrupt_consumers(Q& q, crew::interrupt_flag& flag) {
    flag = true;
    q.wake_consumers();
}

// Waits in take, or in poll_until with `deadline`, for one task and runs it;
// returns how the wait ended.
template <class Q>
crew::wait_status take_and_run(Q& q, const crew::interrupt_flag& flag) {
    crew::task t;
    const crew::wait_status s = q.take(t, flag);
    if (s == crew::wait_status::taken) t();
    return s;
}
template <class Q>
crew::wait_status poll_until_and_run(Q& q, steady::time_point deadline, const crew::interrupt_flag& flag) {
    crew::task t;
    const crew::wait_status s = q.poll_until(t, deadline, flag);
    if (s == crew::wait_status::taken) t();
    return s;
}

// Runs `call` (a put, a take) on a thread of its own, to show that it blocks
// until the test does something: the test checks that the call has not
// returned, announces with unblocking() what it is about to do, does it, and
// reads the result and whether the call returned only after the announcement.
template <class R>
class blocking_call {
  public:
    template <class Call>
    explicit blocking_call(Call call)
        : result_(run_async([this, call = std::move(call)]() mutable {
              running_.count_down();
              R r = call();
              returned_after_unblocking_ = unblocking_.load();
              returned_ = true;
              return r;
          })) {
        running_.wait();
    }

    // Not synchronisation (see give_a_chance): a call that ought to block
    // likely returns by the end of this if it does not.
    void give_a_chance_to_return() {
        give_a_chance([this] { return returned_.load(); });
    }
    bool returned() const { return returned_.load(); }
    void unblocking() { unblocking_ = true; }
    bool returns_in_time() { return ready_in_time(result_); }
    R get() { return result_.get(); }
    // Valid after get().
    bool returned_after_unblocking() const { return returned_after_unblocking_; }

  private:
    std::latch running_{1};
    std::atomic<bool> unblocking_{false};
    std::atomic<bool> returned_{false};
    bool returned_after_unblocking_ = false;
    std::future<R> result_; // last: its thread uses the members above
};
template <class Call>
blocking_call(Call) -> blocking_call<std::invoke_result_t<Call&>>;

// A task that appends `id` to `log` when run.
inline crew::task logged(std::vector<int>& log, int id) {
    return crew::task([&log, id] { log.push_back(id); });
}
inline crew::task logged(std::vector<int>& log, int id, int priority) {
    return crew::task(crew::with_priority(priority, [&log, id] { log.push_back(id); }));
}

// Polls until the queue is empty, running each task; returns the log.
template <class Q>
std::vector<int> poll_and_run_all(Q& q, std::vector<int>& log) {
    crew::task t;
    while (q.poll(t)) {
        t();
        t.reset();
    }
    return log;
}

// Two producers offer `tasks` tasks between them, falling back on put while
// the queue is full, to two consumers: every offer or put must succeed and
// every task run exactly once. With `racing_park`, the producers pause at
// random so that the consumers keep going to sleep, and the second consumer
// waits in short poll_until calls instead of take.
template <class Q>
void require_two_producers_and_two_consumers_run_every_task_once(Q& q, int tasks, bool racing_park) {
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(tasks));
    std::atomic<int> consumed{0};
    std::promise<void> all_consumed;
    auto all_consumed_future = all_consumed.get_future();
    crew::interrupt_flag stop{false};

    auto consume = [&](bool timed) {
        int n = 0;
        crew::task t;
        for (;;) {
            const crew::wait_status s = timed ? q.poll_until(t, steady::now() + 200us, stop) : q.take(t, stop);
            if (s == crew::wait_status::interrupted) return n;
            if (s == crew::wait_status::taken) {
                t();
                t.reset();
                ++n;
            }
        }
    };
    auto produce = [&](int first, unsigned seed) {
        std::minstd_rand rng(seed);
        int refused = 0;
        for (int i = first; i < tasks; i += 2) {
            crew::task t([&runs, &consumed, &all_consumed, tasks, i] {
                runs[static_cast<std::size_t>(i)].fetch_add(1);
                if (consumed.fetch_add(1) + 1 == tasks) all_consumed.set_value();
            });
            if (!q.offer(std::move(t)) && !q.put(std::move(t))) ++refused;
            // A pause now and then, for the consumers to drain the queue and
            // go to sleep. Bounded in time (0-200 us, one yield), not by a
            // count of yields: on a busy machine each yield may hand a
            // CPU-bound thread a whole time slice (111 s for 40,000 tasks
            // under test/under_load.sh with up to 63 yields a pause).
            if (racing_park && rng() % 8 == 0) {
                const auto until = steady::now() + std::chrono::microseconds(rng() % 200);
                std::this_thread::yield();
                while (steady::now() < until) {
                }
            }
        }
        return refused;
    };

    auto consumer1 = run_async([&] { return consume(false); });
    auto consumer2 = run_async([&] { return consume(racing_park); });
    auto producer1 = run_async([&] { return produce(0, 1); });
    auto producer2 = run_async([&] { return produce(1, 2); });
    scope_guard release([&] {
        q.close(); // frees producers blocked in put
        interrupt_consumers(q, stop);
    });

    // A lost wake-up shows as no progress: tasks queued (or producers
    // blocked in put) and no consumer taking them. So the deadline is on
    // progress, not on the whole run, whose length depends on how busy the
    // machine is (the producers' yields give the CPU to whatever else runs:
    // 16,000 of 40,000 tasks in 60 s beside two busy loops and a build).
    bool finished = false;
    int last_count = -1;
    auto last_progress = steady::now();
    while (!(finished = all_consumed_future.wait_for(100ms) == std::future_status::ready)) {
        if (const int now = consumed.load(); now != last_count) {
            last_count = now;
            last_progress = steady::now();
        } else if (steady::now() - last_progress > scaled(30s)) {
            break;
        }
    }
    CAPTURE(consumed.load(), q.size());
    REQUIRE(finished);
    REQUIRE(ready_in_time(producer1));
    REQUIRE(ready_in_time(producer2));
    REQUIRE(producer1.get() == 0);
    REQUIRE(producer2.get() == 0);

    interrupt_consumers(q, stop);
    REQUIRE(ready_in_time(consumer1));
    REQUIRE(ready_in_time(consumer2));
    REQUIRE(consumer1.get() + consumer2.get() == tasks);

    const auto wrong = std::count_if(runs.begin(), runs.end(), [](const std::atomic<int>& r) { return r != 1; });
    REQUIRE(wrong == 0);
    REQUIRE(q.size() == 0);
}

inline std::vector<int> iota_vector(int n, int first = 0) {
    std::vector<int> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), first);
    return v;
}

// A future's task as a queue sees it: cancellable (purge) and counted.
struct cancellable {
    std::shared_ptr<int> destroyed;
    std::vector<int>* log;
    int id;
    bool cancelled;

    cancellable(bool is_cancelled, std::shared_ptr<int> destroyed_counter, std::vector<int>& l, int i)
        : destroyed(std::move(destroyed_counter)), log(&l), id(i), cancelled(is_cancelled) {}
    cancellable(cancellable&& other) noexcept = default;
    cancellable& operator=(cancellable&&) = delete;
    ~cancellable() {
        if (destroyed) ++*destroyed; // moved-from instances have no counter
    }

    void operator()() { log->push_back(id); }
    std::exception_ptr run_and_report(bool) {
        log->push_back(id);
        return nullptr;
    }
    void abandon(std::exception_ptr, bool) noexcept {}
    bool is_cancelled() const noexcept { return cancelled; }
};
static_assert(crew::detail::reporting_callable<cancellable>);

// ---- the queue policies under test ---------------------------------------------

inline crew::pool_options with_capacity(std::size_t capacity) {
    crew::pool_options options;
    options.queue_capacity = capacity;
    return options;
}

// lockfree_queue parks waiting threads on a futex (Linux); the same queue
// on the portable condition-variable parking, what other platforms get, runs
// the same tests.
template <std::size_t Capacity>
using futex_queue = crew::lockfree_queue<Capacity>;
template <std::size_t Capacity>
using condvar_queue = crew::detail::basic_lockfree_queue<Capacity, crew::detail::condvar_parking_word>;

static_assert(crew::queue_policy<condvar_queue<16>>);

// lockfree_queue's drain and remove_if take the tasks out one at a time, so
// a put they wake may land before they finish; the mutex-based queues do
// either under one lock.
template <class Q>
inline constexpr bool is_lockfree_queue = false;
template <std::size_t Capacity, class Parking>
inline constexpr bool is_lockfree_queue<crew::detail::basic_lockfree_queue<Capacity, Parking>> = true;
template <std::size_t Capacity>
inline constexpr bool is_lockfree_queue<crew::lockfree_queue<Capacity>> = true;
static_assert(is_lockfree_queue<futex_queue<1>> && is_lockfree_queue<condvar_queue<1>> &&
              !is_lockfree_queue<crew::bounded_queue>);

// The type lists below hold policies, not queues: a test chooses the
// capacity it needs, and lockfree_queue takes its capacity as a template
// argument (ignoring pool_options) where bounded_queue reads it from
// pool_options at run time. `queue_of<Policy, N>` is the type of a queue of
// at most N tasks; make_queue builds one.
template <class Queue>
struct runtime_sized {
    template <std::size_t Capacity>
    using queue = Queue;
};
template <template <std::size_t> class Queue>
struct compile_time_sized {
    template <std::size_t Capacity>
    using queue = Queue<Capacity>;
};

template <class Policy, std::size_t Capacity>
using queue_of = typename Policy::template queue<Capacity>;

// A queue of `Policy` holding at most `Capacity` tasks (the unbounded ones
// ignore it). The copy is elided (C++17): queues need not be movable.
template <class Policy, std::size_t Capacity>
queue_of<Policy, Capacity> make_queue() {
    return queue_of<Policy, Capacity>(with_capacity(Capacity));
}

template <class... Lists>
using concat = decltype(std::tuple_cat(std::declval<Lists>()...));

// unbounded_queue and bounded_queue as they are, but with segments of two
// cells: every test that runs on them crosses segment boundaries (linking a
// new segment, retiring a drained one, reusing it, remove_if and drain
// across several).
struct small_ring_unbounded : crew::detail::segment_queue {
    explicit small_ring_unbounded(const crew::pool_options&)
        : segment_queue(std::numeric_limits<std::size_t>::max(), 2) {}
    std::size_t capacity() const noexcept { return std::numeric_limits<std::size_t>::max(); }
};
struct small_ring_bounded : crew::detail::segment_queue {
    explicit small_ring_bounded(const crew::pool_options& options)
        : segment_queue(options.queue_capacity, 2), capacity_(options.queue_capacity) {}
    std::size_t capacity() const noexcept { return capacity_; }
    std::size_t capacity_;
};
static_assert(crew::queue_policy<small_ring_unbounded> && crew::queue_policy<small_ring_bounded>);

// For TEMPLATE_LIST_TEST_CASE, which names each instance by its index in the
// list ("<case> - all_queues - 4"): a new policy, or a new parking mechanism
// for lockfree_queue, is added here and every test that applies runs on it.
using lockfree_queues = std::tuple<compile_time_sized<futex_queue>, compile_time_sized<condvar_queue>>;
// The queues that hold tasks in storage that grows as needed (the segment
// queues' linked segments, priority_queue's heap, delayed_queue's due-now FIFO, in
// which an offered task is due now). grow_first_queue is bounded_queue to
// its consumers: the growing first is the pool's.
using growing_queues =
    std::tuple<runtime_sized<crew::unbounded_queue>, runtime_sized<crew::bounded_queue>,
               runtime_sized<crew::grow_first_queue>, runtime_sized<crew::priority_queue>,
               runtime_sized<crew::delayed_queue>, runtime_sized<small_ring_unbounded>,
               runtime_sized<small_ring_bounded>>;
// The work-stealing queues, used from outside any pool: every thread's
// offers go to the injector (one shard per thread: FIFO for one thread's
// tasks only, so not among fifo_queues). Their pool-side behaviour (deques,
// stealing) is tested in test/unit/work_stealing_queue.cpp and the executor
// suites.
using work_stealing_queues =
    std::tuple<runtime_sized<crew::work_stealing_queue>, runtime_sized<crew::bounded_work_stealing_queue>>;
// Every queue that holds tasks (all but synchronous_queue).
using buffering_queues = concat<growing_queues, lockfree_queues, work_stealing_queues>;
// Queues that hand out tasks in arrival order whatever their priority.
using fifo_queues =
    concat<std::tuple<runtime_sized<crew::unbounded_queue>, runtime_sized<crew::bounded_queue>,
                      runtime_sized<crew::grow_first_queue>, runtime_sized<crew::delayed_queue>,
                      runtime_sized<small_ring_unbounded>, runtime_sized<small_ring_bounded>>,
           lockfree_queues>;
// Queues that enforce a capacity: offer fails and put blocks while full.
using bounded_queues =
    concat<std::tuple<runtime_sized<crew::bounded_queue>, runtime_sized<crew::grow_first_queue>,
                      runtime_sized<small_ring_bounded>>,
           lockfree_queues, std::tuple<runtime_sized<crew::bounded_work_stealing_queue>>>;
// Queues whose put can block: the bounded ones, and synchronous_queue until
// a consumer comes.
using blocking_put_queues =
    concat<std::tuple<runtime_sized<crew::bounded_queue>, runtime_sized<crew::grow_first_queue>,
                      runtime_sized<small_ring_bounded>, runtime_sized<crew::synchronous_queue>>,
           lockfree_queues, std::tuple<runtime_sized<crew::bounded_work_stealing_queue>>>;
// Every queue policy.
using all_queues =
    concat<growing_queues, std::tuple<runtime_sized<crew::synchronous_queue>>, lockfree_queues, work_stealing_queues>;

} // namespace crew_unit_test

#endif
