// Stopping a thread at one of crew's test seams (crew/detail/test_seam.hpp),
// so that a test reaches a race window on purpose.
//
//     seam_gate gate(seam::ring_claimed, seam_gate::this_thread_only);
//     std::thread producer([&] { gate.arm_this_thread(); queue.offer(...); });
//     gate.wait_caught();          // the producer has claimed its cell, and stops
//     ...                          // do what must happen inside the window
//     gate.release();              // the producer goes on and publishes
//
// One gate at a time (a gate installs the hook, its destructor removes it and
// releases whoever it holds). A gate may stop threads at two seams, the
// first arrival at each, and release them one seam at a time:
//
//     seam_gate gate(seam::work_stealing_offer_checked, seam::work_stealing_close_flagged);
//     ...
//     gate.release(seam::work_stealing_offer_checked); // the other stays held `any_thread` catches the first `catches`
// threads to reach the seam; `this_thread_only` catches only threads that
// called arm_this_thread() (and each of those once).
#ifndef CREW_TEST_COMMON_SEAMS_HPP
#define CREW_TEST_COMMON_SEAMS_HPP

#if !defined(CREW_TEST_SEAMS)
#error "test/common/seams.hpp needs CREW_TEST_SEAMS (the test builds define it)"
#endif

#include <crew/detail/test_seam.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>

namespace crew_test_common {

using crew::detail::seam;

class seam_gate {
  public:
    enum who { any_thread, this_thread_only };

    explicit seam_gate(seam where, who which = any_thread, int catches = 1) {
        std::lock_guard lock(state().mutex);
        if (state().active) throw std::logic_error("one seam_gate at a time");
        state().active = true;
        state().stops = bit(where);
        state().which = which;
        state().left = catches;
        state().caught = 0;
        state().released = false;
        state().one_per_seam = false;
        state().caught_at = 0;
        state().released_at = 0;
        state().passed = 0;
        crew::detail::installed_seam_hook.store(&hook, std::memory_order_release);
    }

    // Stops the first thread to reach `first` and the first to reach
    // `second` (any thread); release(seam) lets each go separately.
    // With `which` == this_thread_only, only armed threads, each once.
    seam_gate(seam first, seam second, who which = any_thread) : seam_gate(first, which, 2) {
        std::lock_guard lock(state().mutex);
        state().stops |= bit(second);
        state().one_per_seam = true;
    }

    // Stops the first thread to reach each of three seams (any thread).
    seam_gate(seam first, seam second, seam third) : seam_gate(first, second) {
        std::lock_guard lock(state().mutex);
        state().stops |= bit(third);
        state().left = 3;
    }

    // Releases whoever is caught and removes the hook. The state is static,
    // so a thread that loaded the hook just before finds the gate inactive.
    ~seam_gate() {
        crew::detail::installed_seam_hook.store(nullptr, std::memory_order_release);
        {
            std::lock_guard lock(state().mutex);
            state().released = true;
            state().active = false;
        }
        state().changed.notify_all();
    }

    seam_gate(const seam_gate&) = delete;
    seam_gate& operator=(const seam_gate&) = delete;

    // With this_thread_only: the calling thread is caught at the seam, once.
    static void arm_this_thread() noexcept { armed() = true; }

    // Blocks until `n` threads in all have been stopped at the seam; false
    // if `timeout` passes first.
    bool wait_caught(int n = 1, std::chrono::steady_clock::duration timeout = std::chrono::seconds(60)) {
        std::unique_lock lock(state().mutex);
        return state().changed.wait_for(lock, timeout, [&] { return state().caught >= n; });
    }

    // Lets every caught thread go on; later arrivals pass (the gate is spent).
    void release() {
        {
            std::lock_guard lock(state().mutex);
            state().released = true;
            state().left = 0;
        }
        state().changed.notify_all();
    }

    // Blocks until some thread has passed `other`, a seam this gate does not
    // stop at, since the gate was made; false if `timeout` passes first.
    // (A second thread's progress, watched while the first is held.)
    bool wait_passed(seam other, std::chrono::steady_clock::duration timeout = std::chrono::seconds(60)) {
        std::unique_lock lock(state().mutex);
        return state().changed.wait_for(lock, timeout, [&] { return (state().passed & bit(other)) != 0; });
    }

    // Lets go the thread caught at `where` (a two-seam gate); a later
    // arrival there passes.
    void release(seam where) {
        {
            std::lock_guard lock(state().mutex);
            state().released_at |= bit(where);
        }
        state().changed.notify_all();
    }

    // Blocks until a thread is stopped at `where`; false if `timeout` passes first.
    bool wait_caught_at(seam where, std::chrono::steady_clock::duration timeout = std::chrono::seconds(60)) {
        std::unique_lock lock(state().mutex);
        return state().changed.wait_for(lock, timeout, [&] { return (state().caught_at & bit(where)) != 0; });
    }

    int caught() const {
        std::lock_guard lock(state().mutex);
        return state().caught;
    }

  private:
    struct shared_state {
        std::mutex mutex;
        std::condition_variable changed;
        bool active = false;    // all guarded by mutex
        unsigned long long stops = 0; // a bit per seam that stops threads
        bool one_per_seam = false;    // two-seam gates: the first arrival at each
        unsigned long long caught_at = 0;
        unsigned long long released_at = 0;
        who which = any_thread;
        int left = 0;
        int caught = 0;
        bool released = false;
        unsigned long long passed = 0; // a bit per seam reached
    };
    static unsigned long long bit(seam s) noexcept { return 1ull << static_cast<unsigned>(s); }
    static shared_state& state() noexcept {
        static shared_state s;
        return s;
    }
    static bool& armed() noexcept {
        thread_local bool flag = false;
        return flag;
    }

    static void hook(seam s) noexcept {
        shared_state& st = state();
        std::unique_lock lock(st.mutex);
        if (!st.active) return;
        if ((st.passed & bit(s)) == 0) {
            st.passed |= bit(s);
            st.changed.notify_all();
        }
        if (st.released || (st.stops & bit(s)) == 0 || st.left == 0) return;
        if (st.one_per_seam && (st.caught_at & bit(s)) != 0) return;
        if (st.which == this_thread_only) {
            if (!armed()) return;
            armed() = false;
        }
        --st.left;
        ++st.caught;
        st.caught_at |= bit(s);
        st.changed.notify_all();
        st.changed.wait(lock, [&] { return st.released || (st.released_at & bit(s)) != 0; });
    }
};

} // namespace crew_test_common

#endif
