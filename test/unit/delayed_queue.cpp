// Unit tests for crew::delayed_queue alone: heap order, removal by slot,
// the shutdown policies, and leader-follower waiting; and for its heap,
// crew::detail::delay_heap, without the queue.
//
// Threads synchronise on latches and futures; sleeps never stand in for a
// happens-before edge. Timing is asserted only where it is the behaviour: a
// task is never taken before its due time (hard lower bound), and a wake-up
// that should come does (generous upper bound, scaled by
// CREW_TEST_TIME_FACTOR for sanitizer builds).

#include <crew/detail/queue/delay_heap.hpp>
#include <crew/policies/delayed_queue.hpp>
#include <crew/policies/queue.hpp>

#include <catch2/catch.hpp>

#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using crew::wait_status;
using steady = std::chrono::steady_clock;
using crew::schedule_slot;

namespace {

using crew_test_common::eventually;
using crew_unit_test::logged;
using crew_unit_test::scaled;
using crew_unit_test::take_and_run;

// A delayed queue, the log its tasks write their ids into, and an interrupt
// flag that stays clear.
struct delayed_queue_test {
    std::vector<int> ran;
    crew::delayed_queue q;
    const crew::interrupt_flag never{false};

    explicit delayed_queue_test(const crew::pool_options& options = {}) : q(options) {}

    // Schedules a one-shot task that logs `id`, due at `due`.
    bool schedule(int id, steady::time_point due, schedule_slot* slot = nullptr) {
        return q.schedule(logged(ran, id), due, slot, false);
    }
};

// A task that knows whether it was cancelled, standing in for a future's
// task (the queue asks crew::task::is_cancelled()).
struct cancellable {
    std::shared_ptr<std::atomic<bool>> cancelled;
    std::exception_ptr run_and_report(bool) { return {}; }
    void abandon(std::exception_ptr, bool) noexcept {}
    bool is_cancelled() const noexcept { return cancelled->load(); }
    void operator()() {}
};

} // namespace

TEST_CASE("delayed_queue models queue_policy and scheduling_queue_policy", "[delayed]") {
    STATIC_REQUIRE(crew::queue_policy<crew::delayed_queue>);
    STATIC_REQUIRE(crew::scheduling_queue_policy<crew::delayed_queue>);
    STATIC_REQUIRE_FALSE(crew::scheduling_queue_policy<crew::unbounded_queue>);
    crew::delayed_queue q;
    CHECK(q.capacity() == std::numeric_limits<std::size_t>::max());
}

TEST_CASE_METHOD(delayed_queue_test, "delayed_queue hands out due tasks earliest first and FIFO among equal due times",
                 "[delayed]") {
    const auto base = steady::now() - 1s; // all due already
    REQUIRE(schedule(3, base + 30ms));
    REQUIRE(schedule(1, base + 10ms));
    REQUIRE(schedule(20, base + 20ms));
    REQUIRE(schedule(21, base + 20ms));
    REQUIRE(schedule(22, base + 20ms));
    REQUIRE(q.offer(logged(ran, 4))); // due now: after every past one
    CHECK(q.size() == 6);
    for (crew::task t; q.poll(t);) t();
    CHECK(ran == std::vector<int>{1, 20, 21, 22, 3, 4});
    CHECK(q.size() == 0);
}

TEST_CASE_METHOD(delayed_queue_test, "delayed_queue poll never returns a task before its due time",
                 "[delayed][timing]") {
    const auto due = steady::now() + 100ms;
    REQUIRE(schedule(1, due));
    crew::task t;
    while (!q.poll(t)) {
        REQUIRE(steady::now() < due + scaled(10s));
        std::this_thread::yield();
    }
    CHECK(steady::now() >= due);
    CHECK(q.next_due() == steady::time_point::max());
}

TEST_CASE_METHOD(delayed_queue_test, "delayed_queue take waits until the head is due, never less",
                 "[delayed][timing]") {
    const auto due = steady::now() + 80ms;
    REQUIRE(schedule(1, due));
    crew::task t;
    REQUIRE(q.take(t, never) == wait_status::taken);
    const auto taken_at = steady::now();
    CHECK(taken_at >= due);
    CHECK(taken_at < due + scaled(5s));
    t();
    CHECK(ran == std::vector<int>{1});
}

