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

// A source whose fetch `id` ends when finish(id) is called, or when its stop
// token is requested first. (Each fetch waits for its own id: a fetch that
// a cancel(true) stopped must not see the release meant for another, even
// if it reaches its wait only after that release.)
struct slow_source {
    std::mutex mutex;
    std::condition_variable_any cv;
    int released = 0; // guarded by mutex
    std::atomic<int> stopped{0};
    std::atomic<int> fetched{0};

    std::string fetch(int id, std::stop_token stop, std::latch& started) {
        started.count_down();
        std::unique_lock lock(mutex);
        if (!cv.wait(lock, stop, [&] { return released == id; })) {
            ++stopped;
            return {};
        }
        ++fetched;
        return "1,2,3";
    }
    void finish(int id) {
        {
            std::lock_guard lock(mutex);
            released = id;
        }
        cv.notify_all();
    }
};

} // namespace

int main() {
    slow_source source;
    crew::fixed_pool pool(2);
    auto report = [&](int id, std::latch& started, std::atomic<int>& later_stages) {
        return pool.submit([&, id](std::stop_token stop) { return source.fetch(id, stop, started); })
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
    auto first = report(1, first_started, first_stages);
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
    auto second = report(2, second_started, second_stages);
    second_started.wait();
    check(second.cancel(false), "cancel(false) on a second report's future");
    source.finish(2); // the second fetch was not stopped: it ends normally

    pool.shutdown();
    check(pool.await_termination(std::chrono::seconds(60)), "the pool terminated");
    check(source.stopped == 1, "the first fetch saw its stop token: cancel(true) flowed up the chain");
    check(first_stages == 0, "no stage after the stopped fetch ran");
    check(source.fetched == 1, "the second fetch was not stopped: cancel(false) cancels only its future");
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
