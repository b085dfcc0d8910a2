// Unit tests for crew::lockfree_queue<Capacity> (crew/policies/lockfree_queue.hpp).
//
// The blocking tests run twice: on lockfree_queue itself (futex parking on
// Linux) and on the same queue with the portable condition-variable parking.
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
#include <cstdlib>
#include <exception>
#include <future>
#include <latch>
#include <memory>
#include <numeric>
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

// The two parking strategies, for the tests of blocking behaviour.
template <std::size_t C>
using futex_queue = crew::lockfree_queue<C>;
template <std::size_t C>
using condvar_queue = crew::detail::basic_lockfree_queue<C, crew::detail::condvar_parking_word>;

static_assert(crew::queue_policy<condvar_queue<16>>);

// ---- helpers -----------------------------------------------------------------

// Sized for two cores; sanitizers (a higher time factor) run fewer rounds.
int rounds(int n) { return std::max(n / 10, static_cast<int>(n / time_factor())); }

// A future's task as a queue sees it: cancellable (purge) and counted.
struct cancellable {
    std::shared_ptr<int> destroyed;
    std::vector<int>* log;
    int id;
    bool cancelled;

    cancellable(bool is_cancelled, std::shared_ptr<int> destroyed_counter, std::vector<int>& l, int i)
        : destroyed(std::move(destroyed_counter)), log(&l), id(i), cancelled(is_cancelled) {}
    cancellable(cancellable&& other) noexcept = default;
    cancellable& operator=(cancellable&&) = delete;
    ~cancellable() {
        if (destroyed) ++*destroyed; // moved-from instances have no counter
    }

    void operator()() { log->push_back(id); }
    std::exception_ptr run_and_report(bool) {
        log->push_back(id);
        return nullptr;
    }
    void abandon(std::exception_ptr, bool) noexcept {}
    bool is_cancelled() const noexcept { return cancelled; }
};
static_assert(crew::detail::reporting_callable<cancellable>);

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

