// LEADER: what crew::delayed_queue's leader-follower waiting costs in
// wake-ups, counted by its own wait statistics: a performance property, so
// measured here and not asserted in the unit tests (whose counts depended on
// how busy the machine was: issue #34).
//
//   stream   200 tasks due 100 us apart through 4 waiting threads: wake-ups
//            per task, and idle wake-ups (a thread woke and found nothing)
//            per leader_grace period of the run. One leader keeps the
//            leadership while it runs a task: about one timed wake-up per
//            task, idle ones at most about one per grace period (the
//            deputy). A design that hands leadership on at every take shows
//            about one idle wake-up per task.
//   one_due  8 idle threads, one task due 300 ms later (50 ms with --smoke):
//            timed waits begun and wake-ups until it runs. One timer is
//            armed and 2-3 threads wake; a broadcast design shows 8 of each.
//
//   leader_wakeups [--reps N] [--smoke]   (a markdown table on stdout: medians, min, max)
#include <crew/policies/delayed_queue.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

struct consumers {
    crew::delayed_queue& q;
    crew::interrupt_flag stop{false};
    std::atomic<int> taken{0};
    std::vector<std::thread> threads;

    consumers(crew::delayed_queue& queue, int n) : q(queue) {
        for (int i = 0; i < n; ++i)
            threads.emplace_back([this] {
                for (crew::task t; q.take(t, stop) == crew::wait_status::taken; t = {}) {
                    t();
                    taken.fetch_add(1);
                }
            });
        while (q.wait_statistics().waiting != static_cast<std::size_t>(n)) std::this_thread::sleep_for(1ms);
    }
    ~consumers() {
        stop = true;
        q.wake_consumers();
        for (auto& t : threads) t.join();
    }
};

void wait_until(const std::atomic<int>& count, int n) {
    const auto give_up = steady::now() + 60s;
    while (count.load() < n) {
        if (steady::now() > give_up) {
            std::fprintf(stderr, "leader_wakeups: tasks did not run within 60 s\n");
            std::exit(1);
        }
        std::this_thread::sleep_for(100us);
    }
}

// {wake-ups per task, idle wake-ups per grace period}
std::pair<double, double> stream() {
    crew::delayed_queue q;
    constexpr int tasks = 200;
    consumers c(q, 4);
    q.reset_wait_statistics();
    const auto start = steady::now() + 5ms;
    for (int i = 0; i < tasks; ++i) q.schedule(crew::task([] {}), start + i * 100us, nullptr, false);
    wait_until(c.taken, tasks);
    const auto finished = steady::now();
    const auto stats = q.wait_statistics();
    const double grace_periods = static_cast<double>((finished - start) / crew::delayed_queue::leader_grace + 1);
    return {static_cast<double>(stats.wakeups) / tasks, static_cast<double>(stats.idle_wakeups) / grace_periods};
}

// {timed waits begun, wake-ups} until the one task ran
std::pair<double, double> one_due(bool smoke) {
    crew::delayed_queue q;
    consumers c(q, 8);
    const auto before = q.wait_statistics();
    std::promise<crew::delayed_queue::wait_statistics_type> at_run;
    auto during = at_run.get_future();
    q.schedule(crew::task([&] { at_run.set_value(q.wait_statistics()); }), steady::now() + (smoke ? 50ms : 300ms),
               nullptr, false);
    const auto s = during.get();
    return {static_cast<double>(s.timed_waits - before.timed_waits), static_cast<double>(s.wakeups - before.wakeups)};
}

struct summary {
    double median, min, max;
};
summary summarize(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.front(), v.back()};
}

} // namespace

int main(int argc, char** argv) {
    int reps = 5;
    bool smoke = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--smoke") == 0) smoke = true;
        else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: leader_wakeups [--reps N] [--smoke]\n");
            return 2;
        }
    }
    if (smoke) reps = 1;
    std::vector<double> per_task, idle_per_grace, timed, wakeups;
    for (int r = 0; r < reps; ++r) {
        const auto [a, b] = stream();
        per_task.push_back(a);
        idle_per_grace.push_back(b);
        const auto [c, d] = one_due(smoke);
        timed.push_back(c);
        wakeups.push_back(d);
    }
    std::printf("## LEADER: delayed_queue's leader-follower wake-ups (%d repetition%s)\n\n", reps, reps > 1 ? "s" : "");
    std::printf("| scenario | metric | median | min | max | a broken design shows |\n|---|---|---:|---:|---:|---|\n");
    const auto row = [](const char* scenario, const char* metric, const std::vector<double>& v, const char* broken) {
        const summary s = summarize(v);
        std::printf("| %s | %s | %.2f | %.2f | %.2f | %s |\n", scenario, metric, s.median, s.min, s.max, broken);
    };
    row("stream: 200 tasks 100 us apart, 4 threads", "wake-ups per task", per_task, "");
    row("stream: 200 tasks 100 us apart, 4 threads", "idle wake-ups per grace period", idle_per_grace,
        "about 10 (one per task: hand-off at every take)");
    row("one task due later, 8 idle threads", "timed waits begun", timed, "8 (broadcast)");
    row("one task due later, 8 idle threads", "wake-ups", wakeups, "8 or more (broadcast)");
}
