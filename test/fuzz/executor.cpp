// libFuzzer target: a pool driven by random sequences of public calls.
//
// The first byte picks the pool (fixed, cached, bounded with each reject
// policy, priority, scheduled); the rest is a sequence of operations:
// execute, submit, schedule (once, fixed rate, fixed delay), tasks that
// throw or that call back into the pool (submit, shutdown), cancel (with or
// without interrupt), set_core_pool_size / set_maximum_pool_size (valid or
// not), set_keep_alive, allow_core_thread_timeout, prestart, purge,
// shutdown, shutdown_now (whose tasks are run or destroyed), wait_idle and
// waits on futures. After each step the invariants are checked: core <= max,
// workers within the largest maximum ever set, completed <= task_count, a
// refused setter changes nothing, a bounded queue within its capacity. At the
// end the pool is shut down and must terminate; then every future is done,
// every one-off task ran at most once, every task a worker took went through
// both hooks, and task_count == completed_task_count.
//
// Threads make runs slightly nondeterministic; a finding is reproduced by
// running the crashing input a few times. Build and run: test/fuzz/run.sh.
#include <crew/crew.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include "check.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace {

using namespace std::chrono_literals;

using crew_fuzz::fail;

constexpr int max_ops = 48;
constexpr int max_tasks = 64;

struct injected {};

// What the tasks of one input share. Outlives the pool.
struct record {
    std::atomic<int> runs[max_tasks + 1] = {};
    std::atomic<std::uint64_t> before_calls{0}, after_calls{0};
};

template <class Pool>
class driver {
  public:
    driver(FuzzedDataProvider& in, crew::pool_options options) : in_(in) {
        options.before_execute = [r = &record_] { r->before_calls.fetch_add(1); };
        options.after_execute = [r = &record_](std::exception_ptr) { r->after_calls.fetch_add(1); };
        pool_.emplace(options);
        max_ever_ = std::max(options.maximum_pool_size, options.core_pool_size);
    }

    void run() {
        for (int step = 0; step < max_ops && in_.remaining_bytes() > 0; ++step) {
            operate(in_.ConsumeIntegralInRange<int>(0, 19));
            check_invariants();
        }
        finish();
    }

  private:
    static constexpr bool scheduling = requires(Pool& p) { p.schedule(1ms, [] {}); };
    static constexpr bool blocking = std::is_same_v<typename Pool::reject_policy_type, crew::block_policy>;

    // A task body: counts its runs; may throw; may call back into the pool.
    auto body(int id, int kind) {
        record* r = &record_;
        Pool* pool = &*pool_;
        return [r, pool, id, kind] {
            r->runs[id].fetch_add(1);
            if (kind == 1) throw injected{};
            if (kind == 2) {
                try {
                    pool->execute([] {});
                } catch (const crew::rejected_execution_error&) {
                }
            }
            if (kind == 3) pool->shutdown();
        };
    }

    int next_id() { return tasks_ < max_tasks ? ++tasks_ : 0; } // 0: shared, not checked for "at most once"

