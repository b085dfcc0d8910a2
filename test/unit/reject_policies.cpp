// Unit tests for the reject policies (crew/policies/reject.hpp), each alone
// against a recording fake of the executor surface a policy may use.

#include <crew/concepts.hpp>
#include <crew/errors.hpp>
#include <crew/policies/reject.hpp>
#include <crew/task.hpp>

#include <catch2/catch.hpp>

#include "../common/lifetime.hpp"

#include <chrono>
#include <deque>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// A future's task as a policy sees it: records runs and how it was abandoned.
struct probe_state {
    int runs = 0;
    int abandons = 0;
    int destroyed = 0;
    std::thread::id ran_on;
    std::exception_ptr abandoned_with;
};

struct probe {
    probe_state* state;
    crew_test_common::destruction_counter<int> lifetime;
    explicit probe(probe_state& s) : state(&s), lifetime(s.destroyed) {}
    void operator()() { run_and_report(false); }
    std::exception_ptr run_and_report(bool) {
        ++state->runs;
        state->ran_on = std::this_thread::get_id();
        return nullptr;
    }
    void abandon(std::exception_ptr why, bool) noexcept {
        ++state->abandons;
        state->abandoned_with = std::move(why);
    }
    bool is_cancelled() const noexcept { return false; }
};
static_assert(crew::detail::reporting_callable<probe>);

// The executor surface of concepts.hpp, recording every call in order.
class fake_executor {
  public:
    bool shut_down = false;
    int accept_after_tries = 0;   // try_execute fails this many times, then accepts
    bool put_succeeds = true;
    std::deque<crew::task> queued; // front is the oldest
    std::vector<crew::task> accepted;
    mutable std::vector<std::string> calls;

    bool is_shutdown() const {
        calls.emplace_back("is_shutdown");
        return shut_down;
    }
    bool try_execute(crew::task& t) {
        calls.emplace_back("try_execute");
        if (accept_after_tries > 0) {
            --accept_after_tries;
            return false;
        }
        accepted.push_back(std::move(t));
        return true;
    }
    bool discard_oldest_queued() {
        calls.emplace_back("discard_oldest_queued");
        if (queued.empty()) return false;
        queued.front().reject();
        queued.pop_front();
        return true;
    }
    bool remove_oldest_queued(crew::task& oldest) {
        calls.emplace_back("remove_oldest_queued");
        if (queued.empty()) return false;
        oldest = std::move(queued.front());
        queued.pop_front();
        return true;
    }
    bool put(crew::task& t) {
        calls.emplace_back("put");
        if (!put_succeeds) return false;
        accepted.push_back(std::move(t));
        return true;
    }
    std::chrono::steady_clock::time_point put_deadline{};
    bool put_until(crew::task& t, std::chrono::steady_clock::time_point deadline) {
        calls.emplace_back("put_until");
        put_deadline = deadline;
        if (!put_succeeds) return false;
        accepted.push_back(std::move(t));
        return true;
    }
    bool own_worker = false; // the submitter is one of the pool's workers
    bool called_from_own_worker() const { return own_worker; }

    // Calls other than is_shutdown, which any policy may ask freely.
    std::vector<std::string> actions() const {
        std::vector<std::string> out;
        for (const auto& c : calls)
            if (c != "is_shutdown") out.push_back(c);
        return out;
    }

    // Queues a probe for each state, oldest first.
    template <class... States>
    void queue_probes(States&... states) {
        (queued.emplace_back(probe(states)), ...);
    }
};

bool rejected(const probe_state& s) {
    if (s.abandons != 1 || !s.abandoned_with) return false;
    try {
        std::rethrow_exception(s.abandoned_with);
    } catch (const crew::rejected_execution_error&) {
        return true;
    } catch (...) {
        return false;
    }
}

