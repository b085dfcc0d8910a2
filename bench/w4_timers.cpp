// W4: 100,000 delayed tasks, delays uniform in [0, 2 s], on 2 threads:
// lateness (start - due) p50/p99/max in us, the process CPU time, the cost of
// one schedule() call (the scheduling loop's wall time / n), and the lateness
// p50/p99 of the tasks due during that loop (the burst) and after it.
//
// --slack-sweep: crew's contenders are scheduled_pool at its default timer
// slack (10 us) and at pool_options::timer_slack = 1, 5, 50 us and 0 (the
// system's); the peers stay.
#include "common/harness.hpp"
#include "common/pools.hpp"

#include <algorithm>
#include <fstream>
#include <random>
#include <vector>

namespace {

// The metrics, in the order timers() and CrewPeers.timers() return them.
enum : std::size_t {
    p50,
    p99,
    max,
    cpu,
    per_schedule,
    burst_p50,
    burst_p99,
    after_p50,
    after_p99,
    n_metrics
};

template <class Pool>
bench::values timers(const bench::options& o) {
    const int n = o.smoke ? 2'000 : 100'000;
    const auto span = o.smoke ? std::chrono::milliseconds(200) : std::chrono::milliseconds(2000);
    std::mt19937_64 rng(1234);
    std::uniform_int_distribution<std::int64_t> delay(0, std::chrono::nanoseconds(span).count());
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(n)); // due - base, ns: drawn before the clock starts
    for (auto& x : offsets) x = delay(rng);
    std::vector<std::int64_t> late(static_cast<std::size_t>(n));
    bench::completion done(n);

    Pool pool(2);
    const auto cpu_before = bench::process_cpu_time();
    const auto base = bench::clock::now();
    for (int i = 0; i < n; ++i) {
        const auto due = base + std::chrono::nanoseconds(offsets[static_cast<std::size_t>(i)]);
        pool.schedule_at(due, [&late, &done, i, due] {
            late[static_cast<std::size_t>(i)] = (bench::clock::now() - due).count();
            done.hit();
        });
    }
    const auto loop_end = bench::clock::now();
    done.wait();
    const auto cpu_time = bench::process_cpu_time() - cpu_before;

    // All tasks, and those due before the loop ended (the burst) or after.
    std::vector<double> us, burst, after;
    us.reserve(late.size());
    for (std::size_t i = 0; i < late.size(); ++i) {
        const double x = static_cast<double>(late[i]) / 1000.0;
        us.push_back(x);
        (base + std::chrono::nanoseconds(offsets[i]) < loop_end ? burst : after).push_back(x);
    }
    for (auto* v : {&us, &burst, &after}) std::sort(v->begin(), v->end());
    if (!o.out_dir.empty() && o.rep == 0) {
        // The distribution, for the plot: 1000 quantiles.
        std::ofstream out(o.out_dir + "/W4_lateness_" + bench::slug(o.contender) + ".dat");
        for (int q = 0; q <= 1000; ++q) out << bench::quantile(us, q / 1000.0) << " " << q / 1000.0 << "\n";
    }
    bench::values v(n_metrics);
    v[p50] = bench::quantile(us, 0.5);
    v[p99] = bench::quantile(us, 0.99);
    v[max] = us.back();
    v[cpu] = std::chrono::duration<double>(cpu_time).count();
    v[per_schedule] = std::chrono::duration<double, std::nano>(loop_end - base).count() / n;
    v[burst_p50] = bench::quantile(burst, 0.5);
    v[burst_p99] = bench::quantile(burst, 0.99);
    v[after_p50] = bench::quantile(after, 0.5);
    v[after_p99] = bench::quantile(after, 0.99);
    return v;
}

} // namespace

int main(int argc, char** argv) {
    const bench::options o =
        bench::parse(argc, argv,
                     {{"--slack-sweep", "crew scheduled_pool at timer_slack default (10 us), 1, 5, 50 us and 0 = the system's (peers kept)"}});
    const bool sweep = o.has("--slack-sweep");
    auto measure = []<class Pool>(const bench::options& opts) { return timers<Pool>(opts); };
    auto cs = sweep ? bench::contenders<bench::pool_set::slack_sweep>(o, "w4", n_metrics, measure, {"stpe"})
                    : bench::contenders<bench::pool_set::schedule>(o, "w4", n_metrics, measure, {"stpe"});
    std::vector<bench::metric> metrics(n_metrics);
    metrics[p50] = {"lateness p50", "us", false};
    metrics[p99] = {"lateness p99", "us", false};
    metrics[max] = {"lateness max", "us", false};
    metrics[cpu] = {"process CPU time", "s", false};
    metrics[per_schedule] = {"schedule() per call", "ns", false};
    metrics[burst_p50] = {"lateness p50, due in the burst", "us", false};
    metrics[burst_p99] = {"lateness p99, due in the burst", "us", false};
    metrics[after_p50] = {"lateness p50, due after the burst", "us", false};
    metrics[after_p99] = {"lateness p99, due after the burst", "us", false};
    bench::report_layout layout;
    layout.note = "Lateness is start − due. `schedule() per call` is the wall time of the loop that schedules "
                  "every task (the burst; the due times are drawn before it) divided by their number. "
                  "`due in the burst`: the tasks due before that loop ended; `due after the burst`: the others.";
    if (sweep)
        layout.note += " Timer-slack sweep: crew scheduled_pool with `pool_options::timer_slack` left at 0 (the "
                       "thread's slack untouched, 50 us by default) and set to 1, 5, 10 and 50 us.";
    layout.summary_title = "lateness of all tasks, of those due in the burst and of those due after it; CPU; "
                           "schedule() per call";
    layout.summary = {{p50, "p50, us"},          {p99, "p99, us"},
                      {max, "max, us"},          {burst_p50, "burst p50, us"},
                      {burst_p99, "burst p99, us"}, {after_p50, "after p50, us"},
                      {after_p99, "after p99, us"}, {cpu, "CPU, s"},
                      {per_schedule, "schedule(), ns/call"}};
    return bench::run("W4",
                      std::string(o.smoke ? "2,000" : "100,000") + " delayed tasks, delays uniform in [0, " +
                          (o.smoke ? "0.2" : "2") + " s], on 2 threads" + (sweep ? ", timer-slack sweep" : ""),
                      metrics, std::move(cs), o, layout);
}
