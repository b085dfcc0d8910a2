// compose_tbb: crew's loops and groups against oneTBB's (issue #25).
//
//   C1  10^7 indices of a cheap body (a few ns: a hash of i stored at out[i]):
//       crew::parallel_for, a hand-batched loop on the same crew pool (one
//       chunk per worker, the caller waits), tbb::parallel_for.
//   C2  recursive Fibonacci fib(30), serial below 20: crew::task_group vs
//       tbb::task_group, TBB's documented example (run, run, wait).
//   C3  a parallel quicksort of 10^7 ints, serial below 2,048 (the same
//       partition code, only the fork and join differ).
//   C4  fib(32) with no cutoff: every node spawns (issue #32's spawn cost).
//       C4j: every node spawns one child and computes the other itself,
//       the shape of bench/java/ForkJoinFib.java (Java's ForkJoinPool).
//   C5  10^6 empty tasks run from one outside thread into one group.
//   C6  parallel_reduce over 10^8 indices: the sum of a cheap function of i
//       (C1's hash), and (C6i) the sum of i itself, one add per index, each
//       with no grain given (crew's 8 blocks per thread, TBB's
//       auto_partitioner), wall and CPU. Both libraries' inner loops compile
//       to the same scalar loop (GCC 12, x86-64: not vectorised, either).
//
//   C7  parallel_for over 10^8 indices of C1's body, and (C8) over 10^6
//       indices of a body of about 120 ns (70 rounds of the hash): crew on
//       both pools, tbb::parallel_for, and OpenMP's `parallel for
//       schedule(static)` where the compiler has OpenMP (issue #32's loop
//       rows), wall and CPU.
//
// C2 and C3 also run crew::task_group on a crew::work_stealing_pool (issue
// #26's fork-join target: at most tbb::task_group's time).
//
// Every contender uses the CPUs the process may run on: crew a fixed_pool of
// that many (a loop counts the caller among them; C2 and C3 start the root
// on the pool, so the caller only waits), TBB its default arena under a
// global_control limit of that many (its caller takes a slot). Each run (a
// forked child, interleaved with the other contenders) warms up, then times
// several passes and reports their median in milliseconds. The ratio
// columns are medians of per-repetition ratios (common/harness.hpp).
//
//   compose_tbb [--reps N] [--smoke] [--only NAME] [--out DIR]
#include "common/harness.hpp"

#include <crew/crew.hpp>
#include <crew/parallel_for.hpp>
#include <crew/parallel_reduce.hpp>
#include <crew/task_group.hpp>
#include <crew/work_stealing_pool.hpp>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <latch>
#include <random>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using bench::clock;
using bench::options;
using bench::values;

struct sizes {
    long indices;   // C1
    int loops;      // C1 passes timed
    int fib_n;      // C2
    int fib_cutoff; // C2: serial below
    int fib_passes; // C2 passes timed
    long sort_n;    // C3
    int sort_passes; // C3 passes timed
};

sizes sizes_for(const options& o) {
    if (o.smoke) return {100'000, 3, 22, 12, 3, 100'000, 2};
    return {10'000'000, 30, 30, 20, 30, 10'000'000, 5};
}

// The CPUs this process may run on (what nproc and TBB's default arena count:
// fewer than std::thread::hardware_concurrency() under taskset or a cpuset).
int threads() {
#if defined(__linux__)
    cpu_set_t allowed;
    if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0) return std::max(1, CPU_COUNT(&allowed));
#endif
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Times `pass` after two warm-up passes (threads started, pages touched);
// `check` validates each pass's result outside the clock. Median, in ms.
template <class Prepare, class Pass, class Check>
values timed(int passes, Prepare prepare, Pass pass, Check check) {
    std::vector<double> ms;
    for (int k = -2; k < passes; ++k) {
        prepare();
        const auto start = clock::now();
        pass();
        const auto elapsed = std::chrono::duration<double, std::milli>(clock::now() - start).count();
        if (!check()) {
            std::fprintf(stderr, "wrong result\n");
            return {bench::nan()};
        }
        if (k >= 0) ms.push_back(elapsed);
    }
    return {median(std::move(ms))};
}

