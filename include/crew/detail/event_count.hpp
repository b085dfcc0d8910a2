#ifndef CREW_DETAIL_EVENT_COUNT_HPP
#define CREW_DETAIL_EVENT_COUNT_HPP

// An event count: how a consumer sleeps until "something may have changed"
// without a lock, and how a producer wakes it at the price of one fence and
// one load when nobody sleeps. The queues' parking (issue #14) is to build on
// it; the idea is the one behind Eigen's and folly's EventCount.
//
// A consumer that found nothing:
//     auto key = ec.prepare_wait();       // announce: "I may sleep"
//     if (condition()) { ec.cancel_wait(); ...take it... }
//     else ec.commit_wait(key, deadline); // sleeps unless notified since prepare
// A producer, after making the condition true (any store):
//     ec.notify_one();                    // or notify_all()
//
// No lost wake-up: the consumer's announcement (a seq_cst read-modify-write)
// and the producer's fence order "announce, then re-check" against "publish,
// then look for sleepers". Either the producer sees the announcement, and
// changes the parking word, so that commit_wait does not sleep on the value
// prepare_wait read, or the consumer's re-check sees the published change.
//
// Who writes what: waiters_ is changed only by consumers (prepare, commit,
// cancel), and a producer only reads it, so producers that find no sleeper
// write nothing a consumer reads. The parking word is changed only by a
// notify that found a waiter.

#include <crew/detail/parking_word.hpp>
#include <crew/detail/tsan.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace crew::detail {

template <class ParkingWord = default_parking_word>
class event_count {
  public:
    // What prepare_wait read: the parking word's value then.
    using key = std::uint32_t;

    event_count() = default;
    event_count(const event_count&) = delete;
    event_count& operator=(const event_count&) = delete;

    // Announces the caller as a possible sleeper. The caller must re-check its
    // condition after this and then call exactly one of cancel_wait or
    // commit_wait.
    key prepare_wait() noexcept {
        waiters_.fetch_add(1, std::memory_order_seq_cst);
#if !defined(CREW_DETAIL_TSAN)
        // Pairs with notify's fence, so that the caller's re-check (any
        // loads) cannot be ordered before the announcement. Only on the way
        // to sleep. (TSan does not model fences; there the RMW stands alone.)
        std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
        return word_.load();
    }

    // The re-check found the condition true: withdraw the announcement.
    void cancel_wait() noexcept { waiters_.fetch_sub(1, std::memory_order_relaxed); }

    // Sleeps until a notify since prepare_wait, `deadline`, or a spurious
    // wake-up (the caller re-checks in any case), then withdraws.
    void commit_wait(key seen, std::chrono::steady_clock::time_point deadline =
                                   std::chrono::steady_clock::time_point::max()) {
        word_.wait(seen, deadline);
        waiters_.fetch_sub(1, std::memory_order_relaxed);
    }

    // Call after making a consumer's condition true. Wakes one sleeper, if
    // any announced itself; otherwise one fence and one load.
    void notify_one() { notify(1); }

    // As notify_one, but wakes every sleeper (close, interrupts).
    void notify_all() { notify(all); }

    // Consumers announced now: for statistics and tests only.
    std::uint32_t waiters() const noexcept { return waiters_.load(std::memory_order_relaxed); }

  private:
    static constexpr int all = 0x7fffffff;

    void notify(int how_many) {
        if (announced_waiters() == 0) return;
        word_.bump_and_wake(how_many);
    }

    // The caller's publish, then this load: a seq_cst fence orders them.
    // ThreadSanitizer does not model fences, so under it a read-modify-write
    // that changes nothing does the fence's work.
    std::uint32_t announced_waiters() noexcept {
#if defined(CREW_DETAIL_TSAN)
        return waiters_.fetch_add(0, std::memory_order_seq_cst);
#else
        std::atomic_thread_fence(std::memory_order_seq_cst);
        return waiters_.load(std::memory_order_relaxed);
#endif
    }

    alignas(64) std::atomic<std::uint32_t> waiters_{0};
    ParkingWord word_;
};

} // namespace crew::detail

#endif
