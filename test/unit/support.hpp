// Helpers shared by the queue unit tests (queues.cpp, lockfree_queue.cpp):
// the queue policies under test as type lists, and the tasks they queue.
#ifndef CREW_TEST_UNIT_SUPPORT_HPP
#define CREW_TEST_UNIT_SUPPORT_HPP

#include <crew/concepts.hpp>
#include <crew/policies/lockfree_queue.hpp>
#include <crew/policies/queue.hpp>
#include <crew/pool_options.hpp>
#include <crew/task.hpp>

#include "../common/time_factor.hpp"

#include <chrono>
#include <cstddef>
#include <exception>
#include <future>
#include <memory>
#include <numeric>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace crew_unit_test {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

// One reading of CREW_TEST_TIME_FACTOR for every suite (see the header).
using crew_test_common::scaled;
using crew_test_common::time_factor;

// A bound on every wait that only a broken queue can reach.
inline steady::duration generous() { return scaled(30s); }

// Not synchronisation: gives a thread that ought to be blocked a chance to
// run (and to misbehave), so that a queue which does not block is likely
// caught. A correct queue passes whatever the scheduling.
template <class Pred>
void give_a_chance(Pred done) {
    for (int i = 0; i < 5000 && !done(); ++i) std::this_thread::yield();
}

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

template <class F>
auto run_async(F f) {
    return std::async(std::launch::async, std::move(f));
}

template <class Future>
bool ready_in_time(Future& f) {
    return f.wait_for(generous()) == std::future_status::ready;
}

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

// For TEMPLATE_LIST_TEST_CASE, which names each instance by its index in the
// list ("<case> - all_queues - 4"): a new policy, or a new parking mechanism
// for lockfree_queue, is added here and every test that applies runs on it.
using lockfree_queues = std::tuple<compile_time_sized<futex_queue>, compile_time_sized<condvar_queue>>;
// The mutex-based queues that hold tasks; their storage grows as needed.
using growing_queues =
    std::tuple<runtime_sized<crew::unbounded_queue>, runtime_sized<crew::bounded_queue>,
               runtime_sized<crew::priority_queue>>;
// Every queue that holds tasks (all but synchronous_queue).
using buffering_queues = concat<growing_queues, lockfree_queues>;
// Queues that hand out tasks in arrival order whatever their priority.
using fifo_queues =
    concat<std::tuple<runtime_sized<crew::unbounded_queue>, runtime_sized<crew::bounded_queue>>, lockfree_queues>;
// Queues that enforce a capacity: offer fails and put blocks while full.
using bounded_queues = concat<std::tuple<runtime_sized<crew::bounded_queue>>, lockfree_queues>;
// Queues whose put can block: the bounded ones, and synchronous_queue until
// a consumer comes.
using blocking_put_queues =
    concat<std::tuple<runtime_sized<crew::bounded_queue>, runtime_sized<crew::synchronous_queue>>, lockfree_queues>;
// Every queue policy.
using all_queues = concat<growing_queues, std::tuple<runtime_sized<crew::synchronous_queue>>, lockfree_queues>;

} // namespace crew_unit_test

#endif
