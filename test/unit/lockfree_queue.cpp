// Unit tests for what is particular to crew::lockfree_queue<Capacity>
// (crew/policies/lockfree_queue.hpp): its fixed slots and allocation, its
// largest capacity, the remove_if and close it does without a lock, and the
// races between producers and consumers going to sleep. What it shares with
// the other queue policies (FIFO order, capacity, drain, close, blocking,
// deadlines, interruption) is tested in queues.cpp, on the type lists of
// support.hpp.
//
// The blocking tests run twice: on lockfree_queue itself (futex parking on
// Linux) and on the same queue with the portable condition-variable parking.
//
// Mutations the race tests were checked against (by editing the engine,
// which since issue #14 parks on detail::event_count):
// - the producer notifying before it pushes the slot: "loses no wake-up
//   when an offer races a consumer going to sleep" failed 2 of 2 runs (one
//   failure, one hang);
// - the consumer parking without its re-check after prepare_wait: the same
//   test failed 3 of 3 runs.
//
// No test waits for another thread with a sleep. A thread that must be
// blocked is given a bounded chance to run (yields), so that a queue which
// fails to block is likely caught; the assertions rely only on
// happens-before edges (latches, futures, atomics). Timing is asserted only
// for poll_until, where the deadline is the behaviour under test.

#include <crew/concepts.hpp>
#include <crew/policies/lockfree_queue.hpp>
#include <crew/pool_options.hpp>
#include <crew/task.hpp>

#include <catch2/catch.hpp>

#include "support.hpp"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <future>
#include <latch>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using crew::wait_status;

using namespace crew_unit_test;

namespace {

// ---- helpers -----------------------------------------------------------------

// Sized for two cores; sanitizers (a higher time factor) run fewer rounds.
int rounds(int n) { return std::max(n / 10, static_cast<int>(n / time_factor())); }

// Records where a task relocates it to: the queue's slot on offer.
struct address_recorder {
    std::set<const void*>* addresses;
    explicit address_recorder(std::set<const void*>& a) : addresses(&a) {}
    address_recorder(address_recorder&& other) noexcept : addresses(other.addresses) {
        addresses->insert(this);
    }
    address_recorder& operator=(address_recorder&&) = delete;
    void operator()() const {}
};

// Bytes the main malloc arena has handed out and not taken back (glibc).
// Chunks parked in the per-thread cache count as in use, so only a handful
// of allocations can hide from it. The sanitizers' allocators bypass the
// arena, which then reads as constant.
std::size_t heap_in_use() { return mallinfo2().uordblks; }

} // namespace

// ---- FIFO, capacity ---------------------------------------------------------------

TEST_CASE("lockfree_queue models queue_policy and reports its Capacity", "[lockfree_queue]") {
    STATIC_REQUIRE(crew::queue_policy<crew::lockfree_queue<1>>);
    STATIC_REQUIRE(crew::queue_policy<crew::lockfree_queue<65534>>);
    REQUIRE(crew::lockfree_queue<1>{}.capacity() == 1);
    REQUIRE(crew::lockfree_queue<100>{}.capacity() == 100);
    crew::pool_options options;
    options.queue_capacity = 7; // ignored: the capacity is the template argument
    REQUIRE(crew::lockfree_queue<100>{options}.capacity() == 100);
}

TEST_CASE("lockfree_queue keeps FIFO order as its slots are reused many times over", "[lockfree_queue]") {
    crew::lockfree_queue<8> q;
    std::vector<int> log;
    int next = 0, expected = 0;
    for (int round = 0; round < 500; ++round) {
        for (int i = 0; i < 1 + round % 8 && q.size() < 8; ++i) REQUIRE(q.offer(logged(log, next++)));
        for (int i = 0; i < 1 + (round * 7) % 5; ++i) {
            crew::task t;
            if (!q.poll(t)) break;
            log.clear();
            t();
            REQUIRE(log == std::vector<int>{expected++});
        }
    }
    log.clear();
    poll_and_run_all(q, log);
    REQUIRE(log == iota_vector(next - expected, expected));
}

TEST_CASE("lockfree_queue at the largest capacity fills exactly", "[lockfree_queue]") {
    constexpr std::size_t capacity = crew::detail::lockfree_queue_max_capacity;
    auto q = std::make_unique<crew::lockfree_queue<capacity>>();
    std::size_t ran = 0;
    for (std::size_t i = 0; i < capacity; ++i) REQUIRE(q->offer(crew::task([&ran] { ++ran; })));
    crew::task extra([&ran] { ++ran; });
    REQUIRE_FALSE(q->offer(std::move(extra)));
    REQUIRE(q->size() == capacity);
    crew::task t;
    while (q->poll(t)) t();
    REQUIRE(ran == capacity);
}

