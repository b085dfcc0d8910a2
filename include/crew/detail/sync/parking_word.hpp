#ifndef CREW_DETAIL_SYNC_PARKING_WORD_HPP
#define CREW_DETAIL_SYNC_PARKING_WORD_HPP

// Room detail/sync/ (README): how threads wait for each other. The parking
// primitive (this header), the event count the queues park on, the
// asymmetric fence of the per-task handshakes, brief spinning, and the lock
// contracts written into signatures. It includes no other room: every other
// room may include it.

// Where a thread sleeps until another changes a word: the futex protocol on
// Linux, a mutex and condition variable elsewhere (and in the tests, so that
// both are exercised). One primitive; the queues that park build on it.
//
// The rule: a wait whose condition is a lock-free word parks here (the
// event count, futures, delayed_queue's leader, parallel_for's loop). A wait
// whose condition is guarded by a mutex anyway parks on a condition variable
// of that mutex; these are the exceptions, each rare or off the hot path:
// - basic_executor's `state_changed_` (the pool's LockPolicy lock):
//   await_termination, shutdown's wait for workers, pause;
// - task_group_core's `cv_`: a group's waiter that found nothing to help with
//   (the handshake lock is taken only by a waiter that sleeps, and the
//   variable is made only then: condition_variable_on_demand.hpp);
// - the deadline timer's thread, sleeping until its heap's earliest due time;
// - completion_queue's and invoke_any's consumers, under their list's mutex.
// policies/lock.hpp's spin_lock parks on std::atomic::wait: it is a lock.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

namespace crew::detail {

// A 32-bit word that threads park on until it changes: the futex protocol.
// wait(seen, deadline) returns when the word no longer holds `seen`, when
// woken, at the deadline, or spuriously; callers re-check their condition.
// bump_and_wake changes the word first, so that a waiter between reading
// `seen` and parking cannot miss it.
//
// std::atomic::wait has no time-out, and libstdc++'s notify skips the futex
// wake unless a std::atomic::wait caller registered in its own waiter table,
// so it cannot be mixed with a timed raw futex wait. Both waits therefore use
// the futex system call directly.

// bump_and_wake's count that wakes every thread parked on the word.
inline constexpr int wake_all_parked = 0x7fffffff;

#if defined(__linux__)
class futex_parking_word {
  public:
    std::uint32_t load() const noexcept { return word_.load(std::memory_order_seq_cst); }

    // deadline == time_point::max() waits without limit.
    void wait(std::uint32_t seen, std::chrono::steady_clock::time_point deadline) noexcept {
        static_assert(sizeof(word_) == sizeof(std::uint32_t) && std::atomic<std::uint32_t>::is_always_lock_free);
        timespec at{};
        const timespec* timeout = nullptr;
        if (deadline != std::chrono::steady_clock::time_point::max()) {
            // steady_clock is CLOCK_MONOTONIC, which FUTEX_WAIT_BITSET measures
            // an absolute time-out against.
            const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
            if (ns <= 0) return;
            at.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
            at.tv_nsec = static_cast<long>(ns % 1'000'000'000);
            timeout = &at;
        }
        // EAGAIN (the word changed), EINTR and ETIMEDOUT all mean "re-check".
        (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAIT_BITSET_PRIVATE, seen,
                        timeout, nullptr, FUTEX_BITSET_MATCH_ANY);
    }

    void bump_and_wake(int how_many) noexcept {
        word_.fetch_add(1, std::memory_order_seq_cst);
        (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, how_many, nullptr,
                        nullptr, 0);
    }

  private:
    std::atomic<std::uint32_t> word_{0};
};
#endif

// The same protocol on a mutex and a condition variable, for platforms
// without futexes (and tested on Linux too). Parking is the slow path, so the
// lock costs nothing that matters.
class condvar_parking_word {
  public:
    std::uint32_t load() const noexcept { return word_.load(std::memory_order_seq_cst); }

    void wait(std::uint32_t seen, std::chrono::steady_clock::time_point deadline) {
        std::unique_lock lock(mutex_);
        if (word_.load(std::memory_order_seq_cst) != seen) return;
        if (deadline == std::chrono::steady_clock::time_point::max()) cv_.wait(lock);
        else cv_.wait_until(lock, deadline);
    }

    void bump_and_wake(int how_many) {
        word_.fetch_add(1, std::memory_order_seq_cst);
        { std::lock_guard lock(mutex_); } // a waiter that read the old value is now inside wait
        if (how_many == 1) cv_.notify_one();
        else cv_.notify_all();
    }

  private:
    std::atomic<std::uint32_t> word_{0};
    std::mutex mutex_;
    std::condition_variable cv_;
};

#if defined(__linux__)
using default_parking_word = futex_parking_word;
#else
using default_parking_word = condvar_parking_word;
#endif

} // namespace crew::detail

#endif
