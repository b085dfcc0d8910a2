// Unit tests for the queue policies: unbounded_queue, bounded_queue,
// priority_queue and synchronous_queue (crew/policies/queue.hpp), and
// lockfree_queue (crew/policies/lockfree_queue.hpp) on both its parking
// mechanisms wherever it shares their behaviour; the type lists are in
// support.hpp, lockfree_queue's own tests in lockfree_queue.cpp.
//
// No test waits for another thread with a sleep. A thread that must be
// blocked is given a bounded chance to run (yields) so that a queue which
// fails to block is likely caught; the assertions themselves only rely on
// happens-before edges (latches, futures, atomics). Timing is asserted only
// for poll_until, where the deadline is the behaviour under test.

#include <crew/concepts.hpp>
#include <crew/policies/queue.hpp>
#include <crew/pool_options.hpp>
#include <crew/task.hpp>

#include <catch2/catch.hpp>

#include "../common/seams.hpp"
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <deque>
#include <future>
#include <latch>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

using crew_test_common::seam;
using crew_test_common::seam_gate;

using namespace crew_unit_test;

namespace {

// ---- helpers -----------------------------------------------------------------

// Counts how often tasks relocate it (its move constructor runs on each).
struct relocation_counted {
    std::size_t* moves;
    explicit relocation_counted(std::size_t& m) : moves(&m) {}
    relocation_counted(relocation_counted&& other) noexcept : moves(other.moves) { ++*moves; }
    relocation_counted& operator=(relocation_counted&&) = delete;
    void operator()() const {}
};

// Builds a queue of `Policy` that is full: a bounded one of capacity 1
// holding one task, or a synchronous queue (capacity 0) with no consumer.
template <class Policy>
struct full_queue {
    std::vector<int> log;
    queue_of<Policy, 1> q = make_queue<Policy, 1>();
    full_queue() {
        for (std::size_t i = 0; i < q.capacity(); ++i)
            if (!q.offer(logged(log, -1))) throw std::logic_error("could not fill the queue");
    }
};

// Offers `t` to a consumer that waits, or is about to wait, in take or
// poll_until. A queue with room must accept it at once. A synchronous queue
// (capacity 0) accepts only while a consumer waits, which cannot be observed
// otherwise: it is offered `t` until it accepts or the deadline passes.
template <class Q>
bool offer_until_accepted(Q& q, crew::task&& t) {
    if (q.capacity() != 0) return q.offer(std::move(t));
    const auto deadline = steady::now() + generous();
    while (!q.offer(std::move(t))) {
        if (steady::now() > deadline) return false;
        std::this_thread::yield();
    }
    return true;
}

// Offers `q` a task logging each id, with the priority paired with it.
template <class Q>
void offer_with_priorities(Q& q, std::vector<int>& log, std::initializer_list<std::pair<int, int>> ids_and_priorities) {
    for (const auto& [id, priority] : ids_and_priorities) REQUIRE(q.offer(logged(log, id, priority)));
}

// A consumer blocked in take on a queue of `Policy`, with the log its task
// writes to; interrupted when the test ends, however it ends.
template <class Policy>
struct consumer_in_take {
    queue_of<Policy, 4> q = make_queue<Policy, 4>();
    std::vector<int> log;
    crew::interrupt_flag stop{false};
    blocking_call<wait_status> consumer{[this] { return take_and_run(q, stop); }};

    consumer_in_take() = default;
    consumer_in_take(const consumer_in_take&) = delete;
    consumer_in_take& operator=(const consumer_in_take&) = delete;
    ~consumer_in_take() { interrupt_consumers(q, stop); }
};

// A poll_until deadline at random, from 20 us in the past to `span` - 20 us ahead.
steady::time_point jittered_deadline(std::minstd_rand& rng, std::chrono::microseconds span) {
    return steady::now() + std::chrono::microseconds(static_cast<long>(rng() % span.count()) - 20);
}

// Offers `q` tasks that count themselves in `ran`, until `done()`, yielding
// fewer than `max_yields` times between two offers; returns how many it
// accepted.
template <class Q, class Done>
int offer_until(Q& q, Done done, std::atomic<int>& ran, unsigned seed, unsigned max_yields) {
    std::minstd_rand rng(seed);
    int accepted = 0;
    while (!done()) {
        crew::task t([&ran] { ++ran; });
        if (q.offer(std::move(t))) ++accepted;
        for (unsigned yields = rng() % max_yields; yields > 0; --yields) std::this_thread::yield();
    }
    return accepted;
}

} // namespace

// ---- basic FIFO behaviour ---------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("buffering queues hand out offered tasks in FIFO order", "[queue]", buffering_queues) {
    auto q = make_queue<TestType, 64>();
    std::vector<int> log;
    REQUIRE(q.size() == 0);
    for (int i = 0; i < 10; ++i) REQUIRE(q.offer(logged(log, i)));
    REQUIRE(q.size() == 10);
    REQUIRE(poll_and_run_all(q, log) == iota_vector(10));
    REQUIRE(q.size() == 0);
}

TEMPLATE_LIST_TEST_CASE("poll on an empty queue returns false and leaves the output alone", "[queue]",
                        all_queues) {
    auto q = make_queue<TestType, 4>();
    std::vector<int> log;
    crew::task out = logged(log, 7);
    REQUIRE_FALSE(q.poll(out));
    REQUIRE(static_cast<bool>(out));
    out();
    REQUIRE(log == std::vector<int>{7});
}

TEMPLATE_LIST_TEST_CASE("put on a queue with room enqueues at once", "[queue]", buffering_queues) {
    auto q = make_queue<TestType, 2>();
    std::vector<int> log;
    REQUIRE(q.put(logged(log, 1)));
    REQUIRE(q.put(logged(log, 2)));
    REQUIRE(q.size() == 2);
    REQUIRE(poll_and_run_all(q, log) == std::vector<int>{1, 2});
}

