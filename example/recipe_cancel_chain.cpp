// Recipe: cancelling a straggler through a chain (doc/recipes.md).
//
// A report is built in stages: fetch -> parse -> render, each a then()
// continuation, the first a task that may take long. The user gives up
// (a "cancel" button): cancel(true) on the report's future. The
// cancellation flows up the chain to the stage still running, whose stop
// token is requested, so it stops; the stages after it never run. With
// cancel(false) only the report's future is cancelled: the fetch runs on.
#include <crew/crew.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <latch>
#include <mutex>
#include <stop_token>
#include <string>

namespace {

struct slow_source {
    std::mutex mutex;
    std::condition_variable_any cv;
    bool release = false; // guarded by mutex
    std::atomic<int> stopped{0};
    std::atomic<int> fetched{0};

    std::string fetch(std::stop_token stop, std::latch& started) {
        started.count_down();
        std::unique_lock lock(mutex);
        if (!cv.wait(lock, stop, [&] { return release; })) {
            ++stopped;
            return {};
        }
        ++fetched;
        return "1,2,3";
    }
    void finish() {
        {
            std::lock_guard lock(mutex);
            release = true;
        }
        cv.notify_all();
    }
};

} // namespace

int main() {
    slow_source source;
    crew::fixed_pool pool(2);
    auto report = [&](std::latch& started, std::atomic<int>& later_stages) {
        return pool.submit([&](std::stop_token stop) { return source.fetch(stop, started); })
            .then(pool, [&](std::string text) {
                ++later_stages;
                return text.size();
            })
            .then(pool, [&](std::size_t n) {
                ++later_stages;
                return "report of " + std::to_string(n) + " bytes";
            });
    };

    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        std::printf("%-4s %s\n", condition ? "ok" : "FAIL", what);
        ok &= condition;
    };

    std::atomic<int> first_stages{0};
    std::atomic<int> second_stages{0};
    std::latch first_started(1);
    auto first = report(first_started, first_stages);
    first_started.wait();
    check(first.cancel(true), "cancel(true) on the report's future");
    bool cancelled = false;
    try {
        (void)first.get();
    } catch (const crew::cancellation_error&) {
        cancelled = true;
    }
    check(cancelled, "its get() reports the cancellation at once");

    std::latch second_started(1);
    auto second = report(second_started, second_stages);
    second_started.wait();
    check(second.cancel(false), "cancel(false) on a second report's future");
    source.finish(); // the fetch was not stopped: it ends normally

    pool.shutdown();
    check(pool.await_termination(std::chrono::seconds(60)), "the pool terminated");
    check(source.stopped == 1, "the first fetch saw its stop token: cancel(true) flowed up the chain");
    check(first_stages == 0, "no stage after the stopped fetch ran");
    check(source.fetched == 1, "the second fetch was not stopped: cancel(false) cancels only its future");
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
