// Microbenchmarks of crew's queue policies alone, without a pool around them
// (Google Benchmark; built when Debian's libbenchmark-dev is installed).
//
//   enqueue/<queue>/batch:N   offer N small tasks (a lambda capturing one
//                             pointer) with nobody taking: what a producer pays
//                             to build and queue a task. Only the offers are
//                             timed (manual time); the queue is drained after.
//                             batch:256 is a short backlog; batch:4096 a long
//                             one, past the 1024-cell ring of unbounded_queue
//                             and bounded_queue (see policies/queue.hpp for
//                             what each does beyond it).
//   handoff/<queue>/batch:N   one producer offers, one consumer thread take()s
//                             and runs them; each iteration is N tasks, timed
//                             until the consumer has run the last one (so the
//                             producer is never more than N ahead, and the
//                             consumer parks and is woken once per batch).
//
// Every crew queue is built from pool_options (queue_capacity 4096) and used
// through its public QueuePolicy members (offer, poll, take, wake_consumers),
// as basic_executor uses it. The peer, textbook::mutex_deque, is the queue of
// bench/common/pools.hpp's textbook_pool taken out on its own: a std::mutex, a
// condition variable notified on every offer, and a std::deque of
// std::function<void()>. Results: items_per_second (tasks per second).
//
//   build/bench/micro_queues --benchmark_filter=handoff
//   bash bench/run.sh --micro                  # both microbenchmark programs
#include <benchmark/benchmark.h>

#include <crew/crew.hpp>
#include <crew/policies/lockfree_queue.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace {

constexpr std::size_t capacity = 4096; // bounded_queue and lockfree_queue: room for the largest batch

crew::pool_options queue_options() {
    crew::pool_options o;
    o.queue_capacity = capacity;
    return o;
}

// textbook_pool's queue (bench/common/pools.hpp) with the QueuePolicy's names.
class textbook_queue {
  public:
    using item = std::function<void()>;

    explicit textbook_queue(const crew::pool_options& = {}) {}

    bool offer(item&& f) {
        {
            std::lock_guard lock(mutex_);
            tasks_.push_back(std::move(f));
        }
        changed_.notify_one(); // as textbook_pool::execute: always
        return true;
    }
    bool poll(item& out) {
        std::lock_guard lock(mutex_);
        if (tasks_.empty()) return false;
        out = std::move(tasks_.front());
        tasks_.pop_front();
        return true;
    }
    crew::wait_status take(item& out, const crew::interrupt_flag& interrupted) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !tasks_.empty() || interrupted.load(); });
        if (tasks_.empty()) return crew::wait_status::interrupted; // a task wins over the flag, as in crew
        out = std::move(tasks_.front());
        tasks_.pop_front();
        return crew::wait_status::taken;
    }
    void wake_consumers() {
        // The flag was set before: a consumer between its check and its wait
        // holds the mutex, so it cannot miss this notification.
        std::lock_guard lock(mutex_);
        changed_.notify_all();
    }

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<item> tasks_;
};

template <class Queue>
struct item_of {
    using type = crew::task;
};
template <>
struct item_of<textbook_queue> {
    using type = textbook_queue::item;
};
template <class Queue>
using item_t = typename item_of<Queue>::type;

// ---- enqueue alone ------------------------------------------------------------

template <class Queue>
void enqueue(benchmark::State& state) {
    const long batch = state.range(0);
    Queue queue(queue_options());
    item_t<Queue> out;
    long ran = 0; // the tasks are never run: the capture only gives them a realistic size
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        for (long i = 0; i < batch; ++i) {
            if (!queue.offer(item_t<Queue>([&ran] { ++ran; }))) {
                state.SkipWithError("offer failed: queue full");
                break;
            }
        }
        state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        while (queue.poll(out)) out = {}; // untimed: empty the queue for the next batch
    }
    benchmark::DoNotOptimize(ran);
    state.SetItemsProcessed(state.iterations() * batch);
}

// ---- hand-off between two threads -------------------------------------------------

// The consumer tells the producer, once per batch, that it has run the whole
// batch. A mutex and a condition variable (once per batch: negligible) so that
// the producer can give up: a lost task or a lost wake-up in a queue under
// test fails the benchmark instead of hanging it (and CI's smoke run).
class batches_done {
  public:
    void set(long n) {
        {
            std::lock_guard lock(mutex_);
            done_ = n;
        }
        changed_.notify_one();
    }
    bool wait_for(long n, std::chrono::seconds timeout) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, timeout, [&] { return done_ >= n; });
    }

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    long done_ = 0;
};

template <class Queue>
void handoff(benchmark::State& state) {
    const long batch = state.range(0);
    Queue queue(queue_options());
    crew::interrupt_flag stop{false};
    batches_done done;
    long ran = 0; // touched by the consumer only (the tasks run there)
    std::thread consumer([&] {
        item_t<Queue> t;
        long taken = 0;
        while (queue.take(t, stop) == crew::wait_status::taken) {
            t();
            t = {};
            if (++taken % batch == 0) done.set(taken / batch);
        }
    });
    long batches_sent = 0;
    for (auto _ : state) {
        for (long i = 0; i < batch; ++i) {
            item_t<Queue> t([&ran] { ++ran; });
            // Never fails with these capacities; a full queue would make the producer wait its turn.
            while (!queue.offer(std::move(t))) std::this_thread::yield();
        }
        if (!done.wait_for(++batches_sent, std::chrono::seconds(10))) {
            state.SkipWithError("the consumer did not run a batch within 10 s: a lost task or wake-up");
            break;
        }
    }
    stop.store(true);
    queue.wake_consumers();
    consumer.join();
    benchmark::DoNotOptimize(ran);
    state.SetItemsProcessed(state.iterations() * batch);
}

// ---- registration -------------------------------------------------------------------

// Calls add.template operator()<Queue>(name) for crew's queues, then for the
// textbook peer, so that each section reads <section>/crew::<queue> ...
// <section>/textbook::mutex_deque (as for_each_pool does for the pools).
template <class Add>
void for_each_queue(Add add) {
    add.template operator()<crew::unbounded_queue>("crew::unbounded_queue");
    add.template operator()<crew::bounded_queue>("crew::bounded_queue");
    add.template operator()<crew::lockfree_queue<capacity>>("crew::lockfree_queue<4096>");
    add.template operator()<crew::priority_queue>("crew::priority_queue");
    add.template operator()<textbook_queue>("textbook::mutex_deque");
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    for_each_queue([]<class Queue>(const std::string& name) {
        benchmark::RegisterBenchmark(("enqueue/" + name).c_str(), enqueue<Queue>)
            ->ArgName("batch")
            ->Arg(256)
            ->Arg(static_cast<long>(capacity))
            ->UseManualTime();
    });
    for_each_queue([]<class Queue>(const std::string& name) {
        benchmark::RegisterBenchmark(("handoff/" + name).c_str(), handoff<Queue>)
            ->ArgName("batch")
            ->Arg(1024)
            ->UseRealTime();
    });
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
