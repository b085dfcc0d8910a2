// No lost wake-up: consumers and producers racing to park, where the unit
// tests (test/unit/queues.cpp, test/unit/delayed_queue.cpp) leave gaps: the
// delayed queue's leadership hand-off when timed consumers (keep-alive) come
// and go, interrupts racing producers, and whole pools whose workers time
// out or are resized while tasks arrive. A lost wake-up strands a task: every
// wait here has a deadline, so it fails instead of hanging.
#include "support.hpp"

#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <future>
#include <memory>
#include <random>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;
using crew::wait_status;

namespace {

int scaled_count(int plain) { return std::max(200, static_cast<int>(plain / std::max(1.0, time_factor() / 2))); }

// Every 16 tasks a producer pauses for up to 300 us, so that the consumers
// drain the queue and park (or time out) before the next burst: the races
// under test happen at parking, not while the queue is full. Pacing only;
// nothing relies on it for correctness.
void pace(std::mt19937& random, int i) {
    if (i % 16 == 15) std::this_thread::sleep_for(std::chrono::microseconds(random() % 300));
}

// The tasks of a delayed_queue race: two producers' worth, counted as they
// run.
struct race_tasks {
    const int per_producer = scaled_count(4000);
    const int total = 2 * per_producer;
    std::atomic<int> ran{0};
    std::promise<void> last_ran;

    crew::task next() {
        return crew::task([this] {
            if (ran.fetch_add(1) + 1 == total) last_ran.set_value();
        });
    }
    bool all_ran_in_time() { return last_ran.get_future().wait_for(scaled(30s)) == std::future_status::ready; }
};

// Two producers (random seeds `first_seed` and the next) schedule their share
// of `tasks` on `q`, each due after the delay that `delay(random)` draws, and
// pace themselves; returns when both are done.
template <class Delay>
void produce(crew::delayed_queue& q, race_tasks& tasks, unsigned first_seed, Delay delay) {
    std::vector<std::thread> producers;
    for (unsigned p = 0; p < 2; ++p)
        producers.emplace_back([&, p] {
            std::mt19937 random(first_seed + p);
            for (int i = 0; i < tasks.per_producer; ++i) {
                q.schedule(tasks.next(), clock::now() + delay(random), nullptr, false);
                pace(random, i);
            }
        });
    for (auto& t : producers) t.join();
}

} // namespace

BOOST_AUTO_TEST_SUITE(wakeups)

// Two consumers wait with short deadlines (a worker's keep-alive) and leave
// for good once the producers are done; the last consumer waits untimed. If
// a timed leader left without handing leadership on, a task due later would
// wait for ever behind an untimed follower.
BOOST_AUTO_TEST_CASE(delayed_queue_hands_leadership_on_when_timed_consumers_leave, *utf::timeout(120)) {
    crew::delayed_queue q;
    race_tasks tasks;
    std::atomic<int> timed_outs{0};
    std::atomic<bool> producers_done{false};
    crew::interrupt_flag stop{false};

    std::vector<std::thread> consumers;
    for (int c = 0; c < 2; ++c)
        consumers.emplace_back([&, c] {
            const auto keep_alive = std::chrono::microseconds(50 + 400 * c);
            for (;;) {
                crew::task t;
                const auto status = q.poll_until(t, clock::now() + keep_alive, stop);
                if (status == wait_status::taken) t();
                else if (status == wait_status::timed_out && producers_done.load()) return; // leaves for good
                else if (status == wait_status::timed_out) timed_outs.fetch_add(1);
                else return;
            }
        });
    consumers.emplace_back([&] {
        for (crew::task t; q.take(t, stop) == wait_status::taken; t = {}) t();
    });
    produce(q, tasks, 1, [](std::mt19937& random) {
        const auto dice = random() % 16;
        return std::chrono::microseconds(dice == 0 ? 2000 : dice < 5 ? random() % 300 : 0);
    });
    producers_done = true;
    const bool finished = tasks.all_ran_in_time();
    stop = true;
    q.wake_consumers();
    for (auto& t : consumers) t.join();
    BOOST_TEST(finished);
    BOOST_TEST(tasks.ran.load() == tasks.total);
    BOOST_TEST(q.size() == 0u);
    BOOST_TEST(timed_outs.load() > 0); // the race was run
    BOOST_TEST_MESSAGE("keep-alive time-outs while producing: " << timed_outs.load());
}