TEST_CASE_METHOD(delayed_queue_test, "delayed_queue poll_until times out at its deadline while the head is due later",
                 "[delayed][timing]") {
    REQUIRE(schedule(1, steady::now() + 1h));
    const auto deadline = steady::now() + 50ms;
    crew::task t;
    CHECK(q.poll_until(t, deadline, never) == wait_status::timed_out);
    CHECK(steady::now() >= deadline);
    CHECK_FALSE(t);
    CHECK(q.size() == 1);
}

TEST_CASE_METHOD(delayed_queue_test, "a task due at time_point::max() neither wraps nor holds back a task due now",
                 "[delayed][time]") {
    REQUIRE(schedule(1, steady::time_point::max()));
    REQUIRE(schedule(2, steady::time_point::min())); // clamped: due now
    crew::task t;
    REQUIRE(q.poll_until(t, steady::now() + scaled(5s), never) == wait_status::taken);
    t();
    CHECK(ran == std::vector<int>{2});
    CHECK_FALSE(q.poll(t));
    CHECK(q.next_due() == steady::time_point::max());
}

TEST_CASE_METHOD(delayed_queue_test, "a new earlier head wakes the leader, which then takes it on time",
                 "[delayed][leader]") {
    REQUIRE(schedule(1, steady::now() + 1h));
    auto taker = std::async(std::launch::async, [&] { return take_and_run(q, never); });
    REQUIRE(eventually([&] { return q.wait_statistics().has_leader; }));
    const auto due = steady::now() + 50ms;
    REQUIRE(schedule(2, due));
    REQUIRE(taker.wait_for(scaled(10s)) == std::future_status::ready);
    CHECK(taker.get() == wait_status::taken);
    CHECK(steady::now() >= due);
    CHECK(ran == std::vector<int>{2});
}

// With 8 idle threads, one task due later runs once, not before its due
// time. How many timers it armed and how many threads woke (one leader, 2-3
// wake-ups; a broadcast design shows 8 of each) depends on how the OS
// schedules the threads (a leader descheduled past the due time arms none, a
// spurious wake-up adds one), so it is measured, not asserted:
// bench/leader_wakeups (one_due) reports both for this same case.
TEST_CASE("with 8 idle threads, one task due later runs once at its due time", "[delayed][leader]") {
    crew::delayed_queue q;
    constexpr int threads = 8;
    crew::interrupt_flag stop{false};
    std::atomic<int> taken{0};
    std::promise<crew::delayed_queue::wait_statistics_type> at_run;
    std::vector<std::thread> consumers;
    for (int i = 0; i < threads; ++i)
        consumers.emplace_back([&] {
            for (;;) {
                crew::task t;
                if (q.take(t, stop) != wait_status::taken) return;
                t();
                taken.fetch_add(1);
            }
        });
    REQUIRE(eventually([&] { return q.wait_statistics().waiting == threads; }));
    const auto before = q.wait_statistics();
    const auto due = steady::now() + 300ms;
    std::atomic<steady::time_point> ran_at{};
    REQUIRE(q.schedule(crew::task([&] {
                           ran_at = steady::now();
                           at_run.set_value(q.wait_statistics());
                       }),
                       due, nullptr, false));
    auto stats_future = at_run.get_future();
    REQUIRE(stats_future.wait_for(scaled(10s)) == std::future_status::ready);
    const auto during = stats_future.get();
    CHECK(ran_at.load() >= due);
    // Reported with the checks below, not asserted (see above).
    const auto timed = during.timed_waits - before.timed_waits;
    const auto wakeups = during.wakeups - before.wakeups;
    INFO("timed waits " << timed << ", wake-ups " << wakeups);
    stop = true;
    q.wake_consumers();
    for (auto& c : consumers) c.join();
    CHECK(taken.load() == 1);
}

