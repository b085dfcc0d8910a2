// The long accounting run: the rounds of test/executor/accounting.cpp (see
// accounting_harness.hpp), over every pool configuration in turn, for as
// long as asked. Prints progress and the resident set size periodically and
// fails (exit 1) at the first round whose counts disagree, or if the RSS
// grew by more than the allowed margin after the warm-up.
//
//   cmake -S test/soak -B build/soak && cmake --build build/soak
//   build/soak/crew_soak --minutes 10
//
// or, without CMake:
//   g++ -std=c++20 -O2 -g -Iinclude test/soak/soak.cpp -o crew_soak -pthread
//
// Options: --minutes M (10), --report-seconds S (30), --tasks N (per producer
// per round, 10000), --producers P (3), --seed X (random), --warmup-seconds W
// (60: RSS baseline taken at the first report after it), --rss-margin-mb MB
// (32: allowed growth above the baseline). See doc/reliability.md.
#include "../executor/accounting_harness.hpp"

#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using crew_accounting::expectations;
using crew_accounting::stop_kind;

struct options {
    double minutes = 10;
    double report_seconds = 30;
    double warmup_seconds = 60;
    int tasks = 10000;
    int producers = 3;
    std::uint64_t seed = 0;
    long rss_margin_mb = 32;
};

long resident_kb() {
    std::ifstream statm("/proc/self/statm");
    long pages_total = 0, pages_resident = 0;
    statm >> pages_total >> pages_resident;
    return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int thread_count() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
    return -1;
}

// One configuration: a name, how to make a fresh pool and run one round on it.
struct configuration {
    std::string name;
    std::function<crew_accounting::round_result(crew_accounting::round_config)> round;
};

template <class Pool, class Make>
configuration make_configuration(std::string name, expectations expect, Make make) {
    return {std::move(name), [expect, make](crew_accounting::round_config config) {
                config.expect = expect;
                auto pool = make();
                return crew_accounting::run_round(*pool, config);
            }};
}

template <class Reject>
configuration bounded(const char* name) {
    using pool = crew::basic_executor<crew::bounded_queue, Reject>;
    return make_configuration<pool>(name, crew_accounting::expectations_for<Reject>(true), [] {
        return std::make_unique<pool>(
            crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 2, .keep_alive = 1ms, .queue_capacity = 32});
    });
}

std::vector<configuration> all_configurations() {
    const auto plain = crew_accounting::expectations_for<crew::abort_policy>(false);
    std::vector<configuration> out;
    out.push_back(make_configuration<crew::fixed_pool>("fixed_pool", plain,
                                                       [] { return std::make_unique<crew::fixed_pool>(2); }));
    out.push_back(make_configuration<crew::cached_pool>("cached_pool", plain, [] {
        auto pool = std::make_unique<crew::cached_pool>();
        pool->set_keep_alive(100us);
        return pool;
    }));
    out.push_back(make_configuration<crew::scheduled_pool>("scheduled_pool", plain,
                                                           [] { return std::make_unique<crew::scheduled_pool>(2); }));
    auto dropping = plain;
    dropping.drops_delayed_at_shutdown = true;
    out.push_back(make_configuration<crew::scheduled_pool>("scheduled_pool(drop delayed)", dropping, [] {
        return std::make_unique<crew::scheduled_pool>(
            crew::pool_options{.core_pool_size = 2, .execute_delayed_after_shutdown = false});
    }));
    out.push_back(bounded<crew::abort_policy>("bounded+abort"));
    out.push_back(bounded<crew::caller_runs_policy>("bounded+caller_runs"));
    out.push_back(bounded<crew::discard_policy>("bounded+discard"));
    out.push_back(bounded<crew::discard_oldest_policy>("bounded+discard_oldest"));
    out.push_back(bounded<crew::block_policy>("bounded+block"));
    // Faults: before_execute throws now and then (the task is skipped, its
    // future rethrows), every 5th task throws (after_execute takes it).
    auto faulty = plain;
    faulty.skips = true;
    configuration hooks = make_configuration<crew::fixed_pool>("fixed_pool(throwing hooks)", faulty, [] {
        auto calls = std::make_shared<std::atomic<std::uint64_t>>(0);
        return std::make_unique<crew::fixed_pool>(crew::pool_options{
            .core_pool_size = 2,
            .before_execute =
                [calls] {
                    if (calls->fetch_add(1) % 7 == 3) {
                        crew_accounting::current_role = crew_accounting::role::worker_skipping;
                        throw crew_accounting::hook_failure{};
                    }
                    crew_accounting::current_role = crew_accounting::role::other;
                },
            .after_execute = [](std::exception_ptr) {},
        });
    });
    auto inner = hooks.round;
    hooks.round = [inner](crew_accounting::round_config config) {
        config.task_throws_every = 5;
        return inner(config);
    };
    out.push_back(std::move(hooks));
    return out;
}