// As timed, with the process's CPU time per pass too: {ms, CPU ms}, medians.
template <class Pass, class Check>
values timed_with_cpu(int passes, Pass pass, Check check) {
    std::vector<double> ms, cpu_ms;
    for (int k = -2; k < passes; ++k) {
        const auto cpu_start = bench::process_cpu_time();
        const auto start = clock::now();
        pass();
        const auto elapsed = std::chrono::duration<double, std::milli>(clock::now() - start).count();
        const auto cpu = std::chrono::duration<double, std::milli>(bench::process_cpu_time() - cpu_start).count();
        if (!check()) {
            std::fprintf(stderr, "wrong result\n");
            return {bench::nan(), bench::nan()};
        }
        if (k >= 0) {
            ms.push_back(elapsed);
            cpu_ms.push_back(cpu);
        }
    }
    return {median(std::move(ms)), median(std::move(cpu_ms))};
}

// A crew pool of `threads()` workers, all started.
template <class Pool = crew::fixed_pool>
struct started_pool {
    Pool pool{static_cast<std::size_t>(threads())};
    started_pool() { pool.prestart_all_core_threads(); }
};

// TBB limited to `threads()` threads, its caller included.
struct tbb_limit {
    tbb::global_control limit{tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads())};
};

// ---- C1: a cheap loop -------------------------------------------------------

inline std::uint32_t mix(std::uint64_t i) {
    i ^= i >> 33;
    i *= 0xff51afd7ed558ccdULL;
    i ^= i >> 33;
    return static_cast<std::uint32_t>(i);
}

std::uint32_t cheap_body(long i) { return mix(static_cast<std::uint64_t>(i)); }

// Every loop below stores body(i) ^ round at out[i]; this samples the result.
bool filled(const std::vector<std::uint32_t>& out, std::uint32_t (*body)(long), std::uint32_t round) {
    const long n = static_cast<long>(out.size());
    for (long i = 0; i < n; i += 9973)
        if (out[static_cast<std::size_t>(i)] != (body(i) ^ round)) return false;
    return out.back() == (body(n - 1) ^ round);
}

// The loop of each library, as the contenders of C1, C7 and C8 write it.
template <std::uint32_t (*Body)(long), class Pool>
void crew_fill(Pool& pool, std::uint32_t* out, long n, std::uint32_t round) {
    crew::parallel_for(pool, 0L, n, [out, round](long i) { out[i] = Body(i) ^ round; });
}

template <std::uint32_t (*Body)(long)>
void tbb_fill(std::uint32_t* out, long n, std::uint32_t round) {
    tbb::parallel_for(tbb::blocked_range<long>(0, n), [out, round](const tbb::blocked_range<long>& r) {
        for (long i = r.begin(); i != r.end(); ++i) out[i] = Body(i) ^ round;
    });
}

template <class Loop>
values loop_workload(const options& o, Loop loop) {
    const sizes s = sizes_for(o);
    std::vector<std::uint32_t> out(static_cast<std::size_t>(s.indices));
    std::uint32_t round = 0;
    return timed(
        s.loops, [&] { ++round; }, [&] { loop(out.data(), s.indices, round); },
        [&] { return filled(out, cheap_body, round); });
}

values crew_parallel_for(const options& o) {
    started_pool<> p;
    return loop_workload(
        o, [&](std::uint32_t* out, long n, std::uint32_t round) { crew_fill<cheap_body>(p.pool, out, n, round); });
}

// What one writes by hand: one chunk per worker, and wait for them all.
values crew_hand_batched(const options& o) {
    started_pool<> p;
    const long chunks = threads();
    return loop_workload(o, [&](std::uint32_t* out, long n, std::uint32_t round) {
        bench::completion done(chunks);
        for (long c = 0; c < chunks; ++c)
            p.pool.execute([out, round, &done, begin = n * c / chunks, end = n * (c + 1) / chunks] {
                for (long i = begin; i < end; ++i) out[i] = cheap_body(i) ^ round;
                done.hit();
            });
        done.wait();
    });
}

values tbb_parallel_for(const options& o) {
    tbb_limit limit;
    return loop_workload(o, tbb_fill<cheap_body>);
}