TEST_CASE("a leader that takes the head hands leadership to one follower when tasks remain",
          "[delayed][leader]") {
    crew::delayed_queue q;
    crew::interrupt_flag stop{false};
    std::atomic<int> taken{0};
    std::vector<std::thread> consumers;
    for (int i = 0; i < 4; ++i)
        consumers.emplace_back([&] {
            for (crew::task t; q.take(t, stop) == wait_status::taken; t = {}) {
                t();
                taken.fetch_add(1);
            }
        });
    REQUIRE(eventually([&] { return q.wait_statistics().waiting == 4; }));
    const auto start = steady::now();
    for (int i = 1; i <= 5; ++i) REQUIRE(q.schedule(crew::task([] {}), start + i * 20ms, nullptr, false));
    REQUIRE(eventually([&] { return taken.load() == 5; }));
    CHECK(steady::now() >= start + 100ms);
    // All four wait again (the last to run a task may not be back in take()
    // yet when `taken` reaches 5: polled, not read once).
    const bool all_waiting = eventually([&] { return q.wait_statistics().waiting == 4; });
    stop = true;
    q.wake_consumers();
    for (auto& c : consumers) c.join();
    CHECK(all_waiting);
}

// A steady stream of timers through four waiting threads: every task runs,
// none before its due time, each exactly once. How many threads woke to find
// nothing (the property the leader's grace period buys: one leader keeps the
// leadership while it runs a task) is a count that depends on how the OS
// schedules the threads, so it is measured, not asserted: bench/leader_wakeups
// reports idle wake-ups per grace period for this same stream, and for a
// design that hands leadership on at every take (190-odd idle wake-ups for
// 200 tasks) that report is the place it shows (doc/benchmarks.md).
TEST_CASE("a steady stream of due tasks through four waiting threads runs each once, never early",
          "[delayed][leader]") {
    crew::delayed_queue q;
    constexpr int threads = 4;
    constexpr int tasks = 200;
    constexpr auto spacing = 100us;
    crew::interrupt_flag stop{false};
    std::atomic<int> taken{0}, early{0};
    std::vector<std::atomic<int>> runs(tasks);
    std::vector<std::thread> consumers;
    for (int i = 0; i < threads; ++i)
        consumers.emplace_back([&] {
            for (crew::task t; q.take(t, stop) == wait_status::taken; t = {}) {
                t();
                taken.fetch_add(1);
            }
        });
    REQUIRE(eventually([&] { return q.wait_statistics().waiting == threads; }));
    q.reset_wait_statistics();
    const auto start = steady::now() + 5ms;
    for (int i = 0; i < tasks; ++i) {
        const auto due = start + i * spacing;
        REQUIRE(q.schedule(crew::task([&, i, due] {
                               if (steady::now() < due) early.fetch_add(1);
                               runs[static_cast<std::size_t>(i)].fetch_add(1);
                           }),
                           due, nullptr, false));
    }
    REQUIRE(eventually([&] { return taken.load() == tasks; }));
    const auto stats = q.wait_statistics();
    stop = true;
    q.wake_consumers();
    for (auto& c : consumers) c.join();
    INFO("wake-ups " << stats.wakeups << ", idle " << stats.idle_wakeups << " (reported, not asserted)");
    CHECK(early.load() == 0);
    CHECK(std::all_of(runs.begin(), runs.end(), [](const std::atomic<int>& r) { return r.load() == 1; }));
    CHECK(taken.load() == tasks);
    CHECK(q.size() == 0);
}