TEST_CASE("lockfree_queue hands out offered tasks in FIFO order", "[lockfree_queue]") {
    crew::lockfree_queue<64> q;
    std::vector<int> log;
    REQUIRE(q.size() == 0);
    for (int i = 0; i < 10; ++i) REQUIRE(q.offer(logged(log, i)));
    REQUIRE(q.size() == 10);
    REQUIRE(poll_and_run_all(q, log) == iota_vector(10));
    REQUIRE(q.size() == 0);
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

TEST_CASE("lockfree_queue poll on an empty queue returns false and leaves the output alone", "[lockfree_queue]") {
    crew::lockfree_queue<4> q;
    std::vector<int> log;
    crew::task out = logged(log, 7);
    REQUIRE_FALSE(q.poll(out));
    REQUIRE(static_cast<bool>(out));
    out();
    REQUIRE(log == std::vector<int>{7});
}

TEST_CASE("lockfree_queue refuses offers when full and leaves the task intact", "[lockfree_queue]") {
    crew::lockfree_queue<3> q;
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

TEST_CASE("lockfree_queue of capacity 1 alternates full and empty", "[lockfree_queue]") {
    crew::lockfree_queue<1> q;
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

// ---- remove_if and drain ------------------------------------------------------

TEST_CASE("lockfree_queue remove_if removes and counts matches and keeps the others in order", "[lockfree_queue]") {
    crew::lockfree_queue<64> q;
    std::vector<int> log;
    for (int i = 0; i < 40; ++i)
        REQUIRE(q.offer(crew::task(crew::with_priority(i % 3 == 0 ? 1 : 0, [&log, i] { log.push_back(i); }))));
    REQUIRE(q.remove_if([](const crew::task& t) { return t.priority() == 1; }) == 14);
    REQUIRE(q.size() == 26);
    REQUIRE(q.remove_if([](const crew::task& t) { return t.priority() == 1; }) == 0);
    REQUIRE(q.size() == 26);

    std::vector<int> expected;
    for (int i = 0; i < 40; ++i)
        if (i % 3 != 0) expected.push_back(i);
    REQUIRE(poll_and_run_all(q, log) == expected);
}

TEST_CASE("lockfree_queue remove_if destroys the cancelled tasks and frees their slots", "[lockfree_queue]") {
    crew::lockfree_queue<16> q;
    std::vector<int> log;
    auto destroyed = std::make_shared<int>(0);
    for (int i = 0; i < 16; ++i) REQUIRE(q.offer(crew::task(cancellable(i % 4 == 1, destroyed, log, i))));
    crew::task extra = logged(log, 99);
    REQUIRE_FALSE(q.offer(std::move(extra)));

    REQUIRE(q.remove_if([](const crew::task& t) { return t.is_cancelled(); }) == 4);
    REQUIRE(*destroyed == 4);
    REQUIRE(q.size() == 12);
    for (int i = 16; i < 20; ++i) REQUIRE(q.offer(crew::task(cancellable(false, destroyed, log, i))));

    std::vector<int> expected;
    for (int i = 0; i < 20; ++i)
        if (i < 16 ? i % 4 != 1 : true) expected.push_back(i);
    REQUIRE(poll_and_run_all(q, log) == expected);
    REQUIRE(*destroyed == 20);
}

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
    // Rotated: the two tested before the throw went to the tail, after the rest.
    REQUIRE(poll_and_run_all(q, log) == std::vector<int>{3, 4, 0, 1, 2});
}

TEST_CASE("lockfree_queue drain returns every queued task oldest first and leaves the queue open",
          "[lockfree_queue]") {
    crew::lockfree_queue<64> q;
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
    for (int i = 0; i < 64; ++i) REQUIRE(q.offer(logged(log, i))); // every slot is free again
}

// ---- close -----------------------------------------------------------------------

TEST_CASE("lockfree_queue close makes offer and put fail with the task intact but poll still drains",
          "[lockfree_queue]") {
    crew::lockfree_queue<8> q;
    std::vector<int> log;
    REQUIRE(q.offer(logged(log, 0)));
    REQUIRE(q.offer(logged(log, 1)));
    q.close();

    crew::task offered = logged(log, 100);
    REQUIRE_FALSE(q.offer(std::move(offered)));
    REQUIRE(static_cast<bool>(offered)); // NOLINT(bugprone-use-after-move)
    crew::task put = logged(log, 101);
    REQUIRE_FALSE(q.put(std::move(put)));
    REQUIRE(static_cast<bool>(put)); // NOLINT(bugprone-use-after-move)
    offered();
    put();
    REQUIRE(log == std::vector<int>{100, 101});
    log.clear();

    const crew::interrupt_flag never{false};
    crew::task t;
    REQUIRE(q.take(t, never) == wait_status::taken);
    t();
    REQUIRE(q.poll_until(t, steady::now() - 1s, never) == wait_status::taken);
    t();
    REQUIRE(log == std::vector<int>{0, 1});
    REQUIRE(q.poll_until(t, steady::now() - 1s, never) == wait_status::timed_out);
    q.close(); // idempotent
    REQUIRE(q.drain().empty());
}

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

// ---- blocking put --------------------------------------------------------------

TEMPLATE_TEST_CASE("lockfree_queue put blocks until a consumer frees a slot", "[lockfree_queue][blocking]",
                   futex_queue<1>, condvar_queue<1>) {
    TestType q;
    std::vector<int> log, putter_log;
    REQUIRE(q.offer(logged(log, 1)));

    std::atomic<bool> poll_started{false};
    std::atomic<bool> put_returned{false};
    std::latch putter_running(1);
    auto putter = run_async([&] {
        putter_running.count_down();
        const bool ok = q.put(logged(putter_log, 2));
        const bool saw_poll = poll_started.load();
        put_returned = true;
        return std::pair{ok, saw_poll};
    });
    scope_guard release([&] { q.close(); });

    putter_running.wait();
    give_a_chance([&] { return put_returned.load(); });
    REQUIRE_FALSE(put_returned.load());
    REQUIRE(q.size() == 1);

    poll_started = true;
    crew::task first;
    REQUIRE(q.poll(first));
    REQUIRE(ready_in_time(putter));
    const auto [ok, saw_poll] = putter.get();
    REQUIRE(ok);
    REQUIRE(saw_poll);
    first();
    REQUIRE(poll_and_run_all(q, putter_log) == std::vector<int>{2});
    REQUIRE(log == std::vector<int>{1});
}

TEMPLATE_TEST_CASE("lockfree_queue puts blocked on a full queue each get a slot as consumers poll",
                   "[lockfree_queue][blocking]", futex_queue<2>, condvar_queue<2>) {
    TestType q;
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

TEMPLATE_TEST_CASE("lockfree_queue drain and remove_if wake a blocked put", "[lockfree_queue][blocking]",
                   futex_queue<1>, condvar_queue<1>) {
    TestType q;
    std::vector<int> log, putter_log;
    REQUIRE(q.offer(crew::task(crew::with_priority(1, [&log] { log.push_back(1); }))));

    std::latch putter_running(1);
    auto putter = run_async([&] {
        putter_running.count_down();
        return q.put(logged(putter_log, 2));
    });
    scope_guard release([&] { q.close(); });
    putter_running.wait();
    give_a_chance([&] { return putter.wait_for(0s) == std::future_status::ready; });

    SECTION("drain") {
        // The woken put may land before drain is done; then drain has it too.
        std::vector<crew::task> drained = q.drain();
        REQUIRE(ready_in_time(putter));
        REQUIRE(putter.get());
        REQUIRE(!drained.empty());
        REQUIRE(drained.size() <= 2);
        for (auto& t : drained) t();
        poll_and_run_all(q, putter_log);
        REQUIRE(log == std::vector<int>{1});
    }
    SECTION("remove_if") {
        REQUIRE(q.remove_if([](const crew::task& t) { return t.priority() == 1; }) == 1);
        REQUIRE(ready_in_time(putter));
        REQUIRE(putter.get());
        poll_and_run_all(q, putter_log);
        REQUIRE(log.empty());
    }
    REQUIRE(putter_log == std::vector<int>{2});
}

TEMPLATE_TEST_CASE("lockfree_queue close wakes a blocked put which then fails with its task intact",
                   "[lockfree_queue][blocking]", futex_queue<1>, condvar_queue<1>) {
    TestType q;
    std::vector<int> log, putter_log;
    REQUIRE(q.offer(logged(log, 1)));
    std::atomic<bool> put_returned{false};
    std::latch putter_running(1);
    auto putter = run_async([&] {
        putter_running.count_down();
        crew::task t = logged(putter_log, 5);
        const bool ok = q.put(std::move(t));
        const bool intact = static_cast<bool>(t); // NOLINT(bugprone-use-after-move)
        put_returned = true;
        if (intact) t();
        return std::pair{ok, intact};
    });
    scope_guard release([&] { q.close(); });

    putter_running.wait();
    give_a_chance([&] { return put_returned.load(); });
    REQUIRE_FALSE(put_returned.load());

    q.close();
    REQUIRE(ready_in_time(putter));
    const auto [ok, intact] = putter.get();
    REQUIRE_FALSE(ok);
    REQUIRE(intact);
    REQUIRE(putter_log == std::vector<int>{5});
    REQUIRE(q.size() == 1); // the queued task is still there
}

// ---- blocking take and poll_until --------------------------------------------

TEMPLATE_TEST_CASE("lockfree_queue take blocks until a task is offered", "[lockfree_queue][blocking]",
                   futex_queue<4>, condvar_queue<4>) {
    TestType q;
    std::vector<int> log;
    crew::interrupt_flag stop{false};
    std::atomic<bool> offered{false};
    std::atomic<bool> take_returned{false};
    std::latch consumer_running(1);
    auto consumer = run_async([&] {
        consumer_running.count_down();
        crew::task t;
        const wait_status s = q.take(t, stop);
        const bool saw_offer = offered.load();
        take_returned = true;
        if (s == wait_status::taken) t();
        return std::pair{s, saw_offer};
    });
    scope_guard release([&] {
        stop = true;
        q.wake_consumers();
    });

    consumer_running.wait();
    give_a_chance([&] { return take_returned.load(); });
    REQUIRE_FALSE(take_returned.load());

    offered = true;
    REQUIRE(q.offer(logged(log, 42)));
    REQUIRE(ready_in_time(consumer));
    const auto [status, saw_offer] = consumer.get();
    REQUIRE(status == wait_status::taken);
    REQUIRE(saw_offer);
    REQUIRE(log == std::vector<int>{42});
    REQUIRE(q.size() == 0);
}

TEMPLATE_TEST_CASE("lockfree_queue poll_until returns a task offered while it waits", "[lockfree_queue][blocking]",
                   futex_queue<4>, condvar_queue<4>) {
    TestType q;
    std::vector<int> log;
    crew::interrupt_flag stop{false};
    std::latch consumer_running(1);
    auto consumer = run_async([&] {
        consumer_running.count_down();
        crew::task t;
        const wait_status s = q.poll_until(t, steady::now() + generous(), stop);
        if (s == wait_status::taken) t();
        return s;
    });
    scope_guard release([&] {
        stop = true;
        q.wake_consumers();
    });
    consumer_running.wait();
    give_a_chance([&] { return consumer.wait_for(0s) == std::future_status::ready; });
    REQUIRE(q.offer(logged(log, 8)));
    REQUIRE(ready_in_time(consumer));
    REQUIRE(consumer.get() == wait_status::taken);
    REQUIRE(log == std::vector<int>{8});
}

TEMPLATE_TEST_CASE("lockfree_queue poll_until with a past deadline times out promptly", "[lockfree_queue][timing]",
                   futex_queue<4>, condvar_queue<4>) {
    TestType q;
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

TEMPLATE_TEST_CASE("lockfree_queue poll_until never returns before its deadline when nothing comes",
                   "[lockfree_queue][timing]", futex_queue<4>, condvar_queue<4>) {
    TestType q;
    const crew::interrupt_flag never{false};
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

TEST_CASE("lockfree_queue a queued task wins over a time-out and over a set interrupt flag", "[lockfree_queue]") {
    crew::lockfree_queue<8> q;
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

// ---- interruption ------------------------------------------------------------------

TEMPLATE_TEST_CASE("lockfree_queue a set flag with wake_consumers makes a parked take return interrupted",
                   "[lockfree_queue][interrupt]", futex_queue<4>, condvar_queue<4>) {
    TestType q;
    crew::interrupt_flag flag{false};
    std::atomic<bool> returned{false};
    std::latch consumer_running(1);
    const bool use_take = GENERATE(true, false);
    CAPTURE(use_take);
    auto consumer = run_async([&] {
        consumer_running.count_down();
        crew::task t;
        const wait_status s = use_take ? q.take(t, flag) : q.poll_until(t, steady::now() + generous() * 2, flag);
        returned = true;
        return std::pair{s, static_cast<bool>(t)};
    });
    scope_guard release([&] {
        flag = true;
        q.wake_consumers();
    });

    consumer_running.wait();
    give_a_chance([&] { return returned.load(); });
    REQUIRE_FALSE(returned.load());

    flag = true;
    q.wake_consumers();
    REQUIRE(ready_in_time(consumer));
    const auto [status, got_task] = consumer.get();
    REQUIRE(status == wait_status::interrupted);
    REQUIRE_FALSE(got_task);
}

TEMPLATE_TEST_CASE("lockfree_queue wake_consumers without a set flag does not end a take",
                   "[lockfree_queue][interrupt]", futex_queue<4>, condvar_queue<4>) {
    TestType q;
    std::vector<int> log;
    crew::interrupt_flag flag{false};
    std::latch consumer_running(1);
    auto consumer = run_async([&] {
        consumer_running.count_down();
        crew::task t;
        const wait_status s = q.take(t, flag);
        if (s == wait_status::taken) t();
        return s;
    });
    scope_guard release([&] {
        flag = true;
        q.wake_consumers();
    });
    consumer_running.wait();
    for (int i = 0; i < 100; ++i) {
        q.wake_consumers();
        std::this_thread::yield();
    }
    REQUIRE(consumer.wait_for(0s) != std::future_status::ready);
    REQUIRE(q.offer(logged(log, 1)));
    REQUIRE(ready_in_time(consumer));
    REQUIRE(consumer.get() == wait_status::taken);
    REQUIRE(log == std::vector<int>{1});
}

TEST_CASE("lockfree_queue a flag set before waiting makes take and poll_until return interrupted at once",
          "[lockfree_queue][interrupt]") {
    crew::lockfree_queue<4> q;
    const crew::interrupt_flag set{true};
    crew::task t;
    REQUIRE(q.poll_until(t, steady::now() + generous(), set) == wait_status::interrupted);
    REQUIRE(q.poll_until(t, steady::time_point::max(), set) == wait_status::interrupted);
    REQUIRE(q.take(t, set) == wait_status::interrupted);
    REQUIRE_FALSE(static_cast<bool>(t));
}

// ---- races against parking --------------------------------------------------------

TEMPLATE_TEST_CASE("lockfree_queue loses no wake-up when an offer races a consumer going to sleep",
                   "[lockfree_queue][stress]", futex_queue<4>, condvar_queue<4>) {
    // One task per round, offered after a random delay of 0 to ~50 us, so
    // that it lands in every phase of the consumer's wait: before it spins,
    // while it spins, between announcing itself and the futex call, and
    // while it is parked. A lost wake-up leaves the consumer asleep with the
    // task queued, and the round times out.
    TestType q;
    const int n = rounds(4000);
    std::atomic<int> ran{0};
    crew::interrupt_flag stop{false};
    std::barrier sync_point(2);
    auto consumer = run_async([&] {
        for (int i = 0; i < n; ++i) {
            sync_point.arrive_and_wait();
            crew::task t;
            if (q.take(t, stop) != wait_status::taken) return i;
            t();
        }
        return n;
    });
    scope_guard release([&] {
        stop = true;
        q.wake_consumers();
    });
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

TEMPLATE_TEST_CASE("lockfree_queue loses no interrupt when it races a consumer going to sleep",
                   "[lockfree_queue][stress][interrupt]", futex_queue<4>, condvar_queue<4>) {
    TestType q;
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
        flag = true;
        q.wake_consumers();
        CAPTURE(i);
        REQUIRE(ready_in_time(consumer));
        REQUIRE(consumer.get() == wait_status::interrupted);
    }
}

TEMPLATE_TEST_CASE("lockfree_queue wakes a parked consumer for every task that needs one",
                   "[lockfree_queue][blocking]", futex_queue<8>, condvar_queue<8>) {
    // Four consumers park; then four tasks arrive that can only finish
    // together (each waits for the other three to start). A queue that woke
    // fewer consumers than it has tasks for (say, one, trusting it to come
    // back for the rest) fails here.
    constexpr int n = 4;
    TestType q;
    crew::interrupt_flag stop{false};
    std::atomic<int> started{0};
    std::atomic<int> completed_together{0};
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
    scope_guard release([&] {
        stop = true;
        q.wake_consumers();
    });
    consumers_running.wait();
    give_a_chance([] { return false; }); // let them go past spinning, into the futex

    for (int round = 0; round < rounds(50); ++round) {
        started = 0;
        completed_together = 0;
        for (int i = 0; i < n; ++i)
            REQUIRE(q.offer(crew::task([&] {
                started.fetch_add(1);
                const auto deadline = steady::now() + generous();
                while (started.load() < n && steady::now() < deadline) std::this_thread::yield();
                if (started.load() == n) completed_together.fetch_add(1);
            })));
        const auto deadline = steady::now() + generous() + 5s;
        while (completed_together.load() < n && steady::now() < deadline)
            std::this_thread::yield();
        CAPTURE(round, started.load());
        REQUIRE(completed_together.load() == n);
        // Let the consumers park again before the next round, some of the time.
        if (round % 2 == 0) give_a_chance([] { return false; });
    }
    stop = true;
    q.wake_consumers();
    for (auto& c : consumers) REQUIRE(ready_in_time(c));
}

TEMPLATE_TEST_CASE("lockfree_queue loses no wake-up with two producers and two consumers racing park",
                   "[lockfree_queue][stress]", futex_queue<16>, condvar_queue<16>) {
    // Producers pause at random so that consumers keep going to sleep, and
    // the small capacity makes producers block in put as well.
    const int tasks = rounds(40'000);
    TestType q;
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(tasks));
    std::atomic<int> consumed{0};
    std::promise<void> all_consumed;
    auto all_consumed_future = all_consumed.get_future();
    crew::interrupt_flag stop{false};

    auto consume = [&](bool timed) {
        int n = 0;
        crew::task t;
        for (;;) {
            const wait_status s = timed ? q.poll_until(t, steady::now() + 200us, stop) : q.take(t, stop);
            if (s == wait_status::interrupted) return n;
            if (s == wait_status::taken) {
                t();
                t.reset();
                ++n;
            }
        }
    };
    auto produce = [&](int first, unsigned seed) {
        std::minstd_rand rng(seed);
        int refused = 0;
        for (int i = first; i < tasks; i += 2) {
            crew::task t([&runs, &consumed, &all_consumed, tasks, i] {
                runs[static_cast<std::size_t>(i)].fetch_add(1);
                if (consumed.fetch_add(1) + 1 == tasks) all_consumed.set_value();
            });
            if (!q.offer(std::move(t)) && !q.put(std::move(t))) ++refused;
            if (rng() % 8 == 0)
                for (unsigned k = rng() % 64; k > 0; --k) std::this_thread::yield();
        }
        return refused;
    };

    auto consumer1 = run_async([&] { return consume(false); });
    auto consumer2 = run_async([&] { return consume(true); });
    auto producer1 = run_async([&] { return produce(0, 1); });
    auto producer2 = run_async([&] { return produce(1, 2); });
    scope_guard release([&] {
        q.close(); // frees producers blocked in put
        stop = true;
        q.wake_consumers();
    });

    const bool finished = all_consumed_future.wait_for(scaled(60s)) == std::future_status::ready;
    CAPTURE(consumed.load(), q.size());
    REQUIRE(finished);
    REQUIRE(ready_in_time(producer1));
    REQUIRE(ready_in_time(producer2));
    REQUIRE(producer1.get() == 0);
    REQUIRE(producer2.get() == 0);

    stop = true;
    q.wake_consumers();
    REQUIRE(ready_in_time(consumer1));
    REQUIRE(ready_in_time(consumer2));
    REQUIRE(consumer1.get() + consumer2.get() == tasks);

    const auto wrong = std::count_if(runs.begin(), runs.end(), [](const std::atomic<int>& r) { return r != 1; });
    REQUIRE(wrong == 0);
    REQUIRE(q.size() == 0);
}

TEST_CASE("lockfree_queue a task offered before the deadline wins over the time-out of poll_until",
          "[lockfree_queue][stress]") {
    // A consumer races poll_until's deadline against one offer per round,
    // aimed at that deadline. An offer that returned before the deadline must
    // be taken: poll_until may time out only if the task came after it.
    crew::lockfree_queue<4> q;
    const int n = rounds(1500);
    std::atomic<steady::time_point> round_start{};
    std::barrier sync_point(2, [&]() noexcept { round_start = steady::now(); });
    std::atomic<steady::time_point> offer_returned{};
    std::atomic<int> ran{0};

    struct outcome {
        int taken = 0;
        int timed_out = 0;
        int lost_to_time_out = 0;
        int leftovers = 0;
    };
    auto consumer = run_async([&] {
        std::minstd_rand rng(7);
        const crew::interrupt_flag never{false};
        outcome o;
        for (int i = 0; i < n; ++i) {
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
                if (offer_returned.load() < deadline) ++o.lost_to_time_out;
            }
            crew::task left;
            while (q.poll(left)) {
                left();
                ++o.leftovers;
            }
        }
        return o;
    });
    auto producer = run_async([&] {
        std::minstd_rand rng(8);
        for (int i = 0; i < n; ++i) {
            sync_point.arrive_and_wait();
            const auto aim = round_start.load() + std::chrono::microseconds(rng() % 100);
            while (steady::now() < aim) {
            }
            const bool accepted = q.offer(crew::task([&ran] { ++ran; }));
            offer_returned = accepted ? steady::now() : steady::time_point::max();
            sync_point.arrive_and_wait();
        }
    });

    REQUIRE(ready_in_time(producer));
    producer.get();
    REQUIRE(ready_in_time(consumer));
    const outcome o = consumer.get();
    CAPTURE(o.taken, o.timed_out, o.leftovers);
    REQUIRE(o.lost_to_time_out == 0);
    REQUIRE(ran == o.taken + o.leftovers);
    REQUIRE(ran == n);
}
