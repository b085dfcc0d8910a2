// Unit tests for crew::detail::event_count (crew/detail/sync/event_count.hpp), the
// lock-free "sleep until something may have changed" primitive, on both
// parking words (futex, and the portable condition variable).
//
// The claim under test is "no lost wake-up": a consumer that announced itself
// (prepare_wait), re-checked and committed is woken by any notify that comes
// after the condition became true. The hand-off harness below makes every
// item a race between a consumer going to sleep and the producer publishing;
// a lost wake-up leaves an item unconsumed, and the producer, which waits for
// each item to be taken, reports it after a generous limit.
//
// Checked against a mutation of event_count itself: a withdrawing consumer
// that does not take a wake-up in flight (signals then pile up, and a
// notify believes everyone is being woken) fails the hand-off harness. The
// harness also found a real lost wake-up, once, in a CI run (the unit suite
// with the monotonic clock ten years on): a consumer that cancelled, took
// its task and announced itself again restored the state word a notify had
// read, so that notify counted a wake-up against the new announcement after
// bumping the word the consumer then read; the consumer slept on it, and the
// wake-up stayed counted. commit_wait now takes a pending wake-up instead of
// sleeping.
//
// The harness catches a deliberately broken variant: `announces_late`, which
// announces a sleeper only after its re-check (the classic lost wake-up). Run
// `crew_unit_tests "[mutation]"` to see it fail; it is hidden from the normal
// run because it is meant to fail.

#include <crew/detail/sync/event_count.hpp>
#include <crew/detail/sync/parking_word.hpp>

#include <catch2/catch.hpp>

#include "support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <thread>
#include <tuple>
#include <vector>

using namespace crew_unit_test;
using crew_test_common::eventually;

namespace {

using crew::detail::condvar_parking_word;
using crew::detail::event_count;
using crew::detail::futex_parking_word;

// The mutation: a consumer announces itself only as it commits, after its
// re-check, so a producer that publishes between the two finds no waiter and
// does not notify; the consumer then sleeps on a word that never changes.
class announces_late {
  public:
    using key = std::uint32_t;
    key prepare_wait() noexcept { return word_.load(); }
    void cancel_wait() noexcept {}
    void commit_wait(key seen, steady::time_point deadline = steady::time_point::max()) {
        waiters_.fetch_add(1);
        word_.wait(seen, deadline);
        waiters_.fetch_sub(1);
    }
    void notify_one() {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (waiters_.load(std::memory_order_relaxed) != 0) word_.bump_and_wake(1);
    }
    void notify_all() {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (waiters_.load(std::memory_order_relaxed) != 0) word_.bump_and_wake(0x7fffffff);
    }

  private:
    std::atomic<std::uint32_t> waiters_{0};
    futex_parking_word word_;
};

// Takes one unit of `available` if there is one.
bool try_take(std::atomic<int>& available) {
    int n = available.load();
    while (n > 0)
        if (available.compare_exchange_weak(n, n - 1)) return true;
    return false;
}

// The consumer's side of the protocol, as every queue is to use it.
template <class EventCount>
bool take_or_sleep(EventCount& ec, std::atomic<int>& available, const std::atomic<bool>& stop,
                   steady::time_point deadline = steady::time_point::max()) {
    if (try_take(available)) return true;
    const auto key = ec.prepare_wait();
    if (try_take(available)) {
        ec.cancel_wait();
        return true;
    }
    if (stop.load()) {
        ec.cancel_wait();
        return false;
    }
    ec.commit_wait(key, deadline);
    return false;
}

// One producer hands `items` items, one at a time, to `consumers` threads
// that sleep between items; it waits for each to be taken. Returns the index
// of the first item nobody took within the limit (a lost wake-up), or -1.
template <class EventCount>
int first_lost_item(int items, int consumers, std::chrono::milliseconds limit) {
    EventCount ec;
    std::atomic<int> available{0};
    std::atomic<int> taken{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int c = 0; c < consumers; ++c)
        threads.emplace_back([&] {
            while (!stop.load())
                if (take_or_sleep(ec, available, stop)) taken.fetch_add(1);
        });
    int lost = -1;
    std::atomic<int> sink{0};
    for (int i = 0; i < items && lost < 0; ++i) {
        // A different short delay each item, so that the publish lands at
        // every point of a consumer's way from its last take into its sleep.
        for (int spin = 0; spin < i % 64 * 4; ++spin) sink.store(spin, std::memory_order_relaxed);
        available.fetch_add(1);
        ec.notify_one();
        // Spins (yielding now and then, for a machine with one CPU): a
        // yield each turn would let the consumer fall asleep every time.
        const auto deadline = steady::now() + scaled(limit);
        for (unsigned turn = 1; taken.load() != i + 1; ++turn) {
            if (turn % 1024 != 0) continue;
            if (steady::now() > deadline) {
                lost = i;
                break;
            }
            std::this_thread::yield();
        }
    }
    stop.store(true);
    available.fetch_add(consumers); // whoever still sleeps takes one and sees stop
    ec.notify_all();
    for (auto& t : threads) t.join();
    return lost;
}

using both_parkings = std::tuple<event_count<futex_parking_word>, event_count<condvar_parking_word>>;

} // namespace

