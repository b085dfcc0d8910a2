// W3: submit -> get round trip on a pool of 2, 100,000 times (p50/p99 us).
#include "common/harness.hpp"
#include "common/pools.hpp"

#include <algorithm>
#include <vector>


namespace {

template <class Pool>
bench::values round_trips(const bench::options& o) {
    const int n = o.smoke ? 2'000 : 100'000;
    Pool pool(2);
    long sink = 0;
    for (int i = 0; i < n / 10; ++i) sink += bench::round_trip(pool, [i] { return i; }); // warm-up
    std::vector<double> us(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const auto start = bench::clock::now();
        sink += bench::round_trip(pool, [i] { return i; });
        us[static_cast<std::size_t>(i)] = std::chrono::duration<double, std::micro>(bench::clock::now() - start).count();
    }
    std::sort(us.begin(), us.end());
    if (sink == 42) std::puts(""); // keep the results alive
    return {bench::quantile(us, 0.5), bench::quantile(us, 0.99)};
}

} // namespace

int main(int argc, char** argv) {
    const bench::options o = bench::parse(argc, argv);
    const bool pinned = bench::pin_to_one_cpu();
    auto cs =
        bench::contenders(o, "w3", 2, []<class Pool>(const bench::options& opts) { return round_trips<Pool>(opts); });
    return bench::run("W3",
                      std::string("submit -> get round trip on a pool of 2, ") + (o.smoke ? "2,000" : "100,000") +
                          " times" + (pinned ? ", pinned to one CPU" : " (could not pin to one CPU)"),
                      {{"p50 latency", "us", false}, {"p99 latency", "us", false}}, std::move(cs), o);
}