// A busy leader keeps the leadership only for leader_grace past the head's
// due time: then the deputy, a follower waiting timed for it, takes the
// head. Task `a` (taken by the leader) waits for task `b`, due 1 ms after it:
// `b` must run on another thread while `a` still runs. Without the deputy
// `b` waits behind `a` and `a`'s wait times out.
TEST_CASE("a task due while the leader runs a long one runs on the deputy after the grace period",
          "[delayed][leader]") {
    crew::delayed_queue q;
    crew::interrupt_flag stop{false};
    std::vector<std::thread> consumers;
    for (int i = 0; i < 2; ++i)
        consumers.emplace_back([&] {
            for (crew::task t; q.take(t, stop) == wait_status::taken; t = {}) t();
        });
    REQUIRE(eventually([&] { return q.wait_statistics().waiting == 2; }));
    std::promise<steady::time_point> b_ran;
    auto b_future = b_ran.get_future();
    std::promise<std::future_status> a_saw;
    const auto a_due = steady::now() + 20ms;
    const auto b_due = a_due + 1ms;
    REQUIRE(q.schedule(crew::task([&] { a_saw.set_value(b_future.wait_for(scaled(5s))); }), a_due, nullptr, false));
    REQUIRE(q.schedule(crew::task([&] { b_ran.set_value(steady::now()); }), b_due, nullptr, false));
    auto a_result = a_saw.get_future();
    REQUIRE(a_result.wait_for(scaled(20s)) == std::future_status::ready);
    CHECK(a_result.get() == std::future_status::ready); // b ran while a was running
    stop = true;
    q.wake_consumers();
    for (auto& c : consumers) c.join();
    CHECK(b_future.get() >= b_due);
}

TEST_CASE("an interrupt flag with wake_consumers ends a leader's and a follower's wait", "[delayed][interrupt]") {
    crew::delayed_queue q;
    REQUIRE(q.schedule(crew::task([] {}), steady::now() + 1h, nullptr, false));
    crew::interrupt_flag flag{false};
    auto first = std::async(std::launch::async, [&] { return take_and_run(q, flag); });
    auto second = std::async(std::launch::async, [&] { return take_and_run(q, flag); });
    REQUIRE(eventually([&] { return q.wait_statistics().waiting == 2; }));
    CHECK(q.wait_statistics().has_leader);
    flag = true;
    q.wake_consumers();
    REQUIRE(first.wait_for(scaled(10s)) == std::future_status::ready);
    REQUIRE(second.wait_for(scaled(10s)) == std::future_status::ready);
    CHECK(first.get() == wait_status::interrupted);
    CHECK(second.get() == wait_status::interrupted);
    CHECK(q.size() == 1);
}

TEST_CASE_METHOD(delayed_queue_test, "remove by slot takes exactly that task out, in any position",
                 "[delayed][remove]") {
    const auto base = steady::now() - 1h;
    std::vector<schedule_slot> slots(50);
    for (int i = 0; i < 50; ++i)
        REQUIRE(schedule(i, base + ((i * 37) % 50) * 1ms, &slots[i]));
    for (int i = 0; i < 50; i += 3) {
        crew::task removed = q.remove(slots[i]);
        REQUIRE(removed);
        CHECK(slots[i].node == schedule_slot::not_queued);
        CHECK_FALSE(q.remove(slots[i])); // gone: a second remove finds nothing
    }
    for (crew::task t; q.poll(t);) t();
    std::vector<int> expected;
    for (int i = 0; i < 50; ++i)
        if (i % 3 != 0) expected.push_back(i);
    std::sort(expected.begin(), expected.end(), [](int a, int b) { return (a * 37) % 50 < (b * 37) % 50; });
    CHECK(ran == expected);
    for (const auto& s : slots) CHECK(s.node == schedule_slot::not_queued);
}

TEST_CASE_METHOD(delayed_queue_test, "delayed_queue matches a sorted model under random insert, remove and poll",
                 "[delayed][model]") {
    std::mt19937 random(12345);
    // model: (due offset, sequence) -> id
    std::map<std::pair<int, int>, int> model;
    std::vector<schedule_slot> slots(4000);
    std::vector<std::pair<int, int>> key_of(4000);
    const auto base = steady::now() - 1h; // everything is due
    int next_id = 0, sequence = 0;
    for (int step = 0; step < 20000; ++step) {
        const int op = static_cast<int>(random() % 10);
        if (op < 5 && next_id < 4000) {
            const int offset = static_cast<int>(random() % 100);
            const int id = next_id++;
            REQUIRE(schedule(id, base + offset * 1ms, &slots[id]));
            key_of[id] = {offset, sequence++};
            model[key_of[id]] = id;
        } else if (op < 8 && next_id > 0) {
            const int id = static_cast<int>(random() % next_id);
            const bool queued = model.count(key_of[id]) && model[key_of[id]] == id;
            crew::task removed = q.remove(slots[id]);
            REQUIRE(static_cast<bool>(removed) == queued);
            if (queued) model.erase(key_of[id]);
        } else {
            ran.clear();
            crew::task t;
            const bool got = q.poll(t);
            REQUIRE(got == !model.empty());
            if (got) {
                t();
                REQUIRE(ran.size() == 1);
                REQUIRE(ran[0] == model.begin()->second);
                model.erase(model.begin());
            }
        }
        REQUIRE(q.size() == model.size());
    }
    ran.clear();
    auto rest = q.drain();
    for (auto& t : rest) t();
    std::vector<int> expected;
    for (const auto& [key, id] : model) expected.push_back(id);
    CHECK(ran == expected);
}