TEMPLATE_LIST_TEST_CASE("event_count: a notify with nobody announced changes nothing", "[event_count]",
                        both_parkings) {
    TestType ec;
    const auto before = ec.prepare_wait();
    ec.cancel_wait();
    REQUIRE(ec.waiters() == 0);
    ec.notify_one();
    ec.notify_all();
    const auto after = ec.prepare_wait();
    ec.cancel_wait();
    REQUIRE(after == before); // no bump: a producer wrote nothing
}

TEMPLATE_LIST_TEST_CASE("event_count: a notify after prepare_wait keeps commit_wait from sleeping", "[event_count]",
                        both_parkings) {
    TestType ec;
    const auto key = ec.prepare_wait();
    REQUIRE(ec.waiters() == 1);
    ec.notify_one();
    // Untimed: if it slept, the future below would never be ready.
    auto committed = std::async(std::launch::async, [&] { ec.commit_wait(key); });
    REQUIRE(committed.wait_for(generous()) == std::future_status::ready);
    REQUIRE(ec.waiters() == 0);
}

TEMPLATE_LIST_TEST_CASE("event_count: notify_one wakes a committed sleeper", "[event_count]", both_parkings) {
    TestType ec;
    std::atomic<bool> ready{false};
    auto sleeper = std::async(std::launch::async, [&] {
        for (;;) { // a spurious return goes round again
            const auto key = ec.prepare_wait();
            if (ready.load()) {
                ec.cancel_wait();
                return;
            }
            ec.commit_wait(key);
        }
    });
    REQUIRE(eventually([&] { return ec.waiters() == 1; }));
    ready.store(true);
    ec.notify_one();
    REQUIRE(sleeper.wait_for(generous()) == std::future_status::ready);
    REQUIRE(ec.waiters() == 0);
}

TEMPLATE_LIST_TEST_CASE("event_count: commit_wait returns at its deadline", "[event_count]", both_parkings) {
    TestType ec;
    const auto past = ec.prepare_wait();
    ec.commit_wait(past, steady::now() - 1s); // already passed: no sleep
    const auto deadline = steady::now() + 20ms;
    auto timed = std::async(std::launch::async, [&] {
        while (steady::now() < deadline) ec.commit_wait(ec.prepare_wait(), deadline); // spurious returns re-wait
    });
    REQUIRE(timed.wait_for(generous()) == std::future_status::ready);
    REQUIRE(steady::now() >= deadline);
    REQUIRE(ec.waiters() == 0); // each commit_wait withdrew its own announcement
}

TEMPLATE_LIST_TEST_CASE("event_count: no lost wake-up when every item races a consumer going to sleep",
                        "[event_count]", both_parkings) {
    const int items = static_cast<int>(100000 / time_factor());
    for (int consumers : {1, 2, 3}) {
        CAPTURE(consumers);
        REQUIRE(first_lost_item<TestType>(items, consumers, 10s) == -1);
    }
}

TEMPLATE_LIST_TEST_CASE("event_count: producers, timed consumers and notify_all lose nothing", "[event_count]",
                        both_parkings) {
    TestType ec;
    const int per_producer = static_cast<int>(20000 / time_factor());
    std::atomic<int> available{0}, taken{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> consumers;
    for (int c = 0; c < 3; ++c)
        consumers.emplace_back([&, c] {
            while (!stop.load()) {
                // Consumer 0 waits untimed; the others time out now and then.
                const auto deadline = c == 0 ? steady::time_point::max() : steady::now() + 100us;
                if (take_or_sleep(ec, available, stop, deadline)) taken.fetch_add(1);
            }
        });
    std::thread waker([&] { // like interrupts and close(): wakes everyone, publishes nothing
        while (!stop.load()) {
            ec.notify_all();
            std::this_thread::yield();
        }
    });
    std::vector<std::thread> producers;
    for (int p = 0; p < 2; ++p)
        producers.emplace_back([&] {
            for (int i = 0; i < per_producer; ++i) {
                available.fetch_add(1);
                ec.notify_one();
            }
        });
    for (auto& t : producers) t.join();
    const bool all_taken = eventually([&] { return taken.load() == 2 * per_producer; }, 30s);
    stop.store(true);
    available.fetch_add(3);
    ec.notify_all();
    for (auto& t : consumers) t.join();
    waker.join();
    REQUIRE(all_taken);
    REQUIRE(ec.waiters() == 0);
}

TEST_CASE("event_count mutation: announcing after the re-check loses a wake-up", "[.][mutation]") {
    // Expected to FAIL: proves the hand-off harness catches a lost wake-up.
    // The window is a few instructions wide; a run of a million items hits
    // it about half the time on a 2-CPU machine, so up to five runs.
    for (int run = 0; run < 5; ++run) REQUIRE(first_lost_item<announces_late>(1000000, 1, 2s) == -1);
}
