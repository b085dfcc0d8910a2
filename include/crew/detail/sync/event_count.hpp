#ifndef CREW_DETAIL_SYNC_EVENT_COUNT_HPP
#define CREW_DETAIL_SYNC_EVENT_COUNT_HPP

// An event count: how a consumer sleeps until "something may have changed"
// without a lock, and how a producer wakes it at the price of one fence and
// one load when nobody sleeps. Every queue parks on it, through the helpers
// in detail/queue/consumer_wait.hpp (park_consumer, put_or_park); the idea is the
// one behind Eigen's and folly's EventCount.
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
// Who writes what: the state word (announced consumers, wake-ups in flight)
// is changed by consumers as they announce and withdraw, and by a notify
// only when it wakes someone; a producer that finds nobody to wake, or
// everyone announced already being woken, only reads it. The parking word is
// changed only by a notify that wakes.
//
// One copy of the protocol differs, on purpose: a future's state
// (detail/future/future_state.hpp: wait_until; its completion hooks, an awaiting
// coroutine's among them, are a list of their own) waits for an event that happens once and is never undone, so
// its waiters never withdraw, a sticky "someone waits" flag replaces the
// count, and the completer wakes everyone once; that keeps a state, which
// exists per task, to a byte and a parking word instead of this class's
// cache line.

#include <crew/detail/cache_line.hpp>
#include <crew/detail/sync/parking_word.hpp>
#include <crew/detail/sanitizers.hpp>
#include <crew/detail/test_seam.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace crew::detail {

// How long a wake-up may stay untaken (a woken consumer not yet running)
// before a publish wakes one more sleeper; the work-stealing searching
// throttle applies it to a search too. Long enough that a burst costs one
// futex call per consumer that wakes, not one per item, while a woken
// consumer is usually still on its way; far below a time slice
// (milliseconds), which is what a descheduled consumer costs without it
// (doc/design.md, "Wake-ups").
inline constexpr std::chrono::nanoseconds wake_age_bound = std::chrono::microseconds(50);