TEMPLATE_LIST_TEST_CASE("queue rings grow past 16 slots and keep FIFO order across wrap-around", "[queue]",
                        growing_queues) {
    auto q = make_queue<TestType, 1000>();
    std::vector<int> log;
    std::deque<int> expected;
    int next = 0;
    auto push = [&](int n) {
        for (int i = 0; i < n; ++i) {
            REQUIRE(q.offer(logged(log, next)));
            expected.push_back(next++);
        }
    };
    auto pop = [&](int n) {
        for (int i = 0; i < n; ++i) {
            crew::task t;
            REQUIRE(q.poll(t));
            log.clear();
            t();
            REQUIRE(log.size() == 1);
            REQUIRE(log[0] == expected.front());
            expected.pop_front();
        }
    };

    SECTION("growing while the contents wrap around the end of the ring") {
        push(10);
        pop(8);   // head at slot 8
        push(14); // 16 tasks, wrapped: slots 8..15 then 0..7
        push(1);  // grows while wrapped
        push(40); // and again
        REQUIRE(q.size() == expected.size());
        pop(static_cast<int>(expected.size()));
    }
    SECTION("interleaved pushes and pops over many wrap-arounds") {
        for (int round = 0; round < 300; ++round) {
            push(3 + round % 5);
            pop(2 + round % 4);
        }
        REQUIRE(q.size() == expected.size());
        pop(static_cast<int>(expected.size()));
    }
    SECTION("one large burst") {
        push(500);
        pop(500);
    }
    crew::task t;
    REQUIRE_FALSE(q.poll(t));
}

// ---- capacities -------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("bounded queues refuse offers when full and leave the task intact", "[queue][bounded]",
                        bounded_queues) {
    auto q = make_queue<TestType, 3>();
    REQUIRE(q.capacity() == 3);
    std::vector<int> log;
    for (int i = 0; i < 3; ++i) REQUIRE(q.offer(logged(log, i)));

    crew::task refused = logged(log, 99);
    REQUIRE_FALSE(q.offer(std::move(refused)));
    REQUIRE(static_cast<bool>(refused)); // NOLINT(bugprone-use-after-move): offer leaves it on failure
    REQUIRE(q.size() == 3);
    refused();
    REQUIRE(log == std::vector<int>{99});
    log.clear();

    crew::task first;
    REQUIRE(q.poll(first));
    REQUIRE(q.offer(logged(log, 3))); // the freed slot is usable again
    first();
    REQUIRE(poll_and_run_all(q, log) == std::vector<int>{0, 1, 2, 3});
}

TEMPLATE_LIST_TEST_CASE("bounded queues of capacity 1 alternate full and empty", "[queue][bounded]",
                        bounded_queues) {
    auto q = make_queue<TestType, 1>();
    std::vector<int> log;
    for (int i = 0; i < 50; ++i) {
        REQUIRE(q.offer(logged(log, i)));
        crew::task extra = logged(log, -1);
        REQUIRE_FALSE(q.offer(std::move(extra)));
        crew::task t;
        REQUIRE(q.poll(t));
        t();
    }
    REQUIRE(log == iota_vector(50));
}

TEMPLATE_LIST_TEST_CASE("bounded queues with a capacity that is not a power of two wrap at that capacity",
                        "[queue][bounded]", bounded_queues) {
    auto q = make_queue<TestType, 5>();
    std::vector<int> log;
    int next = 0, expected = 0;
    for (int round = 0; round < 40; ++round) {
        while (q.size() < 5) REQUIRE(q.offer(logged(log, next++)));
        crew::task extra = logged(log, -1);
        REQUIRE_FALSE(q.offer(std::move(extra)));
        for (int i = 0; i < 1 + round % 5; ++i) {
            crew::task t;
            REQUIRE(q.poll(t));
            log.clear();
            t();
            REQUIRE(log == std::vector<int>{expected++});
        }
    }
}

TEST_CASE("bounded_queue with queue_capacity 0 throws invalid_argument naming the field", "[queue][bounded]") {
    REQUIRE_THROWS_AS(crew::bounded_queue{with_capacity(0)}, std::invalid_argument);
    REQUIRE_THROWS_WITH(crew::bounded_queue{with_capacity(0)}, Catch::Matchers::Contains("queue_capacity"));
}

TEST_CASE("bounded_queue takes its capacity from pool_options and defaults to 1024", "[queue][bounded]") {
    REQUIRE(crew::bounded_queue{}.capacity() == 1024);
    REQUIRE(crew::bounded_queue{with_capacity(17)}.capacity() == 17);
}

TEST_CASE("unbounded and priority and synchronous queues report their fixed capacities", "[queue]") {
    constexpr auto unlimited = std::numeric_limits<std::size_t>::max();
    REQUIRE(crew::unbounded_queue{with_capacity(3)}.capacity() == unlimited);
    REQUIRE(crew::priority_queue{with_capacity(3)}.capacity() == unlimited);
    REQUIRE(crew::synchronous_queue{with_capacity(3)}.capacity() == 0);
}

TEST_CASE("unbounded_queue ignores queue_capacity and never fills", "[queue]") {
    crew::unbounded_queue q{with_capacity(2)};
    std::vector<int> log;
    for (int i = 0; i < 3000; ++i) REQUIRE(q.offer(logged(log, i)));
    REQUIRE(q.size() == 3000);
    REQUIRE(poll_and_run_all(q, log) == iota_vector(3000));
}

// ---- priorities ------------------------------------------------------------------

TEST_CASE("priority_queue hands out the highest priority first and FIFO among equals", "[queue][priority]") {
    crew::priority_queue q;
    std::vector<int> log;
    offer_with_priorities(q, log, {{10, 1}, {20, 5}, {30, 3}, {21, 5}});
    REQUIRE(q.offer(logged(log, 0)));                        // a plain task has priority 0
    offer_with_priorities(q, log, {{-20, -2}, {31, 3}, {1, 0}, {22, 5}}); // 1: FIFO with the plain one
    REQUIRE(q.offer(logged(log, 2)));
    REQUIRE(q.put(logged(log, 99, std::numeric_limits<int>::max())));
    REQUIRE(q.offer(logged(log, -99, std::numeric_limits<int>::min())));
    REQUIRE(poll_and_run_all(q, log) == std::vector<int>{99, 20, 21, 22, 30, 31, 10, 0, 1, 2, -20, -99});
}

TEST_CASE("priority_queue keeps FIFO among equals across interleaved offers and polls", "[queue][priority]") {
    crew::priority_queue q;
    std::vector<int> log;
    // Ids encode priority * 1000 + arrival order within that priority.
    std::vector<int> arrivals(3, 0);
    std::mt19937 rng(12345);
    std::vector<int> polled;
    for (int step = 0; step < 600; ++step) {
        if (rng() % 3 != 0) {
            const int p = static_cast<int>(rng() % 3);
            REQUIRE(q.offer(logged(log, p * 1000 + arrivals[static_cast<std::size_t>(p)]++, p)));
        } else {
            crew::task t;
            if (q.poll(t)) t();
        }
    }
    poll_and_run_all(q, log);
    // Within each priority, the ids come out in arrival order.
    std::vector<int> last(3, -1);
    for (const int id : log) {
        const auto p = static_cast<std::size_t>(id / 1000);
        REQUIRE(id % 1000 > last[p]);
        last[p] = id % 1000;
    }
    REQUIRE(log.size() == static_cast<std::size_t>(arrivals[0] + arrivals[1] + arrivals[2]));
}

