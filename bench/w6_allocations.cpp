// W6: heap allocations per execute() of a 48-byte lambda (and bytes), in
// steady state; and per schedule() of the same lambda, due 0 to 1 ms later,
// on the pools with timers (the rows named "..., schedule()"). The malloc family is replaced for this program only (it
// forwards to glibc's), so that every allocation is counted, whoever makes
// it: operator new, std::function, or a library calling malloc directly.
// oneTBB's scalable allocator (libtbbmalloc), where TBB uses it, draws from
// its own pools and is not counted.
#include "common/harness.hpp"
#include "common/pools.hpp"

#include <cerrno>
#include <cstddef>
#include <random>

namespace {
std::atomic<std::uint64_t> allocations{0};
std::atomic<std::uint64_t> allocated_bytes{0};
inline void count(std::size_t n) noexcept {
    allocations.fetch_add(1, std::memory_order_relaxed);
    allocated_bytes.fetch_add(n, std::memory_order_relaxed);
}
} // namespace

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t n) {
    count(n);
    return __libc_malloc(n);
}
void* calloc(std::size_t a, std::size_t b) {
    count(a * b);
    return __libc_calloc(a, b);
}
void* realloc(void* p, std::size_t n) {
    count(n);
    return __libc_realloc(p, n);
}
void* memalign(std::size_t alignment, std::size_t n) {
    count(n);
    return __libc_memalign(alignment, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) {
    count(n);
    return __libc_memalign(alignment, n);
}
void* valloc(std::size_t n) {
    count(n);
    return __libc_memalign(4096, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
    count(n);
    void* p = __libc_memalign(alignment, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void free(void* p) { __libc_free(p); }
}

namespace {

struct payload {
    std::uint64_t words[5];
};

// Schedule: schedule_at(now + U[0, 1 ms], job) instead of execute(job).
template <class Pool, bool Schedule>
bench::values allocations_per_call(const bench::options& o) {
    const long n = o.smoke ? 10'000 : 100'000;
    Pool pool(2);
    const payload data{{1, 2, 3, 4, 5}};
    std::mt19937_64 rng(1234);
    std::uniform_int_distribution<std::int64_t> delay(0, 1'000'000);
    // Batches of 1000 with a wait after each: the backlog, and so the size
    // every queue (or timer heap) grows to, is the same in the warm-up and in
    // the measurement.
    auto pass = [&](long tasks) {
        for (long submitted = 0; submitted < tasks; submitted += 1000) {
            bench::completion done(1000);
            const auto base = bench::clock::now();
            for (long i = 0; i < 1000; ++i) {
                auto job = [&done, data] {
                    if (data.words[4] == 5) done.hit();
                };
                static_assert(sizeof(job) == 48);
                if constexpr (Schedule) pool.schedule_at(base + std::chrono::nanoseconds(delay(rng)), job);
                else pool.execute(job);
            }
            done.wait();
        }
    };
    pass(n); // warm-up: caches, rings and free lists at their working size
    const auto count_before = allocations.load();
    const auto bytes_before = allocated_bytes.load();
    pass(n);
    const auto count = allocations.load() - count_before;
    const auto bytes = allocated_bytes.load() - bytes_before;
    return {static_cast<double>(count) / static_cast<double>(n), static_cast<double>(bytes) / static_cast<double>(n)};
}

} // namespace

int main(int argc, char** argv) {
    const bench::options o = bench::parse(argc, argv);
    auto cs = bench::contenders(
        o, "w6", 2, []<class Pool>(const bench::options& opts) { return allocations_per_call<Pool, false>(opts); });
    // The schedule() rows: the pools whose timers are their own (the timer
    // slack variants of W4 allocate as their plain pool does).
    auto schedule_row = [&]<class Pool>(const char* name, bool is_crew) {
        cs.push_back({std::string(name) + ", schedule()", is_crew,
                      [](const bench::options& opts) { return allocations_per_call<Pool, true>(opts); }});
    };
#if CREW_BENCH_HAVE_SCHEDULED
    schedule_row.operator()<bench::crew_scheduled>("crew scheduled_pool", true);
#endif
    schedule_row.operator()<bench::asio_pool>("asio thread_pool", false);
    schedule_row.operator()<bench::boost_scheduled_pool>("boost scheduled_thread_pool", false);
    schedule_row.operator()<bench::textbook_scheduled_pool>("textbook mutex+cv+heap", false);
    if (!o.java.empty()) cs.push_back(bench::java_peer("w6", "stpe-schedule", 2));
    bench::report_layout layout;
    layout.note = "`execute(job)`, or `schedule_at(now + U[0, 1 ms], job)` in the rows named `..., schedule()`, in "
                  "batches of 1,000 with a wait for the batch after each, measured after a warm-up pass of the same "
                  "size.";
    return bench::run("W6", "heap allocations per execute(), or schedule() where the row says so, of a 48-byte lambda, "
                            "steady state",
                      {{"allocations per call", "count", false}, {"bytes allocated per call", "bytes", false}},
                      std::move(cs), o, layout);
}
