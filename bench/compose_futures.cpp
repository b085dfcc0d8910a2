// Composition costs on crew::fixed_pool(2) (issue #25's targets):
//   - a chain of 100,000 continuations (future::then), time per link, beside
//     a submit(...).get() round trip on the same pool: target ≤ 1.2×;
//   - when_all of 100,000 futures: time per input, and the heap allocations
//     when_all itself makes (target: O(n), made once: a handful, whatever n).
// Interleaved repetitions, medians of per-repetition ratios (common/harness.hpp).
#include "common/harness.hpp"

#include <crew/fixed_pool.hpp>
#include <crew/when_all.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

namespace {

// Allocations made by the calling thread while `counting` is set.
thread_local bool counting = false;
std::atomic<long> counted{0};

int links(const bench::options& o) { return o.smoke ? 2'000 : 100'000; }

bench::values round_trip(const bench::options& o) {
    const int n = links(o);
    crew::fixed_pool pool(2);
    long sink = 0;
    for (int i = 0; i < n / 10; ++i) sink += pool.submit([i] { return i; }).get(); // warm-up
    const auto start = bench::clock::now();
    for (int i = 0; i < n; ++i) sink += pool.submit([i] { return i; }).get();
    const double us = std::chrono::duration<double, std::micro>(bench::clock::now() - start).count();
    if (sink == 42) std::puts("");
    return {us / n, bench::nan()};
}

bench::values then_chain(const bench::options& o) {
    const int n = links(o);
    crew::fixed_pool pool(2);
    {
        auto warm = pool.submit([] { return 0; });
        for (int i = 0; i < n / 10; ++i) warm = std::move(warm).then(pool, [](int x) { return x + 1; });
        (void)warm.get();
    }
    const auto start = bench::clock::now();
    auto f = pool.submit([] { return 0; });
    for (int i = 0; i < n; ++i) f = std::move(f).then(pool, [](int x) { return x + 1; });
    const int last = f.get();
    const double us = std::chrono::duration<double, std::micro>(bench::clock::now() - start).count();
    if (last != n) std::abort();
    return {us / n, bench::nan()};
}

bench::values when_all_of_many(const bench::options& o) {
    const int n = links(o);
    crew::fixed_pool pool(2);
    std::vector<crew::future<int>> inputs;
    inputs.reserve(static_cast<std::size_t>(n));
    const auto start = bench::clock::now();
    for (int i = 0; i < n; ++i) inputs.push_back(pool.submit([i] { return i; }));
    counted = 0;
    counting = true;
    auto all = crew::when_all(std::move(inputs));
    counting = false;
    const long allocations = counted.load();
    long sum = 0;
    for (auto& f : all.get()) sum += f.get();
    const double us = std::chrono::duration<double, std::micro>(bench::clock::now() - start).count();
    if (sum != static_cast<long>(n) * (n - 1) / 2) std::abort();
    return {us / n, static_cast<double>(allocations)};
}

} // namespace

// Counting replacements of the global new and delete: both sides use malloc
// and free, which GCC's -Wmismatched-new-delete cannot see through.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
    if (counting) counted.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

int main(int argc, char** argv) {
    const bench::options o = bench::parse(argc, argv);
    std::vector<bench::contender> cs{
        {"submit().get() round trip", true, round_trip},
        {"then() chain, per link", true, then_chain},
        {"when_all() of n, per input (submits included)", true, when_all_of_many},
    };
    return bench::run("compose_futures",
                      std::string("future composition on fixed_pool(2), n = ") + (o.smoke ? "2,000" : "100,000"),
                      {{"time per operation", "us", false}, {"allocations inside when_all()", "count", false}},
                      std::move(cs), o);
}