TEST_CASE("priority_queue relocates each task a bounded number of times as it grows",
          "[queue][priority]") {
    // Pushing n tasks must cost amortised O(1) relocations each (plus the heap's
    // O(log n) sift, zero here as equal priorities go to the bottom). Growing
    // storage by exactly one slot per push would relocate every queued task on
    // every push: O(n^2) (as before a574782).
    crew::priority_queue q;
    std::size_t moves = 0;
    std::size_t moves_in_offers = 0;
    constexpr std::size_t n = 4096;
    for (std::size_t i = 0; i < n; ++i) {
        crew::task t{relocation_counted(moves)};
        const std::size_t before = moves;
        REQUIRE(q.offer(std::move(t)));
        moves_in_offers += moves - before;
    }
    CAPTURE(moves_in_offers);
    REQUIRE(moves_in_offers <= 16 * n);
    REQUIRE(q.size() == n);
}

// ---- remove_if and drain -------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("remove_if removes and counts matching tasks and keeps the others in order", "[queue]",
                        fifo_queues) {
    auto q = make_queue<TestType, 64>();
    std::vector<int> log;
    // Priority 1 marks the tasks to remove; FIFO queues ignore it for ordering.
    for (int i = 0; i < 40; ++i) REQUIRE(q.offer(logged(log, i, i % 3 == 0 ? 1 : 0)));
    const std::size_t removed = q.remove_if([](const crew::task& t) { return t.priority() == 1; });
    REQUIRE(removed == 14);
    REQUIRE(q.size() == 26);
    REQUIRE(q.remove_if([](const crew::task& t) { return t.priority() == 1; }) == 0);
    REQUIRE(q.size() == 26);

    std::vector<int> expected;
    for (int i = 0; i < 40; ++i)
        if (i % 3 != 0) expected.push_back(i);
    REQUIRE(poll_and_run_all(q, log) == expected);
    REQUIRE(log.size() == 26); // the removed ones never ran
}

TEMPLATE_LIST_TEST_CASE("remove_if drops and destroys cancelled tasks after wrap-around and frees their slots",
                        "[queue]", buffering_queues) {
    auto q = make_queue<TestType, 16>();
    std::vector<int> log;
    auto destroyed = std::make_shared<int>(0);
    // Move the head of the (16-slot) ring so that the 16 tasks below wrap.
    for (int i = 0; i < 12; ++i) REQUIRE(q.offer(logged(log, -1)));
    for (int i = 0; i < 12; ++i) {
        crew::task t;
        REQUIRE(q.poll(t));
    }
    for (int i = 0; i < 16; ++i) REQUIRE(q.offer(crew::task(cancellable(i % 4 == 1, destroyed, log, i))));
    if (q.capacity() == 16) { // a bounded queue is full now
        crew::task extra = logged(log, 99);
        REQUIRE_FALSE(q.offer(std::move(extra)));
    }

    const std::size_t removed = q.remove_if([](const crew::task& t) { return t.is_cancelled(); });
    REQUIRE(removed == 4);
    REQUIRE(*destroyed == 4);
    REQUIRE(q.size() == 12);
    // The freed slots are usable again, before anything is polled.
    for (int i = 16; i < 20; ++i) REQUIRE(q.offer(crew::task(cancellable(false, destroyed, log, i))));

    std::vector<int> expected;
    for (int i = 0; i < 20; ++i)
        if (i >= 16 || i % 4 != 1) expected.push_back(i);
    REQUIRE(poll_and_run_all(q, log) == expected);
    REQUIRE(*destroyed == 20);
    REQUIRE(q.offer(logged(log, 20)));
}

TEST_CASE("priority_queue remove_if keeps the survivors in priority order", "[queue][priority]") {
    crew::priority_queue q;
    std::vector<int> log;
    const int priorities[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    for (int i = 0; i < 10; ++i) REQUIRE(q.offer(logged(log, i, priorities[i])));
    // Remove the odd priorities (1, 1, 5, 9, 5, 3, 3).
    REQUIRE(q.remove_if([](const crew::task& t) { return t.priority() % 2 != 0; }) == 7);
    REQUIRE(poll_and_run_all(q, log) == std::vector<int>{7, 2, 6});
}

TEMPLATE_LIST_TEST_CASE("drain returns every queued task in queue order and empties the queue", "[queue]",
                        buffering_queues) {
    auto q = make_queue<TestType, 64>();
    std::vector<int> log;
    for (int i = 0; i < 30; ++i) REQUIRE(q.offer(logged(log, i)));
    std::vector<crew::task> drained = q.drain();
    REQUIRE(q.size() == 0);
    crew::task t;
    REQUIRE_FALSE(q.poll(t));
    REQUIRE(drained.size() == 30);
    for (auto& d : drained) d();
    REQUIRE(log == iota_vector(30));
    REQUIRE(q.drain().empty());
    for (int i = 0; i < 64; ++i) REQUIRE(q.offer(logged(log, i))); // still open, and every slot free again
}

TEST_CASE("priority_queue drain returns tasks in priority order", "[queue][priority]") {
    crew::priority_queue q;
    std::vector<int> log;
    offer_with_priorities(q, log, {{1, 1}, {3, 3}, {2, 2}, {4, 3}});
    for (auto& t : q.drain()) t();
    REQUIRE(log == std::vector<int>{3, 4, 2, 1});
}

TEST_CASE("synchronous_queue holds nothing to drain or remove", "[queue][synchronous]") {
    crew::synchronous_queue q;
    REQUIRE(q.size() == 0);
    REQUIRE(q.drain().empty());
    REQUIRE(q.remove_if([](const crew::task&) { return true; }) == 0);
}

// ---- close -----------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("close makes offer and put fail with the task intact but poll still drains", "[queue]",
                        all_queues) {
    auto q = make_queue<TestType, 8>();
    std::vector<int> log;
    const bool buffers = q.capacity() != 0; // not a synchronous_queue
    if (buffers) {
        REQUIRE(q.offer(logged(log, 0)));
        REQUIRE(q.offer(logged(log, 1)));
    }
    q.close();

    crew::task offered = logged(log, 100);
    REQUIRE_FALSE(q.offer(std::move(offered)));
    REQUIRE(static_cast<bool>(offered)); // NOLINT(bugprone-use-after-move)
    crew::task put = logged(log, 101);
    REQUIRE_FALSE(q.put(std::move(put))); // closed: fails at once, full or not
    REQUIRE(static_cast<bool>(put));     // NOLINT(bugprone-use-after-move)
    offered();
    put();
    REQUIRE(log == std::vector<int>{100, 101});
    log.clear();

    REQUIRE(poll_and_run_all(q, log) == (buffers ? std::vector<int>{0, 1} : std::vector<int>{}));
    q.close(); // idempotent
    REQUIRE(q.drain().empty());
}

