// The workloads of bench/ab.sh: one program, built once per revision of
// crew's headers (only include/ changes between the two builds; this file is
// the working tree's in both), so an A/B compares crew with crew and nothing
// else. It uses only names every revision since the release point has
// (fixed_pool, execute, submit, get); fork-join needs <crew/task_group.hpp>
// and ws1 <crew/work_stealing_pool.hpp>, and each says n/a without it.
//
//   ab_workloads w1      1,000,000 no-op tasks, 1 producer, 2 workers
//   ab_workloads w2      the same from 2 producers
//   ab_workloads w3      submit -> get round trip, 100,000 times, pinned to one CPU
//   ab_workloads fj      fib(35) through task_group on a fixed_pool of 2, serial below 20
//   ab_workloads ws1     w1 on a work_stealing_pool (its injector and searching throttle)
//   ab_workloads w1 --workers 16   (any workload: pool size)
//   ab_workloads w1 --smoke        (tiny sizes: proves it builds and runs)
//   ab_workloads w1 --textbook     (w1/w2 on a mutex + condition variable + deque pool instead)
//
// Prints one line, "RESULT <workload> <key>=<value> ...": throughput in M
// tasks/s and the process's CPU per task in ns (user + system, all threads,
// over the timed pass only); for w3 p50 and p99 in us; for fj the time in ms.
#include "common/harness.hpp"  // crew-free: completion, process_cpu_time, quantile, pin_to_one_cpu
#include "common/textbook.hpp" // crew-free

#include <crew/fixed_pool.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#if __has_include(<crew/work_stealing_pool.hpp>)
#include <crew/work_stealing_pool.hpp>
#define CREW_AB_HAVE_WORK_STEALING 1
#else
#define CREW_AB_HAVE_WORK_STEALING 0
#endif

#if __has_include(<crew/task_group.hpp>)
#include <crew/task_group.hpp>
#define CREW_AB_HAVE_TASK_GROUP 1
#else
#define CREW_AB_HAVE_TASK_GROUP 0
#endif

namespace {

using clock_type = std::chrono::steady_clock;

double process_cpu_seconds() { return std::chrono::duration<double>(bench::process_cpu_time()).count(); }

// The textbook pool (common/textbook.hpp, which needs no crew header): the
// yardstick of issue #31's "CPU per W1 task" target, run with --textbook.
using bench::textbook_pool;

template <class Pool>
std::pair<double, double> throughput_pass(long tasks, int producers, int workers) {
    Pool pool(workers);
    bench::completion done(tasks);
    std::latch go(producers + 1);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&, p] {
            const long mine = tasks / producers + (p < tasks % producers ? 1 : 0);
            go.arrive_and_wait();
            for (long i = 0; i < mine; ++i) pool.execute([&done] { done.hit(); });
        });
    const double cpu_before = process_cpu_seconds();
    const auto start = clock_type::now();
    go.arrive_and_wait();
    done.wait();
    const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    const double cpu = process_cpu_seconds() - cpu_before;
    for (auto& t : threads) t.join();
    return {static_cast<double>(tasks) / seconds / 1e6, cpu / static_cast<double>(tasks) * 1e9};
}

template <class Pool>
void throughput(const char* name, long tasks, int producers, int workers) {
    (void)throughput_pass<Pool>(tasks / 10, producers, workers); // warm-up, on its own pool
    const auto [mtps, cpu_ns] = throughput_pass<Pool>(tasks, producers, workers);
    std::printf("RESULT %s mtps=%.4f cpu_ns=%.2f\n", name, mtps, cpu_ns);
}

void round_trips(int n, int workers) {
    bench::pin_to_one_cpu(); // the hand-off itself, not two CPUs racing (as W3)
    crew::fixed_pool pool(static_cast<std::size_t>(workers));
    long sink = 0;
    for (int i = 0; i < n / 10; ++i) sink += pool.submit([i] { return i; }).get();
    std::vector<double> us(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const auto start = clock_type::now();
        sink += pool.submit([i] { return i; }).get();
        us[static_cast<std::size_t>(i)] = std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
    }
    std::sort(us.begin(), us.end());
    std::printf("RESULT w3 p50_us=%.3f p99_us=%.3f sink=%ld\n", bench::quantile(us, 0.5), bench::quantile(us, 0.99), sink % 2);
}

#if CREW_AB_HAVE_TASK_GROUP
long serial_fib(int n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

long fib(crew::fixed_pool& pool, int n, int cutoff) {
    if (n < cutoff) return serial_fib(n);
    long x = 0, y = 0;
    crew::task_group<crew::fixed_pool> g(pool);
    g.run([&] { x = fib(pool, n - 1, cutoff); });
    g.run([&] { y = fib(pool, n - 2, cutoff); });
    g.wait();
    return x + y;
}
#endif

void fork_join([[maybe_unused]] int n, [[maybe_unused]] int workers) {
#if CREW_AB_HAVE_TASK_GROUP
    crew::fixed_pool pool(static_cast<std::size_t>(workers));
    constexpr int cutoff = 20;
    (void)pool.submit([&] { return fib(pool, n - 2, cutoff); }).get(); // warm-up
    const double cpu_before = process_cpu_seconds();
    const auto start = clock_type::now();
    const long got = pool.submit([&] { return fib(pool, n, cutoff); }).get();
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    const double cpu = process_cpu_seconds() - cpu_before;
    if (got != serial_fib(n)) {
        std::fprintf(stderr, "ab_workloads: fib(%d) = %ld, wrong\n", n, got);
        std::exit(1);
    }
    std::printf("RESULT fj ms=%.3f cpu_ms=%.3f\n", ms, cpu * 1e3);
#else
    std::printf("RESULT fj n/a\n");
#endif
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: ab_workloads w1|w2|w3|fj|ws1 [--workers N] [--smoke] [--textbook]\n");
        return 2;
    }
    const std::string workload = argv[1];
    int workers = 2;
    bool smoke = false, textbook = false;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--smoke") == 0) smoke = true;
        else if (std::strcmp(argv[i], "--textbook") == 0) textbook = true;
        else if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc) workers = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "ab_workloads: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    const long tasks = smoke ? 20'000 : 1'000'000;
    if (workload == "w1" || workload == "w2") {
        const int producers = workload == "w1" ? 1 : 2;
        if (textbook) throughput<textbook_pool>(workload.c_str(), tasks, producers, workers);
        else throughput<crew::fixed_pool>(workload.c_str(), tasks, producers, workers);
    }
    else if (workload == "w3") round_trips(smoke ? 2'000 : 100'000, workers);
    else if (workload == "fj") fork_join(smoke ? 20 : 35, workers);
    else if (workload == "ws1") {
#if CREW_AB_HAVE_WORK_STEALING
        throughput<crew::work_stealing_pool>("ws1", tasks, 1, workers);
#else
        std::printf("RESULT ws1 n/a\n");
#endif
    }
    else {
        std::fprintf(stderr, "ab_workloads: unknown workload '%s'\n", workload.c_str());
        return 2;
    }
}