// A pool interrupts idle workers (resizing, shutdown's propagation) with a
// flag and wake_consumers(); the workers clear the flag and wait again.
// Interrupts racing producers and leaders must not lose a task.
BOOST_AUTO_TEST_CASE(delayed_queue_interrupts_racing_producers_lose_no_task, *utf::timeout(120)) {
    crew::delayed_queue q;
    race_tasks tasks;
    std::atomic<int> interrupts{0};
    std::atomic<bool> quit{false};
    std::vector<std::unique_ptr<crew::interrupt_flag>> flags;
    for (int c = 0; c < 3; ++c) flags.push_back(std::make_unique<crew::interrupt_flag>(false));

    std::vector<std::thread> consumers;
    for (int c = 0; c < 3; ++c)
        consumers.emplace_back([&, c] {
            crew::interrupt_flag& flag = *flags[static_cast<std::size_t>(c)];
            for (;;) {
                crew::task t;
                const auto status = c == 0 ? q.poll_until(t, clock::now() + 200us, flag) : q.take(t, flag);
                if (status == wait_status::taken) {
                    t();
                    continue;
                }
                if (status == wait_status::interrupted) {
                    if (quit.load()) return;
                    interrupts.fetch_add(1);
                    flag.store(false); // as get_task does
                }
            }
        });
    std::thread interrupter([&] {
        std::mt19937 random(7);
        while (tasks.ran.load() < tasks.total && !quit.load()) {
            flags[random() % 3]->store(true);
            q.wake_consumers();
            std::this_thread::yield();
        }
    });
    produce(q, tasks, 11, [](std::mt19937& random) {
        return std::chrono::microseconds(random() % 4 == 0 ? random() % 500 : 0);
    });
    const bool finished = tasks.all_ran_in_time();
    quit = true;
    interrupter.join();
    for (auto& f : flags) f->store(true);
    q.wake_consumers();
    for (auto& t : consumers) t.join();
    BOOST_TEST(finished);
    BOOST_TEST(tasks.ran.load() == tasks.total);
    BOOST_TEST(interrupts.load() > 0); // the race was run
    BOOST_TEST_MESSAGE("interrupts seen by waiting consumers: " << interrupts.load());
}

// Tasks due now go to the delayed queue's lock-free FIFO, the others to its
// heap; consumers park on the queue's roles either way. Producers count a
// task due now after pushing it and then read the wake rule; a sleeper
// publishes the rule and then reads the count. Without that re-check
// (mutation: the sleep ignores pending tasks due now) a task due now can sit
// in the FIFO while every consumer sleeps untimed.
BOOST_AUTO_TEST_CASE(delayed_queue_tasks_due_now_racing_parking_consumers_lose_none, *utf::timeout(120)) {
    crew::delayed_queue q;
    crew::interrupt_flag stop{false};
    std::atomic<int> ran{0};
    // One untimed consumer: a second would be woken for a task the first
    // missed, and a keep-alive's time-out would pick it up, hiding the loss.
    std::vector<std::thread> consumers;
    consumers.emplace_back([&] {
        for (crew::task t; q.take(t, stop) == wait_status::taken; t = {}) t();
    });
    // Rounds of one or two tasks, each queued while the consumers go back
    // to sleep after the last round: every round's end is a chance to see a
    // task stranded (a spin, not a sleep, so that the next round races the
    // parking).
    std::mt19937 random(5);
    const int rounds = scaled_count(20000);
    int queued = 0, stranded_round = -1;
    for (int round = 0; round < rounds && stranded_round < 0; ++round) {
        const int n = 1 + static_cast<int>(random() % 2);
        for (int i = 0; i < n; ++i) {
            crew::task t([&] { ran.fetch_add(1); });
            if (random() % 8 != 0) (void)q.offer(std::move(t));
            else (void)q.schedule(std::move(t), clock::now() + std::chrono::microseconds(random() % 50), nullptr, false);
        }
        queued += n;
        const auto give_up = clock::now() + scaled(5s);
        while (ran.load() < queued)
            if (clock::now() > give_up) {
                stranded_round = round;
                break;
            } else {
                std::this_thread::yield();
            }
    }
    stop = true;
    q.wake_consumers();
    for (auto& t : consumers) t.join();
    BOOST_TEST(stranded_round == -1, "a task was stranded in round " << stranded_round);
    BOOST_TEST(q.wait_statistics().untimed_waits > 0u); // consumers did park
}

