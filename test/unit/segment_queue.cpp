// Unit tests for crew::detail::segment_queue (crew/detail/queue/segment_queue.hpp),
// the FIFO engine of unbounded_queue, bounded_queue and grow_first_queue:
// linked Vyukov rings, recycled. On tiny segments, so that every test
// crosses segment boundaries many times; test/unit/linearizability.cpp runs
// the checker's random rounds on it too.
//
// Mutations these tests were checked against (by editing a copy of the
// header):
// - offer() taking no permit (a bounded queue takes any task): "concurrent
//   offers never hold more than the capacity", "put waits for room" and
//   "remove_if frees room" fail at once;
// - a consumer retiring a closed segment without checking that it is
//   drained (its tail position against its head): "producers and consumers
//   lose and repeat nothing" loses tasks;
// - pop() returning "none" without re-reading the head word (the fuzzer's
//   finding): "a consumer does not trust a drained segment reused under
//   it" fails at once; the random lincheck rounds did not catch it in
//   180,000 rounds.

#include <crew/detail/queue/segment_queue.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <catch2/catch.hpp>

#include "support.hpp"
#include "../common/seams.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <future>
#include <latch>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace crew_unit_test;
using crew_test_common::eventually;

namespace {

constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();
using crew::detail::segment_queue;

crew::task recording(std::vector<int>& log, int value) {
    return crew::task([&log, value] { log.push_back(value); });
}

// Polls everything, running each task.
void poll_all(segment_queue& q) {
    crew::task t;
    while (q.poll(t)) {
        t();
        t.reset();
    }
}

// One poll: the task taken, or none.
std::optional<crew::task> poll_one(segment_queue& q) {
    crew::task t;
    if (!q.poll(t)) return std::nullopt;
    return t;
}

} // namespace

TEST_CASE("segment_queue: one producer's order survives crossing segments", "[segment_queue]") {
    for (std::size_t cells : {1u, 2u, 3u, 8u}) {
        CAPTURE(cells);
        segment_queue q(unbounded, cells);
        const int items = static_cast<int>(200000 / time_factor());
        std::vector<int> log;
        log.reserve(static_cast<std::size_t>(items));
        std::atomic<int> refused{0};
        std::thread producer([&] {
            for (int i = 0; i < items; ++i)
                if (!q.offer(recording(log, i))) refused.fetch_add(1);
        });
        const crew::interrupt_flag never{false};
        for (int taken = 0; taken < items; ++taken) {
            crew::task t;
            REQUIRE(q.take(t, never) == crew::wait_status::taken);
            t();
        }
        producer.join();
        REQUIRE(refused.load() == 0);
        bool in_order = true;
        for (int i = 0; i < items; ++i) in_order = in_order && log[static_cast<std::size_t>(i)] == i;
        REQUIRE(in_order);
        REQUIRE(q.size() == 0);
    }
}

TEST_CASE("segment_queue: a backlog across many segments comes out in order", "[segment_queue]") {
    segment_queue q(unbounded, 3);
    std::vector<int> log;
    for (int i = 0; i < 100; ++i) REQUIRE(q.offer(recording(log, i)));
    REQUIRE(q.size() == 100);
    REQUIRE(q.segment_count() >= 100 / 3);
    poll_all(q);
    REQUIRE(log == iota_vector(100));
    REQUIRE(q.size() == 0);
}

