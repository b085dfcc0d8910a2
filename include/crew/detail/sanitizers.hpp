#ifndef CREW_DETAIL_SANITIZERS_HPP
#define CREW_DETAIL_SANITIZERS_HPP

// The sanitizers crew adapts to, detected in one place:
// - CREW_DETAIL_TSAN under ThreadSanitizer, which models no fences (the code
//   that fences uses a read-modify-write there instead), and
//   tsan_unchecked_scope, for calls into a library TSan cannot see into;
// - CREW_DETAIL_ASAN under AddressSanitizer, and asan_poison/asan_unpoison,
//   for memory crew caches itself (detail/recycler.hpp).

#include <atomic>
#include <cstddef>

#if defined(__SANITIZE_THREAD__)
#define CREW_DETAIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CREW_DETAIL_TSAN 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__)
#define CREW_DETAIL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CREW_DETAIL_ASAN 1
#endif
#endif

#if defined(CREW_DETAIL_TSAN)
// ThreadSanitizer's dynamic annotations (in its runtime library).
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);
#endif

#if defined(CREW_DETAIL_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace crew::detail {

// True in a ThreadSanitizer build: for `if constexpr`, so that no header
// but this one needs an #if for it.
#if defined(CREW_DETAIL_TSAN)
inline constexpr bool under_thread_sanitizer = true;
#else
inline constexpr bool under_thread_sanitizer = false;
#endif

// A fence that orders atomics only. ThreadSanitizer models no fences (and
// warns about them); the accesses it orders are atomics, so under TSan it is
// left out and TSan reports no race without it.
inline void fence_unless_tsan([[maybe_unused]] std::memory_order order) noexcept {
    if constexpr (!under_thread_sanitizer) std::atomic_thread_fence(order);
}

// A look at `a` after a seq_cst fence the caller issued: a relaxed load.
// Under TSan, where that fence did nothing, a read-modify-write that changes
// nothing does its work.
template <class T>
T load_after_full_fence(std::atomic<T>& a) noexcept {
    if constexpr (under_thread_sanitizer) return a.fetch_add(0, std::memory_order_seq_cst);
    else return a.load(std::memory_order_relaxed);
}

// A seq_cst fence, then a look at `a` (the caller's publish before it):
// one read-modify-write that changes nothing under TSan.
template <class T>
T fenced_load(std::atomic<T>& a) noexcept {
    fence_unless_tsan(std::memory_order_seq_cst);
    return load_after_full_fence(a);
}

// Under TSan, the calling thread's plain reads and writes are not checked for
// races while one of these lives; its atomics still synchronise, so data
// handed on through them is still checked. Without TSan, an empty type.
struct tsan_unchecked_scope {
#if defined(CREW_DETAIL_TSAN)
    tsan_unchecked_scope() noexcept {
        AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
        AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    }
    ~tsan_unchecked_scope() {
        AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
        AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    }
    tsan_unchecked_scope(const tsan_unchecked_scope&) = delete;
    tsan_unchecked_scope& operator=(const tsan_unchecked_scope&) = delete;
#endif
};

// A seq_cst fence, ordering the caller's publish before its next look.
// ThreadSanitizer models no fences (and warns about them): there an RMW
// that changes nothing on `stand_in`, an atomic the look reads, does the
// fence's work.
template <class T>
void full_fence([[maybe_unused]] std::atomic<T>& stand_in) noexcept {
    if constexpr (under_thread_sanitizer) (void)stand_in.fetch_add(0, std::memory_order_seq_cst);
    else std::atomic_thread_fence(std::memory_order_seq_cst);
}

// Under ASan, marks `n` bytes at `p` unusable (a use is reported) or usable
// again; without it, nothing.
#if defined(CREW_DETAIL_ASAN)
inline void asan_poison(void* p, std::size_t n) noexcept { ASAN_POISON_MEMORY_REGION(p, n); }
inline void asan_unpoison(void* p, std::size_t n) noexcept { ASAN_UNPOISON_MEMORY_REGION(p, n); }
#else
inline void asan_poison(void*, std::size_t) noexcept {}
inline void asan_unpoison(void*, std::size_t) noexcept {}
#endif

} // namespace crew::detail

#endif