// Hands `policy` a probe and a plain task while `e` is in the state the test
// set: the policy must reject both without running them or asking `e` for
// anything, and the probe must hear of it.
template <class Policy>
void require_rejected_unrun(Policy& policy, fake_executor& e) {
    probe_state s;
    REQUIRE_NOTHROW(policy.rejected_execution(crew::task(probe(s)), e));
    REQUIRE(s.runs == 0);
    REQUIRE(rejected(s));
    REQUIRE(s.destroyed == 1);
    REQUIRE(e.actions().empty());

    int plain_runs = 0;
    REQUIRE_NOTHROW(policy.rejected_execution(crew::task([&plain_runs] { ++plain_runs; }), e));
    REQUIRE(plain_runs == 0);
}

// The probe behind `s` is the one task `e` accepted, intact: it runs when `e` runs it.
void require_accepted_intact(fake_executor& e, const probe_state& s) {
    REQUIRE(e.accepted.size() == 1);
    REQUIRE(s.abandons == 0);
    e.accepted.front()();
    REQUIRE(s.runs == 1);
}

template <class Policy>
std::string rejection_message(Policy& policy, crew::task&& t, fake_executor& e) {
    try {
        policy.rejected_execution(std::move(t), e);
    } catch (const crew::rejected_execution_error& x) {
        return x.what();
    }
    return "<nothing thrown>";
}

struct not_a_policy {};
struct wrong_signature_policy {
    void rejected_execution(int) {}
};

} // namespace

TEMPLATE_TEST_CASE("the shipped reject policies model crew::reject_policy", "[reject]", crew::abort_policy,
                   crew::caller_runs_policy, crew::discard_policy, crew::discard_oldest_policy, crew::block_policy) {
    STATIC_REQUIRE(crew::reject_policy<TestType>);
}

TEMPLATE_TEST_CASE("types without a matching rejected_execution do not model crew::reject_policy", "[reject]",
                   not_a_policy, wrong_signature_policy, int) {
    STATIC_REQUIRE_FALSE(crew::reject_policy<TestType>);
}

// ---- abort_policy ---------------------------------------------------------------

TEST_CASE("abort_policy throws rejected_execution_error and touches neither task nor queue", "[reject][abort]") {
    crew::abort_policy policy;
    probe_state s; // before e: its queue may still hold s's task at the end
    fake_executor e;
    crew::task t{probe(s)};
    REQUIRE_THROWS_AS(policy.rejected_execution(std::move(t), e), crew::rejected_execution_error);
    REQUIRE(e.actions().empty());
    REQUIRE(e.accepted.empty());
    REQUIRE(s.runs == 0);
    REQUIRE(s.abandons == 0);
    REQUIRE(static_cast<bool>(t)); // NOLINT(bugprone-use-after-move): left to the caller
}

TEST_CASE("abort_policy says whether the pool is shut down or full", "[reject][abort]") {
    crew::abort_policy policy;
    fake_executor running;
    fake_executor stopped;
    stopped.shut_down = true;
    const std::string full_message = rejection_message(policy, crew::task([] {}), running);
    const std::string shut_down_message = rejection_message(policy, crew::task([] {}), stopped);
    CAPTURE(full_message, shut_down_message);
    REQUIRE(full_message != "<nothing thrown>");
    REQUIRE(shut_down_message != "<nothing thrown>");
    REQUIRE(full_message != shut_down_message);
    REQUIRE_THAT(shut_down_message, Catch::Matchers::Contains("shut down"));
    REQUIRE_THAT(full_message, Catch::Matchers::Contains("full"));
}

TEST_CASE("rejected_execution_error is a std::runtime_error", "[reject]") {
    STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, crew::rejected_execution_error>);
    STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, crew::cancellation_error>);
}

// ---- caller_runs_policy -----------------------------------------------------------

TEST_CASE("caller_runs_policy runs the task on the calling thread while the pool runs", "[reject][caller_runs]") {
    crew::caller_runs_policy policy;
    probe_state s; // before e: its queue may still hold s's task at the end
    fake_executor e;
    policy.rejected_execution(crew::task(probe(s)), e);
    REQUIRE(s.runs == 1);
    REQUIRE(s.ran_on == std::this_thread::get_id());
    REQUIRE(s.abandons == 0);
    REQUIRE(s.destroyed == 1);
    REQUIRE(e.actions().empty());

    int plain_runs = 0;
    policy.rejected_execution(crew::task([&plain_runs] { ++plain_runs; }), e);
    REQUIRE(plain_runs == 1);
}

