// crew::scheduled_pool in one page: a fixed-rate heartbeat, a fixed-delay
// poller, and a timeout that is cancelled because the work beat it.
// Java: Executors.newScheduledThreadPool(2) with scheduleAtFixedRate,
// scheduleWithFixedDelay and schedule.
#include <crew/scheduled_pool.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <latch>
#include <thread>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

int main() {
    crew::scheduled_pool pool(2);
    const auto start = steady::now();
    auto at = [start] {
        return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start).count());
    };
    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        if (!condition) {
            std::printf("FAILED: %s\n", what);
            ok = false;
        }
    };

    // 1. A heartbeat every 40 ms on absolute deadlines: run n is due at
    //    start + n * 40 ms however long the runs before it took.
    std::atomic<int> beats{0};
    std::latch five_beats(5);
    auto heartbeat = pool.schedule_at_fixed_rate(0ms, 40ms, [&] {
        const int n = ++beats;
        if (n <= 5) {
            std::printf("[%4lld ms] heartbeat %d\n", at(), n);
            five_beats.count_down();
        }
    });

    // 2. A poller that asks "is the job done?" 25 ms after each poll ended,
    //    so a slow poll never makes the next one come early.
    std::atomic<int> polls{0};
    std::atomic<bool> job_done{false};
    std::promise<void> poller_saw_done;
    auto poller = pool.schedule_with_fixed_delay(10ms, 25ms, [&] {
        if (job_done) return; // cancelled just now; nothing more to say
        const int n = ++polls;
        const bool done = n == 4;
        std::printf("[%4lld ms] poll %d: %s\n", at(), n, done ? "done" : "pending");
        if (done) {
            job_done = true;
            poller_saw_done.set_value();
        }
    });

    // 3. A timeout of 500 ms guarding work that takes 60 ms: the work wins,
    //    and the cancelled timeout never runs. (It stays queued until purge(),
    //    its due time or shutdown; pool_options::remove_on_cancel drops it at once.)
    std::atomic<bool> timed_out{false};
    auto timeout = pool.schedule(500ms, [&] { timed_out = true; });
    auto work = pool.submit([] {
        std::this_thread::sleep_for(60ms); // stands in for real work
        return 42;
    });
    const int answer = work.get();
    const bool cancelled = timeout.cancel();
    std::printf("[%4lld ms] work answered %d; timeout cancelled with %lld ms to spare\n", at(), answer,
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout.delay()).count()));
    check(answer == 42 && cancelled, "the work beats its timeout");

    five_beats.wait();
    heartbeat.cancel();
    poller_saw_done.get_future().wait();
    poller.cancel();

    // A delayed task still runs after shutdown() (execute_delayed_after_shutdown
    // is true by default); cancelled ones are dropped, so the pool ends as soon
    // as it has run.
    auto last = pool.schedule(30ms, [&] { return at(); });
    pool.shutdown();
    const long long last_ran_at = last.get();
    check(pool.await_termination(5s), "the pool terminates");
    std::printf("[%4lld ms] a task scheduled before shutdown ran at %lld ms; pool terminated\n", at(), last_ran_at);

    check(beats >= 5, "five heartbeats");
    check(polls == 4, "four polls");
    check(!timed_out, "the timeout never fired");
    try {
        heartbeat.get();
        check(false, "a cancelled heartbeat's get() throws");
    } catch (const crew::cancellation_error&) {
    }
    std::puts(ok ? "scheduled: all good" : "scheduled: something went wrong");
    return ok ? 0 : 1;
}