TEST_CASE_METHOD(delayed_queue_test, "drain returns every task in due order, due or not, and frees the slots",
                 "[delayed]") {
    schedule_slot a, b;
    const auto now = steady::now();
    REQUIRE(schedule(2, now + 2h, &a));
    REQUIRE(q.schedule(logged(ran, 1), now + 1h, &b, true));
    REQUIRE(q.offer(logged(ran, 0)));
    auto tasks = q.drain();
    REQUIRE(tasks.size() == 3);
    for (auto& t : tasks) t();
    CHECK(ran == std::vector<int>{0, 1, 2});
    CHECK(q.size() == 0);
    CHECK(a.node == schedule_slot::not_queued);
    CHECK(b.node == schedule_slot::not_queued);
}

TEST_CASE("remove_if drops the cancelled tasks only and keeps the rest in order", "[delayed]") {
    crew::delayed_queue q;
    std::vector<std::shared_ptr<std::atomic<bool>>> cancelled;
    const auto base = steady::now() - 1h;
    for (int i = 0; i < 30; ++i) {
        cancelled.push_back(std::make_shared<std::atomic<bool>>(i % 3 == 0));
        REQUIRE(q.schedule(crew::task(cancellable{cancelled.back()}), base + (i % 7) * 1ms, nullptr, false));
    }
    CHECK(q.remove_if([](const crew::task& t) { return t.is_cancelled(); }) == 10);
    CHECK(q.size() == 20);
    int polled = 0;
    for (crew::task t; q.poll(t); t = {}) {
        CHECK_FALSE(t.is_cancelled());
        ++polled;
    }
    CHECK(polled == 20);
}

TEST_CASE_METHOD(delayed_queue_test, "close refuses offer, put and schedule but not a periodic requeue",
                 "[delayed]") {
    q.close();
    crew::task t = logged(ran, 1);
    CHECK_FALSE(q.offer(std::move(t)));
    CHECK(t); // untouched
    CHECK_FALSE(q.put(std::move(t)));
    CHECK_FALSE(q.schedule(std::move(t), steady::now(), nullptr, false));
    CHECK(t);
    schedule_slot slot;
    q.requeue(std::move(t), steady::now() - 1s, slot);
    CHECK(q.size() == 1);
    crew::task back;
    REQUIRE(q.poll(back));
    back();
    CHECK(ran == std::vector<int>{1});
}

TEST_CASE("on_shutdown applies the shutdown policies", "[delayed][shutdown]") {
    // One task of each kind on_shutdown tells apart, on a queue with `options`.
    struct one_of_each : delayed_queue_test {
        explicit one_of_each(const crew::pool_options& options = {}) : delayed_queue_test(options) {
            const auto now = steady::now();
            REQUIRE(schedule(1, now - 1s));                                // delayed, due
            REQUIRE(schedule(2, now + 1h));                                // delayed, not due
            REQUIRE(q.schedule(logged(ran, 3), now + 1h, nullptr, true)); // periodic
            REQUIRE(q.schedule(crew::task(cancellable{std::make_shared<std::atomic<bool>>(true)}), now - 1s,
                               nullptr, false));
        }
    };

    SECTION("defaults: periodic and cancelled tasks go, delayed ones stay") {
        one_of_each queued;
        auto dropped = queued.q.on_shutdown();
        CHECK(dropped.size() == 2);
        for (auto& t : dropped)
            if (!t.is_cancelled()) t();
        CHECK(queued.ran == std::vector<int>{3});
        CHECK(queued.q.size() == 2);
    }
    SECTION("continue_periodic_after_shutdown keeps periodic tasks") {
        one_of_each queued(crew::pool_options{.continue_periodic_after_shutdown = true});
        CHECK(queued.q.on_shutdown().size() == 1);
        CHECK(queued.q.size() == 3);
    }
    SECTION("without execute_delayed_after_shutdown only due delayed tasks stay") {
        one_of_each queued(crew::pool_options{.execute_delayed_after_shutdown = false});
        CHECK(queued.q.on_shutdown().size() == 3);
        REQUIRE(queued.q.size() == 1);
        crew::task t;
        REQUIRE(queued.q.poll(t));
        t();
        CHECK(queued.ran == std::vector<int>{1});
    }
}

