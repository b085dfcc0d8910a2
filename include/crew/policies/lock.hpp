#ifndef CREW_POLICIES_LOCK_HPP
#define CREW_POLICIES_LOCK_HPP

/// \file
/// `crew::spin_lock`, a *Lockable* for the LockPolicy slot. The other choice
/// is `std::mutex` (the default) or any standard *Lockable* type.

#include <crew/detail/sync/spin.hpp>

#include <atomic>
#include <cstdint>

namespace crew {

/// A lock that spins briefly and then parks on a futex-backed wait
/// (`std::atomic::wait`), so a waiter never burns a core while the holder is
/// descheduled. Best where critical sections are a few dozen instructions.
///
/// Models *Lockable* (`lock`, `try_lock`, `unlock`); not recursive.
/// With it as LockPolicy the pool waits on `std::condition_variable_any`.
class spin_lock {
  public:
    spin_lock() noexcept = default;
    spin_lock(const spin_lock&) = delete;
    spin_lock& operator=(const spin_lock&) = delete;

    /// Acquires the lock, spinning up to a bound and then parking.
    void lock() noexcept {
        if (try_lock()) return;
        for (int spins = 0; spins < spin_limit; ++spins) {
            detail::cpu_relax();
            if (state_.load(std::memory_order_relaxed) == unlocked && try_lock()) return;
        }
        // Slow path: announce a waiter (state 2) so unlock() knows to notify.
        while (state_.exchange(contended, std::memory_order_acquire) != unlocked)
            state_.wait(contended, std::memory_order_relaxed);
    }

    /// Acquires the lock if it is free; never blocks.
    bool try_lock() noexcept {
        std::uint32_t expected = unlocked;
        return state_.compare_exchange_strong(expected, locked, std::memory_order_acquire,
                                              std::memory_order_relaxed);
    }

    /// Releases the lock; wakes one parked waiter if there is one.
    void unlock() noexcept {
        if (state_.exchange(unlocked, std::memory_order_release) == contended) state_.notify_one();
    }

    /// True while some thread holds the lock (a snapshot, for statistics).
    bool is_locked() const noexcept { return state_.load(std::memory_order_relaxed) != unlocked; }

  private:
    static constexpr std::uint32_t unlocked = 0, locked = 1, contended = 2;
    static constexpr int spin_limit = 100;

    std::atomic<std::uint32_t> state_{unlocked};
};

} // namespace crew

#endif
