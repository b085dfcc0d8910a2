// Recipe: graceful shutdown on a signal (doc/recipes.md). POSIX.
//
// SIGTERM and SIGINT are blocked before any thread starts, so every thread,
// the pool's workers included, inherits the mask; one dedicated thread takes
// them with sigwait. It then runs ordinary code and may call shutdown(),
// which a signal handler may not. shutdown() refuses new work and lets the
// queued jobs finish; after a grace period shutdown_now() requests the stop
// token of what still runs and hands back the jobs that never started.
// The program sends itself SIGTERM, as `kill <pid>` would.
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <signal.h>
#include <stop_token>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// CREW_TEST_TIME_FACTOR (set by the sanitizer builds) stretches the grace period.
double time_factor() {
    const char* text = std::getenv("CREW_TEST_TIME_FACTOR");
    const double factor = text ? std::atof(text) : 1.0;
    return factor > 1.0 ? factor : 1.0;
}

int primes_below(int n) {
    int count = 0;
    for (int i = 2; i < n; ++i) {
        bool prime = true;
        for (int d = 2; d * d <= i && prime; ++d) prime = i % d != 0;
        count += prime;
    }
    return count;
}

} // namespace

int main() {
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr); // before the pool starts a thread

    // What the tasks use is declared before the pool, so it outlives the pool.
    std::mutex mutex;
    std::condition_variable_any never;
    std::atomic<int> ran{0};
    crew::fixed_pool pool(2);

    // A job that runs until it is told to stop: a listener, a consumer loop.
    auto listener = pool.submit([&](std::stop_token stop) {
        std::unique_lock lock(mutex);
        never.wait(lock, stop, [] { return false; }); // sleeps until stop is requested
        return stop.stop_requested();
    });
    // A backlog of jobs, about a millisecond each: more than the grace period
    // lets the other worker finish (how many depends on the machine).
    constexpr int jobs = 100;
    std::vector<crew::future<int>> results;
    for (int i = 0; i < jobs; ++i) results.push_back(pool.submit([&ran] {
        ++ran;
        return primes_below(20000);
    }));

    const auto grace = std::chrono::milliseconds(50) * time_factor();
    std::size_t handed_back = 0;
    std::jthread signal_waiter([&] {
        int signal = 0;
        sigwait(&stop_signals, &signal);
        std::printf("     signal %d: shutting down\n", signal);
        pool.shutdown(); // no new work; queued jobs still run
        if (!pool.await_termination(grace)) {
            std::vector<crew::task> left = pool.shutdown_now(); // stops `listener`; never-started jobs come back
            handed_back = left.size();
            std::printf("     grace period over: %zu jobs never started\n", handed_back);
            // Save them for the next run, run them here, or drop them:
            // destroying a handed-back task cancels its future.
        }
        pool.await_termination(std::chrono::hours(1)); // the running jobs were asked to stop
    });

    kill(getpid(), SIGTERM); // to the process: the one thread in sigwait takes it
    signal_waiter.join();

    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        std::printf("%-4s %s\n", condition ? "ok" : "FAIL", what);
        ok &= condition;
    };
    check(pool.is_terminated(), "the pool terminated");
    check(listener.get(), "the listener saw its stop token requested");
    int answered = 0, cancelled = 0;
    for (int i = 0; i < jobs; ++i) {
        try {
            answered += results[i].get() == 2262; // primes below 20,000
        } catch (const crew::cancellation_error&) {
            ++cancelled;
        }
    }
    std::printf("     %d jobs ran, %d were handed back\n", ran.load(), static_cast<int>(handed_back));
    check(answered == ran && ran + static_cast<int>(handed_back) == jobs && cancelled == static_cast<int>(handed_back),
          "every job either ran or was handed back (its future then reports cancellation), none lost");
    bool refused = false;
    try {
        pool.execute([] {});
    } catch (const crew::rejected_execution_error&) {
        refused = true;
    }
    check(refused, "after shutdown the pool refuses new work (abort_policy throws)");

    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
