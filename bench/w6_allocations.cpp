// W6: heap allocations per execute() of a 48-byte lambda (and bytes), in
// steady state. The malloc family is replaced for this program only (it
// forwards to glibc's), so that every allocation is counted, whoever makes
// it: operator new, std::function, or a library calling malloc directly.
// oneTBB's scalable allocator (libtbbmalloc), where TBB uses it, draws from
// its own pools and is not counted.
#include "common/harness.hpp"
#include "common/pools.hpp"

#include <cerrno>
#include <cstddef>

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

template <class Pool>
bench::values allocations_per_execute(const bench::options& o) {
    const long n = o.smoke ? 10'000 : 100'000;
    Pool pool(2);
    const payload data{{1, 2, 3, 4, 5}};
    // Batches of 1000 with a wait after each: the backlog, and so the size
    // every queue grows to, is the same in the warm-up and in the measurement.
    auto pass = [&](long tasks) {
        for (long submitted = 0; submitted < tasks; submitted += 1000) {
            bench::completion done(1000);
            for (long i = 0; i < 1000; ++i) {
                auto job = [&done, data] {
                    if (data.words[4] == 5) done.hit();
                };
                static_assert(sizeof(job) == 48);
                pool.execute(job);
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
        o, "w6", 2, []<class Pool>(const bench::options& opts) { return allocations_per_execute<Pool>(opts); });
    return bench::run("W6", "heap allocations per execute() of a 48-byte lambda, steady state",
                      {{"allocations per execute", "count", false}, {"bytes allocated per execute", "bytes", false}},
                      std::move(cs), o);
}
