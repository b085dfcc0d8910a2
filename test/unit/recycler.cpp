// Unit tests for detail::recycler, the block cache behind a future's state:
// blocks move between threads through the depot, a thread's exit hands its
// cache on, size classes stay apart, and what is too big or over-aligned goes
// straight to operator new. Each test starts from an empty depot and an
// empty cache on its own thread (trim + release_thread_cache); the tests run
// one at a time, so nothing else feeds the depot meanwhile.

#include <crew/detail/future/future_state.hpp>
#include <crew/detail/recycler.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#if defined(CREW_DETAIL_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace recycler = crew::detail::recycler;

namespace {

void start_empty() {
    recycler::release_thread_cache();
    recycler::trim();
}

std::vector<void*> allocate_n(std::size_t n, std::size_t size) {
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < n; ++i) {
        blocks.push_back(recycler::allocate(size));
        std::memset(blocks.back(), 0xab, size); // the whole size is ours (ASan checks)
    }
    return blocks;
}

void deallocate_all(const std::vector<void*>& blocks, std::size_t size) {
    for (void* p : blocks) recycler::deallocate(p, size);
}

bool aligned(const void* p, std::size_t alignment) {
    return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

} // namespace

TEST_CASE("recycler: blocks freed on another thread are reused here", "[recycler]") {
    start_empty();
    const auto mine = allocate_n(300, 100);
    const std::set<void*> freed(mine.begin(), mine.end());
    REQUIRE(freed.size() == 300u);
    std::thread([&] { deallocate_all(mine, 100); }).join(); // overflowed batches, then its exit flush
    CHECK(recycler::depot_blocks(100) == 300u);

    const auto again = allocate_n(300, 128); // 65..128 bytes: the class of 100
    for (void* p : again) CHECK(freed.count(p) == 1u);
    CHECK(recycler::depot_blocks(100) == 0u);
    deallocate_all(again, 128);
    start_empty();
}

TEST_CASE("recycler: a thread's exit returns its cache to the depot", "[recycler]") {
    start_empty();
    std::size_t cached_before_exit = 0, in_depot_before_exit = 0;
    std::thread([&] {
        deallocate_all(allocate_n(10, 200), 200);
        cached_before_exit = recycler::thread_cache_blocks(200);
        in_depot_before_exit = recycler::depot_blocks(200);
    }).join();
    CHECK(cached_before_exit == 10u);
    CHECK(in_depot_before_exit == 0u);
    CHECK(recycler::depot_blocks(200) == 10u);
    start_empty();
}

TEST_CASE("recycler: a full cache hands its older blocks on and keeps the newest", "[recycler]") {
    start_empty();
    const auto blocks = allocate_n(recycler::cache_limit + 1, 64);
    deallocate_all(blocks, 64);
    CHECK(recycler::thread_cache_blocks(64) == recycler::cache_limit + 1 - recycler::batch_size);
    CHECK(recycler::depot_blocks(64) == recycler::batch_size);
    void* next = recycler::allocate(64);
    CHECK(next == blocks.back()); // last in, first out: the block most likely in the cache
    recycler::deallocate(next, 64);

    recycler::release_thread_cache();
    CHECK(recycler::thread_cache_blocks(64) == 0u);
    CHECK(recycler::depot_blocks(64) == recycler::cache_limit + 1);
    start_empty();
}

TEST_CASE("recycler: distinct size classes never mix", "[recycler]") {
    start_empty();
    const auto small = allocate_n(20, 64);
    deallocate_all(small, 64);
    const std::set<void*> small_set(small.begin(), small.end());
    REQUIRE(recycler::thread_cache_blocks(64) == 20u);

    for (std::size_t size : {65u, 128u, 129u, 512u}) {
        const auto other = allocate_n(20, size);
        for (void* p : other) CHECK(small_set.count(p) == 0u);
        deallocate_all(other, size);
    }
    CHECK(recycler::thread_cache_blocks(64) == 20u);
    const auto same = allocate_n(20, 1); // 1..64 bytes: the 64-byte class
    for (void* p : same) CHECK(small_set.count(p) == 1u);
    deallocate_all(same, 1);
    start_empty();
}

TEST_CASE("recycler: large and over-aligned requests go to operator new", "[recycler]") {
    start_empty();
    for (std::size_t size : {recycler::max_size + 1, std::size_t{4096}}) {
        void* p = recycler::allocate(size);
        std::memset(p, 1, size);
        recycler::deallocate(p, size);
    }
    for (std::size_t alignment : {std::size_t{32}, std::size_t{64}, std::size_t{4096}}) {
        for (std::size_t size : {std::size_t{64}, std::size_t{1000}}) {
            void* p = recycler::allocate(size, alignment);
            CHECK(aligned(p, alignment));
            std::memset(p, 2, size);
            recycler::deallocate(p, size, alignment);
        }
    }
    for (std::size_t c = 0; c < recycler::class_count; ++c) {
        const std::size_t size = (c + 1) * recycler::class_bytes;
        CHECK(recycler::thread_cache_blocks(size) == 0u);
        CHECK(recycler::depot_blocks(size) == 0u);
    }
}

namespace {
struct alignas(64) overaligned_call {
    int value;
    int operator()() const { return value; }
};
} // namespace

TEST_CASE("recycler: a future state of an over-aligned callable is aligned", "[recycler]") {
    using state = crew::detail::future_state_with<int, overaligned_call>;
    static_assert(alignof(state) == 64);
    for (int i = 0; i < 3; ++i) {
        auto* s = new state(overaligned_call{i});
        CHECK(aligned(s, 64));
        CHECK(s->function()() == i);
        s->destroy_function();
        s->release(); // the future's reference
        s->release(); // the task's: deletes
    }
}

TEST_CASE("recycler: future states are recycled", "[recycler]") {
    using plain = crew::detail::future_state_with<int, int (*)()>;
    start_empty();
    auto* first = new plain(+[] { return 1; });
    first->destroy_function();
    first->release();
    first->release();
    CHECK(recycler::thread_cache_blocks(sizeof(plain)) == 1u);
    auto* second = new plain(+[] { return 2; });
    CHECK(static_cast<void*>(second) == static_cast<void*>(first));
    second->destroy_function();
    second->release();
    second->release();
    start_empty();
}

#if defined(CREW_DETAIL_ASAN)
TEST_CASE("recycler: under AddressSanitizer a cached block is poisoned", "[recycler]") {
    start_empty();
    auto* p = static_cast<char*>(recycler::allocate(100));
    CHECK(__asan_region_is_poisoned(p, 100) == nullptr);
    CHECK(__asan_address_is_poisoned(p + 100)); // the slack of its 128-byte class
    recycler::deallocate(p, 100);
    CHECK(__asan_address_is_poisoned(p));
    CHECK(__asan_address_is_poisoned(p + 64));
    auto* again = static_cast<char*>(recycler::allocate(100));
    REQUIRE(again == p);
    CHECK(__asan_region_is_poisoned(again, 100) == nullptr);
    recycler::deallocate(again, 100);
    start_empty();
}
#endif
