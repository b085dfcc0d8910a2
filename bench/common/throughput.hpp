// W1 and W2: no-op tasks from `producers` threads into 2 workers; tasks/s.
#ifndef CREW_BENCH_THROUGHPUT_HPP
#define CREW_BENCH_THROUGHPUT_HPP

#include "harness.hpp"
#include "pools.hpp"

#include <latch>
#include <thread>
#include <vector>

namespace bench {

// One pass: a fresh pool of 2, `tasks` no-op tasks split over `producers`
// threads released together; the clock runs from the release until the last
// task has run. Returns millions of tasks per second.
template <class Pool>
double throughput_pass(long tasks, int producers) {
    Pool pool(2);
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

template <class Pool>
values throughput(const options& o, int producers) {
    const long tasks = o.smoke ? 20'000 : 1'000'000;
    (void)throughput_pass<Pool>(tasks / 10, producers); // warm-up
    return {throughput_pass<Pool>(tasks, producers)};
}

inline int throughput_main(int argc, char** argv, const char* id, int producers) {
    const options o = parse(argc, argv);
    auto cs = contenders(o, producers == 1 ? "w1" : "w2", 1,
                         [producers]<class Pool>(const options& opts) { return throughput<Pool>(opts, producers); });
    const std::string title = std::string(o.smoke ? "20,000" : "1,000,000") + " no-op tasks from " +
                              std::to_string(producers) + " producer" + (producers > 1 ? "s" : "") +
                              " into 2 workers";
    return run(id, title, {{"throughput", "million tasks/s", true}}, std::move(cs), o);
}

} // namespace bench

#endif
