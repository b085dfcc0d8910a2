// Unit tests for crew::spin_lock and the LockPolicy concept
// (crew/policies/lock.hpp, crew/concepts.hpp).

#include <crew/concepts.hpp>
#include <crew/policies/lock.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <latch>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace {

struct only_lock_unlock { // BasicLockable, not Lockable
    void lock() {}
    void unlock() {}
};
struct lockable_without_default_constructor {
    explicit lockable_without_default_constructor(int) {}
    void lock() {}
    void unlock() {}
    bool try_lock() { return true; }
};

} // namespace

TEMPLATE_TEST_CASE("lock_policy accepts spin_lock and the standard mutexes", "[lock]", crew::spin_lock, std::mutex,
                   std::recursive_mutex, std::timed_mutex, std::shared_mutex) {
    STATIC_REQUIRE(crew::lock_policy<TestType>);
}

TEMPLATE_TEST_CASE("lock_policy refuses types that are not Lockable", "[lock]", int, only_lock_unlock) {
    STATIC_REQUIRE_FALSE(crew::lock_policy<TestType>);
}

TEST_CASE("lock_policy refuses a Lockable that cannot be default-constructed", "[lock]") {
    STATIC_REQUIRE(crew::detail::lockable<lockable_without_default_constructor>);
    STATIC_REQUIRE_FALSE(crew::lock_policy<lockable_without_default_constructor>);
}

TEST_CASE("spin_lock is_locked reflects lock and try_lock and unlock", "[lock][spin_lock]") {
    crew::spin_lock lock;
    REQUIRE_FALSE(lock.is_locked());
    lock.lock();
    REQUIRE(lock.is_locked());
    lock.unlock();
    REQUIRE_FALSE(lock.is_locked());
    REQUIRE(lock.try_lock());
    REQUIRE(lock.is_locked());
    lock.unlock();
    REQUIRE_FALSE(lock.is_locked());
}

TEST_CASE("spin_lock try_lock fails while another thread holds it and succeeds after unlock",
          "[lock][spin_lock]") {
    crew::spin_lock lock;
    lock.lock();
    auto attempt = [&] {
        return std::async(std::launch::async, [&] {
            const bool got = lock.try_lock();
            if (got) lock.unlock();
            return got;
        });
    };
    REQUIRE_FALSE(attempt().get());
    REQUIRE_FALSE(lock.try_lock()); // not recursive: the holder cannot take it again
    lock.unlock();
    REQUIRE(attempt().get());
    REQUIRE_FALSE(lock.is_locked());
}

TEST_CASE("spin_lock wakes a waiter parked behind a long-held lock", "[lock][spin_lock]") {
    crew::spin_lock lock;
    std::atomic<bool> released{false};
    std::atomic<bool> acquired{false};
    lock.lock();
    std::latch waiter_running(1);
    auto waiter = std::async(std::launch::async, [&] {
        waiter_running.count_down();
        lock.lock(); // spins, then parks
        const bool after_release = released.load();
        acquired = true;
        lock.unlock();
        return after_release;
    });
    waiter_running.wait();
    // Hold the lock long enough for the waiter to give up spinning (not a
    // synchronisation: the assertions hold whatever the interleaving).
    for (int i = 0; i < 2000 && !acquired.load(); ++i) std::this_thread::yield();
    REQUIRE_FALSE(acquired.load());
    released = true;
    lock.unlock();
    REQUIRE(waiter.get()); // the waiter got the lock only after the release
    REQUIRE_FALSE(lock.is_locked());
}

TEST_CASE("spin_lock provides mutual exclusion", "[lock][spin_lock][stress]") {
    const int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 2u, 4u));
    constexpr int increments = 100'000;
    crew::spin_lock lock;
    std::int64_t counter = 0; // deliberately not atomic
    std::int64_t max_holders = 0;
    int holders = 0;
    std::barrier start(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            start.arrive_and_wait();
            for (int i = 0; i < increments; ++i) {
                const std::lock_guard guard(lock);
                ++holders;
                max_holders = std::max<std::int64_t>(max_holders, holders);
                ++counter;
                --holders;
            }
        });
    }
    for (auto& w : workers) w.join();
    REQUIRE(counter == std::int64_t{threads} * increments);
    REQUIRE(max_holders == 1);
    REQUIRE_FALSE(lock.is_locked());
}

TEST_CASE("spin_lock works with std::condition_variable_any", "[lock][spin_lock]") {
    crew::spin_lock lock;
    std::condition_variable_any cv;
    int turn = 0; // guarded by lock: even = ping's turn, odd = pong's turn
    constexpr int exchanges = 2000;
    std::vector<int> seen_by_pong;

    auto pong = std::async(std::launch::async, [&] {
        for (int i = 0; i < exchanges; ++i) {
            std::unique_lock guard(lock);
            cv.wait(guard, [&] { return turn % 2 == 1; });
            seen_by_pong.push_back(turn);
            ++turn;
            guard.unlock();
            cv.notify_all();
        }
    });
    for (int i = 0; i < exchanges; ++i) {
        std::unique_lock guard(lock);
        cv.wait(guard, [&] { return turn % 2 == 0; });
        ++turn;
        guard.unlock();
        cv.notify_all();
    }
    pong.get();
    REQUIRE(turn == 2 * exchanges);
    REQUIRE(seen_by_pong.size() == exchanges);
    for (int i = 0; i < exchanges; ++i) REQUIRE(seen_by_pong[static_cast<std::size_t>(i)] == 2 * i + 1);
}

TEST_CASE("spin_lock works with condition_variable_any timed waits", "[lock][spin_lock]") {
    crew::spin_lock lock;
    std::condition_variable_any cv;
    std::unique_lock guard(lock);
    const bool woken = cv.wait_until(guard, std::chrono::steady_clock::now() - std::chrono::seconds(1),
                                     [] { return false; });
    REQUIRE_FALSE(woken);
    REQUIRE(guard.owns_lock());
    REQUIRE(lock.is_locked());
}
