// A guided tour of crew: run it (bash example/tour.sh) and read its output
// next to this file. Each section builds a small pool, does one thing to it,
// and prints what the pool's own statistics say happened.
//
// Tasks that must stay busy wait on a std::latch (a "gate") that main opens
// when it has printed what it wants to show; so the output is the same on
// every run, except for the times it measures.

#include <crew/crew.hpp>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <iterator>
#include <latch>
#include <mutex>
#include <set>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

// The name of the calling thread, as the OS knows it. Pool threads are named
// by crew's default_thread_factory: crew-<pool number>-<thread number>.
std::string thread_name() {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    return name;
}

long long ms_since(steady::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start).count();
}

// Prints a line from any thread. Tasks and hooks print with say(); main also
// uses printf directly, at moments when no task can be printing.
std::mutex print_mutex;
void say(const std::string& line) {
    std::lock_guard lock(print_mutex);
    std::printf("%s\n", line.c_str());
}

// 1 + 2: a pool with core 2, maximum 4 and room for 2 queued tasks. execute()
// follows Java's ThreadPoolExecutor: below the core size it starts a worker;
// otherwise it queues the task; if the queue is full it starts an extra worker
// up to the maximum; otherwise it hands the task to the reject policy.
void growth_and_keep_alive() {
    say("== 1. Growth: a bounded_queue pool (core 2, max 4, queue capacity 2)");
    crew::basic_executor<crew::bounded_queue> pool(crew::pool_options{
        .core_pool_size = 2, .maximum_pool_size = 4, .keep_alive = 200ms, .queue_capacity = 2});
    std::latch gate(1);
    const char* why[] = {"below core: a new worker takes it", "below core: a new worker takes it",
                         "core workers busy: it waits in the queue", "queued; the queue is now full",
                         "queue full: an extra worker takes it", "queue full: an extra worker, now at max"};
    for (int i = 0; i < 6; ++i) {
        pool.execute([&gate] { gate.wait(); });
        std::printf("  task %d: pool_size=%zu queue_size=%zu  (%s)\n", i + 1, pool.pool_size(),
                    pool.queue_size(), why[i]);
    }
    try { // queue full and at maximum: the default abort_policy throws
        pool.execute([] {});
    } catch (const crew::rejected_execution_error& e) {
        std::printf("  task 7: rejected_execution_error: %s\n", e.what());
    }

    gate.count_down(); // let the six tasks finish
    const auto released = steady::now();
    pool.wait_idle();
    std::printf("  gate opened: completed_task_count=%llu largest_pool_size=%zu\n",
                static_cast<unsigned long long>(pool.completed_task_count()), pool.largest_pool_size());

    say("== 2. Keep-alive: the 2 extra workers exit after 200 ms without work");
    while (pool.pool_size() > pool.core_pool_size() && ms_since(released) < 2000)
        std::this_thread::sleep_for(5ms); // polling is fine here: timing is what we show
    const std::size_t size = pool.pool_size();
    std::printf("  pool_size=%zu (%s) about %lld ms after the tasks finished\n", size,
                size == pool.core_pool_size() ? "back to core" : "STILL ABOVE CORE", ms_since(released));
}

// 3: the five reject policies, each on a pool that cannot take one more task:
// core = max = 1, one queue slot. fill() blocks its worker and fills its queue.
const crew::pool_options tiny{.core_pool_size = 1, .maximum_pool_size = 1, .queue_capacity = 1};

template <class Pool, class F = void (*)()>
void fill(Pool& pool, std::latch& gate, F queued = [] {}) {
    pool.execute([&gate] { gate.wait(); }); // runs now, blocked until the gate opens
    pool.execute(queued);                   // takes the only queue slot
}

