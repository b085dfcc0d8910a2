#ifndef CREW_DETAIL_SYNC_CONDITION_VARIABLE_ON_DEMAND_HPP
#define CREW_DETAIL_SYNC_CONDITION_VARIABLE_ON_DEMAND_HPP

// A std::condition_variable made by its first waiter. For an object made
// and destroyed far more often than anyone sleeps on it (a task_group: one
// per fork in recursive fork-join, where the waiter almost always finds
// work or finds the group done): libstdc++'s constructor is an out-of-line
// call and glibc's pthread_cond_destroy an atomic handshake, together about
// 6 % of fib's CPU when every group paid them (doc/benchmarks.md, "Fork-join
// at Java's cost").
//
// Locking contract: every member but the destructor is called with the one
// mutex its waits use held; the destructor, when nobody waits or notifies.

#include <condition_variable>
#include <mutex>
#include <new>

namespace crew::detail {

class condition_variable_on_demand {
  public:
    condition_variable_on_demand() noexcept {}
    condition_variable_on_demand(const condition_variable_on_demand&) = delete;
    condition_variable_on_demand& operator=(const condition_variable_on_demand&) = delete;
    ~condition_variable_on_demand() {
        if (made_) made().~condition_variable();
    }

    // The variable to wait on, made now if nobody waited before. `held`.
    std::condition_variable& to_wait_on(const std::unique_lock<std::mutex>& held) {
        (void)held;
        if (!made_) {
            ::new (static_cast<void*>(storage_)) std::condition_variable;
            made_ = true;
        }
        return made();
    }

    // Wakes every waiter; nothing to do if nobody ever waited. The caller
    // holds the waits' mutex.
    void notify_all() noexcept {
        if (made_) made().notify_all();
    }

  private:
    std::condition_variable& made() noexcept {
        return *std::launder(reinterpret_cast<std::condition_variable*>(storage_));
    }

    alignas(std::condition_variable) unsigned char storage_[sizeof(std::condition_variable)];
    bool made_ = false; // written and read under the waits' mutex (or by the destructor)
};

} // namespace crew::detail

#endif