TEMPLATE_LIST_TEST_CASE("a closed queue still hands its remaining tasks to blocking consumers", "[queue]",
                        buffering_queues) {
    auto q = make_queue<TestType, 8>();
    std::vector<int> log;
    REQUIRE(q.offer(logged(log, 0)));
    REQUIRE(q.offer(logged(log, 1)));
    q.close();
    const crew::interrupt_flag never{false};
    crew::task t;
    REQUIRE(q.take(t, never) == wait_status::taken);
    t();
    REQUIRE(q.poll_until(t, steady::now() - 1s, never) == wait_status::taken);
    t();
    REQUIRE(log == std::vector<int>{0, 1});
    REQUIRE(q.poll_until(t, steady::now() - 1s, never) == wait_status::timed_out);
}

// ---- blocking put ------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("put on a full bounded queue blocks until a consumer polls", "[queue][bounded][blocking]",
                        bounded_queues) {
    auto q = make_queue<TestType, 1>();
    std::vector<int> log;
    std::vector<int> putter_log;
    REQUIRE(q.offer(logged(log, 1)));

    blocking_call putter([&] { return q.put(logged(putter_log, 2)); });
    scope_guard release([&] { q.close(); });
    putter.give_a_chance_to_return();
    REQUIRE_FALSE(putter.returned());
    REQUIRE(q.size() == 1);

    putter.unblocking();
    crew::task first;
    REQUIRE(q.poll(first));
    REQUIRE(putter.returns_in_time());
    REQUIRE(putter.get());
    REQUIRE(putter.returned_after_unblocking()); // put completed only after the poll made room

    first();
    REQUIRE(log == std::vector<int>{1});
    crew::task second;
    REQUIRE(q.poll(second));
    second();
    REQUIRE(putter_log == std::vector<int>{2});
}

TEMPLATE_LIST_TEST_CASE("several puts blocked on a full bounded queue each get a slot as consumers poll",
                        "[queue][bounded][blocking]", bounded_queues) {
    auto q = make_queue<TestType, 2>();
    std::atomic<int> ran{0};
    for (int i = 0; i < 2; ++i) REQUIRE(q.offer(crew::task([&ran] { ++ran; })));

    constexpr int putters = 4;
    std::latch started(putters);
    std::vector<std::future<bool>> results;
    for (int i = 0; i < putters; ++i)
        results.push_back(run_async([&] {
            started.count_down();
            return q.put(crew::task([&ran] { ++ran; }));
        }));
    scope_guard release([&] { q.close(); });
    started.wait();

    // Six tasks pass through a queue of two: every put must be woken in turn.
    int taken = 0;
    const auto deadline = steady::now() + generous();
    const crew::interrupt_flag never{false};
    while (taken < 2 + putters && steady::now() < deadline) {
        crew::task t;
        if (q.poll_until(t, steady::now() + 10ms, never) == wait_status::taken) {
            t();
            ++taken;
        }
    }
    REQUIRE(taken == 2 + putters);
    for (auto& r : results) {
        REQUIRE(ready_in_time(r));
        REQUIRE(r.get());
    }
    REQUIRE(ran == 2 + putters);
}

TEMPLATE_LIST_TEST_CASE("drain and remove_if wake a put blocked on a full bounded queue", "[queue][bounded][blocking]",
                        bounded_queues) {
    auto q = make_queue<TestType, 1>();
    std::vector<int> log, putter_log, expected_log;
    REQUIRE(q.offer(logged(log, 1, 1)));

    std::latch putter_running(1);
    auto putter = run_async([&] {
        putter_running.count_down();
        return q.put(logged(putter_log, 2));
    });
    scope_guard release([&] { q.close(); });
    putter_running.wait();
    give_a_chance([&] { return putter.wait_for(0s) == std::future_status::ready; });

    SECTION("drain") {
        std::vector<crew::task> drained = q.drain();
        if constexpr (is_lockfree_queue<decltype(q)>) {
            // Its drain takes the tasks one at a time: the woken put may land before it is done.
            REQUIRE(!drained.empty());
            REQUIRE(drained.size() <= 2);
        } else {
            REQUIRE(drained.size() == 1);
        }
        for (auto& t : drained) t();
        expected_log = {1};
    }
    SECTION("remove_if") { REQUIRE(q.remove_if([](const crew::task& t) { return t.priority() == 1; }) == 1); }

    REQUIRE(ready_in_time(putter));
    REQUIRE(putter.get());
    REQUIRE(poll_and_run_all(q, putter_log) == std::vector<int>{2});
    REQUIRE(log == expected_log); // a drained task ran above; a removed one never runs
}

TEMPLATE_LIST_TEST_CASE("close wakes a blocked put which then fails and leaves its task intact", "[queue][blocking]",
                        blocking_put_queues) {
    full_queue<TestType> full;
    auto& q = full.q;
    std::vector<int> putter_log;
    blocking_call putter([&] {
        crew::task t = logged(putter_log, 5);
        const bool ok = q.put(std::move(t));
        const bool intact = static_cast<bool>(t); // NOLINT(bugprone-use-after-move)
        if (intact) t();
        return std::pair{ok, intact};
    });
    scope_guard release([&] { q.close(); });
    putter.give_a_chance_to_return();
    REQUIRE_FALSE(putter.returned());

    q.close();
    REQUIRE(putter.returns_in_time());
    const auto [ok, intact] = putter.get();
    REQUIRE_FALSE(ok);
    REQUIRE(intact);
    REQUIRE(putter_log == std::vector<int>{5});
    REQUIRE(q.size() == q.capacity()); // the queued tasks are still there
}

