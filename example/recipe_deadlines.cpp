// Recipe: a deadline per request (doc/recipes.md).
//
// Each request runs as a task that takes a std::stop_token. The caller
// waits for its answer until the request's deadline (future::wait_until);
// a request still unanswered then is cancelled with cancel(true): its
// future reports cancellation_error at once, and the task sees stop
// requested and gives up, which frees its worker. Two of the eight
// requests hit a backend that never answers; the others answer at once.
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <stop_token>
#include <vector>

namespace {

using steady = std::chrono::steady_clock;

// CREW_TEST_TIME_FACTOR (set by the sanitizer builds) stretches the deadline.
double time_factor() {
    const char* text = std::getenv("CREW_TEST_TIME_FACTOR");
    const double factor = text ? std::atof(text) : 1.0;
    return factor > 1.0 ? factor : 1.0;
}

// A backend that answers at once, except for keys 3 and 7, where it hangs
// until the request is stopped.
struct backend {
    std::mutex mutex;
    std::condition_variable_any never;
    std::atomic<int> hung{0}, gave_up{0};

    int lookup(int key, std::stop_token stop) {
        if (key % 4 != 3) return key * 10;
        ++hung;
        std::unique_lock lock(mutex);
        never.wait(lock, stop, [] { return false; }); // returns once stop is requested
        ++gave_up;
        return -1; // nobody reads it: the future was cancelled
    }
};

struct request {
    int key;
    steady::time_point deadline;
    crew::future<int> reply;
};

} // namespace

int main() {
    backend db;
    crew::fixed_pool pool(4);
    const auto budget = std::chrono::duration_cast<steady::duration>(std::chrono::milliseconds(100) * time_factor());

    std::vector<request> requests;
    for (int key = 0; key < 8; ++key) {
        request r{key, steady::now() + budget, {}};
        r.reply = pool.submit([&db, key](std::stop_token stop) { return db.lookup(key, stop); });
        requests.push_back(std::move(r));
    }

    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        std::printf("%-4s %s\n", condition ? "ok" : "FAIL", what);
        ok &= condition;
    };
    int answered = 0, timed_out = 0;
    bool answers_right = true, hung_ones_timed_out = true;
    for (request& r : requests) {
        const bool in_time = r.reply.wait_until(r.deadline) == std::future_status::ready;
        // cancel(true) returns false if the answer came in just after the deadline.
        if (!in_time && r.reply.cancel(true)) ++timed_out; // get() now throws; the task sees stop requested
        if (r.key % 4 == 3) hung_ones_timed_out &= !in_time; // a hung request ends only when cancelled
        try {
            const int value = r.reply.get();
            answers_right &= value == r.key * 10;
            ++answered;
            std::printf("     key %d: %d\n", r.key, value);
        } catch (const crew::cancellation_error&) {
            std::printf("     key %d: no answer by its deadline\n", r.key);
        }
    }
    pool.shutdown();
    check(pool.await_termination(std::chrono::seconds(60)), "the pool terminated: no task kept running");
    check(answers_right && answered + timed_out == 8, "every request answered right or cancelled at its deadline");
    check(hung_ones_timed_out && timed_out >= 2, "the two requests to the hung backend timed out");
    check(db.gave_up == db.hung, "every hung task saw its stop token requested and gave up");

    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