// ---- C2: recursive Fibonacci ------------------------------------------------

long serial_fib(int n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

template <class Pool>
long crew_fib(Pool& pool, int n, int cutoff) {
    if (n < cutoff) return serial_fib(n);
    long x = 0, y = 0;
    crew::task_group g(pool);
    g.run([&] { x = crew_fib(pool, n - 1, cutoff); });
    g.run([&] { y = crew_fib(pool, n - 2, cutoff); });
    g.wait();
    return x + y;
}

long tbb_fib(int n, int cutoff) {
    if (n < cutoff) return serial_fib(n);
    long x = 0, y = 0;
    tbb::task_group g;
    g.run([&] { x = tbb_fib(n - 1, cutoff); });
    g.run([&] { y = tbb_fib(n - 2, cutoff); });
    g.wait();
    return x + y;
}

template <class Pool = crew::fixed_pool>
values crew_task_group_fib(const options& o) {
    const sizes s = sizes_for(o);
    started_pool<Pool> p;
    const long expected = serial_fib(s.fib_n);
    long got = 0;
    return timed(
        s.fib_passes, [] {}, [&] { got = p.pool.submit([&] { return crew_fib(p.pool, s.fib_n, s.fib_cutoff); }).get(); },
        [&] { return got == expected; });
}

values tbb_task_group_fib(const options& o) {
    const sizes s = sizes_for(o);
    tbb_limit limit;
    const long expected = serial_fib(s.fib_n);
    long got = 0;
    return timed(
        s.fib_passes, [] {}, [&] { got = tbb_fib(s.fib_n, s.fib_cutoff); }, [&] { return got == expected; });
}

// ---- C4: fib without a cutoff; C5: a million empty tasks from outside --------
// Issue #32's spawn-cost rows: every node of fib(32) spawns (7 million
// spawns), and one outside thread runs 10^6 empty tasks into one group.

int spawn_fib_n(const options& o) { return o.smoke ? 20 : 32; }

// C4's and C4j's passes: fib(spawn_fib_n) computed by `fib(pool, n)` on a
// started crew pool, or by `fib(n)` under TBB's limit.
template <class Pool, class Fib>
values crew_fib_passes(const options& o, Fib fib) {
    started_pool<Pool> p;
    const long expected = serial_fib(spawn_fib_n(o));
    long got = 0;
    return timed_with_cpu(
        o.smoke ? 1 : 5, [&] { got = p.pool.submit([&] { return fib(p.pool, spawn_fib_n(o)); }).get(); },
        [&] { return got == expected; });
}

template <class Fib>
values tbb_fib_passes(const options& o, Fib fib) {
    tbb_limit limit;
    const long expected = serial_fib(spawn_fib_n(o));
    long got = 0;
    return timed_with_cpu(o.smoke ? 1 : 5, [&] { got = fib(spawn_fib_n(o)); }, [&] { return got == expected; });
}

template <class Pool = crew::fixed_pool>
values crew_spawn_fib(const options& o) {
    return crew_fib_passes<Pool>(o, [](Pool& pool, int n) { return crew_fib(pool, n, 2); });
}

// C4j: fork one child, compute the other, join (ForkJoinFib's shape).
template <class Pool>
long crew_fib_fork_one(Pool& pool, int n) {
    if (n < 2) return n;
    long x = 0;
    crew::task_group g(pool);
    g.run([&] { x = crew_fib_fork_one(pool, n - 1); });
    const long y = crew_fib_fork_one(pool, n - 2);
    g.wait();
    return x + y;
}

long tbb_fib_fork_one(int n) {
    if (n < 2) return n;
    long x = 0;
    tbb::task_group g;
    g.run([&] { x = tbb_fib_fork_one(n - 1); });
    const long y = tbb_fib_fork_one(n - 2);
    g.wait();
    return x + y;
}

template <class Pool = crew::fixed_pool>
values crew_fork_one_fib(const options& o) {
    return crew_fib_passes<Pool>(o, [](Pool& pool, int n) { return crew_fib_fork_one(pool, n); });
}

values tbb_fork_one_fib(const options& o) { return tbb_fib_passes(o, [](int n) { return tbb_fib_fork_one(n); }); }

values tbb_spawn_fib(const options& o) { return tbb_fib_passes(o, [](int n) { return tbb_fib(n, 2); }); }

int empty_tasks(const options& o) { return o.smoke ? 10'000 : 1'000'000; }

template <class Pool = crew::fixed_pool>
values crew_empty_tasks(const options& o) {
    started_pool<Pool> p;
    std::atomic<int> ran{0};
    return timed_with_cpu(
        o.smoke ? 1 : 5,
        [&] {
            ran = 0;
            crew::task_group g(p.pool);
            for (int i = 0; i < empty_tasks(o); ++i) g.run([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
            g.wait();
        },
        [&] { return ran.load() == empty_tasks(o); });
}

values tbb_empty_tasks(const options& o) {
    tbb_limit limit;
    std::atomic<int> ran{0};
    return timed_with_cpu(
        o.smoke ? 1 : 5,
        [&] {
            ran = 0;
            tbb::task_group g;
            for (int i = 0; i < empty_tasks(o); ++i) g.run([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
            g.wait();
        },
        [&] { return ran.load() == empty_tasks(o); });
}

// ---- C6: a reduction over 10^8 indices -------------------------------------
// Each pass sums f(i) over [0, n) into a 64-bit integer: f = mix (a cheap
// scalar body) or f(i) = i (one add). The same fold in both libraries: a
// local accumulator over a block, the blocks' sums added.

long reduce_indices(const options& o) { return o.smoke ? 1'000'000 : 100'000'000; }
int reduce_passes(const options& o) { return o.smoke ? 2 : 10; }

inline std::uint64_t hashed(long i) { return mix(static_cast<std::uint64_t>(i)); }
inline std::uint64_t plain(long i) { return static_cast<std::uint64_t>(i); }

template <std::uint64_t (*F)(long)>
std::uint64_t serial_sum(long n) {
    std::uint64_t sum = 0;
    for (long i = 0; i < n; ++i) sum += F(i);
    return sum;
}

template <std::uint64_t (*F)(long)>
values crew_reduce(const options& o) {
    started_pool<> p;
    const long n = reduce_indices(o);
    const std::uint64_t expected = serial_sum<F>(n);
    std::uint64_t got = 0;
    return timed_with_cpu(
        reduce_passes(o),
        [&] { got = crew::parallel_reduce(p.pool, 0L, n, std::uint64_t{0}, [](long i) { return F(i); }, std::plus<>{}); },
        [&] { return got == expected; });
}

template <std::uint64_t (*F)(long)>
values tbb_reduce(const options& o) {
    tbb_limit limit;
    const long n = reduce_indices(o);
    const std::uint64_t expected = serial_sum<F>(n);
    std::uint64_t got = 0;
    return timed_with_cpu(
        reduce_passes(o),
        [&] {
            got = tbb::parallel_reduce(
                tbb::blocked_range<long>(0, n), std::uint64_t{0},
                [](const tbb::blocked_range<long>& r, std::uint64_t acc) {
                    for (long i = r.begin(); i != r.end(); ++i) acc += F(i);
                    return acc;
                },
                std::plus<>{});
        },
        [&] { return got == expected; });
}

// ---- C3: parallel quicksort ---------------------------------------------------

constexpr long sort_cutoff = 2048;

// Splits [first, last) around a median-of-three pivot: [first, low) < pivot,
// [low, high) == pivot, [high, last) > pivot.
std::pair<int*, int*> split(int* first, int* last) {
    int* const middle = first + (last - first) / 2;
    const int pivot = std::max(std::min(*first, *middle), std::min(std::max(*first, *middle), *(last - 1)));
    int* const low = std::partition(first, last, [pivot](int x) { return x < pivot; });
    int* const high = std::partition(low, last, [pivot](int x) { return !(pivot < x); });
    return {low, high};
}

template <class Pool>
void crew_sort(Pool& pool, int* first, int* last) {
    if (last - first < sort_cutoff) return std::sort(first, last);
    const auto [low, high] = split(first, last);
    crew::task_group g(pool);
    g.run([&pool, first, low = low] { crew_sort(pool, first, low); });
    g.run([&pool, high = high, last] { crew_sort(pool, high, last); });
    g.wait();
}

void tbb_sort(int* first, int* last) {
    if (last - first < sort_cutoff) return std::sort(first, last);
    const auto [low, high] = split(first, last);
    tbb::task_group g;
    g.run([first, low = low] { tbb_sort(first, low); });
    g.run([high = high, last] { tbb_sort(high, last); });
    g.wait();
}

template <class Sort>
values sort_workload(const options& o, Sort sort) {
    const sizes s = sizes_for(o);
    std::vector<int> pristine(static_cast<std::size_t>(s.sort_n));
    std::mt19937 random(25);
    for (int& x : pristine) x = static_cast<int>(random());
    std::vector<int> v;
    return timed(
        s.sort_passes, [&] { v = pristine; }, [&] { sort(v.data(), v.data() + v.size()); },
        [&] { return std::is_sorted(v.begin(), v.end()); });
}

template <class Pool = crew::fixed_pool>
values crew_task_group_sort(const options& o) {
    started_pool<Pool> p;
    return sort_workload(o, [&](int* first, int* last) { p.pool.submit([&] { crew_sort(p.pool, first, last); }).get(); });
}

values tbb_task_group_sort(const options& o) {
    tbb_limit limit;
    return sort_workload(o, [](int* first, int* last) { tbb_sort(first, last); });
}

// ---- C7, C8: parallel_for beside OpenMP's static loop ----------------------

long big_loop_indices(const options& o) { return o.smoke ? 100'000 : 100'000'000; }
long slow_loop_indices(const options& o) { return o.smoke ? 10'000 : 1'000'000; }
int loop_passes(const options& o) { return o.smoke ? 1 : 7; }

// About 120 ns of CPU an index on the 2-vCPU Xeon VM (C8's CPU per pass
// over 10^6 indices; 40 rounds measured 58 ns).
std::uint32_t slow_body(long i) {
    std::uint64_t v = static_cast<std::uint64_t>(i);
    for (int r = 0; r < 70; ++r) v = mix(v + static_cast<std::uint64_t>(r));
    return static_cast<std::uint32_t>(v);
}

template <class Loop>
values indexed_loop(long n, int passes, std::uint32_t (*body)(long), Loop loop) {
    std::vector<std::uint32_t> out(static_cast<std::size_t>(n));
    std::uint32_t round = 0;
    return timed_with_cpu(
        passes,
        [&] {
            ++round;
            loop(out.data(), n, round);
        },
        [&] { return filled(out, body, round); });
}

template <class Pool, long (*Indices)(const options&), std::uint32_t (*Body)(long)>
values crew_loop(const options& o) {
    started_pool<Pool> p;
    return indexed_loop(Indices(o), loop_passes(o), Body,
                        [&](std::uint32_t* out, long n, std::uint32_t round) { crew_fill<Body>(p.pool, out, n, round); });
}

template <long (*Indices)(const options&), std::uint32_t (*Body)(long)>
values tbb_loop(const options& o) {
    tbb_limit limit;
    return indexed_loop(Indices(o), loop_passes(o), Body, tbb_fill<Body>);
}

#if defined(_OPENMP)
template <long (*Indices)(const options&), std::uint32_t (*Body)(long)>
values omp_loop(const options& o) {
    omp_set_num_threads(threads());
    return indexed_loop(Indices(o), loop_passes(o), Body, [](std::uint32_t* out, long n, std::uint32_t round) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i) out[i] = Body(i) ^ round;
    });
}
#endif

template <long (*Indices)(const options&), std::uint32_t (*Body)(long)>
std::vector<bench::contender> loop_contenders() {
    std::vector<bench::contender> c = {
        {"crew::parallel_for", true, crew_loop<crew::fixed_pool, Indices, Body>},
        {"crew::parallel_for, work_stealing_pool", true, crew_loop<crew::work_stealing_pool, Indices, Body>},
        {"tbb::parallel_for", false, tbb_loop<Indices, Body>}};
#if defined(_OPENMP)
    c.push_back({"OpenMP parallel for schedule(static)", false, omp_loop<Indices, Body>});
#endif
    return c;
}

} // namespace

int main(int argc, char** argv) {
    const options o = bench::parse(argc, argv);
    const sizes s = sizes_for(o);
    const std::vector<bench::metric> time = {{"time per pass", "ms (median of the passes)", false}};
    const std::string on = " (" + std::to_string(threads()) + " threads each)";
    int failed = 0;
    failed |= bench::run("C1", std::to_string(s.indices) + " indices of a cheap body" + on, time,
                         {{"crew::parallel_for", true, crew_parallel_for},
                          {"crew, hand-batched on the same pool", false, crew_hand_batched},
                          {"tbb::parallel_for", false, tbb_parallel_for}},
                         o);
    failed |= bench::run("C2",
                         "fib(" + std::to_string(s.fib_n) + "), serial below " + std::to_string(s.fib_cutoff) + on,
                         time,
                         {{"crew::task_group", true, crew_task_group_fib<>},
                          {"crew::task_group, work_stealing_pool", true, crew_task_group_fib<crew::work_stealing_pool>},
                          {"tbb::task_group", false, tbb_task_group_fib}},
                         o);
    failed |= bench::run("C3", "quicksort of " + std::to_string(s.sort_n) + " ints, serial below 2048" + on, time,
                         {{"crew::task_group", true, crew_task_group_sort<>},
                          {"crew::task_group, work_stealing_pool", true, crew_task_group_sort<crew::work_stealing_pool>},
                          {"tbb::task_group", false, tbb_task_group_sort}},
                         o);
    const std::vector<bench::metric> time_and_cpu = {{"time per pass", "ms (median of the passes)", false},
                                                     {"CPU per pass", "ms of process CPU (median)", false}};
    failed |= bench::run("C4", "fib(" + std::to_string(spawn_fib_n(o)) + "), every node spawns" + on, time_and_cpu,
                         {{"crew::task_group", true, crew_spawn_fib<>},
                          {"crew::task_group, work_stealing_pool", true, crew_spawn_fib<crew::work_stealing_pool>},
                          {"tbb::task_group", false, tbb_spawn_fib}},
                         o);
    failed |= bench::run("C4j",
                         "fib(" + std::to_string(spawn_fib_n(o)) +
                             "), every node spawns one child and computes the other (Java's ForkJoinFib)" + on,
                         time_and_cpu,
                         {{"crew::task_group", true, crew_fork_one_fib<>},
                          {"crew::task_group, work_stealing_pool", true, crew_fork_one_fib<crew::work_stealing_pool>},
                          {"tbb::task_group", false, tbb_fork_one_fib}},
                         o);
    failed |= bench::run("C5", std::to_string(empty_tasks(o)) + " empty tasks run from outside into one group" + on,
                         time_and_cpu,
                         {{"crew::task_group", true, crew_empty_tasks<>},
                          {"crew::task_group, work_stealing_pool", true, crew_empty_tasks<crew::work_stealing_pool>},
                          {"tbb::task_group", false, tbb_empty_tasks}},
                         o);
    const std::string reduced = std::to_string(reduce_indices(o)) + " indices";
    failed |= bench::run("C6", "parallel_reduce: the sum of a cheap hash of i over " + reduced + on, time_and_cpu,
                         {{"crew::parallel_reduce", true, crew_reduce<hashed>},
                          {"tbb::parallel_reduce", false, tbb_reduce<hashed>}},
                         o);
    failed |= bench::run("C6i", "parallel_reduce: the sum of i over " + reduced + on, time_and_cpu,
                         {{"crew::parallel_reduce", true, crew_reduce<plain>},
                          {"tbb::parallel_reduce", false, tbb_reduce<plain>}},
                         o);
    failed |= bench::run("C7", "parallel_for over " + std::to_string(big_loop_indices(o)) + " indices of a cheap body" + on,
                         time_and_cpu, loop_contenders<big_loop_indices, cheap_body>(), o);
    failed |= bench::run("C8",
                         "parallel_for over " + std::to_string(slow_loop_indices(o)) + " indices of about 120 ns each" + on,
                         time_and_cpu, loop_contenders<slow_loop_indices, slow_body>(), o);
    return failed;
}