    void operate(int op) {
        Pool& pool = *pool_;
        int kind = in_.ConsumeIntegralInRange<int>(0, 8) < 7 ? 0 : in_.ConsumeIntegralInRange<int>(1, 3);
        // A task that submits to its own full pool under block_policy waits
        // for room only it could make: a deadlock by design, not a finding.
        if (blocking && kind == 2) kind = 0;
        try {
            switch (op) {
            case 0:
            case 1: pool.execute(body(next_id(), kind)); break;
            case 2:
            case 3: {
                const int id = next_id();
                futures_.push_back(crew::future<void>(pool.submit(body(id, kind))));
                break;
            }
            case 4:
                if constexpr (scheduling) {
                    const auto delay = std::chrono::microseconds(in_.ConsumeIntegralInRange<int>(-100, 2000));
                    futures_.push_back(crew::future<void>(pool.schedule(delay, body(next_id(), kind))));
                }
                break;
            case 5:
                if constexpr (scheduling) {
                    const auto first = std::chrono::microseconds(in_.ConsumeIntegralInRange<int>(0, 500));
                    const auto period = std::chrono::microseconds(in_.ConsumeIntegralInRange<int>(1, 500));
                    // Periodic bodies run many times: id 0, not checked for "once".
                    auto f = in_.ConsumeBool() ? pool.schedule_at_fixed_rate(first, period, body(0, kind))
                                               : pool.schedule_with_fixed_delay(first, period, body(0, kind));
                    futures_.push_back(std::move(f));
                    ++periodic_;
                }
                break;
            case 6:
                if (!futures_.empty()) {
                    auto& f = futures_[in_.ConsumeIntegralInRange<std::size_t>(0, futures_.size() - 1)];
                    if (f.valid()) f.cancel(in_.ConsumeBool());
                }
                break;
            case 7: resize(true); break;
            case 8: resize(false); break;
            case 9: {
                const auto keep_alive = std::chrono::nanoseconds(in_.ConsumeIntegralInRange<std::int64_t>(-1, 2'000'000));
                const auto before = pool.keep_alive();
                try {
                    pool.set_keep_alive(keep_alive);
                    CHECK(pool.keep_alive() == keep_alive);
                } catch (const std::invalid_argument&) {
                    CHECK(pool.keep_alive() == before); // refused: nothing changed
                }
                break;
            }
            case 10: {
                const bool allow = in_.ConsumeBool();
                const bool before = pool.allows_core_thread_timeout();
                try {
                    pool.allow_core_thread_timeout(allow);
                    CHECK(pool.allows_core_thread_timeout() == allow);
                } catch (const std::invalid_argument&) {
                    CHECK(pool.allows_core_thread_timeout() == before);
                }
                break;
            }
            case 11: (void)(in_.ConsumeBool() ? pool.prestart_all_core_threads() : pool.prestart_core_thread()); break;
            case 12: (void)pool.purge(); break;
            case 13:
                if (in_.ConsumeIntegralInRange<int>(0, 3) == 0) pool.shutdown();
                break;
            case 14:
                if (in_.ConsumeIntegralInRange<int>(0, 3) == 0) {
                    std::vector<crew::task> unrun = pool.shutdown_now();
                    // Handed back tasks may be run here (once) or destroyed.
                    for (auto& t : unrun)
                        if (in_.ConsumeBool()) {
                            try {
                                t();
                            } catch (const injected&) {
                            }
                        }
                }
                break;
            case 15:
                // Idle means nothing queued or running: not with a periodic task alive.
                if (periodic_ == 0 && !pool.is_shutdown()) pool.wait_idle();
                break;
            case 16:
                if (!futures_.empty()) {
                    auto& f = futures_[in_.ConsumeIntegralInRange<std::size_t>(0, futures_.size() - 1)];
                    if (f.valid()) (void)f.wait_for(std::chrono::microseconds(in_.ConsumeIntegralInRange<int>(-10, 200)));
                }
                break;
            case 17: pool.execute(crew::with_priority(in_.ConsumeIntegral<int>(), body(next_id(), kind))); break;
            case 18: {
                const std::vector<std::function<void()>> batch(in_.ConsumeIntegralInRange<std::size_t>(1, 3),
                                                               [] {});
                if (!pool.is_shutdown() && periodic_ == 0) (void)pool.invoke_all(batch);
                break;
            }
            default:
                (void)pool.await_termination(std::chrono::microseconds(in_.ConsumeIntegralInRange<int>(-5, 100)));
                break;
            }
        } catch (const crew::rejected_execution_error&) {
            CHECK(refusals_allowed_ || pool.is_shutdown());
        } catch (const injected&) {
            // a task run by caller_runs_policy (or by us, above) threw: it propagates
        }
    }

    void resize(bool core) {
        Pool& pool = *pool_;
        const auto size = in_.ConsumeIntegralInRange<std::size_t>(0, 5);
        const auto old_core = pool.core_pool_size(), old_max = pool.maximum_pool_size();
        try {
            if (core) pool.set_core_pool_size(size);
            else pool.set_maximum_pool_size(size);
            CHECK((core ? pool.core_pool_size() : pool.maximum_pool_size()) == size);
            max_ever_ = std::max(max_ever_, size);
        } catch (const std::invalid_argument&) {
            CHECK(pool.core_pool_size() == old_core && pool.maximum_pool_size() == old_max, size);
        }
    }

