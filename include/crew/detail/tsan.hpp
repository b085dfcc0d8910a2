#ifndef CREW_DETAIL_TSAN_HPP
#define CREW_DETAIL_TSAN_HPP

// ThreadSanitizer support for code that hands data through a library TSan
// cannot see into: whether TSan is on (CREW_DETAIL_TSAN), and a scope that
// turns off its checks of the calling thread's plain accesses.

#if defined(__SANITIZE_THREAD__)
#define CREW_DETAIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CREW_DETAIL_TSAN 1
#endif
#endif

#if defined(CREW_DETAIL_TSAN)
// ThreadSanitizer's dynamic annotations (in its runtime library).
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);
#endif

namespace crew::detail {

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

} // namespace crew::detail

#endif
