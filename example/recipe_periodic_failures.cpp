// Recipe: a periodic job whose failures are reported (doc/recipes.md).
//
// A run of a periodic task that throws is reported at once, on the worker
// that ran it: to the pool's after_execute hook, or, with no hook, to
// standard error. Two jobs on one scheduled_pool:
// - a cleanup job that one bad run must not stop
//   (periodic_failure::keep_running): it goes on, and the hook hears of
//   every failed run;
// - a sync job whose failure ends it (periodic_failure::cancel, the
//   default, Java's): no later run, and get() rethrows the failure.
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <latch>
#include <stdexcept>
#include <string>

using namespace std::chrono_literals;

int main() {
    // What the jobs and the hook use is declared before the pool, so it outlives the pool.
    std::atomic<int> reported{0}, cleanup_runs{0}, cleanup_failures{0}, sync_runs{0};
    std::latch six_runs(6);
    crew::scheduled_pool pool(crew::pool_options{
        .core_pool_size = 1,
        .after_execute = [&reported](std::exception_ptr failure) { // on the worker, after every run
            if (!failure) return;
            try {
                std::rethrow_exception(failure);
            } catch (const std::exception& e) {
                std::printf("     reported: %s\n", e.what()); // a real program would log or alert here
            }
            ++reported;
        }});

    // Every third run of the cleanup job fails; the schedule goes on.
    auto cleanup = pool.schedule_at_fixed_rate(0ms, 2ms, [&] {
        const int run = ++cleanup_runs;
        if (run <= 6) six_runs.count_down();
        if (run % 3 == 0) {
            ++cleanup_failures;
            throw std::runtime_error("cleanup: run " + std::to_string(run) + " failed");
        }
    }, {.on_failure = crew::periodic_failure::keep_running});

    // The sync job's third run fails, and that ends it.
    auto sync = pool.schedule_with_fixed_delay(0ms, 2ms, [&] {
        if (++sync_runs == 3) throw std::runtime_error("sync: backend gone");
    });

    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        std::printf("%-4s %s\n", condition ? "ok" : "FAIL", what);
        ok &= condition;
    };
    std::string why;
    try {
        sync.get(); // a periodic future completes only when its schedule ends
    } catch (const std::runtime_error& e) {
        why = e.what();
    }
    six_runs.wait();
    cleanup.cancel(); // a run in progress finishes; no run after it
    pool.shutdown();
    check(pool.await_termination(std::chrono::seconds(60)), "the pool terminated");

    check(why == "sync: backend gone", "sync: get() rethrew the failure that ended the schedule");
    check(sync_runs == 3, "sync: no run after the failed one");
    check(cleanup_runs >= 6 && cleanup_failures >= 2, "cleanup: the schedule went on after its runs failed");
    check(reported == cleanup_failures + 1, "after_execute heard of every failed run of both jobs");

    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