// ---- blocking take and poll_until --------------------------------------------------

TEMPLATE_LIST_TEST_CASE("take blocks until a task is offered", "[queue][blocking]", all_queues) {
    consumer_in_take<TestType> taker;
    taker.consumer.give_a_chance_to_return();
    REQUIRE_FALSE(taker.consumer.returned());

    taker.consumer.unblocking();
    REQUIRE(offer_until_accepted(taker.q, logged(taker.log, 42)));
    REQUIRE(taker.consumer.returns_in_time());
    REQUIRE(taker.consumer.get() == wait_status::taken);
    REQUIRE(taker.consumer.returned_after_unblocking());
    REQUIRE(taker.log == std::vector<int>{42});
    REQUIRE(taker.q.size() == 0);
}

TEMPLATE_LIST_TEST_CASE("poll_until returns a task offered while it waits", "[queue][blocking]", all_queues) {
    auto q = make_queue<TestType, 4>();
    std::vector<int> log;
    crew::interrupt_flag stop{false};
    blocking_call consumer([&] { return poll_until_and_run(q, steady::now() + generous(), stop); });
    scope_guard release([&] { interrupt_consumers(q, stop); });
    // Likely parked by now (a spinning lockfree_queue consumer has given up).
    consumer.give_a_chance_to_return();
    REQUIRE(offer_until_accepted(q, logged(log, 8)));
    REQUIRE(consumer.returns_in_time());
    REQUIRE(consumer.get() == wait_status::taken);
    REQUIRE(log == std::vector<int>{8});
}

TEMPLATE_LIST_TEST_CASE("poll_until with a past deadline times out promptly", "[queue][timing]", all_queues) {
    auto q = make_queue<TestType, 4>();
    const crew::interrupt_flag never{false};
    std::vector<int> log;
    crew::task out = logged(log, 3);
    const auto start = steady::now();
    REQUIRE(q.poll_until(out, start - 1s, never) == wait_status::timed_out);
    REQUIRE(q.poll_until(out, steady::time_point::min(), never) == wait_status::timed_out);
    REQUIRE(q.poll_until(out, start, never) == wait_status::timed_out);
    const auto elapsed = steady::now() - start;
    CAPTURE(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
    REQUIRE(elapsed < scaled(500ms));
    REQUIRE(static_cast<bool>(out)); // a time-out leaves the output alone
}

TEMPLATE_LIST_TEST_CASE("poll_until never returns before its deadline when nothing comes", "[queue][timing]",
                        all_queues) {
    auto q = make_queue<TestType, 4>();
    const crew::interrupt_flag never{false};
    // Short waits too: a consumer that spins before it parks may end within the spin.
    for (const auto wait : {1ms, 20ms, 50ms}) {
        crew::task out;
        const auto deadline = steady::now() + wait;
        const wait_status s = q.poll_until(out, deadline, never);
        const auto returned = steady::now();
        CAPTURE(std::chrono::duration_cast<std::chrono::microseconds>(returned - deadline).count());
        REQUIRE(s == wait_status::timed_out);
        REQUIRE(returned >= deadline);             // hard lower bound
        REQUIRE(returned - deadline < scaled(2s)); // generous upper bound
        REQUIRE_FALSE(static_cast<bool>(out));
    }
}

TEMPLATE_LIST_TEST_CASE("a queued task wins over a time-out and over a set interrupt flag", "[queue]",
                        buffering_queues) {
    auto q = make_queue<TestType, 8>();
    std::vector<int> log;
    const crew::interrupt_flag set{true};
    const crew::interrupt_flag never{false};
    for (int i = 0; i < 3; ++i) REQUIRE(q.offer(logged(log, i)));
    crew::task t;
    REQUIRE(q.take(t, set) == wait_status::taken);
    t();
    REQUIRE(q.poll_until(t, steady::now() - 1s, never) == wait_status::taken);
    t();
    REQUIRE(q.poll_until(t, steady::now() - 1s, set) == wait_status::taken);
    t();
    REQUIRE(log == std::vector<int>{0, 1, 2});
    REQUIRE(q.poll_until(t, steady::now() + generous(), set) == wait_status::interrupted);
    REQUIRE(q.take(t, set) == wait_status::interrupted);
}

TEMPLATE_LIST_TEST_CASE("a task offered before the deadline wins over the time-out of poll_until",
                        "[queue][stress]", all_queues) {
    // A single consumer races poll_until's deadline against one offer per
    // round, aimed at that deadline. An offer that had returned before the
    // deadline (so the task was queued before it) must be taken: poll_until
    // may report timed_out only if the task came after the deadline.
    auto q = make_queue<TestType, 4>();
    // Only a synchronous queue may refuse an offer (no consumer waits yet):
    // it is offered the task again for a while. Every other queue has room.
    const bool hands_off = q.capacity() == 0;
    constexpr int rounds = 1500;
    std::atomic<steady::time_point> round_start{};
    std::barrier sync_point(2, [&]() noexcept { round_start = steady::now(); });
    std::atomic<steady::time_point> offer_returned{};
    std::atomic<bool> offer_accepted{false};
    std::atomic<int> ran{0};

    struct outcome {
        int taken = 0;
        int timed_out = 0;
        int task_lost_to_time_out = 0;
        int leftovers = 0;
    };
    auto consumer = run_async([&] {
        std::minstd_rand rng(7);
        const crew::interrupt_flag never{false};
        outcome o;
        for (int i = 0; i < rounds; ++i) {
            sync_point.arrive_and_wait();
            const auto deadline = round_start.load() + std::chrono::microseconds(20 + rng() % 60);
            crew::task t;
            const wait_status s = q.poll_until(t, deadline, never);
            sync_point.arrive_and_wait(); // the producer is done with this round
            if (s == wait_status::taken) {
                t();
                ++o.taken;
            } else {
                ++o.timed_out;
                if (offer_accepted.load() && offer_returned.load() < deadline) ++o.task_lost_to_time_out;
            }
            crew::task left;
            while (q.poll(left)) { // a task that came after the deadline
                left();
                ++o.leftovers;
            }
        }
        return o;
    });
    auto producer = run_async([&] {
        std::minstd_rand rng(8);
        for (int i = 0; i < rounds; ++i) {
            sync_point.arrive_and_wait();
            offer_accepted = false;
            // Aim at the consumer's deadline window (20..80 us), give or take.
            const auto aim = round_start.load() + std::chrono::microseconds(rng() % 100);
            while (steady::now() < aim) {
            }
            const auto give_up = steady::now() + 100us;
            bool accepted = false;
            do {
                accepted = q.offer(crew::task([&ran] { ++ran; }));
            } while (!accepted && hands_off && steady::now() < give_up);
            offer_returned = steady::now();
            offer_accepted = accepted;
            sync_point.arrive_and_wait();
        }
    });

    REQUIRE(ready_in_time(producer));
    producer.get();
    REQUIRE(ready_in_time(consumer));
    const outcome o = consumer.get();
    CAPTURE(o.taken, o.timed_out, o.leftovers);
    REQUIRE(o.task_lost_to_time_out == 0);
    REQUIRE(ran == o.taken + o.leftovers);
    if (!hands_off) REQUIRE(ran == rounds); // every offer was accepted
    REQUIRE(q.size() == 0);
}

// ---- interruption -----------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("a set interrupt flag with wake_consumers makes a blocked take return interrupted",
                        "[queue][interrupt]", all_queues) {
    auto q = make_queue<TestType, 4>();
    crew::interrupt_flag flag{false};
    const bool use_take = GENERATE(true, false);
    CAPTURE(use_take);
    blocking_call consumer([&] {
        crew::task t;
        const wait_status s =
            use_take ? q.take(t, flag) : q.poll_until(t, steady::now() + generous() * 2, flag);
        return std::pair{s, static_cast<bool>(t)};
    });
    scope_guard release([&] { interrupt_consumers(q, flag); });
    consumer.give_a_chance_to_return();
    REQUIRE_FALSE(consumer.returned());

    interrupt_consumers(q, flag);
    REQUIRE(consumer.returns_in_time());
    const auto [status, got_task] = consumer.get();
    REQUIRE(status == wait_status::interrupted);
    REQUIRE_FALSE(got_task);
}