// The steady clock in nanoseconds, for the age bound's stamps.
inline std::int64_t steady_now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

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
        state_.fetch_add(waiter_one, std::memory_order_seq_cst);
        // Pairs with notify's fence, so that the caller's re-check (any
        // loads) cannot be ordered before the announcement. Only on the way
        // to sleep. (TSan does not model fences; there the RMW stands alone.)
        fence_unless_tsan(std::memory_order_seq_cst);
        return word_.load();
    }

    // The re-check found the condition true: withdraw the announcement.
    void cancel_wait() noexcept {
        // Withdrawing takes a wake-up in flight if there is one: as woken
        // (a test that holds every woken consumer must catch this one too).
        if constexpr (test_seams_compiled) {
            if (signals(state_.load(std::memory_order_relaxed)) != 0) CREW_SEAM(consumer_woken);
        }
        leave();
    }

    // Sleeps until a notify since prepare_wait, `deadline`, or a spurious
    // wake-up (the caller re-checks in any case), then withdraws.
    //
    // A wake-up counted but not yet taken may be one whose word change this
    // caller read as `seen` (its notify saw the announcement, then bumped the
    // word before prepare_wait read it): sleeping on it would leave it
    // counted for good, and every later notify would think this caller is
    // being woken. So a pending wake-up is taken instead of sleeping. Any
    // wake-up counted after that check bumps the word after `seen` was read
    // (all seq_cst), so the sleep below cannot miss it.
    void commit_wait(key seen, std::chrono::steady_clock::time_point deadline =
                                   std::chrono::steady_clock::time_point::max()) {
        std::uint64_t s = state_.load(std::memory_order_seq_cst);
        if (signals(s) != 0) CREW_SEAM(consumer_woken); // woken before it slept: as below
        while (signals(s) != 0)
            if (state_.compare_exchange_weak(s, s - waiter_one - signal_one, std::memory_order_seq_cst,
                                             std::memory_order_seq_cst))
                return;
        word_.wait(seen, deadline);
        CREW_SEAM(consumer_woken); // a woken consumer the OS has not yet run: its wake-up is still in flight
        leave();
    }

    // Call after making a consumer's condition true. Wakes one announced
    // consumer that no earlier notify is already waking; if there is none,
    // one fence and one load.
    void notify_one() { notify_one_from(snapshot()); }

    // As notify_one, for a caller that has just issued a seq_cst fence after
    // making the condition true.
    void notify_one_after_fence() { notify_one_from(load_after_full_fence(state_)); }

    // As notify_one_after_fence, but wakes nobody while an earlier wake-up
    // is in flight (issued, not yet taken) and younger than wake_age_bound:
    // the consumer that takes it looks at the condition before it sleeps
    // again, and passes the wake-up on if it finds more to do (its caller's
    // part). A burst then wakes sleepers one after another as they find
    // work, instead of one per item.
    //
    // The age bound: a woken consumer the OS has not yet run (descheduled
    // for a whole time slice on a busy machine) would otherwise hold every
    // later item while other consumers sleep. A publish that finds the
    // wake-up in flight for longer than the bound, with another consumer
    // asleep, wakes that one too. Only this path reads the clock: a publish
    // that finds nobody asleep, or every sleeper already being woken, pays
    // the fence and the load alone.
    void notify_one_unless_pending_after_fence() {
        const std::uint64_t s = load_after_full_fence(state_);
        if (signals(s) != 0) {
            if (waiters(s) <= signals(s)) return; // every sleeper is being woken already
            if (steady_now_ns() - issued_at_.load(std::memory_order_relaxed) < wake_age_bound.count()) return;
        }
        notify_one_from(s);
    }

  private:
    void notify_one_from(std::uint64_t s) {
        for (;;) {
            if (waiters(s) <= signals(s)) return; // nobody, or all of them being woken already
            if (state_.compare_exchange_weak(s, s + signal_one, std::memory_order_seq_cst, std::memory_order_relaxed))
                break;
        }
        // The bound measures the oldest wake-up not yet taken: stamped when
        // none was in flight (`s`, as the exchange found it), not by each
        // later one. Stamped by the newest, a consumer woken past the bound
        // (B) that takes the older task and passes the wake-up on would find
        // its own fresh stamp while the held one (A's) is still in flight,
        // and wake nobody (the adversarial review of #31). A stamp that
        // outlives its wake-up only costs a wake-up more.
        if (signals(s) == 0) issued_at_.store(steady_now_ns(), std::memory_order_relaxed);
        word_.bump_and_wake(1);
    }

  public:
    // As notify_one, but for every announced consumer (close, interrupts).
    void notify_all() {
        std::uint64_t s = snapshot();
        for (;;) {
            if (waiters(s) <= signals(s)) return;
            const std::uint64_t all = (s & waiter_mask) | (s & waiter_mask) << 32; // signals = waiters
            if (state_.compare_exchange_weak(s, all, std::memory_order_seq_cst, std::memory_order_relaxed)) break;
        }
        word_.bump_and_wake(wake_all_parked);
    }

    // Consumers announced now: for statistics and tests only.
    std::uint32_t waiters() const noexcept { return waiters(state_.load(std::memory_order_relaxed)); }

  private:
    // state_: announced consumers (low half) and wake-ups issued to them that
    // none has yet taken (high half; never more than the consumers). One
    // word, so that a notify sees both at once. A wake-up is taken by the
    // next consumer to withdraw (returning from commit_wait, or cancelling):
    // whoever it is, it re-checks the condition before it sleeps again.
    static constexpr std::uint64_t waiter_one = 1;
    static constexpr std::uint64_t signal_one = std::uint64_t(1) << 32;
    static constexpr std::uint64_t waiter_mask = signal_one - 1;
    static std::uint32_t waiters(std::uint64_t s) noexcept { return static_cast<std::uint32_t>(s & waiter_mask); }
    static std::uint32_t signals(std::uint64_t s) noexcept { return static_cast<std::uint32_t>(s >> 32); }

    void leave() noexcept {
        std::uint64_t s = state_.load(std::memory_order_relaxed);
        while (!state_.compare_exchange_weak(s, s - waiter_one - (signals(s) != 0 ? signal_one : 0),
                                             std::memory_order_seq_cst, std::memory_order_relaxed)) {
        }
    }

    // The caller's publish, then this load: a seq_cst fence orders them.
    std::uint64_t snapshot() noexcept { return fenced_load(state_); }

    alignas(cache_line) std::atomic<std::uint64_t> state_{0};
    // When the oldest wake-up still in flight was issued (steady clock, ns);
    // written only by a notify that wakes while none was in flight, read by
    // a publish that finds one.
    std::atomic<std::int64_t> issued_at_{0};
    ParkingWord word_;
};

} // namespace crew::detail

#endif