TEST_CASE("segment_queue: producers and consumers lose and repeat nothing", "[segment_queue]") {
    for (std::size_t cells : {1u, 2u, 64u}) {
        CAPTURE(cells);
        segment_queue q(unbounded, cells);
        // Fewer tasks on one- and two-cell segments (a link every task or
        // two): under oversubscription a link's window is yielded through,
        // and b2's run of this test beside two compilers once took > 30 s.
        const int per_producer = static_cast<int>((cells <= 2 ? 20000 : 50000) / time_factor());
        constexpr int producers = 3;
        std::vector<std::atomic<int>> runs(static_cast<std::size_t>(producers * per_producer));
        std::atomic<int> taken{0};
        crew::interrupt_flag stop{false};
        std::vector<std::thread> consumers;
        for (int c = 0; c < 3; ++c)
            consumers.emplace_back([&, c] {
                for (;;) {
                    crew::task t;
                    const auto status = c == 0 ? q.poll_until(t, steady::now() + 50us, stop) : q.take(t, stop);
                    if (status == crew::wait_status::taken) {
                        t();
                        taken.fetch_add(1);
                    } else if (status == crew::wait_status::interrupted) {
                        return;
                    }
                }
            });
        std::atomic<int> refused{0};
        std::vector<std::thread> threads;
        for (int p = 0; p < producers; ++p)
            threads.emplace_back([&, p] {
                for (int i = 0; i < per_producer; ++i) {
                    const auto id = static_cast<std::size_t>(p * per_producer + i);
                    if (!q.offer(crew::task([&runs, id] { runs[id].fetch_add(1); }))) refused.fetch_add(1);
                }
            });
        for (auto& t : threads) t.join();
        const bool all_taken = eventually([&] { return taken.load() == producers * per_producer; }, 120s);
        stop.store(true);
        q.wake_consumers();
        for (auto& t : consumers) t.join();
        REQUIRE(refused.load() == 0);
        REQUIRE(all_taken);
        int wrong = 0;
        for (auto& r : runs) wrong += r.load() == 1 ? 0 : 1;
        REQUIRE(wrong == 0);
        REQUIRE(q.size() == 0);
    }
}

TEST_CASE("segment_queue: each producer's order holds under several consumers", "[segment_queue]") {
    // Two producers, two consumers, one-cell segments (a link for every
    // task); each consumer checks that the ids of one producer it takes rise.
    segment_queue q(unbounded, 1);
    const int per_producer = static_cast<int>(30000 / time_factor());
    std::atomic<int> taken{0};
    std::atomic<int> inversions{0};
    crew::interrupt_flag stop{false};
    std::vector<std::thread> consumers;
    for (int c = 0; c < 2; ++c)
        consumers.emplace_back([&] {
            int last[2] = {-1, -1};
            for (;;) {
                crew::task t;
                const auto status = q.take(t, stop);
                if (status == crew::wait_status::interrupted) return;
                // The id is carried in queued_at (the queue never looks at it).
                const auto id = static_cast<int>(t.queued_at().time_since_epoch().count());
                const int p = id / 1'000'000;
                const int s = id % 1'000'000;
                if (s <= last[p]) inversions.fetch_add(1);
                last[p] = s;
                taken.fetch_add(1);
            }
        });
    struct tagged {
        int id;
        void operator()() const noexcept {}
        steady::time_point queued_at() const noexcept { return steady::time_point(steady::duration(id)); }
    };
    std::vector<std::thread> producers;
    for (int p = 0; p < 2; ++p)
        producers.emplace_back([&, p] {
            for (int i = 0; i < per_producer; ++i) (void)q.offer(crew::task(tagged{p * 1'000'000 + i}));
        });
    for (auto& t : producers) t.join();
    const bool all_taken = eventually([&] { return taken.load() == 2 * per_producer; }, 30s);
    stop.store(true);
    q.wake_consumers();
    for (auto& t : consumers) t.join();
    REQUIRE(all_taken);
    REQUIRE(inversions.load() == 0);
}

TEST_CASE("segment_queue: capacity is exact across segments", "[segment_queue]") {
    for (std::size_t cells : {1u, 2u, 3u, 8u}) {
        CAPTURE(cells);
        constexpr std::size_t capacity = 5;
        segment_queue q(capacity, cells);
        std::vector<int> log;
        for (int round = 0; round < 20; ++round) {
            // Fill to the brim: exactly `capacity` offers succeed.
            int accepted = 0;
            while (accepted < 100 && q.offer(recording(log, accepted))) ++accepted; // bounded: a broken queue takes all
            REQUIRE(accepted == static_cast<int>(round == 0 ? capacity : capacity - 2));
            REQUIRE(q.size() == capacity);
            // Take three, so that two stay; the next round fills three.
            crew::task t;
            for (int i = 0; i < 3; ++i) REQUIRE(q.poll(t));
            REQUIRE(q.size() == 2);
        }
    }
}