TEST_CASE("caller_runs_policy lets a plain task's exception reach the submitter", "[reject][caller_runs]") {
    crew::caller_runs_policy policy;
    fake_executor e;
    REQUIRE_THROWS_WITH(policy.rejected_execution(crew::task([] { throw std::runtime_error("from the task"); }), e),
                        "from the task");
}

TEST_CASE("caller_runs_policy rejects without running once the pool is shut down", "[reject][caller_runs]") {
    crew::caller_runs_policy policy;
    fake_executor e;
    e.shut_down = true;
    require_rejected_unrun(policy, e);
}

// ---- discard_policy ----------------------------------------------------------------

TEST_CASE("discard_policy rejects the task without running it", "[reject][discard]") {
    crew::discard_policy policy;
    fake_executor e;
    e.shut_down = GENERATE(false, true);
    require_rejected_unrun(policy, e);
}

// ---- discard_oldest_policy ------------------------------------------------------------

// The policy, the executor whose queue a test fills, and the task the
// executor refused.
// The probes are declared before the executor, so that tasks left in its
// queue are destroyed while their probes still exist.
struct discard_oldest_test {
    crew::discard_oldest_policy policy;
    probe_state incoming, q0, q1, q2;
    fake_executor e;

    void reject_incoming() { policy.rejected_execution(crew::task(probe(incoming)), e); }
};

TEST_CASE_METHOD(discard_oldest_test, "discard_oldest_policy drops the oldest queued task and retries",
                 "[reject][discard_oldest]") {
    probe_state &oldest = q0, &middle = q1, &newest = q2;
    e.queue_probes(oldest, middle, newest);
    e.accept_after_tries = 0; // room after one drop

    reject_incoming();

    REQUIRE(e.actions() == std::vector<std::string>{"remove_oldest_queued", "try_execute"});
    REQUIRE(rejected(oldest));
    REQUIRE(oldest.runs == 0);
    REQUIRE(middle.abandons == 0);
    REQUIRE(newest.abandons == 0);
    REQUIRE(e.queued.size() == 2);
    require_accepted_intact(e, incoming);
}

TEST_CASE_METHOD(discard_oldest_test, "discard_oldest_policy keeps dropping while the retry fails",
                 "[reject][discard_oldest]") {
    e.queue_probes(q0, q1, q2);
    e.accept_after_tries = 1; // a competing submitter takes the first freed slot

    reject_incoming();

    REQUIRE(e.actions() == std::vector<std::string>{"remove_oldest_queued", "try_execute", "remove_oldest_queued",
                                                    "try_execute"});
    REQUIRE(rejected(q0));
    REQUIRE(rejected(q1));
    REQUIRE(q2.abandons == 0);
    REQUIRE(e.accepted.size() == 1);
    REQUIRE(incoming.abandons == 0);
}

TEST_CASE_METHOD(discard_oldest_test, "discard_oldest_policy rejects the task when nothing could be dropped",
                 "[reject][discard_oldest]") {
    // With an empty (say synchronous) queue Java would retry forever.
    e.accept_after_tries = 1'000'000;

    reject_incoming();

    REQUIRE(e.actions() == std::vector<std::string>{"remove_oldest_queued", "try_execute"});
    REQUIRE(rejected(incoming));
    REQUIRE(incoming.runs == 0);
    REQUIRE(incoming.destroyed == 1);
    REQUIRE(e.accepted.empty());
}

TEST_CASE_METHOD(discard_oldest_test,
                 "discard_oldest_policy rejects the task when the queue empties before a retry succeeds",
                 "[reject][discard_oldest]") {
    e.queue_probes(q0, q1);
    e.accept_after_tries = 1'000'000;

    reject_incoming();

    REQUIRE(rejected(q0));
    REQUIRE(rejected(q1));
    REQUIRE(rejected(incoming));
    REQUIRE(e.queued.empty());
    REQUIRE(e.actions().back() == "try_execute");
    REQUIRE(e.actions().size() == 6); // three drops (the last finds nothing), three retries
}

