#ifndef CREW_DETAIL_SYNC_LOCK_CONTRACT_HPP
#define CREW_DETAIL_SYNC_LOCK_CONTRACT_HPP

// Lock contracts in signatures, as Asio writes them. Everywhere in crew:
//
// - A function that needs a lock held takes the caller's lock as its first
//   parameter, `const std::unique_lock<M>& held`, and starts with
//   `assert_held(held, mutex_)`: the compiler makes the caller show a lock,
//   and a debug build checks it is the right one, and locked.
// - A function that releases the lock it is given takes it by non-const
//   reference and says so in its name: `..._and_unlock(std::unique_lock<M>&)`.
//   It returns with the lock released (`owns_lock()` false).
// - A function that takes a lock itself says "Takes <mutex>" on its
//   declaration; one that must not be called with a lock held says so too.
//
// The checks are assert()s: they cost nothing with NDEBUG (the release and
// benchmark builds), and the dev, asan and tsan presets build with
// assertions on.

#include <cassert>
#include <mutex>

namespace crew::detail {

// Requires: `held` owns `mutex`. Checked in debug builds.
template <class Mutex>
inline void assert_held([[maybe_unused]] const std::unique_lock<Mutex>& held,
                        [[maybe_unused]] const Mutex& mutex) noexcept {
    assert(held.owns_lock() && held.mutex() == &mutex && "crew: this function requires that mutex held");
}

// For `..._and_unlock` functions, on return: `lock` no longer owns its mutex.
template <class Mutex>
inline void assert_released([[maybe_unused]] const std::unique_lock<Mutex>& lock) noexcept {
    assert(!lock.owns_lock() && "crew: an ..._and_unlock function returned with its lock held");
}

} // namespace crew::detail

#endif