// ---- allocation -------------------------------------------------------------------

TEST_CASE("lockfree_queue keeps tasks in a fixed set of slots", "[lockfree_queue][allocation]") {
    constexpr std::size_t capacity = 16;
    crew::lockfree_queue<capacity> q;
    std::set<const void*> addresses;
    for (int round = 0; round < 200; ++round) {
        for (int i = 0; i < 1 + round % 16; ++i) {
            crew::task t{address_recorder(addresses)};
            addresses.clear(); // forget where the task itself holds it
            const auto before = addresses.size();
            REQUIRE(q.offer(std::move(t)));
            REQUIRE(addresses.size() == before + 1); // relocated once, into a slot
        }
        crew::task out;
        while (q.poll(out)) out.reset();
    }
    // Record every slot the queue moves into across many more rounds.
    std::set<const void*> slots;
    for (int round = 0; round < 200; ++round) {
        for (int i = 0; i < 1 + round % 16; ++i) {
            crew::task t{address_recorder(addresses)};
            addresses.clear();
            REQUIRE(q.offer(std::move(t)));
            slots.insert(addresses.begin(), addresses.end());
        }
        crew::task out;
        while (q.poll(out)) out.reset();
    }
    REQUIRE(slots.size() <= capacity);
}

TEST_CASE("lockfree_queue allocates nothing per offer or poll once constructed", "[lockfree_queue][allocation]") {
    // 1000 tasks held at once: an allocation per offer would show as at least
    // 1000 live blocks, far beyond what the malloc cache can hide.
    constexpr int n = 1000;
    crew::lockfree_queue<n> q;
    std::atomic<long> sum{0};
    struct payload {
        long words[5];
    };
    const payload data{{1, 2, 3, 4, 5}};
    auto job = [&sum, data] { sum.fetch_add(data.words[4], std::memory_order_relaxed); };
    static_assert(sizeof(job) == 48);
    crew::task t;

    // No Catch2 macro inside the measurement: they allocate.
    std::size_t held[3] = {};
    bool all_offered = true, all_polled = true;
    const std::size_t before = heap_in_use();
    for (auto& h : held) {
        for (int i = 0; i < n; ++i) all_offered = q.offer(crew::task(job)) && all_offered;
        h = heap_in_use();
        for (int i = 0; i < n; ++i) {
            all_polled = q.poll(t) && all_polled;
            t();
        }
    }
    const std::size_t after = heap_in_use();
    CAPTURE(before, held[0], held[1], held[2], after);
    REQUIRE(all_offered);
    REQUIRE(all_polled);
    for (const auto h : held) REQUIRE(h == before);
    REQUIRE(after == before);
    REQUIRE(sum.load() == 3L * n * 5);
}

// ---- remove_if ------------------------------------------------------------------

TEST_CASE("lockfree_queue remove_if that throws keeps every task", "[lockfree_queue]") {
    crew::lockfree_queue<8> q;
    std::vector<int> log;
    for (int i = 0; i < 5; ++i) REQUIRE(q.offer(logged(log, i)));
    int calls = 0;
    REQUIRE_THROWS_AS(q.remove_if([&calls](const crew::task&) -> bool {
        if (++calls == 3) throw std::runtime_error("predicate failed");
        return false;
    }),
                      std::runtime_error);
    REQUIRE(q.size() == 5);
    REQUIRE(poll_and_run_all(q, log) == std::vector<int>{0, 1, 2, 3, 4});
}

// ---- close -----------------------------------------------------------------------

TEST_CASE("lockfree_queue close returns only after offers under way have landed", "[lockfree_queue][stress]") {
    // Producers offer flat out while the queue closes. Whatever close() leaves
    // queued must be final: an offer that succeeds must have its task visible
    // once close() has returned (the executor's termination check relies on it).
    for (int round = 0; round < rounds(100); ++round) {
        auto owner = std::make_unique<crew::lockfree_queue<16384>>();
        auto& q = *owner;
        std::atomic<int> accepted{0};
        std::latch started(3);
        auto produce = [&] {
            started.count_down();
            for (int i = 0; i < 8192; ++i) {
                if (!q.offer(crew::task([] {}))) break;
                accepted.fetch_add(1);
            }
        };
        auto p1 = run_async(produce);
        auto p2 = run_async(produce);
        started.arrive_and_wait();
        q.close();
        const std::size_t at_close = q.size();
        REQUIRE(ready_in_time(p1));
        REQUIRE(ready_in_time(p2));
        CAPTURE(round, at_close, accepted.load());
        REQUIRE(q.size() == at_close);
        REQUIRE(at_close == static_cast<std::size_t>(accepted.load()));
        REQUIRE(q.drain().size() == at_close);
    }
}

