// Recipe: a deadline over a fan-out (doc/recipes.md).
//
// A request fans out to six shards, gathers their answers with
// when_all_succeed, post-processes them with then, and must finish within a
// budget: within() on the end of that chain. One shard hangs. When the
// deadline passes, the chain's future fails with timeout_error, and the
// cancellation flows up the chain (within -> then -> when_all_succeed ->
// each shard still running): the hung shard sees its stop token requested
// and frees its worker. Nothing else is kept to cancel it with.
#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <stop_token>
#include <vector>

namespace {

using steady = std::chrono::steady_clock;

double time_factor() {
    const char* text = std::getenv("CREW_TEST_TIME_FACTOR");
    const double factor = text ? std::atof(text) : 1.0;
    return factor > 1.0 ? factor : 1.0;
}

// Shard 4 hangs until its request is stopped; the others answer at once.
struct shards {
    std::mutex mutex;
    std::condition_variable_any never;
    std::atomic<int> gave_up{0};

    int query(int shard, std::stop_token stop) {
        if (shard != 4) return shard * 100;
        std::unique_lock lock(mutex);
        never.wait(lock, stop, [] { return false; }); // returns once stop is requested
        ++gave_up;
        return -1; // nobody reads it: the chain was cancelled
    }
};

} // namespace

int main() {
    shards backend;
    crew::fixed_pool pool(4);
    const auto budget = std::chrono::duration_cast<steady::duration>(std::chrono::milliseconds(200) * time_factor());

    auto fan_out = [&] {
        std::vector<crew::future<int>> parts;
        for (int shard = 0; shard < 6; ++shard)
            parts.push_back(pool.submit([&backend, shard](std::stop_token stop) { return backend.query(shard, stop); }));
        return parts;
    };

    const auto start = steady::now();
    crew::future<int> total = crew::when_all_succeed(fan_out())
                                  .then(pool, [](std::vector<int> answers) {
                                      return std::accumulate(answers.begin(), answers.end(), 0);
                                  })
                                  .within(budget);
    bool timed_out = false;
    try {
        std::printf("     total: %d\n", total.get());
    } catch (const crew::timeout_error&) {
        timed_out = true;
    }
    const auto waited = steady::now() - start;

    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        std::printf("%-4s %s\n", condition ? "ok" : "FAIL", what);
        ok &= condition;
    };
    check(timed_out, "the request failed with timeout_error");
    check(waited >= budget, "not before its deadline");
    pool.shutdown();
    check(pool.await_termination(std::chrono::seconds(60)), "the pool terminated: the hung shard was stopped");
    check(backend.gave_up == 1, "the hung shard saw its stop token through within, then and when_all_succeed");
    std::printf("     waited %lld ms for a %lld ms budget\n",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()),
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(budget).count()));
    // A deadline still pending at exit (its promise is never destroyed)
    // does not keep the process alive: the timer thread is detached.
    static auto* const never = new crew::promise<int>;
    static crew::future<int> pending = never->get_future().within(std::chrono::hours(1));
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