TEST_CASE("segment_queue: concurrent offers never hold more than the capacity", "[segment_queue]") {
    // Tasks count themselves in while queued: incremented before the offer
    // (undone if refused), decremented when taken. The count may overshoot
    // only by offers in flight and the one task the consumer has taken and
    // not yet counted out: capacity + producers + 1.
    constexpr std::size_t capacity = 3;
    constexpr int producers = 3;
    segment_queue q(capacity, 2);
    const int per_producer = static_cast<int>(20000 / time_factor());
    std::atomic<int> inside{0};
    std::atomic<int> worst{0};
    std::atomic<int> accepted{0};
    std::atomic<bool> done{false};
    std::thread consumer([&] {
        crew::task t;
        while (!done.load() || q.size() != 0)
            if (q.poll(t)) {
                inside.fetch_sub(1);
                t.reset();
            }
    });
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&] {
            for (int i = 0; i < per_producer; ++i) {
                const int now = inside.fetch_add(1) + 1;
                int w = worst.load();
                while (now > w && !worst.compare_exchange_weak(w, now)) {
                }
                if (q.offer(crew::task([] {}))) accepted.fetch_add(1);
                else inside.fetch_sub(1);
            }
        });
    for (auto& t : threads) t.join();
    done.store(true);
    consumer.join();
    REQUIRE(worst.load() <= static_cast<int>(capacity) + producers + 1);
    REQUIRE(q.size() == 0);
    REQUIRE(inside.load() == 0);
    REQUIRE(accepted.load() > 0);
}

TEST_CASE("segment_queue: put waits for room and close frees it", "[segment_queue]") {
    segment_queue q(2, 1);
    std::vector<int> log;
    REQUIRE(q.offer(recording(log, 0)));
    REQUIRE(q.offer(recording(log, 1)));
    REQUIRE_FALSE(q.offer(recording(log, 9)));
    blocking_call put([&] { return q.put(recording(log, 2)); });
    put.give_a_chance_to_return();
    REQUIRE_FALSE(put.returned());
    crew::task t;
    put.unblocking();
    REQUIRE(q.poll(t));
    t();
    REQUIRE(put.returns_in_time());
    REQUIRE(put.get());
    blocking_call refused([&] { return q.put(recording(log, 3)); });
    refused.give_a_chance_to_return();
    REQUIRE_FALSE(refused.returned());
    refused.unblocking();
    q.close();
    REQUIRE(refused.returns_in_time());
    REQUIRE_FALSE(refused.get());
    poll_all(q); // queued tasks still come out after close
    REQUIRE(log == std::vector<int>{0, 1, 2});
}

TEST_CASE("segment_queue: every offer accepted before close() is drained after it", "[segment_queue]") {
    // 500 rounds: each starts two threads, and close() may wait for a
    // producer the OS has descheduled (54 s for 2000 on a loaded 2-CPU
    // machine). The windows themselves are reached on purpose by the seam
    // tests below.
    const int rounds = static_cast<int>(500 / time_factor());
    for (int round = 0; round < rounds; ++round) {
        segment_queue q(round % 2 == 0 ? unbounded : std::size_t{64}, 2);
        std::atomic<int> accepted{0};
        std::atomic<bool> closed{false};
        std::vector<std::thread> producers;
        for (int p = 0; p < 2; ++p)
            producers.emplace_back([&] {
                while (!closed.load())
                    if (q.offer(crew::task([] {}))) accepted.fetch_add(1);
            });
        while (accepted.load() < round % 16) std::this_thread::yield();
        q.close();
        const std::size_t drained = q.drain().size();
        closed.store(true);
        for (auto& t : producers) t.join();
        REQUIRE(drained == static_cast<std::size_t>(accepted.load()));
        REQUIRE_FALSE(q.offer(crew::task([] {})));
        REQUIRE(q.size() == 0);
    }
}

