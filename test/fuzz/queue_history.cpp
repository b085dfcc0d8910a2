// libFuzzer target: the linearizability checker (test/common/lincheck.hpp) as
// an oracle. The first byte picks a queue policy (work_stealing_queue's
// engine with four shards among them, checked against FIFO per thread, and
// the segment_queue engine on two-cell segments); the rest decides, for each
// of three threads, its calls (offer, put_until, schedule, poll, poll_until,
// size, remove_if, extract_if, drain, close) on every queue policy, as test/unit/linearizability.cpp
// decides them from a seeded generator. The threads run them on one queue,
// each call's interval and result are recorded, a last drain after the join
// finds lost tasks, and the run aborts, printing the history, unless the
// checker finds a sequential order the queue's specification explains. So a
// fuzz run fails on a reordered, duplicated, lost or over-capacity task, not
// only on a crash or a sanitizer report.
//
// Threads make a run nondeterministic: an input is a recipe, run a few times
// to reproduce a finding. Build and run: test/fuzz/run.sh.
#include <crew/detail/queue/segment_queue.hpp>
#include <crew/policies/delayed_queue.hpp>
#include <crew/policies/lockfree_queue.hpp>
#include <crew/policies/queue.hpp>
#include <crew/policies/work_stealing_queue.hpp>
#include <crew/pool_options.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include "../common/lincheck.hpp"
#include "../common/lincheck_calls.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

namespace {

namespace lc = crew_test_common::lincheck;
using namespace crew_test_common::lincheck_calls;

constexpr int threads = 3;
constexpr int calls_per_thread = 8;
// The checker's node budget per input. A few histories (many overlapping
// removals one at a time, as lockfree_queue's) have millions of orders to
// try; a search cut short is inconclusive, never a failure. 2,000,000 (the
// checker's default) took over libFuzzer's 30 s timeout on a loaded 2-core
// machine (the fuzz build checks with ASan, about 30 µs a node); this keeps
// one input under about 3 s.
constexpr std::size_t search_budget = 100'000;

// A thread's share of the input: the numbers its calls are chosen by (zero
// once the input runs out, which picks an offer: the round still runs).
class choices {
  public:
    choices(FuzzedDataProvider& in, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) values_.push_back(in.ConsumeIntegral<std::uint16_t>());
    }
    unsigned operator()() noexcept { return next_ < values_.size() ? values_[next_++] : 0; }

  private:
    std::vector<unsigned> values_;
    std::size_t next_ = 0;
};

template <class Q>
void run(FuzzedDataProvider& in, Q& q, const lc::spec& s, const workload& w) {
    // Each call draws a few numbers (the kind, a priority or residue, a due
    // rank): reserve enough for every call.
    std::vector<choices> per_thread;
    for (int t = 0; t < threads; ++t) per_thread.emplace_back(in, calls_per_thread * 3);
    const bool closes = in.ConsumeBool();
    lc::recorder rec(threads + 1, calls_per_thread);
    std::latch start(threads);
    const steady::time_point due_base = steady::now() - 1s;
    std::vector<std::thread> running;
    for (int t = 0; t < threads; ++t)
        running.emplace_back([&, t] {
            start.arrive_and_wait();
            for (int c = 0; c < calls_per_thread; ++c)
                random_call(rec, t, q, w, per_thread[static_cast<std::size_t>(t)], (t + 1) * 100 + c, closes, due_base);
        });
    for (std::thread& t : running) t.join();
    record_drain(rec, threads, q);
    const lc::history h = rec.merged();
    if (lc::check(h, s, search_budget) == lc::verdict::not_linearizable) {
        std::fprintf(stderr, "not linearizable:\n%s\n", lc::describe(h).c_str());
        std::abort();
    }
}

lc::spec ring_spec(std::size_t capacity) {
    lc::spec s;
    s.capacity = capacity;
    s.claim_then_publish = true;
    return s;
}

crew::pool_options with_capacity(std::size_t capacity) {
    crew::pool_options o;
    o.queue_capacity = capacity;
    return o;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();
    workload w;
    w.threads = threads;
    w.calls = calls_per_thread;
    switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: {
        crew::unbounded_queue q;
        run(in, q, ring_spec(unbounded), w);
        break;
    }
    case 1: {
        w.puts = true;
        crew::bounded_queue q(with_capacity(3));
        run(in, q, ring_spec(3), w);
        break;
    }
    case 2: { // one-cell segments: every offer past the first links a segment
        w.extracts = true;
        crew::detail::segment_queue q(4, 1);
        run(in, q, ring_spec(4), w);
        break;
    }
    case 3: {
        w.puts = true;
        crew::grow_first_queue q(with_capacity(2));
        run(in, q, ring_spec(2), w);
        break;
    }
    case 4: {
        w.priorities = true;
        crew::priority_queue q;
        lc::spec s;
        s.ordering = lc::spec::order::priority;
        s.exact_size = true;
        run(in, q, s, w);
        break;
    }
    case 5: { // a capacity no round reaches: see linearizability.cpp
        crew::lockfree_queue<64> q;
        lc::spec s;
        s.capacity = 64;
        s.removing = lc::spec::removal::one_by_one;
        run(in, q, s, w);
        break;
    }
    case 6: {
        w.waits = true;
        w.puts = true;
        crew::synchronous_queue q;
        lc::spec s;
        s.hand_off = true;
        s.exact_size = true;
        run(in, q, s, w);
        break;
    }
    case 8: { // work_stealing_queue's engine from outside threads, four injector shards: FIFO per thread
        w.extracts = true;
        crew::detail::work_stealing_engine q(unbounded, 4);
        lc::spec s;
        s.ordering = lc::spec::order::per_source;
        s.removing = lc::spec::removal::per_source;
        s.claim_then_publish = true;
        run(in, q, s, w);
        break;
    }
    case 9: { // segment_queue on two-cell segments, so that segments link, retire and come back
        w.extracts = true;
        w.puts = true;
        crew::detail::segment_queue q(4, 2);
        run(in, q, ring_spec(4), w);
        break;
    }
    default: { // 7: scheduled tasks already due and never due (not racing offers: see the [!mayfail] cases)
        w.schedules = true;
        w.due_now = false;
        crew::delayed_queue q;
        lc::spec s;
        s.ordering = lc::spec::order::due;
        s.claim_then_publish = true;
        s.removing = lc::spec::removal::fifo_then_heap;
        run(in, q, s, w);
        break;
    }
    }
    return 0;
}
