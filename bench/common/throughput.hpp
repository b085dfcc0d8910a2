// W1 and W2 (and the sweep): no-op tasks from `producers` threads into a pool
// of `workers` (2 unless --workers says otherwise); tasks/s.
#ifndef CREW_BENCH_THROUGHPUT_HPP
#define CREW_BENCH_THROUGHPUT_HPP

#include "harness.hpp"
#include "pools.hpp"

#include <cstdlib>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace bench {

// One pass: a fresh pool of `workers`, `tasks` no-op tasks split over
// `producers` threads released together; the clock runs from the release
// until the last task has run. Returns millions of tasks per second.
template <class Pool>
double throughput_pass(long tasks, int producers, int workers = 2) {
    Pool pool(workers);
    completion done(tasks);
    std::latch go(producers + 1);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&, p] {
            const long mine = tasks / producers + (p < tasks % producers ? 1 : 0);
            go.arrive_and_wait();
            for (long i = 0; i < mine; ++i) pool.execute([&done] { done.hit(); });
        });
    const auto start = clock::now(); // before the release: a producer may finish before this thread runs again
    go.arrive_and_wait();
    done.wait();
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    for (auto& t : threads) t.join();
    count_tasks(tasks); // for --counters (common/counters.hpp), outside the timed region
    return static_cast<double>(tasks) / seconds / 1e6;
}

// A warm-up pass of a tenth of the tasks on its own pool, then the timed one.
template <class Pool>
values throughput(long tasks, int producers, int workers = 2) {
    (void)throughput_pass<Pool>(tasks / 10, producers, workers); // warm-up
    return {throughput_pass<Pool>(tasks, producers, workers)};
}

template <class Pool>
values throughput(const options& o, int producers, int workers = 2) {
    return throughput<Pool>(o.smoke ? 20'000 : 1'000'000, producers, workers);
}

// W1 and W2; `--workers N` sizes every pool N instead of 2 (the tables are
// then <id>_T<N>, so as not to replace the usual ones: W1_T16.md; the Java
// peer, whose pools have 2, is left out).
inline int throughput_main(int argc, char** argv, const char* id, int producers) {
    options o = parse(argc, argv, {{"--workers", "workers in every pool (default 2)", true}});
    const int workers = std::max(1, std::atoi(o.value("--workers", "2").c_str()));
    if (workers != 2) o.java.clear(); // CrewPeers' pools have 2 workers
    auto cs = contenders(o, producers == 1 ? "w1" : "w2", 1, [producers, workers]<class Pool>(const options& opts) {
        return throughput<Pool>(opts, producers, workers);
    });
    const std::string title = std::string(o.smoke ? "20,000" : "1,000,000") + " no-op tasks from " +
                              std::to_string(producers) + " producer" + (producers > 1 ? "s" : "") + " into " +
                              std::to_string(workers) + " workers";
    const std::string table = workers == 2 ? std::string(id) : std::string(id) + "_T" + std::to_string(workers);
    return run(table, title, {{"throughput", "million tasks/s", true}}, std::move(cs), o);
}

} // namespace bench

#endif
