// W5: a pool of 64 threads, all started, then idle for 5 s: the process CPU
// time over those 5 s, and how much the resident set grew with the pool.
#include "common/harness.hpp"
#include "common/pools.hpp"

#include <latch>
#include <thread>

namespace {

template <class Pool>
bench::values idle(const bench::options& o) {
    const int threads = o.smoke ? 8 : 64;
    const auto quiet = o.smoke ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000);
    const long rss_before = bench::rss_kib();
    Pool pool(threads);
    // Make every thread exist and run: each task waits for all the others,
    // and this thread for all of them.
    std::latch all(threads + 1);
    for (int i = 0; i < threads; ++i) pool.execute([&all] { all.arrive_and_wait(); });
    all.arrive_and_wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // let the workers settle into their idle wait
    const auto cpu_before = bench::process_cpu_time();
    std::this_thread::sleep_for(quiet);
    const auto cpu = bench::process_cpu_time() - cpu_before;
    const long rss_after = bench::rss_kib();
    return {std::chrono::duration<double, std::milli>(cpu).count(), static_cast<double>(rss_after - rss_before) / 1024.0};
}

} // namespace

int main(int argc, char** argv) {
    const bench::options o = bench::parse(argc, argv);
    auto cs = bench::contenders(o, "w5", 2, []<class Pool>(const bench::options& opts) { return idle<Pool>(opts); });
    return bench::run("W5",
                      std::string("a pool of ") + (o.smoke ? "8" : "64") + " threads idle for " +
                          (o.smoke ? "0.2" : "5") + " s",
                      {{"CPU time while idle", "ms", false}, {"resident set growth", "MiB", false}}, std::move(cs), o);
}