// ---- races against parking --------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("lockfree_queue loses no wake-up when an offer races a consumer going to sleep",
                        "[lockfree_queue][stress]", lockfree_queues) {
    // One task per round, offered after a random delay of 0 to ~50 us, so
    // that it lands in every phase of the consumer's wait: before it spins,
    // while it spins, between announcing itself and the futex call, and
    // while it is parked. A lost wake-up leaves the consumer asleep with the
    // task queued, and the round times out.
    auto q = make_queue<TestType, 4>();
    const int n = rounds(4000);
    std::atomic<int> ran{0};
    crew::interrupt_flag stop{false};
    std::barrier sync_point(2);
    auto consumer = run_async([&] {
        for (int i = 0; i < n; ++i) {
            sync_point.arrive_and_wait();
            if (take_and_run(q, stop) != wait_status::taken) return i;
        }
        return n;
    });
    scope_guard release([&] { interrupt_consumers(q, stop); });
    std::minstd_rand rng(42);
    for (int i = 0; i < n; ++i) {
        sync_point.arrive_and_wait();
        const auto aim = steady::now() + std::chrono::nanoseconds(rng() % 50'000);
        while (steady::now() < aim) {
        }
        REQUIRE(q.offer(crew::task([&ran] { ran.fetch_add(1, std::memory_order_relaxed); })));
        // The next round starts only once this task ran: wait for it with a deadline.
        const auto deadline = steady::now() + generous();
        while (ran.load() != i + 1 && steady::now() < deadline) std::this_thread::yield();
        CAPTURE(i);
        REQUIRE(ran.load() == i + 1);
    }
    REQUIRE(ready_in_time(consumer));
    REQUIRE(consumer.get() == n);
}

TEMPLATE_LIST_TEST_CASE("lockfree_queue loses no interrupt when it races a consumer going to sleep",
                        "[lockfree_queue][stress][interrupt]", lockfree_queues) {
    auto q = make_queue<TestType, 4>();
    const int n = rounds(3000);
    std::minstd_rand rng(43);
    for (int i = 0; i < n; ++i) {
        crew::interrupt_flag flag{false};
        const bool timed = i % 2 == 0;
        auto consumer = run_async([&] {
            crew::task t;
            return timed ? q.poll_until(t, steady::now() + generous(), flag) : q.take(t, flag);
        });
        const auto aim = steady::now() + std::chrono::nanoseconds(rng() % 50'000);
        while (steady::now() < aim) {
        }
        interrupt_consumers(q, flag);
        CAPTURE(i);
        REQUIRE(ready_in_time(consumer));
        REQUIRE(consumer.get() == wait_status::interrupted);
    }
}

TEMPLATE_LIST_TEST_CASE("lockfree_queue wakes a parked consumer for every task that needs one",
                        "[lockfree_queue][blocking]", lockfree_queues) {
    // Four consumers park; then four tasks arrive that can only finish
    // together (each waits for the other three to start). A queue that woke
    // fewer consumers than it has tasks for (say, one, trusting it to come
    // back for the rest) fails here.
    constexpr int n = 4;
    auto q = make_queue<TestType, 8>();
    crew::interrupt_flag stop{false};
    std::latch consumers_running(n);
    std::vector<std::future<void>> consumers;
    for (int i = 0; i < n; ++i)
        consumers.push_back(run_async([&] {
            consumers_running.count_down();
            crew::task t;
            while (q.take(t, stop) == wait_status::taken) {
                t();
                t.reset();
            }
        }));
    scope_guard release([&] { interrupt_consumers(q, stop); });
    consumers_running.wait();

    for (int round = 0; round < rounds(50); ++round) {
        // Every round with all four past spinning, in the futex (announced).
        REQUIRE(eventually([&] { return parked_consumers_of(q) == n; }));
        auto meeting = std::make_shared<rendezvous>(n);
        for (int i = 0; i < n; ++i) REQUIRE(q.offer(crew::task([meeting] { (void)meeting->arrive_and_wait(); })));
        REQUIRE(meeting->all_left_in_time());
        CAPTURE(round);
        REQUIRE(meeting->met() == n);
    }
    interrupt_consumers(q, stop);
    for (auto& c : consumers) REQUIRE(ready_in_time(c));
}

TEMPLATE_LIST_TEST_CASE("lockfree_queue loses no wake-up with two producers and two consumers racing park",
                        "[lockfree_queue][stress]", lockfree_queues) {
    // Producers pause at random so that consumers keep going to sleep, and
    // the small capacity makes producers block in put as well.
    auto q = make_queue<TestType, 16>();
    require_two_producers_and_two_consumers_run_every_task_once(q, rounds(40'000), true);
}
