// The accounting harness shared by test/executor/accounting.cpp (bounded, in
// CI) and test/soak/soak.cpp (long runs by hand). No test framework here: a
// round returns its figures and a list of the rules it saw broken.
//
// A round: `producers` threads push tasks into a pool (execute, submit, and
// on a scheduled pool schedule/schedule_at with small delays) while a stopper
// thread calls shutdown() or shutdown_now() once a random number of tasks has
// been pushed. Every task carries a `tracked` callable that writes its fate
// into a ledger exactly once:
//
//   ran_worker   run by a worker of the pool
//   ran_caller   run by caller_runs_policy on the producer
//   rejected     refused with an exception from execute/submit
//   discarded    dropped by the reject policy (its future: rejected_execution_error)
//   handed_back  returned by shutdown_now() and destroyed by the stopper
//                (its future: cancellation_error)
//   dropped_at_shutdown  dropped by a scheduled pool's shutdown policy inside
//                shutdown() (execute_delayed_after_shutdown = false only)
//   skipped      not run because before_execute threw (fault injection: the
//                hook sets role::worker_skipping before it throws
//                hook_failure; the future rethrows that)
//
// With `task_throws_every = n`, every n-th task throws task_failure after it
// ran (the future rethrows it; it still counts as run).
//
// A task that gets two fates, none, or dies anywhere else, breaks a rule; so
// do counts that disagree with the pool's statistics or with the futures.
#ifndef CREW_TEST_EXECUTOR_ACCOUNTING_HARNESS_HPP
#define CREW_TEST_EXECUTOR_ACCOUNTING_HARNESS_HPP

#include <crew/crew.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <latch>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace crew_accounting {

enum class fate : std::uint8_t {
    none,
    ran_worker,
    ran_caller,
    discarded, // destroyed unrun on a producer thread (turned into `rejected` if the producer saw an exception)
    rejected,
    handed_back,
    dropped_at_shutdown,
    skipped,
    died_elsewhere, // destroyed unrun where no rule allows it: a lost task
};

// What injected faults throw, so that a future's exception says where it came from.
struct task_failure {};
struct hook_failure {};

inline const char* name(fate f) {
    switch (f) {
    case fate::none: return "none";
    case fate::ran_worker: return "ran_worker";
    case fate::ran_caller: return "ran_caller";
    case fate::discarded: return "discarded";
    case fate::rejected: return "rejected";
    case fate::handed_back: return "handed_back";
    case fate::dropped_at_shutdown: return "dropped_at_shutdown";
    case fate::skipped: return "skipped";
    case fate::died_elsewhere: return "died_elsewhere";
    }
    return "?";
}

// What the current thread is, so that a callable dying unrun knows why.
enum class role : std::uint8_t { other, producer, stopper_stopping, stopper_destroying_returned, worker_skipping };
inline thread_local role current_role = role::other;

class ledger {
  public:
    explicit ledger(std::size_t tasks) : fates_(std::make_unique<std::atomic<fate>[]>(tasks)), size_(tasks) {}

    void record(std::uint32_t id, fate f) noexcept {
        fate expected = fate::none;
        if (!fates_[id].compare_exchange_strong(expected, f)) twice_.fetch_add(1);
    }
    // The producer caught rejected_execution_error: the task died on its
    // thread while the exception unwound, so it must read `discarded` now.
    bool rejected_with_exception(std::uint32_t id) noexcept {
        fate expected = fate::discarded;
        return fates_[id].compare_exchange_strong(expected, fate::rejected);
    }
    fate of(std::size_t id) const noexcept { return fates_[id].load(); }
    std::size_t size() const noexcept { return size_; }
    int recorded_twice() const noexcept { return twice_.load(); }

    std::atomic<bool> stop_called{false};     // set just before shutdown()/shutdown_now()
    int task_throws_every = 0;                 // see the file comment
    std::atomic<int> refused_while_running{0}; // discarded or rejected before stop_called

  private:
    std::unique_ptr<std::atomic<fate>[]> fates_;
    std::size_t size_;
    std::atomic<int> twice_{0};
};

inline fate unrun_fate_here() noexcept {
    switch (current_role) {
    case role::producer: return fate::discarded;
    case role::stopper_stopping: return fate::dropped_at_shutdown;
    case role::stopper_destroying_returned: return fate::handed_back;
    case role::worker_skipping: return fate::skipped;
    case role::other: break;
    }
    return fate::died_elsewhere;
}