TEST_CASE_METHOD(discard_oldest_test,
                 "discard_oldest_policy still runs the task when a retry succeeds with nothing to drop",
                 "[reject][discard_oldest]") {
    // An empty queue, but try_execute now has room.
    reject_incoming();
    REQUIRE(incoming.abandons == 0);
    REQUIRE(e.accepted.size() == 1);
}

TEST_CASE_METHOD(discard_oldest_test, "discard_oldest_policy rejects the task at once when the pool is shut down",
                 "[reject][discard_oldest]") {
    e.shut_down = true;
    probe_state& queued = q0;
    e.queue_probes(queued);

    reject_incoming();

    REQUIRE(e.actions().empty());
    REQUIRE(rejected(incoming));
    REQUIRE(incoming.runs == 0);
    REQUIRE(queued.abandons == 0);
    REQUIRE(e.queued.size() == 1);
}

// ---- block_policy ---------------------------------------------------------------------

TEST_CASE("block_policy hands the task to put_until, without a deadline by default", "[reject][block]") {
    crew::block_policy policy;
    probe_state s; // before e: its queue may still hold s's task at the end
    fake_executor e;
    REQUIRE_NOTHROW(policy.rejected_execution(crew::task(probe(s)), e));
    REQUIRE(e.actions() == std::vector<std::string>{"put_until"});
    REQUIRE(e.put_deadline == std::chrono::steady_clock::time_point::max());
    require_accepted_intact(e, s);
}

TEST_CASE("block_policy with a timeout gives put_until a deadline that far ahead", "[reject][block]") {
    using namespace std::chrono_literals;
    crew::block_policy policy{250ms};
    probe_state s;
    fake_executor e;
    const auto before = std::chrono::steady_clock::now();
    REQUIRE_NOTHROW(policy.rejected_execution(crew::task(probe(s)), e));
    const auto after = std::chrono::steady_clock::now();
    REQUIRE(e.actions() == std::vector<std::string>{"put_until"});
    REQUIRE(e.put_deadline >= before + 250ms);
    REQUIRE(e.put_deadline <= after + 250ms);
    require_accepted_intact(e, s);
}

TEST_CASE("block_policy runs a task its pool's own worker submits, without waiting", "[reject][block]") {
    crew::block_policy policy;
    probe_state s;
    fake_executor e;
    e.own_worker = true;
    REQUIRE_NOTHROW(policy.rejected_execution(crew::task(probe(s)), e));
    REQUIRE(e.actions().empty());
    REQUIRE(s.runs == 1);
}

TEST_CASE("block_policy throws at once when the pool is shut down", "[reject][block]") {
    crew::block_policy policy{std::chrono::hours(1)};
    probe_state s;
    fake_executor e;
    e.shut_down = true;
    e.own_worker = GENERATE(false, true);
    crew::task t{probe(s)};
    REQUIRE_THROWS_AS(policy.rejected_execution(std::move(t), e), crew::rejected_execution_error);
    REQUIRE(e.actions().empty());
    REQUIRE(s.runs == 0);
    REQUIRE(static_cast<bool>(t)); // NOLINT(bugprone-use-after-move): still the submitter's
}

TEST_CASE("block_policy throws rejected_execution_error when put_until fails", "[reject][block]") {
    crew::block_policy policy;
    probe_state s; // before e: its queue may still hold s's task at the end
    fake_executor e;
    e.put_succeeds = false;
    crew::task t{probe(s)};
    REQUIRE_THROWS_AS(policy.rejected_execution(std::move(t), e), crew::rejected_execution_error);
    REQUIRE(e.actions() == std::vector<std::string>{"put_until"});
    REQUIRE(s.runs == 0);
    REQUIRE(e.accepted.empty());
    REQUIRE(static_cast<bool>(t)); // NOLINT(bugprone-use-after-move): still the submitter's
}