// close() waits for a push that claimed its cell before it, and consumers
// take the task afterwards.
TEST_CASE("segment_queue: close waits for a push that claimed its cell before it", "[segment_queue]") {
    segment_queue q(unbounded, 2);
    std::vector<int> log;
    REQUIRE(q.offer(recording(log, 0)));
    crew_test_common::seam_gate claimed(crew_test_common::seam::ring_claimed,
                                        crew_test_common::seam_gate::this_thread_only);
    auto pusher = std::async(std::launch::async, [&] {
        crew_test_common::seam_gate::arm_this_thread();
        return q.offer(recording(log, 1));
    });
    std::future<void> closer;
    scope_guard let_go([&] { claimed.release(); }); // before the futures are joined
    REQUIRE(claimed.wait_caught());
    std::atomic<bool> closed{false};
    closer = std::async(std::launch::async, [&] {
        q.close();
        closed.store(true);
    });
    give_a_chance([&] { return closed.load(); });
    REQUIRE_FALSE(closed.load());
    claimed.release();
    REQUIRE(closer.wait_for(generous()) == std::future_status::ready);
    REQUIRE(pusher.get());
    REQUIRE_FALSE(q.offer(recording(log, 2)));
    poll_all(q);
    REQUIRE(log == std::vector<int>{0, 1});
}

TEST_CASE("segment_queue: drain and extract_if keep order, survivors ahead of later offers", "[segment_queue]") {
    segment_queue q(unbounded, 2);
    std::vector<int> log;
    for (int i = 0; i < 9; ++i) REQUIRE(q.offer(recording(log, i)));
    int asked = 0;
    std::vector<crew::task> removed = q.extract_if([&](const crew::task&) { return asked++ % 2 == 1; });
    REQUIRE(removed.size() == 4);
    for (crew::task& t : removed) t();
    REQUIRE(log == std::vector<int>{1, 3, 5, 7});
    log.clear();
    REQUIRE(q.size() == 5);
    for (int i = 100; i < 103; ++i) REQUIRE(q.offer(recording(log, i)));
    poll_all(q);
    REQUIRE(log == std::vector<int>{0, 2, 4, 6, 8, 100, 101, 102});
    log.clear();

    for (int i = 0; i < 7; ++i) REQUIRE(q.offer(recording(log, i)));
    std::vector<crew::task> all = q.drain();
    REQUIRE(all.size() == 7);
    REQUIRE(q.size() == 0);
    crew::task none;
    REQUIRE_FALSE(q.poll(none));
    REQUIRE(q.offer(recording(log, 50)));
    for (crew::task& t : all) t();
    poll_all(q);
    REQUIRE(log == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 50});
}

// remove_if puts its survivors back at the tail, linking segments as it
// goes: after close(), those segments are closed too (the checker found a
// maintenance that linked an open one, and offers got in after close).
TEST_CASE("segment_queue: remove_if after close() keeps the queue closed", "[segment_queue]") {
    segment_queue q(unbounded, 1);
    std::vector<int> log;
    for (int i = 0; i < 5; ++i) REQUIRE(q.offer(recording(log, i)));
    q.close();
    REQUIRE(q.remove_if([](const crew::task&) { return false; }) == 0);
    REQUIRE_FALSE(q.offer(recording(log, 99)));
    REQUIRE(q.drain().size() == 5);
    REQUIRE_FALSE(q.offer(recording(log, 99)));
}