// The callable of every task: small (stored inline), nothrow-movable, and
// reporting its fate once, whether run or destroyed unrun.
template <bool TakesToken>
class tracked {
  public:
    tracked(ledger& l, std::uint32_t id) noexcept : ledger_(&l), id_(id) {}
    tracked(tracked&& other) noexcept
        : ledger_(other.ledger_), id_(other.id_), armed_(std::exchange(other.armed_, false)) {}
    tracked& operator=(tracked&&) = delete;
    ~tracked() {
        if (!armed_) return;
        if (current_role == role::producer && !ledger_->stop_called.load()) ledger_->refused_while_running.fetch_add(1);
        ledger_->record(id_, unrun_fate_here());
    }

    void operator()()
        requires(!TakesToken)
    {
        ran();
    }
    void operator()(std::stop_token)
        requires TakesToken
    {
        ran();
    }

  private:
    void ran() {
        // A second run is reported as a second fate: the ledger counts it.
        armed_ = false;
        ledger_->record(id_, current_role == role::producer ? fate::ran_caller : fate::ran_worker);
        if (ledger_->task_throws_every > 0 && id_ % static_cast<std::uint32_t>(ledger_->task_throws_every) == 0)
            throw task_failure{};
    }

    ledger* ledger_;
    std::uint32_t id_;
    bool armed_ = true;
};

// 64 bits from std::random_device.
inline std::uint64_t random_seed() { return std::random_device{}() * 4294967296ull + std::random_device{}(); }

// The seed of a test round: CREW_TEST_SEED if it is set (to replay a failure
// whose seed was printed), else a random one.
inline std::uint64_t fresh_seed() {
    if (const char* text = std::getenv("CREW_TEST_SEED")) return std::strtoull(text, nullptr, 10);
    return random_seed();
}

enum class stop_kind { shutdown, shutdown_now };

inline const char* name(stop_kind k) { return k == stop_kind::shutdown ? "shutdown" : "shutdown_now"; }

// What the reject policy and queue of a pool allow; checked after the round.
struct expectations {
    bool rejects_with_exception = true;     // abort_policy, block_policy (after shutdown)
    bool discards = false;                  // caller_runs (after shutdown), discard, discard_oldest
    bool caller_runs = false;               // caller_runs_policy
    bool refuses_while_running = false;     // a full bounded queue without block_policy
    bool drops_delayed_at_shutdown = false; // execute_delayed_after_shutdown = false
    bool skips = false;                     // before_execute may throw
};

template <class RejectPolicy>
expectations expectations_for(bool bounded) {
    expectations e;
    e.refuses_while_running = bounded && !std::is_same_v<RejectPolicy, crew::block_policy>;
    if constexpr (std::is_same_v<RejectPolicy, crew::caller_runs_policy>) {
        e.rejects_with_exception = false;
        e.discards = true;
        e.caller_runs = true;
    } else if constexpr (std::is_same_v<RejectPolicy, crew::discard_policy> ||
                         std::is_same_v<RejectPolicy, crew::discard_oldest_policy>) {
        e.rejects_with_exception = false;
        e.discards = true;
    }
    return e;
}

struct round_config {
    int producers = 3;
    int tasks_per_producer = 10000;
    stop_kind stop = stop_kind::shutdown;
    std::uint64_t seed = 1;
    expectations expect;
    int task_throws_every = 0; // see the file comment
    std::chrono::nanoseconds termination_limit = std::chrono::seconds(60);
};

struct round_result {
    std::uint64_t total = 0, ran_worker = 0, ran_caller = 0, rejected = 0, discarded = 0, handed_back = 0,
                  dropped_at_shutdown = 0, skipped = 0;
    std::uint64_t stop_after = 0; // tasks pushed before the stopper was released
    std::vector<std::string> errors;

    bool ok() const { return errors.empty(); }
    std::string summary() const {
        std::ostringstream out;
        out << "total " << total << " = ran_worker " << ran_worker << " + ran_caller " << ran_caller << " + rejected "
            << rejected << " + discarded " << discarded << " + handed_back " << handed_back
            << " + dropped_at_shutdown " << dropped_at_shutdown << " + skipped " << skipped << " (stop after "
            << stop_after << ")";
        return out.str();
    }
    std::string report() const {
        std::string text = summary();
        for (const auto& e : errors) text += "\n  BROKEN: " + e;
        return text;
    }
};

