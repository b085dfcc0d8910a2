#ifndef CREW_DETAIL_SYNC_ASYMMETRIC_FENCE_HPP
#define CREW_DETAIL_SYNC_ASYMMETRIC_FENCE_HPP

// A store-then-load handshake where one side runs per task and the other
// almost never: "a worker counts a task done, then looks for wait_idle()
// callers" against "a caller announces itself, then reads the counts". Both
// sides need a full fence between their store and their load, or each can
// miss the other's store (and wait_idle would sleep through the last task).
// A full fence per task costs the hot side tens of cycles; Linux's
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) lets the rare side pay for
// both, by making every running thread of the process execute a full fence:
//
//     hot side:   store; light(); load      (a compiler barrier)
//     rare side:  store; heavy(); load      (a system call, a few µs)
//
// After heavy() returns, every other thread has either made its store
// visible or not yet done its load, which then sees the rare side's store.
// Where membarrier is unavailable (not Linux, a kernel before 4.14, a
// seccomp filter), both sides use a seq_cst fence. ThreadSanitizer models
// neither (and warns about fences): under it both sides make a seq_cst
// read-modify-write of one shared word instead, a full barrier on the
// hardware, which is all the handshake needs there.

#include <crew/detail/sanitizers.hpp>

#include <atomic>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#define CREW_DETAIL_HAS_MEMBARRIER 1
#endif

namespace crew::detail {

class asymmetric_fence {
  public:
    // The hot side's fence: free once membarrier is registered (which the
    // first heavy() does), a seq_cst fence until then or without it.
    static void light() noexcept {
        if constexpr (under_thread_sanitizer) full_fence(tsan_word());
        else if (registered().load(std::memory_order_relaxed)) std::atomic_signal_fence(std::memory_order_seq_cst);
        else std::atomic_thread_fence(std::memory_order_seq_cst);
    }

    // The rare side's fence: after it, every thread's light() is a full fence
    // as seen from here.
    static void heavy() noexcept {
        if constexpr (under_thread_sanitizer) {
            full_fence(tsan_word());
        } else {
#if defined(CREW_DETAIL_HAS_MEMBARRIER)
            if (can_register()) {
                ::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
                return;
            }
#endif
            std::atomic_thread_fence(std::memory_order_seq_cst);
        }
    }

  private:
    static std::atomic<unsigned>& tsan_word() noexcept {
        static std::atomic<unsigned> word{0};
        return word;
    }

    // Set once registration succeeded; a light() that reads true relies on
    // the heavy() calls that follow using membarrier (they do: registration
    // is never undone).
    static std::atomic<bool>& registered() noexcept {
        static std::atomic<bool> flag{false};
        return flag;
    }

    // Registers the process once (thread-safe static); false if refused.
    static bool can_register() noexcept {
#if defined(CREW_DETAIL_HAS_MEMBARRIER)
        static const bool ok = [] {
            const bool done = ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
            if (done) registered().store(true, std::memory_order_relaxed);
            return done;
        }();
        return ok;
#else
        return false;
#endif
    }
};

} // namespace crew::detail

#endif