// Whole pools: workers time out (1 ns or 20 us keep-alive, core threads
// too) and are resized while two producers push tasks, some of them after
// waiting for the pool to go idle. Every task must run.
namespace {

using bounded_blocking = crew::basic_executor<crew::bounded_queue, crew::block_policy>;
using grow_first_blocking = crew::basic_executor<crew::grow_first_queue, crew::block_policy>;
using priority_pool = crew::basic_executor<crew::priority_queue>;
using work_stealing_blocking = crew::basic_executor<crew::bounded_work_stealing_queue, crew::block_policy>;
using pools = boost::mpl::list<crew::fixed_pool, crew::cached_pool, crew::scheduled_pool, bounded_blocking,
                               grow_first_blocking, priority_pool, crew::work_stealing_pool, work_stealing_blocking>;

template <class Pool>
std::unique_ptr<Pool> make_timing_out_pool() {
    if constexpr (std::is_same_v<Pool, crew::cached_pool>) {
        auto pool = std::make_unique<Pool>();
        pool->set_keep_alive(1ns);
        return pool;
    } else {
        return std::make_unique<Pool>(crew::pool_options{.core_pool_size = 2,
                                                         .maximum_pool_size = 3,
                                                         .keep_alive = 20us,
                                                         .allow_core_thread_timeout = true,
                                                         .queue_capacity = 8});
    }
}

} // namespace

BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(pools_whose_workers_time_out_and_resize_strand_no_task, Pool, pools) {
    run_counter ran; // outlives the pool
    auto pool = make_timing_out_pool<Pool>();
    const int per_producer = scaled_count(3000);
    std::atomic<bool> producing{true};
    std::thread resizer([&] {
        if constexpr (std::is_same_v<Pool, crew::cached_pool>) return;
        std::mt19937 random(3);
        while (producing.load()) {
            const std::size_t max = 1 + random() % 3;
            const std::size_t core = random() % (max + 1);
            // Order the two setters so that core <= max holds at every step.
            if (core <= pool->core_pool_size()) {
                pool->set_core_pool_size(core);
                pool->set_maximum_pool_size(std::max<std::size_t>(max, core));
            } else {
                pool->set_maximum_pool_size(std::max<std::size_t>(max, core));
                pool->set_core_pool_size(core);
            }
            std::this_thread::sleep_for(50us); // pacing, not synchronisation
        }
    });
    std::atomic<int> stuck{0};
    std::vector<std::thread> producers;
    for (int p = 0; p < 2; ++p)
        producers.emplace_back([&, p] {
            std::mt19937 random(static_cast<unsigned>(p + 21));
            for (int i = 0; i < per_producer; ++i) {
                if (i % 97 != p) {
                    pool->execute([&] { ran.hit(); });
                    pace(random, i);
                    continue;
                }
                // Now and then wait until this very task ran, so that the
                // workers go idle (and time out) before the next one comes.
                auto done = std::make_shared<std::promise<void>>();
                pool->execute([&ran, done] {
                    ran.hit();
                    done->set_value();
                });
                if (done->get_future().wait_for(scaled(10s)) != std::future_status::ready) stuck.fetch_add(1);
            }
        });
    for (auto& t : producers) t.join();
    producing = false;
    resizer.join();
    BOOST_TEST(stuck.load() == 0); // a task that waited 10 s for a worker: a lost wake-up
    BOOST_TEST(ran.wait_for_count(2 * per_producer, 30s));
    BOOST_TEST(ran.count() == 2 * per_producer);
    pool->shutdown();
    BOOST_TEST(pool->await_termination(scaled(10s)));
}

BOOST_AUTO_TEST_SUITE_END()
