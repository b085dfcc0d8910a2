// The executors the composition suites (then, when_all, completion_queue,
// task_group, parallel_for, parallel_reduce) run over: each pool kind, a
// caller_runs_policy and a discard_policy mix, each reached directly or
// through a crew::any_executor.
#ifndef CREW_TEST_EXECUTOR_COMPOSITION_SUPPORT_HPP
#define CREW_TEST_EXECUTOR_COMPOSITION_SUPPORT_HPP

#include <crew/any_executor.hpp>
#include <crew/crew.hpp>

#include <memory>
#include <thread>
#include <tuple>

namespace crew_test {

using caller_runs_pool = crew::basic_executor<crew::unbounded_queue, crew::caller_runs_policy>;
using discarding_pool = crew::basic_executor<crew::bounded_queue, crew::discard_policy>;

// A pool of `threads` workers (a cached pool: as many as it needs).
template <class Pool>
std::unique_ptr<Pool> make_setup_pool(int threads) {
    if constexpr (std::is_same_v<Pool, crew::cached_pool>) return std::make_unique<Pool>();
    else return std::make_unique<Pool>(threads);
}

// A pool of kind `Pool` with `Threads` workers, and how the test reaches it:
// the pool itself, or (Erased) a crew::any_executor of it.
template <class Pool, bool Erased, int Threads = 2>
struct executor_setup {
    std::unique_ptr<Pool> owned = make_setup_pool<Pool>(Threads);
    Pool& pool = *owned;
    decltype(auto) ex() {
        if constexpr (Erased) return crew::any_executor(pool);
        else return (pool);
    }
};

using executor_setups = std::tuple<executor_setup<crew::fixed_pool, false>, executor_setup<crew::cached_pool, false>,
                                   executor_setup<crew::scheduled_pool, false>, executor_setup<caller_runs_pool, false>,
                                   executor_setup<discarding_pool, false>, executor_setup<crew::fixed_pool, true>,
                                   executor_setup<crew::scheduled_pool, true>, executor_setup<discarding_pool, true>>;

// The loops and groups that need a helper to take part need two hardware
// threads: a loop uses at most that many.
inline bool one_hardware_thread() { return std::thread::hardware_concurrency() < 2; }

} // namespace crew_test

#endif