namespace detail {

template <class Pool>
concept scheduling = requires(Pool& p) { p.schedule(std::chrono::nanoseconds(0), [] {}); };

inline void expect(round_result& r, bool holds, const std::string& what) {
    if (!holds && r.errors.size() < 20) r.errors.push_back(what);
}

template <class T>
std::string str(const T& v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

} // namespace detail

// One round on `pool`, which must be fresh (RUNNING, nothing submitted).
// Leaves it TERMINATED (unless a rule broke so badly that it did not end in
// `termination_limit`, which is then one of the errors).
template <class Pool>
round_result run_round(Pool& pool, const round_config& config) {
    using detail::expect;
    using detail::str;
    const int total = config.producers * config.tasks_per_producer;
    ledger book(static_cast<std::size_t>(total));
    book.task_throws_every = config.task_throws_every;
    std::vector<std::optional<crew::future<void>>> futures(static_cast<std::size_t>(total));
    round_result result;
    result.total = static_cast<std::uint64_t>(total);

    std::mt19937_64 random(config.seed);
    // Uniform over [0, total * 1.1]: now and then before the first task, now
    // and then after the last.
    const auto target = static_cast<int>(random() % static_cast<std::uint64_t>(total + total / 10 + 1));
    result.stop_after = static_cast<std::uint64_t>(std::min(target, total));

    std::latch start(config.producers + 1);
    std::latch stop_signal(1);
    std::atomic<int> pushed{0}, producers_done{0};
    std::atomic<std::uint64_t> handed_back_by_pool{0};

    auto produce = [&](int p) {
        current_role = role::producer;
        std::mt19937_64 r(config.seed * 1000003u + static_cast<std::uint64_t>(p));
        start.arrive_and_wait();
        for (int i = 0; i < config.tasks_per_producer; ++i) {
            const auto id = static_cast<std::uint32_t>(p * config.tasks_per_producer + i);
            const auto kind = r() % 8;
            try {
                if constexpr (detail::scheduling<Pool>) {
                    // Mostly due now, some up to 200 us or 3 ms later, so that
                    // the heap holds tasks not yet due when the stop comes.
                    const auto dice = r() % 16;
                    const auto delay = std::chrono::microseconds(dice == 0 ? r() % 3000 : dice < 4 ? r() % 200 : 0);
                    if (kind < 2) pool.execute(tracked<false>(book, id));
                    else if (kind < 4) futures[id] = pool.submit(tracked<false>(book, id));
                    else if (kind < 6) futures[id] = pool.schedule(delay, tracked<false>(book, id));
                    else if (kind < 7)
                        futures[id] = pool.schedule_at(std::chrono::steady_clock::now() + delay, tracked<true>(book, id));
                    else futures[id] = pool.schedule(delay, tracked<true>(book, id));
                } else {
                    if (kind < 3) pool.execute(tracked<false>(book, id));
                    else if (kind < 4) pool.execute(tracked<true>(book, id));
                    else if (kind < 7) futures[id] = pool.submit(tracked<false>(book, id));
                    else futures[id] = pool.submit(tracked<true>(book, id));
                }
            } catch (const crew::rejected_execution_error&) {
                if (!book.rejected_with_exception(id))
                    book.record(id, fate::died_elsewhere); // a second fate: counted as "twice"
            } catch (const task_failure&) {
                // caller_runs_policy ran a throwing task here: it propagates, as documented
            }
            if (pushed.fetch_add(1) + 1 == target) stop_signal.count_down();
        }
        if (producers_done.fetch_add(1) + 1 == config.producers && target > total) stop_signal.count_down();
        current_role = role::other;
    };

    std::vector<std::thread> producers;
    for (int p = 0; p < config.producers; ++p) producers.emplace_back(produce, p);
    std::thread stopper([&] {
        start.arrive_and_wait();
        if (target > 0) stop_signal.wait();
        book.stop_called = true;
        current_role = role::stopper_stopping;
        if (config.stop == stop_kind::shutdown) {
            pool.shutdown();
        } else {
            std::vector<crew::task> unrun = pool.shutdown_now();
            handed_back_by_pool = unrun.size();
            current_role = role::stopper_destroying_returned;
            unrun.clear();
        }
        current_role = role::other;
    });
    for (auto& t : producers) t.join();
    stopper.join();

    const bool terminated = pool.await_termination(config.termination_limit);
    expect(result, terminated, "the pool did not terminate within the limit");
    if (!terminated) {
        // Report, but first make sure no task outlives the ledger and futures.
        std::vector<crew::task> rest = pool.shutdown_now();
        rest.clear();
        if (!pool.await_termination(config.termination_limit)) {
            std::fprintf(stderr, "crew accounting: the pool hangs even after shutdown_now():\n%s\n",
                         result.report().c_str());
            std::abort();
        }
        return result;
    }

    // Every fate, exactly once.
    expect(result, book.recorded_twice() == 0, "tasks given a second fate: " + str(book.recorded_twice()));
    std::uint64_t none = 0, elsewhere = 0;
    for (std::size_t id = 0; id < book.size(); ++id) {
        switch (book.of(id)) {
        case fate::none: ++none; break;
        case fate::ran_worker: ++result.ran_worker; break;
        case fate::ran_caller: ++result.ran_caller; break;
        case fate::rejected: ++result.rejected; break;
        case fate::discarded: ++result.discarded; break;
        case fate::handed_back: ++result.handed_back; break;
        case fate::dropped_at_shutdown: ++result.dropped_at_shutdown; break;
        case fate::skipped: ++result.skipped; break;
        case fate::died_elsewhere: ++elsewhere; break;
        }
    }
    expect(result, none == 0, "tasks with no fate (lost, or still alive): " + str(none));
    expect(result, elsewhere == 0, "tasks destroyed unrun where no rule allows it: " + str(elsewhere));
    expect(result,
           result.ran_worker + result.ran_caller + result.rejected + result.discarded + result.handed_back +
                   result.dropped_at_shutdown + result.skipped ==
               result.total,
           "the fates do not add up to the tasks pushed");

    // The pool's own figures.
    // A task skipped by a throwing before_execute still counts as completed.
    expect(result, pool.completed_task_count() == result.ran_worker + result.skipped,
           "completed_task_count " + str(pool.completed_task_count()) + " != tasks run (or skipped) by workers " +
               str(result.ran_worker + result.skipped));
    expect(result, pool.task_count() == pool.completed_task_count(),
           "task_count " + str(pool.task_count()) + " != completed_task_count " + str(pool.completed_task_count()) +
               " after termination");
    expect(result, pool.queue_size() == 0u, "queue_size " + str(pool.queue_size()) + " after termination");
    expect(result, pool.pool_size() == 0u, "pool_size " + str(pool.pool_size()) + " after termination");
    expect(result, handed_back_by_pool.load() == result.handed_back,
           "shutdown_now returned " + str(handed_back_by_pool.load()) + " tasks, the ledger saw " +
               str(result.handed_back));

    // What the configuration allows.
    const expectations& e = config.expect;
    if (config.stop == stop_kind::shutdown) expect(result, result.handed_back == 0, "shutdown() handed tasks back");
    if (!e.rejects_with_exception) expect(result, result.rejected == 0, "rejected with an exception: " + str(result.rejected));
    if (!e.discards) expect(result, result.discarded == 0, "discarded silently: " + str(result.discarded));
    if (!e.caller_runs) expect(result, result.ran_caller == 0, "run on the caller: " + str(result.ran_caller));
    if (!e.refuses_while_running)
        expect(result, book.refused_while_running.load() == 0,
               "refused before any shutdown: " + str(book.refused_while_running.load()));
    if (!e.drops_delayed_at_shutdown)
        expect(result, result.dropped_at_shutdown == 0, "dropped inside shutdown(): " + str(result.dropped_at_shutdown));
    if (!e.skips) expect(result, result.skipped == 0, "skipped: " + str(result.skipped));

    // Every future is done, and says the same as the ledger.
    std::uint64_t not_done = 0, disagree = 0;
    for (std::size_t id = 0; id < futures.size(); ++id) {
        auto& f = futures[id];
        if (!f) continue;
        if (!f->is_done()) {
            ++not_done;
            continue;
        }
        fate told = fate::none;
        try {
            f->get();
            told = fate::ran_worker;
        } catch (const task_failure&) {
            told = fate::ran_worker; // it ran, then threw
        } catch (const hook_failure&) {
            told = fate::skipped;
        } catch (const crew::rejected_execution_error&) {
            told = fate::discarded;
        } catch (const crew::cancellation_error&) {
            told = fate::handed_back;
        } catch (...) {
            told = fate::died_elsewhere;
        }
        const fate known = book.of(id);
        const bool agrees = told == fate::ran_worker ? (known == fate::ran_worker || known == fate::ran_caller)
                            : told == fate::handed_back
                                ? (known == fate::handed_back || known == fate::dropped_at_shutdown)
                                : told == known;
        if (!agrees) {
            if (disagree == 0)
                expect(result, false,
                       "task " + str(id) + ": future says " + name(told) + ", ledger says " + name(known));
            ++disagree;
        }
    }
    expect(result, not_done == 0, "futures not done after termination: " + str(not_done));
    expect(result, disagree == 0, "futures that disagree with the ledger: " + str(disagree));
    return result;
}

} // namespace crew_accounting

#endif