void reject_policies() {
    say("== 3. Reject policies on a saturated pool (1 worker, blocked; 1 queued task)");
    {
        std::latch gate(1);
        crew::basic_executor<crew::bounded_queue, crew::abort_policy> pool(tiny);
        fill(pool, gate);
        try {
            pool.execute([] {});
        } catch (const crew::rejected_execution_error& e) {
            std::printf("  abort_policy:          execute() threw rejected_execution_error: %s\n", e.what());
        }
        gate.count_down();
    }
    {
        std::latch gate(1);
        crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy> pool(tiny);
        fill(pool, gate);
        std::string ran_on;
        pool.execute([&ran_on] { ran_on = thread_name(); }); // runs right here, inside execute()
        std::printf("  caller_runs_policy:    the task ran inside execute(), on thread '%s'\n",
                    ran_on.c_str());
        gate.count_down();
    }
    {
        std::latch gate(1);
        std::atomic<int> ran{0};
        crew::basic_executor<crew::bounded_queue, crew::discard_policy> pool(tiny);
        fill(pool, gate, [&ran] { ++ran; });
        for (int i = 0; i < 3; ++i) pool.execute([&ran] { ++ran; }); // dropped without a word
        gate.count_down();
        pool.wait_idle();
        std::printf("  discard_policy:        4 counting tasks submitted, %d ran (3 were dropped); "
                    "completed_task_count=%llu\n",
                    ran.load(), static_cast<unsigned long long>(pool.completed_task_count()));
    }
    {
        std::latch gate(1);
        std::string ran; // written by the pool's only worker, read after wait_idle()
        crew::basic_executor<crew::bounded_queue, crew::discard_oldest_policy> pool(tiny);
        fill(pool, gate, [&ran] { ran += "A "; });
        pool.execute([&ran] { ran += "B "; }); // A, the oldest queued task, makes way for B
        gate.count_down();
        pool.wait_idle();
        std::printf("  discard_oldest_policy: queued A, then submitted B; what ran: %s(A was dropped)\n",
                    ran.c_str());
    }
    // block_policy: execute(C) waits inside the call until the queue has room,
    // i.e. until task A is done and the worker has taken B. Every line below is
    // ordered by a gate or by that wait, so the order never changes.
    say("  block_policy, in order of events:");
    {
        std::latch gate(1), b_gate(1);
        crew::basic_executor<crew::bounded_queue, crew::block_policy> pool(tiny);
        pool.execute([&gate] {
            gate.wait();
            say("    worker: task A finishes; taking B from the queue makes room");
        });
        pool.execute([&b_gate] { b_gate.wait(); say("    worker: task B runs"); }); // after main's next line
        say("    main:   queue full; execute(C) blocks until there is room");
        std::jthread helper([&gate] {
            std::this_thread::sleep_for(100ms); // not needed for the order; makes the wait visible
            say("    helper: opens the gate of task A");
            gate.count_down();
        });
        const auto start = steady::now();
        pool.execute([] { say("    worker: task C runs"); });
        say("    main:   execute(C) returned after waiting about " + std::to_string(ms_since(start)) + " ms");
        b_gate.count_down();
        pool.wait_idle();
    }
}

// 4 + 5: the two ready-made aliases, and the names of their threads.
void cached_and_fixed() {
    say("== 4. cached_pool: one thread per concurrent task (core 0, no maximum)");
    {
        crew::cached_pool pool; // Java's newCachedThreadPool(): hand-off, never queues
        std::latch gate(1);
        for (int i = 1; i <= 5; ++i) {
            pool.execute([&gate] { gate.wait(); });
            std::printf("  task %d: pool_size=%zu queue_size=%zu\n", i, pool.pool_size(), pool.queue_size());
        }
        gate.count_down();
    } // the destructor shuts the pool down and joins its threads
    say("== 5. fixed_pool(3): 3 threads share 6 tasks; thread names from inside the tasks");
    {
        crew::fixed_pool pool(3); // Java's newFixedThreadPool(3): unbounded queue
        std::latch gate(1);
        std::string ran_on[6]; // each written by one task, read after wait_idle()
        for (int i = 0; i < 6; ++i) {
            pool.execute([&gate, &ran_on, i] {
                gate.wait();
                ran_on[i] = thread_name();
            });
        }
        std::printf("  6 tasks submitted: pool_size=%zu queue_size=%zu\n", pool.pool_size(),
                    pool.queue_size());
        gate.count_down();
        pool.wait_idle();
        for (int i = 0; i < 3; ++i) // each of the first three tasks started a worker of its own
            std::printf("  task %d started worker %d and ran on %s\n", i + 1, i + 1, ran_on[i].c_str());
        const std::set<std::string> names(std::begin(ran_on), std::end(ran_on));
        std::string all;
        for (const auto& n : names) all += " " + n;
        std::printf("  all 6 tasks ran on %zu threads:%s\n", names.size(), all.c_str());
    }
}

// 6: orderly shutdown. Queued tasks still run; new ones are rejected.
void shutdown() {
    say("== 6. shutdown(), await_termination() and the on_terminated hook");
    std::latch gate(1);
    crew::fixed_pool pool(crew::pool_options{
        .core_pool_size = 2, .on_terminated = [] { say("  [on_terminated] the pool is TERMINATED"); }});
    for (int i = 0; i < 4; ++i) pool.execute([&gate] { gate.wait(); });
    pool.shutdown();
    std::printf("  after shutdown(): is_shutdown=%d is_terminated=%d queue_size=%zu (they will still run)\n",
                pool.is_shutdown(), pool.is_terminated(), pool.queue_size());
    try {
        pool.execute([] {});
    } catch (const crew::rejected_execution_error& e) {
        std::printf("  execute() after shutdown: %s\n", e.what());
    }
    std::printf("  await_termination(0s) -> %s (2 tasks running, 2 queued)\n",
                pool.await_termination(0s) ? "true" : "false");
    gate.count_down();
    const bool done = pool.await_termination(2s);
    std::printf("  gate opened; await_termination(2s) -> %s: is_terminated=%d pool_size=%zu completed=%llu\n",
                done ? "true" : "false", pool.is_terminated(), pool.pool_size(),
                static_cast<unsigned long long>(pool.completed_task_count()));
}

} // namespace

int main() {
    pthread_setname_np(pthread_self(), "main"); // so that caller_runs_policy's output reads well
    growth_and_keep_alive();
    reject_policies();
    cached_and_fixed();
    shutdown();
    say("== done");
}