TEST_CASE("the shutdown switches read pool_options and can be changed", "[delayed][shutdown]") {
    crew::delayed_queue defaults;
    CHECK_FALSE(defaults.remove_on_cancel());
    CHECK_FALSE(defaults.continue_periodic_after_shutdown());
    CHECK(defaults.execute_delayed_after_shutdown());
    crew::delayed_queue q(crew::pool_options{.remove_on_cancel = true,
                                             .continue_periodic_after_shutdown = true,
                                             .execute_delayed_after_shutdown = false});
    CHECK(q.remove_on_cancel());
    CHECK(q.continue_periodic_after_shutdown());
    CHECK_FALSE(q.execute_delayed_after_shutdown());
    q.set_remove_on_cancel(false);
    q.set_continue_periodic_after_shutdown(false);
    q.set_execute_delayed_after_shutdown(true);
    CHECK_FALSE(q.remove_on_cancel());
    CHECK_FALSE(q.continue_periodic_after_shutdown());
    CHECK(q.execute_delayed_after_shutdown());
}

TEST_CASE("delayed_queue loses no wake-up with producers and consumers racing", "[delayed][stress]") {
    crew::delayed_queue q;
    crew::interrupt_flag stop{false};
    constexpr int per_producer = 5000;
    std::atomic<int> ran{0}, refused{0};
    std::vector<std::thread> consumers;
    for (int i = 0; i < 2; ++i)
        consumers.emplace_back([&] {
            for (crew::task t; q.take(t, stop) == wait_status::taken; t = {}) t();
        });
    std::vector<std::thread> producers;
    for (int p = 0; p < 2; ++p)
        producers.emplace_back([&, p] {
            std::mt19937 random(p);
            for (int i = 0; i < per_producer; ++i) {
                // Mostly due now, some a little later, so that leaders come and go.
                const auto delay = std::chrono::microseconds(random() % 4 == 0 ? random() % 2000 : 0);
                // Catch's assertions are not thread-safe: count refusals instead.
                if (!q.schedule(crew::task([&] { ran.fetch_add(1); }), steady::now() + delay, nullptr, false))
                    refused.fetch_add(1);
            }
        });
    for (auto& p : producers) p.join();
    CHECK(refused.load() == 0);
    const bool all = eventually([&] { return ran.load() == 2 * per_producer; }, 30s);
    stop = true;
    q.wake_consumers();
    for (auto& c : consumers) c.join();
    CHECK(all);
    CHECK(q.size() == 0);
}

// ---- detail::delay_heap alone ---------------------------------------------

namespace {

// A delay_heap with room for 4096 keys, and the log its tasks write into.
struct delay_heap_test {
    std::vector<int> ran;
    crew::detail::delay_heap heap;
    std::uint64_t sequence = 0;

    delay_heap_test() { heap.reserve(4096); }

    void insert(int id, steady::time_point due, schedule_slot* slot = nullptr, bool periodic = false) {
        heap.insert({logged(ran, id), due, sequence++, 0, slot, periodic});
    }

    std::vector<int> pop_all() {
        ran.clear();
        while (!heap.empty()) heap.pop_head()();
        return ran;
    }
};

} // namespace