TEMPLATE_LIST_TEST_CASE("wake_consumers without a set flag does not end a take", "[queue][interrupt]", all_queues) {
    consumer_in_take<TestType> taker;
    for (int i = 0; i < 100; ++i) {
        taker.q.wake_consumers();
        std::this_thread::yield();
    }
    REQUIRE_FALSE(taker.consumer.returned());
    REQUIRE(offer_until_accepted(taker.q, logged(taker.log, 1)));
    REQUIRE(taker.consumer.returns_in_time());
    REQUIRE(taker.consumer.get() == wait_status::taken);
    REQUIRE(taker.log == std::vector<int>{1});
}

TEMPLATE_LIST_TEST_CASE("a flag set before waiting makes take and poll_until return interrupted at once",
                        "[queue][interrupt]", all_queues) {
    auto q = make_queue<TestType, 4>();
    const crew::interrupt_flag set{true};
    crew::task t;
    // poll_until first: a queue that ignores the flag fails here instead of hanging in take.
    REQUIRE(q.poll_until(t, steady::now() + generous(), set) == wait_status::interrupted);
    REQUIRE(q.poll_until(t, steady::time_point::max(), set) == wait_status::interrupted);
    REQUIRE(q.take(t, set) == wait_status::interrupted);
    REQUIRE_FALSE(static_cast<bool>(t));
}

// ---- synchronous_queue ---------------------------------------------------------------

TEST_CASE("synchronous_queue default_options are a cached pool's", "[queue][synchronous]") {
    const crew::pool_options o = crew::synchronous_queue::default_options();
    REQUIRE(o.core_pool_size == 0);
    REQUIRE(o.maximum_pool_size == std::numeric_limits<std::size_t>::max());
    REQUIRE(o.keep_alive == std::chrono::seconds(60));
}

TEST_CASE("synchronous_queue offer fails with no waiting consumer and leaves the task intact",
          "[queue][synchronous]") {
    crew::synchronous_queue q;
    std::vector<int> log;
    crew::task t = logged(log, 1);
    REQUIRE_FALSE(q.offer(std::move(t)));
    REQUIRE(static_cast<bool>(t)); // NOLINT(bugprone-use-after-move)
    REQUIRE(q.size() == 0);
    t();
    REQUIRE(log == std::vector<int>{1});
}

TEST_CASE("synchronous_queue forgets a consumer that timed out or was interrupted", "[queue][synchronous]") {
    crew::synchronous_queue q;
    std::vector<int> log;
    const crew::interrupt_flag never{false};
    const crew::interrupt_flag set{true};
    crew::task out;
    REQUIRE(q.poll_until(out, steady::now() - 1s, never) == wait_status::timed_out);
    REQUIRE(q.poll_until(out, steady::now() + 1ms, never) == wait_status::timed_out);
    REQUIRE(q.poll_until(out, steady::now() + generous(), set) == wait_status::interrupted);
    crew::task t = logged(log, 1);
    REQUIRE_FALSE(q.offer(std::move(t)));
    REQUIRE(static_cast<bool>(t)); // NOLINT(bugprone-use-after-move)
}

TEST_CASE("synchronous_queue offer succeeds while a consumer is blocked in take", "[queue][synchronous]") {
    crew::synchronous_queue q;
    std::vector<int> log;
    crew::interrupt_flag stop{false};
    auto consumer = run_async([&] { return take_and_run(q, stop); });
    scope_guard release([&] { interrupt_consumers(q, stop); });
    REQUIRE(offer_until_accepted(q, logged(log, 11)));
    REQUIRE(ready_in_time(consumer));
    REQUIRE(consumer.get() == wait_status::taken);
    REQUIRE(log == std::vector<int>{11});

    // The one consumer is gone: the next offer fails again.
    crew::task again = logged(log, 12);
    REQUIRE_FALSE(q.offer(std::move(again)));
}

TEST_CASE("synchronous_queue accepts one offer per waiting consumer", "[queue][synchronous]") {
    crew::synchronous_queue q;
    std::atomic<int> ran{0};
    crew::interrupt_flag stop{false};
    constexpr int consumers = 3;
    std::vector<std::future<wait_status>> results;
    for (int i = 0; i < consumers; ++i) results.push_back(run_async([&] { return take_and_run(q, stop); }));
    scope_guard release([&] { interrupt_consumers(q, stop); });
    for (int i = 0; i < consumers; ++i) REQUIRE(offer_until_accepted(q, crew::task([&ran] { ++ran; })));
    for (auto& r : results) {
        REQUIRE(ready_in_time(r));
        REQUIRE(r.get() == wait_status::taken);
    }
    REQUIRE(ran == consumers);
    crew::task extra([&ran] { ++ran; });
    REQUIRE_FALSE(q.offer(std::move(extra)));
    REQUIRE(q.size() == 0);
}

