// Microbenchmark of one submit -> get round trip (Google Benchmark; built
// when Debian's libbenchmark-dev is installed):
//
//   round_trip/crew::fixed_pool/threads:N/one_cpu:P
//       pool.submit(f).get() on a fixed pool of N workers (bench::crew_fixed:
//       core = max = N, prestarted)
//   round_trip/textbook::mutex_cv_deque/threads:N/one_cpu:P
//       the same through std::promise on bench::textbook_pool
//
// The pools and bench::round_trip are W3's (bench/common/pools.hpp).
// one_cpu:1 pins the submitting thread and the pool's workers to one CPU, as
// W3 does: the hand-off alone. one_cpu:0 leaves them free, so a round trip
// may also pay for waking a worker on the other CPU (on a VM, an idle vCPU
// can take tens of microseconds to wake: expect bimodal results there).
// Results: items_per_second (round trips per second), real time.
//
//   build/bench/micro_round_trip
//   bash bench/run.sh --micro
#include "common/pools.hpp"

#include <benchmark/benchmark.h>

#include <sched.h>

#include <optional>
#include <string>

namespace {

// While it lives, the calling thread (and the threads it starts, which
// inherit its mask) may run on the first CPU it was allowed only.
class pinned_to_one_cpu {
  public:
    pinned_to_one_cpu() {
        if (::sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &saved_)) {
                cpu_set_t one;
                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                pinned_ = ::sched_setaffinity(0, sizeof one, &one) == 0;
                return;
            }
    }
    ~pinned_to_one_cpu() {
        if (pinned_) ::sched_setaffinity(0, sizeof saved_, &saved_);
    }
    pinned_to_one_cpu(const pinned_to_one_cpu&) = delete;
    pinned_to_one_cpu& operator=(const pinned_to_one_cpu&) = delete;
    bool pinned() const { return pinned_; }

  private:
    cpu_set_t saved_{};
    bool pinned_ = false;
};

template <class Pool>
void round_trip(benchmark::State& state) {
    std::optional<pinned_to_one_cpu> pin;
    if (state.range(1) != 0 && !pin.emplace().pinned()) {
        state.SkipWithError("could not pin to one CPU");
        return;
    }
    Pool pool(static_cast<int>(state.range(0))); // after pinning: the workers inherit the mask
    long sink = 0;
    int i = 0;
    for (auto _ : state) {
        sink += bench::round_trip(pool, [i] { return i; });
        ++i;
    }
    benchmark::DoNotOptimize(sink);
    state.SetItemsProcessed(state.iterations());
}

template <class Pool>
void add(const std::string& name) {
    benchmark::RegisterBenchmark(("round_trip/" + name).c_str(), round_trip<Pool>)
        ->ArgNames({"threads", "one_cpu"})
        ->ArgsProduct({{1, 2}, {0, 1}})
        ->UseRealTime();
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    add<bench::crew_fixed>("crew::fixed_pool");
    add<bench::textbook_pool>("textbook::mutex_cv_deque");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
