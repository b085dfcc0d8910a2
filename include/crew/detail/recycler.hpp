#ifndef CREW_DETAIL_RECYCLER_HPP
#define CREW_DETAIL_RECYCLER_HPP

// A process-wide recycler of small blocks, so that a future's state, or a
// task_group entry, costs no malloc in steady state. Both are born on one
// thread and usually die on another (a worker; a thief); glibc's malloc pays
// for that pattern (consolidation of its per-thread arenas). Here every thread
// keeps a bounded free list per size class; a full list hands a batch on to a
// global depot, and an empty one takes a batch from it. Blocks move between
// threads only through the depot's mutex, so ThreadSanitizer sees each
// hand-over.
//
// Requests above max_size, or aligned beyond std::max_align_t, go straight to
// ::operator new. Every block is an ::operator new of its class's size, so a
// block may always be given back to the system with ::operator delete: the
// copies of this recycler in different shared objects can share blocks.
//
// Under AddressSanitizer a cached block is poisoned (but for its list
// words, see free_words), so a use after free of a recycled state is still
// reported.

#include <crew/detail/cache_line.hpp>
#include <crew/detail/sanitizers.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

namespace crew::detail::recycler {

inline constexpr std::size_t class_bytes = 64;  // size classes 64, 128, ... max_size
inline constexpr std::size_t class_count = 8;
inline constexpr std::size_t max_size = class_bytes * class_count;
inline constexpr std::uint32_t cache_limit = 128; // blocks a thread keeps per class
inline constexpr std::uint32_t batch_size = 64;   // blocks moved to the depot at once
// What the depot keeps per class, in bytes (16 MiB: 131,072 states of 128
// bytes); beyond that a batch goes back to the system. The depot never
// shrinks otherwise: it holds what the busiest moment left behind.
inline constexpr std::size_t depot_bytes_per_class = std::size_t(16) << 20;

namespace impl {

inline constexpr std::size_t class_of(std::size_t size) noexcept { return size == 0 ? 0 : (size - 1) / class_bytes; }
inline constexpr std::size_t size_of_class(std::size_t c) noexcept { return (c + 1) * class_bytes; }


// What a free block holds. `next` chains a batch (or a thread's list); the
// first block of a batch in the depot also links the next batch and counts
// its own. Under AddressSanitizer these words stay unpoisoned, as
// LeakSanitizer does not follow pointers kept in poisoned memory (the depot's
// blocks would be reported as leaked), and sit at the block's end, which is
// often slack and else the state's tail, far from its counts and status
// (where a late access to a freed state most likely lands). Elsewhere they
// sit at the start, in the cache line the state's owner touches first.
struct free_words {
    void* next;
    void* next_batch;
    std::size_t count;
};
static_assert(sizeof(free_words) <= class_bytes);

#if defined(CREW_DETAIL_ASAN)
inline constexpr bool words_at_end = true;
#else
inline constexpr bool words_at_end = false;
#endif

inline free_words* words_of(void* block, std::size_t c) noexcept {
    const std::size_t offset = words_at_end ? size_of_class(c) - sizeof(free_words) : 0;
    return reinterpret_cast<free_words*>(static_cast<unsigned char*>(block) + offset);
}
inline free_words load(void* block, std::size_t c) noexcept { return *words_of(block, c); }
// Requires: the rest of the block poisoned already (a free block).
inline void store(void* block, std::size_t c, const free_words& w) noexcept {
    free_words* words = words_of(block, c);
    asan_unpoison(words, sizeof(free_words));
    *words = w;
}
inline void* next_of(void* block, std::size_t c) noexcept { return load(block, c).next; }

// A block leaves a free list for its user: the first `size` bytes usable,
// the slack (and the free words) poisoned.
inline void* hand_out(void* block, std::size_t c, std::size_t size) noexcept {
    asan_poison(block, size_of_class(c));
    asan_unpoison(block, size);
    return block;
}

// One thread's lists. Constant-initialised and trivially destructible, so it
// is never "destroyed": after the thread's exit_flush has run, `limit` is 0
// and `dead` set, and a state freed later by another thread_local's
// destructor goes straight back to the system.
struct thread_cache {
    void* head[class_count];
    std::uint32_t count[class_count];
    std::uint32_t limit; // cache_limit once the exit flush is registered; 0 before and after
    bool dead;
};
inline thread_local thread_cache cache{};

// Per class: a stack of batches, linked through their first blocks.
struct alignas(cache_line) depot_class {
    std::mutex mutex;
    void* batches = nullptr; // guarded by mutex
    std::size_t count = 0;   // batches held; guarded by mutex
};
struct depot {
    depot_class classes[class_count];
};
// Immortal, and reachable (LeakSanitizer stays quiet): threads may exit, and
// give their blocks back, after static destructors have run.
inline depot& the_depot() {
    static depot& d = *new depot;
    return d;
}

inline void free_list(void* head, std::size_t c) noexcept {
    while (head) {
        void* next = next_of(head, c);
        asan_unpoison(head, size_of_class(c));
        ::operator delete(head); // unsized: clang declares the sized form only with -fsized-deallocation
        head = next;
    }
}

// Hands the list `head` (`count` blocks) to the depot, or to the system if
// the depot is full. Takes the class's depot mutex.
inline void give(std::size_t c, void* head, std::size_t count) noexcept {
    depot_class& dc = the_depot().classes[c];
    {
        std::lock_guard lock(dc.mutex);
        if (dc.count < depot_bytes_per_class / (batch_size * size_of_class(c))) {
            free_words w = load(head, c);
            w.next_batch = dc.batches;
            w.count = count;
            store(head, c, w);
            dc.batches = head;
            ++dc.count;
            return;
        }
    }
    free_list(head, c);
}

// A batch from the depot: its first block, or null. Takes the depot mutex.
inline void* take(std::size_t c, std::size_t& count) noexcept {
    depot_class& dc = the_depot().classes[c];
    std::lock_guard lock(dc.mutex);
    void* batch = dc.batches;
    if (!batch) return nullptr;
    const free_words w = load(batch, c);
    dc.batches = w.next_batch;
    --dc.count;
    count = w.count;
    return batch;
}

inline void flush(thread_cache& tc) noexcept {
    for (std::size_t c = 0; c < class_count; ++c) {
        if (!tc.head[c]) continue;
        give(c, tc.head[c], tc.count[c]);
        tc.head[c] = nullptr;
        tc.count[c] = 0;
    }
}

// Gives the thread's blocks to the depot when the thread exits.
struct exit_flush {
    exit_flush() noexcept {} // not constexpr: registered at first use, on its thread
    exit_flush(const exit_flush&) = delete;
    exit_flush& operator=(const exit_flush&) = delete;
    ~exit_flush() {
        flush(cache);
        cache.limit = 0;
        cache.dead = true;
    }
};

// Requires: the calling thread's cache not yet live. False once it died.
inline bool make_live(thread_cache& tc) noexcept {
    if (tc.dead) return false;
    static thread_local exit_flush registered;
    (void)registered;
    tc.limit = cache_limit;
    return true;
}

[[gnu::noinline]] inline void* allocate_slow(std::size_t c, std::size_t size) {
    thread_cache& tc = cache;
    if (tc.limit != 0 || make_live(tc)) {
        std::size_t count = 0;
        if (void* batch = take(c, count)) {
            tc.head[c] = next_of(batch, c);
            tc.count[c] = static_cast<std::uint32_t>(count - 1);
            return hand_out(batch, c, size);
        }
    }
    void* fresh = ::operator new(size_of_class(c));
    asan_poison(static_cast<unsigned char*>(fresh) + size, size_of_class(c) - size); // the slack, as a cached block's
    return fresh;
}

[[gnu::noinline]] inline void deallocate_slow(void* p, std::size_t c) noexcept {
    thread_cache& tc = cache;
    if (tc.limit == 0 && !make_live(tc)) { // the thread's cache is gone
        asan_unpoison(p, size_of_class(c));
        ::operator delete(p);
        return;
    }
    if (tc.count[c] >= tc.limit) { // full: the older half goes to the depot
        void* last_kept = tc.head[c];
        for (std::uint32_t i = 1; i < tc.limit - batch_size; ++i) last_kept = next_of(last_kept, c);
        free_words w = load(last_kept, c);
        void* batch = w.next;
        w.next = nullptr;
        store(last_kept, c, w);
        give(c, batch, tc.count[c] - (tc.limit - batch_size));
        tc.count[c] = tc.limit - batch_size;
    }
    store(p, c, {tc.head[c], nullptr, 0});
    tc.head[c] = p;
    ++tc.count[c];
}

} // namespace impl

/// A block of `size` bytes aligned to `align`. Throws std::bad_alloc. Lock-free
/// while the calling thread's cache has a block of the class; else takes the
/// depot's mutex for that class, then maybe ::operator new.
inline void* allocate(std::size_t size, std::size_t align = alignof(std::max_align_t)) {
    if (size > max_size || align > alignof(std::max_align_t)) {
        if (align > alignof(std::max_align_t)) return ::operator new(size, std::align_val_t(align));
        return ::operator new(size);
    }
    const std::size_t c = impl::class_of(size);
    impl::thread_cache& tc = impl::cache;
    if (void* p = tc.head[c]) {
        tc.head[c] = impl::next_of(p, c);
        --tc.count[c];
        return impl::hand_out(p, c, size);
    }
    return impl::allocate_slow(c, size);
}

/// Gives back a block of allocate(size, align), from any thread.
inline void deallocate(void* p, std::size_t size, std::size_t align = alignof(std::max_align_t)) noexcept {
    if (size > max_size || align > alignof(std::max_align_t)) {
        if (align > alignof(std::max_align_t)) ::operator delete(p, std::align_val_t(align));
        else ::operator delete(p);
        return;
    }
    const std::size_t c = impl::class_of(size);
    impl::thread_cache& tc = impl::cache;
    if (tc.count[c] < tc.limit) {
        asan_poison(p, impl::size_of_class(c));
        impl::store(p, c, {tc.head[c], nullptr, 0});
        tc.head[c] = p;
        ++tc.count[c];
        return;
    }
    asan_poison(p, impl::size_of_class(c));
    impl::deallocate_slow(p, c);
}

/// Moves the calling thread's cached blocks to the depot, as its exit would.
/// For tests that need the next allocation to reach ::operator new.
inline void release_thread_cache() noexcept { impl::flush(impl::cache); }

/// Gives every block the depot holds back to the system. Threads' caches are
/// untouched.
inline void trim() noexcept {
    for (std::size_t c = 0; c < class_count; ++c) {
        impl::depot_class& dc = impl::the_depot().classes[c];
        void* batches;
        {
            std::lock_guard lock(dc.mutex);
            batches = dc.batches;
            dc.batches = nullptr;
            dc.count = 0;
        }
        while (batches) {
            void* next = impl::load(batches, c).next_batch;
            impl::free_list(batches, c);
            batches = next;
        }
    }
}

/// Blocks the depot holds in the size class of `size` (for tests).
inline std::size_t depot_blocks(std::size_t size) {
    const std::size_t c = impl::class_of(size);
    impl::depot_class& dc = impl::the_depot().classes[c];
    std::lock_guard lock(dc.mutex);
    std::size_t blocks = 0;
    for (void* b = dc.batches; b; b = impl::load(b, c).next_batch) blocks += impl::load(b, c).count;
    return blocks;
}

/// Blocks the calling thread's cache holds in the size class of `size`.
inline std::size_t thread_cache_blocks(std::size_t size) noexcept {
    return impl::cache.count[impl::class_of(size)];
}

} // namespace crew::detail::recycler

#endif
