// A coroutine pipeline on crew pools: stages hop between a CPU pool and a
// scheduled pool with resume_on, wait with sleep_for and co_await each
// other's futures; no thread blocks while a stage waits.
#include <crew/coroutine.hpp>
#include <crew/crew.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace std::chrono_literals;

// CPU work: a sum of squares, run wherever the caller is.
crew::coroutine<long> sum_of_squares(int n) {
    long sum = 0;
    for (int i = 1; i <= n; ++i) sum += static_cast<long>(i) * i;
    co_return sum;
}

// One item through the pipeline: computed on the CPU pool, then held back
// by a timer (a rate limit, say) on the scheduled pool, then reported.
crew::coroutine<long> process(int item, crew::fixed_pool& cpu, crew::scheduled_pool& timers, bool& hopped) {
    co_await crew::resume_on(cpu);
    const bool on_cpu = cpu.get_executor().running_in_this_thread();
    const long value = co_await sum_of_squares(item); // inline, by symmetric transfer
    co_await crew::sleep_for(timers, 10ms);            // no thread blocks while it sleeps
    hopped = on_cpu && timers.get_executor().running_in_this_thread();
    co_return value;
}

// Fans the items out as coroutines of their own and awaits their futures.
crew::coroutine<long> pipeline(crew::fixed_pool& cpu, crew::scheduled_pool& timers, std::array<bool, 8>& hops) {
    std::vector<crew::future<long>> parts;
    for (std::size_t i = 0; i < hops.size(); ++i)
        parts.push_back(crew::spawn(cpu, process(static_cast<int>(i + 1) * 100, cpu, timers, hops[i])));
    long total = 0;
    for (auto& part : parts) total += co_await part; // resumes on whichever thread completed it
    co_return total;
}

int main() {
    crew::fixed_pool cpu(2);
    crew::scheduled_pool timers(1);
    std::array<bool, 8> hops{};
    const auto start = std::chrono::steady_clock::now();
    const long total = crew::spawn(cpu, pipeline(cpu, timers, hops)).get();
    const auto took = std::chrono::steady_clock::now() - start;

    long expected = 0;
    for (int item = 1; item <= 8; ++item)
        for (long i = 1; i <= item * 100; ++i) expected += i * i;
    const bool all_hopped = std::all_of(hops.begin(), hops.end(), [](bool hopped) { return hopped; });

    std::printf("total %ld (expected %ld), %lld ms for 8 items that each slept 10 ms\n", total, expected,
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
    std::printf("each stage ran on the CPU pool, then resumed on the timer pool: %s\n", all_hopped ? "yes" : "no");
    const bool ok = total == expected && all_hopped && took >= 10ms;
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