TEST_CASE("segment_queue: a throwing predicate leaves every task queued in order", "[segment_queue]") {
    for (std::size_t cells : {1u, 2u, 4u}) {
        CAPTURE(cells);
        segment_queue q(unbounded, cells);
        std::vector<int> log;
        for (int i = 0; i < 10; ++i) REQUIRE(q.offer(recording(log, i)));
        int asked = 0;
        REQUIRE_THROWS_AS(q.remove_if([&](const crew::task&) -> bool {
            if (++asked == 6) throw std::runtime_error("predicate");
            return true;
        }),
                          std::runtime_error);
        REQUIRE(q.size() == 10);
        REQUIRE(q.offer(recording(log, 10)));
        poll_all(q);
        REQUIRE(log == iota_vector(11));
    }
}

TEST_CASE("segment_queue: size() counts the tasks remove_if is sorting", "[segment_queue]") {
    for (int queued : {1, 3, 4, 9}) {
        CAPTURE(queued);
        segment_queue q(unbounded, 4);
        for (int i = 0; i < queued; ++i) REQUIRE(q.offer(crew::task([] {})));
        REQUIRE(q.size() == static_cast<std::size_t>(queued));
        std::size_t least_seen = unbounded;
        int asked = 0;
        const std::size_t removed = q.remove_if([&](const crew::task&) {
            least_seen = std::min(least_seen, q.size());
            return ++asked % 2 == 0;
        });
        REQUIRE(least_seen >= static_cast<std::size_t>(queued));
        REQUIRE(removed == static_cast<std::size_t>(queued / 2));
        REQUIRE(q.size() == static_cast<std::size_t>(queued - queued / 2));
    }
}

TEST_CASE("segment_queue: remove_if frees room in a bounded queue", "[segment_queue]") {
    segment_queue q(4, 2);
    for (int i = 0; i < 4; ++i) REQUIRE(q.offer(crew::task([] {})));
    REQUIRE_FALSE(q.offer(crew::task([] {})));
    int asked = 0;
    REQUIRE(q.remove_if([&](const crew::task&) { return asked++ < 3; }) == 3);
    for (int i = 0; i < 3; ++i) REQUIRE(q.offer(crew::task([] {})));
    REQUIRE_FALSE(q.offer(crew::task([] {})));
    REQUIRE(q.drain().size() == 4);
    for (int i = 0; i < 4; ++i) REQUIRE(q.offer(crew::task([] {})));
}

// Steady state allocates nothing: segments retired by consumers are reused.
TEST_CASE("segment_queue: segments are recycled, the steady state allocates none", "[segment_queue]") {
    SECTION("one thread, a backlog of ten segments again and again") {
        segment_queue q(unbounded, 4);
        std::vector<int> log;
        for (int i = 0; i < 40; ++i) REQUIRE(q.offer(recording(log, i)));
        poll_all(q);
        const std::size_t warm = q.segment_count();
        REQUIRE(warm >= 10);
        for (int cycle = 0; cycle < 1000; ++cycle) {
            for (int i = 0; i < 40; ++i) REQUIRE(q.offer(crew::task([] {})));
            crew::task t;
            for (int i = 0; i < 40; ++i) REQUIRE(q.poll(t));
            REQUIRE_FALSE(q.poll(t));
        }
        REQUIRE(q.segment_count() == warm);
        // Maintenance reuses the segments it empties.
        for (int cycle = 0; cycle < 100; ++cycle) {
            for (int i = 0; i < 40; ++i) REQUIRE(q.offer(crew::task([] {})));
            int asked = 0;
            REQUIRE(q.remove_if([&](const crew::task&) { return asked++ % 2 == 0; }) == 20);
            REQUIRE(q.drain().size() == 20);
        }
        REQUIRE(q.segment_count() == warm);
    }
    SECTION("a producer and a consumer, the backlog within one segment") {
        segment_queue q(unbounded, 64);
        const int items = static_cast<int>(200000 / time_factor());
        std::atomic<int> in_flight{0};
        std::thread producer([&] {
            for (int i = 0; i < items; ++i) {
                while (in_flight.load() >= 32) std::this_thread::yield(); // at most half a segment queued
                in_flight.fetch_add(1);
                (void)q.offer(crew::task([] {}));
            }
        });
        crew::task t;
        for (int taken = 0; taken < items;)
            if (q.poll(t)) {
                in_flight.fetch_sub(1);
                ++taken;
            }
        producer.join();
        // A segment closes early only when its next cell is still taken a
        // lap later; with at most half a segment queued, never: one segment.
        REQUIRE(q.segment_count() == 1);
    }
}

