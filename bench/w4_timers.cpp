// W4: 100,000 delayed tasks, delays uniform in [0, 2 s], on 2 threads:
// lateness (start - due) p50/p99/max in us, and the process CPU time.
#include "common/harness.hpp"
#include "common/pools.hpp"

#include <algorithm>
#include <fstream>
#include <random>
#include <vector>

namespace {

template <class Pool>
bench::values timers(const bench::options& o) {
    const int n = o.smoke ? 2'000 : 100'000;
    const auto span = o.smoke ? std::chrono::milliseconds(200) : std::chrono::milliseconds(2000);
    std::mt19937_64 rng(1234);
    std::uniform_int_distribution<std::int64_t> delay(0, std::chrono::nanoseconds(span).count());
    std::vector<std::int64_t> late(static_cast<std::size_t>(n));
    bench::completion done(n);

    Pool pool(2);
    const auto cpu_before = bench::process_cpu_time();
    const auto base = bench::clock::now();
    for (int i = 0; i < n; ++i) {
        const auto due = base + std::chrono::nanoseconds(delay(rng));
        pool.schedule_at(due, [&late, &done, i, due] {
            late[static_cast<std::size_t>(i)] = (bench::clock::now() - due).count();
            done.hit();
        });
    }
    done.wait();
    const auto cpu = bench::process_cpu_time() - cpu_before;

    std::vector<double> us;
    us.reserve(late.size());
    for (auto ns : late) us.push_back(static_cast<double>(ns) / 1000.0);
    std::sort(us.begin(), us.end());
    if (!o.out_dir.empty() && o.rep == 0) {
        // The distribution, for the plot: 1000 quantiles.
        std::ofstream out(o.out_dir + "/W4_lateness_" + bench::slug(o.contender) + ".dat");
        for (int q = 0; q <= 1000; ++q) out << bench::quantile(us, q / 1000.0) << " " << q / 1000.0 << "\n";
    }
    return {bench::quantile(us, 0.5), bench::quantile(us, 0.99), us.back(),
            std::chrono::duration<double>(cpu).count()};
}

} // namespace

int main(int argc, char** argv) {
    const bench::options o = bench::parse(argc, argv);
    auto cs = bench::contenders<true>(
        o, "w4", 4, []<class Pool>(const bench::options& opts) { return timers<Pool>(opts); }, {"stpe"});
    return bench::run("W4",
                      std::string(o.smoke ? "2,000" : "100,000") + " delayed tasks, delays uniform in [0, " +
                          (o.smoke ? "0.2" : "2") + " s], on 2 threads",
                      {{"lateness p50", "us", false},
                       {"lateness p99", "us", false},
                       {"lateness max", "us", false},
                       {"process CPU time", "s", false}},
                      std::move(cs), o);
}