TEST_CASE_METHOD(delay_heap_test, "delay_heap pops earliest first, FIFO among equal due times", "[delay_heap]") {
    const auto base = steady::time_point{} + 1h;
    insert(3, base + 30ms);
    insert(1, base + 10ms);
    insert(20, base + 20ms);
    insert(21, base + 20ms);
    insert(0, steady::time_point::min());
    insert(22, base + 20ms);
    insert(9, steady::time_point::max());
    CHECK(heap.size() == 7);
    CHECK(heap.head_due() == steady::time_point::min());
    CHECK(pop_all() == std::vector<int>{0, 1, 20, 21, 22, 3, 9});
    CHECK(heap.size() == 0);
    CHECK(heap.key_count() == 0);
}

TEST_CASE_METHOD(delay_heap_test, "delay_heap matches a sorted model under random inserts and pops", "[delay_heap]") {
    std::mt19937 random(2024);
    std::multimap<int, int> model; // due offset -> id, insertion order among equals
    int next_id = 0;
    for (int round = 0; round < 2000; ++round) {
        if (model.empty() || random() % 3 != 0) {
            const int offset = static_cast<int>(random() % 64);
            insert(next_id, steady::time_point{} + offset * 1ms);
            model.emplace(offset, next_id++);
        } else {
            ran.clear();
            heap.pop_head()();
            REQUIRE(ran.size() == 1);
            CHECK(ran[0] == model.begin()->second);
            model.erase(model.begin());
        }
        REQUIRE(heap.size() == model.size());
    }
}

TEST_CASE_METHOD(delay_heap_test, "delay_heap removes by slot from the middle and drops the key later",
                 "[delay_heap][remove]") {
    const auto base = steady::time_point{} + 1h;
    std::vector<schedule_slot> slots(5);
    for (int i = 0; i < 5; ++i) insert(i, base + i * 1ms, &slots[static_cast<std::size_t>(i)]);
    crew::task removed = heap.remove(slots[2]);
    REQUIRE(removed);
    ran.clear();
    removed();
    CHECK(ran == std::vector<int>{2});
    CHECK(slots[2].node == schedule_slot::not_queued);
    CHECK_FALSE(heap.remove(slots[2])); // gone: a second remove finds nothing
    CHECK(heap.size() == 4);
    CHECK(heap.key_count() == 5); // its key stays until it reaches the head
    CHECK(heap.remove(slots[0]));  // the head: dropped at once
    CHECK(heap.key_count() == 4);
    CHECK(heap.head_due() == base + 1ms);
    CHECK(pop_all() == std::vector<int>{1, 3, 4}); // the removed key is dropped on the way
    CHECK(heap.key_count() == 0);
    for (const auto& s : slots) CHECK(s.node == schedule_slot::not_queued);
}

TEST_CASE_METHOD(delay_heap_test, "delay_heap extract_if and drain hand back live tasks only, drain in due order",
                 "[delay_heap]") {
    const auto base = steady::time_point{} + 1h;
    std::vector<schedule_slot> slots(6);
    for (int i = 0; i < 6; ++i) insert(5 - i, base + (5 - i) * 1ms, &slots[static_cast<std::size_t>(i)], i % 2 == 0);
    CHECK(heap.remove(slots[1])); // id 4
    std::vector<crew::task> periodic;
    periodic.reserve(heap.size());
    heap.extract_if([](steady::time_point, const crew::detail::delay_heap::node& n) { return n.periodic; }, periodic);
    ran.clear();
    for (auto& t : periodic) t();
    std::sort(ran.begin(), ran.end());
    CHECK(ran == std::vector<int>{1, 3, 5});
    CHECK(heap.key_count() == 2); // the removed task's key went with the rebuild
    ran.clear();
    std::vector<steady::time_point> dues;
    heap.drain([&](steady::time_point due, crew::task&& t) {
        dues.push_back(due);
        t();
    });
    CHECK(ran == std::vector<int>{0, 2});
    CHECK(dues == std::vector<steady::time_point>{base, base + 2ms});
    CHECK(heap.empty());
    for (const auto& s : slots) CHECK(s.node == schedule_slot::not_queued);
}