TEST_CASE("segment_queue: the destructor destroys the tasks still queued", "[segment_queue]") {
    auto alive = std::make_shared<int>(0);
    {
        segment_queue q(unbounded, 2);
        for (int i = 0; i < 7; ++i) REQUIRE(q.offer(crew::task([alive] {})));
        crew::task t;
        REQUIRE(q.poll(t));
        REQUIRE(alive.use_count() == 8);
    }
    REQUIRE(alive.use_count() == 1);
}

TEST_CASE("segment_queue: a blocking take is woken by an offer", "[segment_queue]") {
    segment_queue q(unbounded, 2);
    const crew::interrupt_flag never{false};
    std::vector<int> log;
    blocking_call taker([&] {
        crew::task t;
        const auto status = q.take(t, never);
        if (status == crew::wait_status::taken) t();
        return status;
    });
    taker.give_a_chance_to_return();
    REQUIRE_FALSE(taker.returned());
    taker.unblocking();
    REQUIRE(q.offer(recording(log, 7)));
    REQUIRE(taker.returns_in_time());
    REQUIRE(taker.get() == crew::wait_status::taken);
    REQUIRE(log == std::vector<int>{7});
}

// A producer stopped while it links a new segment: the queue's tasks so far
// are taken, a poll then finds nothing (nothing is claimed past the close),
// another producer waits for the link, and all comes out in order.
TEST_CASE("segment_queue: a linker stopped between close and link holds up only producers", "[segment_queue]") {
    segment_queue q(unbounded, 2);
    std::vector<int> log;
    REQUIRE(q.offer(recording(log, 0)));
    REQUIRE(q.offer(recording(log, 1))); // the first segment is full
    crew_test_common::seam_gate linking(crew_test_common::seam::segment_linking);
    auto linker = std::async(std::launch::async, [&] { return q.offer(recording(log, 2)); });
    scope_guard let_go([&] { linking.release(); });
    REQUIRE(linking.wait_caught());
    crew::task t;
    REQUIRE(q.poll(t));
    t();
    REQUIRE(q.poll(t));
    t();
    REQUIRE_FALSE(q.poll(t));
    auto second = std::async(std::launch::async, [&] { return q.offer(recording(log, 3)); });
    REQUIRE(second.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
    linking.release();
    REQUIRE(linker.wait_for(generous()) == std::future_status::ready);
    REQUIRE(second.wait_for(generous()) == std::future_status::ready);
    REQUIRE(linker.get());
    REQUIRE(second.get());
    poll_all(q);
    REQUIRE(log.size() == 4);
    REQUIRE(log[0] == 0);
    REQUIRE(log[1] == 1);
    REQUIRE(q.segment_count() == 2);
}

// A consumer that found the first segment closed and drained, stopped
// before it holds the head; meanwhile a remove_if empties that segment and
// frees it, and a linker reuses it (its successor reset). The consumer must
// not act on what it read of the old lap and say "empty" while tasks are
// queued (the fuzzer's finding, when the consumer still read the successor
// after the tail and found the reuse's "no successor"; the head word, read
// again or compared by the hold, tells).
TEST_CASE("segment_queue: a consumer does not trust a drained segment reused under it", "[segment_queue]") {
    segment_queue q(unbounded, 2);
    std::vector<int> log;
    for (int i = 0; i < 3; ++i) REQUIRE(q.offer(recording(log, i))); // 0 1 | 2
    crew::task t;
    REQUIRE(q.poll(t)); // 0
    REQUIRE(q.poll(t)); // 1: the first segment closed and drained, a successor linked
    crew_test_common::seam_gate gate(crew_test_common::seam::segment_drained,
                                     crew_test_common::seam_gate::this_thread_only);
    auto consumer = std::async(std::launch::async, [&] {
        crew_test_common::seam_gate::arm_this_thread();
        crew::task out;
        return q.poll(out) ? 1 : 0;
    });
    scope_guard let_go([&] { gate.release(); });
    REQUIRE(gate.wait_caught());
    REQUIRE(q.remove_if([](const crew::task&) { return false; }) == 0); // frees the drained segment
    REQUIRE(q.offer(recording(log, 4)));
    REQUIRE(q.offer(recording(log, 5))); // links the freed segment again
    REQUIRE(q.segment_count() == 2);
    gate.release();
    REQUIRE(consumer.wait_for(generous()) == std::future_status::ready);
    REQUIRE(consumer.get() == 1); // task 2 was queued all along
    REQUIRE(q.size() == 2);
}

// A segment is linked before it opens, with the closed bit it was set up
// with. A consumer that reaches it then (its predecessor retired) must not
// take that bit for "closed and drained": if it did, and were stopped before
// it reads the successor while the segment is opened, filled and closed for
// good, it would retire the segment with a task in it. One-cell segments;
// the linker is held between linking and opening. (Against the consumer that
// read the tail before the successor, task 1 was lost: the stress test
// "each producer's order holds under several consumers" lost one task in a
// few hundred runs on a loaded machine.)
TEST_CASE("segment_queue: a consumer does not retire a segment that was not yet open", "[segment_queue]") {
    segment_queue q(unbounded, 1);
    std::vector<int> log;
    REQUIRE(q.offer(recording(log, 0)));
    crew_test_common::seam_gate gate(crew_test_common::seam::segment_linked, crew_test_common::seam::segment_drained,
                                     crew_test_common::seam_gate::this_thread_only);
    scope_guard let_go([&] { gate.release(); });
    auto linker = std::async(std::launch::async, [&] {
        crew_test_common::seam_gate::arm_this_thread();
        return q.offer(recording(log, 1)); // the cell is taken still: closes, links, stops before opening
    });
    REQUIRE(gate.wait_caught_at(crew_test_common::seam::segment_linked));
    crew::task t;
    REQUIRE(q.poll(t)); // task 0
    t();
    REQUIRE_FALSE(q.poll(t)); // retires the first segment; the second is reached, not yet open: empty
    auto consumer = std::async(std::launch::async, [&] {
        crew_test_common::seam_gate::arm_this_thread();
        return poll_one(q);
    });
    // The consumer either stops at the seam (it took the set-up bit for a
    // close) or answers "empty" at once.
    REQUIRE(eventually([&] {
        return gate.caught() == 2 || consumer.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    }));
    gate.release(crew_test_common::seam::segment_linked); // opens the segment and fills it: task 1
    REQUIRE(linker.wait_for(generous()) == std::future_status::ready);
    REQUIRE(linker.get());
    REQUIRE(q.offer(recording(log, 2))); // closes it for good and links a third: task 2
    gate.release(crew_test_common::seam::segment_drained);
    REQUIRE(consumer.wait_for(generous()) == std::future_status::ready);
    if (auto taken = consumer.get()) (*taken)();
    poll_all(q);
    REQUIRE(log == std::vector<int>{0, 1, 2});
}

// A consumer that took a wake-up in flight passes it on if tasks remain,
// and a retirement holding the head at that moment is not "none". Two
// consumers park; three tasks come in three one-cell segments. The first
// publish wakes one consumer, held before it withdraws so that the other
// two publishes find that wake-up in flight (and, young, wake nobody). It
// takes the first task, and is held again with the cell claimed; a third
// consumer, poll(), finds the first segment drained and holds its head to
// retire it, held there. The first consumer's pass_on then runs during the
// retirement. Against the pass_on that read "0 queued" there, the second
// consumer slept with the third task queued (when the second and third
// publishes were quick enough to find the wake-up young, which is the rule:
// 50 µs); here every task runs.
TEST_CASE("segment_queue: a take during a retirement passes its wake-up on", "[segment_queue]") {
    segment_queue q(unbounded, 1);
    const crew::interrupt_flag never{false};
    std::atomic<int> ran{0};
    const auto take_one = [&] {
        crew::task t;
        const crew::wait_status status = q.take(t, never);
        if (status == crew::wait_status::taken) t();
        return status;
    };
    auto first = std::async(std::launch::async, take_one);
    auto second = std::async(std::launch::async, take_one);
    REQUIRE(eventually([&] { return q.parked_consumers() == 2; }));
    crew_test_common::seam_gate gate(crew_test_common::seam::consumer_woken, crew_test_common::seam::ring_pop_claimed,
                                     crew_test_common::seam::segment_retiring);
    scope_guard let_go([&] { gate.release(); });
    for (int i = 0; i < 3; ++i) REQUIRE(q.offer(crew::task([&ran] { ran.fetch_add(1); })));
    REQUIRE(gate.wait_caught_at(crew_test_common::seam::consumer_woken));
    gate.release(crew_test_common::seam::consumer_woken); // it withdraws and claims the first task
    REQUIRE(gate.wait_caught_at(crew_test_common::seam::ring_pop_claimed));
    auto retirer = std::async(std::launch::async, [&] { return poll_one(q); });
    REQUIRE(gate.wait_caught_at(crew_test_common::seam::segment_retiring));
    gate.release(crew_test_common::seam::ring_pop_claimed); // takes the first task, passes on, runs it
    REQUIRE(eventually([&] { return ran.load() >= 1; }));
    gate.release(crew_test_common::seam::segment_retiring);
    REQUIRE(retirer.wait_for(generous()) == std::future_status::ready);
    if (auto taken = retirer.get()) (*taken)();
    REQUIRE(first.wait_for(generous()) == std::future_status::ready);
    REQUIRE(second.wait_for(generous()) == std::future_status::ready);
    REQUIRE(first.get() == crew::wait_status::taken);
    REQUIRE(second.get() == crew::wait_status::taken);
    REQUIRE(ran.load() == 3);
    REQUIRE(q.size() == 0);
}

// Tasks published behind a cell whose producer is slow to
// fill it each find a consumer once it publishes.
TEST_CASE("segment_queue: a publish behind which tasks waited wakes a consumer for each", "[segment_queue]") {
    segment_queue q(unbounded, 8);
    constexpr int consumers = 3;
    const crew::interrupt_flag never{false};
    std::latch each_took_one(consumers);
    std::latch done(1);
    std::vector<std::future<crew::wait_status>> taking;
    for (int i = 0; i < consumers; ++i)
        taking.push_back(std::async(std::launch::async, [&] {
            crew::task t;
            const crew::wait_status status = q.take(t, never);
            each_took_one.count_down();
            done.wait();
            return status;
        }));
    give_a_chance([] { return false; });

    crew_test_common::seam_gate slow(crew_test_common::seam::ring_claimed, crew_test_common::seam_gate::this_thread_only);
    auto slow_producer = std::async(std::launch::async, [&] {
        crew_test_common::seam_gate::arm_this_thread();
        return q.offer(crew::task([] {}));
    });
    REQUIRE(slow.wait_caught());
    for (int i = 0; i < consumers; ++i) REQUIRE(q.offer(crew::task([] {})));
    give_a_chance([] { return false; });
    slow.release();
    REQUIRE(slow_producer.get());
    const bool all_woke = each_took_one.try_wait() || [&] {
        const auto deadline = steady::now() + generous();
        while (!each_took_one.try_wait() && steady::now() < deadline) std::this_thread::yield();
        return each_took_one.try_wait();
    }();
    done.count_down();
    if (!all_woke)
        for (int i = 0; i < consumers; ++i) (void)q.offer(crew::task([] {}));
    REQUIRE(all_woke);
    for (auto& f : taking) REQUIRE(f.get() == crew::wait_status::taken);
    crew::task left;
    REQUIRE(q.poll(left));
}