TEST_CASE("synchronous_queue put blocks until a consumer arrives", "[queue][synchronous][blocking]") {
    crew::synchronous_queue q;
    std::vector<int> putter_log;
    blocking_call putter([&] { return q.put(logged(putter_log, 3)); });
    scope_guard release([&] { q.close(); });
    putter.give_a_chance_to_return();
    REQUIRE_FALSE(putter.returned());

    putter.unblocking(); // a consumer arrives
    const crew::interrupt_flag never{false};
    crew::task t;
    REQUIRE(q.poll_until(t, steady::now() + generous(), never) == wait_status::taken);
    REQUIRE(putter.returns_in_time());
    REQUIRE(putter.get());
    REQUIRE(putter.returned_after_unblocking());
    t();
    REQUIRE(putter_log == std::vector<int>{3});
}

TEST_CASE("a task handed to a synchronous consumer wins over its interrupt", "[queue][synchronous][interrupt]") {
    crew::synchronous_queue q;
    std::vector<int> log;
    for (int round = 0; round < 50; ++round) {
        crew::interrupt_flag flag{false};
        auto consumer = run_async([&] { return take_and_run(q, flag); });
        scope_guard release([&] { interrupt_consumers(q, flag); });
        REQUIRE(offer_until_accepted(q, logged(log, round)));
        interrupt_consumers(q, flag); // the task is already promised to the consumer
        REQUIRE(ready_in_time(consumer));
        REQUIRE(consumer.get() == wait_status::taken);
        REQUIRE(q.size() == 0);
    }
    REQUIRE(log == iota_vector(50));
}

TEST_CASE("synchronous_queue consumers that time out never strand a handed-off task",
          "[queue][synchronous][stress]") {
    // Offers race a consumer whose short poll_until deadlines expire. With a
    // single consumer, whenever its poll_until has returned nobody waits, so
    // no offer can succeed and nothing may be left in the queue: a handed-off
    // task the consumer walked away from would show up in size().
    crew::synchronous_queue q;
    std::atomic<int> ran{0};
    std::atomic<bool> consumer_done{false};
    constexpr int rounds = 3000;

    struct consumer_result {
        int taken = 0;
        int timed_out = 0;
        int stranded = 0; // times a task stayed behind after poll_until returned
    };
    auto consumer = run_async([&] {
        std::minstd_rand rng(1);
        const crew::interrupt_flag never{false};
        consumer_result r;
        for (int i = 0; i < rounds; ++i) {
            crew::task t;
            const wait_status s = q.poll_until(t, jittered_deadline(rng, 80us), never);
            if (q.size() != 0) ++r.stranded;
            if (s == wait_status::taken) {
                t();
                ++r.taken;
            } else {
                ++r.timed_out;
            }
            // Take back anything stranded, so that the totals below still add up.
            crew::task left;
            while (q.poll(left)) {
                left();
                ++r.taken;
            }
        }
        consumer_done = true;
        return r;
    });
    auto producer = run_async([&] { return offer_until(q, [&] { return consumer_done.load(); }, ran, 2, 3); });

    REQUIRE(ready_in_time(consumer));
    const consumer_result r = consumer.get();
    REQUIRE(ready_in_time(producer));
    const int accepted = producer.get();

    CAPTURE(r.taken, r.timed_out, accepted);
    REQUIRE(r.stranded == 0);
    REQUIRE(q.size() == 0);
    REQUIRE(q.drain().empty());
    REQUIRE(r.taken == accepted);
    REQUIRE(ran == accepted);
}

TEST_CASE("synchronous_queue wakes a parked put when a handed-off task is taken by drain or poll",
          "[queue][synchronous][seam]") {
    // A consumer is counted as waiting and held before its first look; A is
    // handed to it, so a put(B) parks (every waiting consumer has a task).
    // Then A is drained (or polled) away: the consumer is free again and
    // the parked put must hand B over, not sleep until its deadline.
    const bool draining = GENERATE(true, false);
    CAPTURE(draining);
    crew::synchronous_queue q;
    const crew::interrupt_flag never{false};
    crew::task taken;
    std::future<crew::wait_status> consumer;
    std::future<bool> producer;
    {
        seam_gate gate(seam::sync_consumer_counted, seam_gate::this_thread_only);
        consumer = std::async(std::launch::async, [&] {
            seam_gate::arm_this_thread();
            return q.poll_until(taken, std::chrono::steady_clock::now() + scaled(60s), never);
        });
        REQUIRE(gate.wait_caught(1, scaled(30s)));
        REQUIRE(q.offer(crew::task([] {})));
        producer = std::async(std::launch::async, [&] {
            return q.put_until(crew::task([] {}), std::chrono::steady_clock::now() + scaled(60s));
        });
        REQUIRE(producer.wait_for(200ms) == std::future_status::timeout); // parked: no free consumer
        if (draining) REQUIRE(q.drain().size() == 1);
        else {
            crew::task a;
            REQUIRE(q.poll(a));
        }
        REQUIRE(producer.wait_for(scaled(10s)) == std::future_status::ready);
        REQUIRE(producer.get());
        gate.release();
    }
    REQUIRE(consumer.get() == crew::wait_status::taken);
    REQUIRE(static_cast<bool>(taken));
}

TEST_CASE("synchronous_queue hands every accepted offer to one of several racing consumers",
          "[queue][synchronous][stress]") {
    crew::synchronous_queue q;
    std::atomic<int> ran{0};
    std::atomic<int> consumers_left{2};
    constexpr int rounds = 2000;

    auto consumer = [&](unsigned seed) {
        std::minstd_rand rng(seed);
        const crew::interrupt_flag never{false};
        int taken = 0;
        for (int i = 0; i < rounds; ++i) {
            crew::task t;
            if (q.poll_until(t, jittered_deadline(rng, 120us), never) == wait_status::taken) {
                t();
                ++taken;
            }
        }
        --consumers_left;
        return taken;
    };
    auto c1 = run_async([&] { return consumer(1); });
    auto c2 = run_async([&] { return consumer(2); });
    auto producer = run_async([&] { return offer_until(q, [&] { return consumers_left.load() == 0; }, ran, 3, 4); });

    REQUIRE(ready_in_time(c1));
    REQUIRE(ready_in_time(c2));
    const int taken = c1.get() + c2.get();
    REQUIRE(ready_in_time(producer));
    const int accepted = producer.get();
    // Whatever a consumer left behind would still be here.
    const std::size_t left_behind = q.drain().size();

    CAPTURE(taken, accepted);
    REQUIRE(left_behind == 0);
    REQUIRE(taken == accepted);
    REQUIRE(ran == accepted);
}