    void check_invariants() {
        Pool& pool = *pool_;
        CHECK(pool.core_pool_size() <= pool.maximum_pool_size(), pool.core_pool_size(), pool.maximum_pool_size());
        CHECK(pool.maximum_pool_size() > 0);
        // Lowering the maximum retires busy workers only after their task, so
        // the bound is the largest maximum ever set.
        CHECK(pool.pool_size() <= max_ever_, pool.pool_size(), max_ever_);
        CHECK(pool.largest_pool_size() <= max_ever_, pool.largest_pool_size(), max_ever_);
        const auto completed = pool.completed_task_count(); // read first: task_count only grows past it
        CHECK(completed <= pool.task_count(), completed, pool.task_count());
        CHECK(pool.queue_size() <= pool.queue_capacity() || pool.queue_capacity() == 0, pool.queue_size(),
              pool.queue_capacity());
        if (pool.is_terminated()) CHECK(pool.pool_size() == 0u && pool.is_shutdown());
    }

    void finish() {
        Pool& pool = *pool_;
        pool.shutdown();
        if (!pool.await_termination(20s)) fail("the pool did not terminate after shutdown()", pool.queue_size(),
                                               pool.pool_size());
        CHECK(pool.pool_size() == 0u);
        CHECK(pool.queue_size() == 0u);
        CHECK(pool.task_count() == pool.completed_task_count(), pool.task_count(), pool.completed_task_count());
        CHECK(record_.before_calls.load() == pool.completed_task_count(), record_.before_calls.load(),
              pool.completed_task_count());
        CHECK(record_.after_calls.load() == pool.completed_task_count(), record_.after_calls.load(),
              pool.completed_task_count());
        for (auto& f : futures_) CHECK(f.is_done()); // no future hangs
        for (int id = 1; id <= max_tasks; ++id) CHECK(record_.runs[id].load() <= 1, id, record_.runs[id].load());
        futures_.clear();
        pool_.reset(); // the destructor joins every worker
    }

    FuzzedDataProvider& in_;
    record record_;
    std::optional<Pool> pool_;
    std::vector<crew::future<void>> futures_;
    std::size_t max_ever_ = 0;
    int tasks_ = 0;
    int periodic_ = 0;

  public:
    bool refusals_allowed_ = false;
};

template <class Pool>
void drive(FuzzedDataProvider& in, crew::pool_options options, bool refusals_allowed) {
    driver<Pool> d(in, options);
    d.refusals_allowed_ = refusals_allowed;
    d.run();
}

crew::pool_options small(FuzzedDataProvider& in) {
    crew::pool_options o;
    o.maximum_pool_size = in.ConsumeIntegralInRange<std::size_t>(1, 4);
    o.core_pool_size = in.ConsumeIntegralInRange<std::size_t>(0, o.maximum_pool_size);
    o.keep_alive = std::chrono::microseconds(in.ConsumeIntegralInRange<int>(1, 2000));
    o.allow_core_thread_timeout = in.ConsumeBool();
    o.queue_capacity = in.ConsumeIntegralInRange<std::size_t>(1, 8);
    return o;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    const int pool = in.ConsumeIntegralInRange<int>(0, 8);
    crew::pool_options options = small(in);
    switch (pool) {
    case 0: drive<crew::fixed_pool>(in, options, false); break;
    case 1: {
        crew::pool_options cached = crew::synchronous_queue::default_options();
        cached.maximum_pool_size = options.maximum_pool_size; // a cached pool that may also be full
        cached.keep_alive = options.keep_alive;
        drive<crew::cached_pool>(in, cached, true);
        break;
    }
    case 2: drive<crew::basic_executor<crew::bounded_queue, crew::abort_policy>>(in, options, true); break;
    case 3: drive<crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy>>(in, options, true); break;
    case 4: drive<crew::basic_executor<crew::bounded_queue, crew::discard_policy>>(in, options, true); break;
    case 5: drive<crew::basic_executor<crew::bounded_queue, crew::discard_oldest_policy>>(in, options, true); break;
    case 6: drive<crew::basic_executor<crew::bounded_queue, crew::block_policy>>(in, options, true); break;
    case 7: drive<crew::basic_executor<crew::priority_queue>>(in, options, false); break;
    default: drive<crew::scheduled_pool>(in, options, false); break;
    }
    return 0;
}