bool parse(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) return nullptr;
            return argv[++i];
        };
        const char* a = argv[i];
        const char* v = nullptr;
        if (!std::strcmp(a, "--minutes") && (v = value())) o.minutes = std::atof(v);
        else if (!std::strcmp(a, "--report-seconds") && (v = value())) o.report_seconds = std::atof(v);
        else if (!std::strcmp(a, "--warmup-seconds") && (v = value())) o.warmup_seconds = std::atof(v);
        else if (!std::strcmp(a, "--tasks") && (v = value())) o.tasks = std::atoi(v);
        else if (!std::strcmp(a, "--producers") && (v = value())) o.producers = std::atoi(v);
        else if (!std::strcmp(a, "--seed") && (v = value())) o.seed = std::strtoull(v, nullptr, 10);
        else if (!std::strcmp(a, "--rss-margin-mb") && (v = value())) o.rss_margin_mb = std::atol(v);
        else {
            std::fprintf(stderr,
                         "usage: %s [--minutes M] [--report-seconds S] [--warmup-seconds W] [--tasks N]\n"
                         "          [--producers P] [--seed X] [--rss-margin-mb MB]\n",
                         argv[0]);
            return false;
        }
    }
    return o.tasks > 0 && o.producers > 0;
}

} // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse(argc, argv, o)) return 2;
    if (o.seed == 0) o.seed = crew_accounting::random_seed();
    std::mt19937_64 seeds(o.seed);

    const auto configurations = all_configurations();
    struct totals {
        std::uint64_t rounds = 0, tasks = 0, ran_worker = 0, ran_caller = 0, rejected = 0, discarded = 0,
                      handed_back = 0, dropped = 0, skipped = 0;
    } t;

    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto end = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.minutes * 60));
    auto next_report = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.report_seconds));
    const auto warmup = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.warmup_seconds));
    long baseline_kb = -1, peak_kb = 0;
    const long start_kb = resident_kb();

    std::printf("crew soak: %.1f min, %d producers x %d tasks per round, %zu configurations x 2 stop kinds, seed "
                "%" PRIu64 "\n",
                o.minutes, o.producers, o.tasks, configurations.size(), o.seed);
    std::printf("%8s %8s %12s %12s %10s %10s %10s %8s %8s %9s %7s\n", "elapsed", "rounds", "tasks", "ran", "rejected",
                "discarded", "handed", "dropped", "skipped", "rss_kb", "threads");
    std::fflush(stdout);

    std::uint64_t reported_rounds = 0;
    auto report = [&](double elapsed) {
        reported_rounds = t.rounds;
        const long rss = resident_kb();
        peak_kb = std::max(peak_kb, rss);
        std::printf("%7.0fs %8" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
                    " %8" PRIu64 " %8" PRIu64 " %9ld %7d\n",
                    elapsed, t.rounds, t.tasks, t.ran_worker + t.ran_caller, t.rejected, t.discarded, t.handed_back,
                    t.dropped, t.skipped, rss, thread_count());
        std::fflush(stdout);
        return rss;
    };

    for (std::size_t i = 0; clock::now() < end; ++i) {
        const configuration& c = configurations[(i / 2) % configurations.size()];
        crew_accounting::round_config config;
        config.producers = o.producers;
        config.tasks_per_producer = o.tasks;
        config.stop = i % 2 == 0 ? stop_kind::shutdown : stop_kind::shutdown_now;
        config.seed = seeds();
        config.termination_limit = 60s;
        const auto result = c.round(config);
        ++t.rounds;
        t.tasks += result.total;
        t.ran_worker += result.ran_worker;
        t.ran_caller += result.ran_caller;
        t.rejected += result.rejected;
        t.discarded += result.discarded;
        t.handed_back += result.handed_back;
        t.dropped += result.dropped_at_shutdown;
        t.skipped += result.skipped;
        if (!result.ok()) {
            std::printf("FAILED: %s, %s, round seed %" PRIu64 ":\n%s\n", c.name.c_str(),
                        crew_accounting::name(config.stop), config.seed, result.report().c_str());
            return 1;
        }
        const auto now = clock::now();
        if (now >= next_report) {
            const long rss = report(std::chrono::duration<double>(now - start).count());
            if (baseline_kb < 0 && now >= warmup) baseline_kb = rss;
            next_report += std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.report_seconds));
        }
    }
    // The last line, unless the periodic report just printed it.
    const long final_kb =
        t.rounds != reported_rounds ? report(std::chrono::duration<double>(clock::now() - start).count()) : resident_kb();
    if (baseline_kb < 0) baseline_kb = final_kb;
    std::printf("done: %" PRIu64 " rounds, %" PRIu64 " tasks, every one accounted for; RSS start %ld kB, baseline "
                "%ld kB, peak %ld kB, final %ld kB\n",
                t.rounds, t.tasks, start_kb, baseline_kb, peak_kb, final_kb);
    if (final_kb > baseline_kb + o.rss_margin_mb * 1024) {
        std::printf("FAILED: RSS grew by %ld kB after the warm-up (margin %ld MB)\n", final_kb - baseline_kb,
                    o.rss_margin_mb);
        return 1;
    }
    return 0;
}
