// Periodic schedules beyond Java: what happens to runs that fall behind
// (missed_runs::catch_up or skip), to a run that throws
// (periodic_failure::cancel or keep_running), and a scheduled pool that
// grows while every worker is busy (maximum_pool_size > core_pool_size).
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <latch>
#include <mutex>
#include <stdexcept>
#include <vector>

using namespace std::chrono_literals;
using ms = std::chrono::milliseconds;

// Runs a 10 ms fixed-rate task whose second run takes 35 ms, and returns
// the due times (relative to the first) of its first six runs.
std::vector<long long> due_times(crew::missed_runs missed) {
    std::mutex mutex;
    std::vector<std::chrono::steady_clock::time_point> dues;
    std::latch six(6);
    crew::scheduled_pool pool(crew::pool_options{
        .core_pool_size = 1,
        .task_observer = [&](const crew::task_timing& t) { // `queued` is the run's due time
            std::lock_guard lock(mutex);
            dues.push_back(t.queued);
            if (dues.size() <= 6) six.count_down();
        }});
    int run = 0;
    auto schedule = pool.schedule_at_fixed_rate(0ms, 10ms, [&] {
        if (++run == 2) std::this_thread::sleep_for(35ms);
    }, {.missed = missed});
    six.wait();
    schedule.cancel();
    pool.shutdown();
    pool.await_termination(std::chrono::seconds(10));
    std::vector<long long> relative;
    for (std::size_t i = 0; i < 6; ++i) relative.push_back(std::chrono::duration_cast<ms>(dues[i] - dues[0]).count());
    return relative;
}

void print(const char* name, const std::vector<long long>& dues) {
    std::printf("     %-9s runs due at", name);
    for (auto d : dues) std::printf(" %lld", d);
    std::puts(" ms");
}

int main() {
    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        std::printf("%-4s %s\n", condition ? "ok" : "FAIL", what);
        ok &= condition;
    };

    // 1. Missed runs. Run 2 (due at 10 ms) takes 35 ms: the runs due at 20,
    //    30 and 40 ms fall behind. catch_up runs all of them, back to back;
    //    skip runs the one due at 20 ms late and then jumps to the grid
    //    (0 10 20 50 60 70 on an idle machine). The checks hold on a loaded
    //    one too: a run that starts late only moves skip's next due time
    //    further along the grid, and the 35 ms run always drops some.
    const auto caught_up = due_times(crew::missed_runs::catch_up);
    const auto skipped = due_times(crew::missed_runs::skip);
    print("catch_up:", caught_up);
    print("skip:", skipped);
    check(caught_up == std::vector<long long>{0, 10, 20, 30, 40, 50}, "catch_up: every run, none dropped");
    bool on_grid = true, dropped = false;
    for (std::size_t i = 1; i < skipped.size(); ++i) {
        on_grid &= skipped[i] % 10 == 0 && skipped[i] > skipped[i - 1];
        dropped |= skipped[i] - skipped[i - 1] >= 30; // the run after the slow one starts >= 35 ms after it
    }
    check(on_grid && dropped, "skip: the runs missed behind the slow run were dropped, the grid kept");

    // 2. Failures. With keep_running a run that throws does not end the
    //    schedule: the exception goes to after_execute.
    {
        std::atomic<int> failures{0};
        crew::scheduled_pool pool(crew::pool_options{
            .core_pool_size = 1, .after_execute = [&](std::exception_ptr e) { failures += e ? 1 : 0; }});
        std::atomic<int> runs{0};
        std::latch five(1);
        auto schedule = pool.schedule_at_fixed_rate(0ms, 2ms, [&] {
            const int n = ++runs;
            if (n == 5) five.count_down();
            if (n % 2 == 1) throw std::runtime_error("odd run");
        }, {.on_failure = crew::periodic_failure::keep_running});
        five.wait();
        schedule.cancel();
        pool.shutdown();
        pool.await_termination(std::chrono::seconds(10));
        std::printf("     keep_running: %d runs, %d failures seen by after_execute\n", runs.load(), failures.load());
        check(runs >= 5 && failures >= 3, "keep_running: the schedule went on after its runs threw");
    }
    {
        crew::scheduled_pool pool(1);
        auto schedule = pool.schedule_at_fixed_rate(0ms, 2ms, [] { throw std::runtime_error("first run"); });
        bool rethrown = false;
        try {
            schedule.get();
        } catch (const std::runtime_error&) {
            rethrown = true;
        }
        check(rethrown, "cancel (the default, Java's): the first failure ended it, get() rethrew");
    }

    // 3. An elastic scheduled pool: core 1, maximum 3. With its one worker
    //    busy, a task due in 20 ms still runs on time, on a new worker.
    {
        crew::scheduled_pool pool(crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 3, .keep_alive = 50ms});
        std::latch release(1), busy(1);
        pool.execute([&] {
            busy.count_down();
            release.wait();
        });
        busy.wait();
        auto timer = pool.schedule(20ms, [] { return std::this_thread::get_id(); });
        const bool on_time = timer.wait_for(5s) == std::future_status::ready;
        check(on_time && pool.pool_size() >= 2, "elastic: the timer ran while the first worker was busy");
        release.count_down();
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (pool.pool_size() > 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
        check(pool.pool_size() == 1, "elastic: the extra worker left after keep_alive");
    }

    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