// ---- lost wake-ups -----------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("queues lose no wake-up with two producers and two consumers in take", "[queue][stress]",
                        all_queues) {
    auto q = make_queue<TestType, 16>(); // bounded: producers also block in put
    require_two_producers_and_two_consumers_run_every_task_once(q, 20'000, false);
}

// A queue that woke a consumer only when it went from empty to non-empty, or
// that counted a notified but not yet running consumer as still asleep the
// wrong way, would wake one of two parked consumers for a burst of two tasks.
// Here the two tasks meet, so each needs a consumer of its own.
TEMPLATE_LIST_TEST_CASE("a burst of offers wakes as many parked consumers as it brings tasks", "[queue][blocking]",
                        buffering_queues) {
    static constexpr int rounds = 200;
    auto q = make_queue<TestType, 16>();
    crew::interrupt_flag stop{false};
    auto consume = [&] {
        crew::task t;
        while (q.take(t, stop) == wait_status::taken) {
            t();
            t.reset();
        }
    };
    auto c1 = run_async(consume);
    auto c2 = run_async(consume);
    scope_guard release([&] { interrupt_consumers(q, stop); });
    for (int round = 0; round < rounds; ++round) {
        // Both consumers announced in the queue, on their way to sleep or
        // asleep: an event, not a chance given.
        REQUIRE(eventually([&] { return parked_consumers_of(q) == 2; }));
        auto meeting = std::make_shared<rendezvous>(2);
        auto meet = [meeting] { (void)meeting->arrive_and_wait(); };
        REQUIRE(q.offer(crew::task(meet)));
        REQUIRE(q.offer(crew::task(meet)));
        REQUIRE(meeting->all_left_in_time());
        REQUIRE(meeting->met() == 2); // else a task's partner never arrived
    }
    interrupt_consumers(q, stop);
    REQUIRE(ready_in_time(c1));
    REQUIRE(ready_in_time(c2));
}

// Consumers that time out, or are woken with no task for them, must not
// leave a notify counted as pending: the producer would then believe a
// consumer already on its way and skip the wake-up a parked one needs. The
// first half of the tasks goes to consumers in short timed waits, with
// wake-ups for nothing; the second half to consumers in untimed takes only.
TEMPLATE_LIST_TEST_CASE("consumers that time out or wake for nothing leave no stale notify behind",
                        "[queue][stress]", buffering_queues) {
    static constexpr int tasks = 10'000;
    auto q = make_queue<TestType, 1024>();
    crew::interrupt_flag stop{false};
    std::atomic<bool> churning{true};
    std::atomic<int> consumed{0};
    std::promise<void> all_consumed;
    auto all_consumed_future = all_consumed.get_future();
    auto consume = [&](int seed) {
        crew::task t;
        for (int i = seed;; ++i) {
            const wait_status status = churning.load() && i % 4 != 0
                                           ? q.poll_until(t, steady::now() + (i % 5) * 7us, stop)
                                           : q.take(t, stop);
            if (status == wait_status::interrupted) return;
            if (status != wait_status::taken) continue;
            t();
            t.reset();
        }
    };
    auto c1 = run_async([&] { consume(0); });
    auto c2 = run_async([&] { consume(1); });
    auto waker = run_async([&] { // wake-ups with no interrupt and often no task: like spurious ones
        while (churning.load()) {
            q.wake_consumers();
            std::this_thread::yield();
        }
    });
    scope_guard release([&] {
        churning = false;
        interrupt_consumers(q, stop);
    });
    std::mt19937 random(std::random_device{}());
    for (int i = 0; i < tasks; ++i) {
        if (i == tasks / 2) {
            churning = false;
            REQUIRE(ready_in_time(waker));
        }
        REQUIRE(q.put(crew::task([&] {
            if (consumed.fetch_add(1) + 1 == tasks) all_consumed.set_value();
        })));
        if (random() % 8 == 0) std::this_thread::yield(); // let consumers park between bursts
    }
    const bool finished = all_consumed_future.wait_for(scaled(60s)) == std::future_status::ready;
    CAPTURE(consumed.load());
    REQUIRE(finished);
    interrupt_consumers(q, stop);
    REQUIRE(ready_in_time(c1));
    REQUIRE(ready_in_time(c2));
}

// A consumer that gives up (time-out) while an offer is counting on it must
// take that task: otherwise it stays queued with no consumer committed to it,
// and a cached pool whose worker just left runs it only when another worker
// comes. While this test's one consumer is between waits, nobody waits, so
// the queue must be empty whenever a wait returns without a task.
// Mutation (checked): wait_for leaving with only its count lowered, without
// looking for a task offered after its last look: 2 of 5 runs failed (56
// and 86 stranded tasks), on a machine busy compiling.
TEST_CASE("synchronous_queue: a consumer that times out never strands a task offered to it",
          "[queue][synchronous]") {
    crew::synchronous_queue q;
    const int waits = static_cast<int>(200000 / time_factor());
    std::atomic<bool> done{false};
    std::atomic<int> taken{0}, stranded{0}; // Catch2 assertions are for this thread
    std::thread consumer([&] {
        const crew::interrupt_flag never{false};
        for (int i = 0; i < waits; ++i) {
            crew::task t;
            // Mostly a deadline already past: take, look at the clock, leave,
            // and the producer's offer can fall in between.
            const auto deadline = steady::now() + std::chrono::microseconds(i % 8 == 0 ? 5 : 0);
            if (q.poll_until(t, deadline, never) == wait_status::taken) {
                t();
                taken.fetch_add(1);
            } else if (q.size() != 0) {
                stranded.fetch_add(1);
                crew::task lost;
                if (q.poll(lost)) lost(); // count it once, keep going
            }
        }
        done.store(true);
    });
    std::atomic<int> ran{0};
    int accepted = 0;
    while (!done.load())
        if (q.offer(crew::task([&ran] { ran.fetch_add(1); }))) ++accepted;
    consumer.join();
    REQUIRE(stranded.load() == 0);
    REQUIRE(ran.load() == accepted);
    REQUIRE(q.size() == 0);
}
