// Accounting under stress: producers push tens of thousands of tasks while
// another thread calls shutdown() or shutdown_now() at a random moment. Every
// task must end exactly one way (run once, rejected with an exception,
// discarded with its future saying so, or handed back by shutdown_now), and
// the counts must add up, with each other, with the futures and with the
// pool's statistics. The rules and the bookkeeping live in
// accounting_harness.hpp, which test/soak/soak.cpp runs for hours.
//
// The seed of each round is printed on failure; CREW_TEST_SEED=<n> replays it.
#include "accounting_harness.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <functional>
#include <random>

using namespace crew_test;
namespace utf = boost::unit_test;
using crew_accounting::expectations;
using crew_accounting::fresh_seed;
using crew_accounting::stop_kind;

namespace {

// Tens of thousands of tasks per round in a plain build; sanitizer builds
// (time factor 5 or 10) push fewer, so that the file stays well under a
// minute under TSan on two cores.
int tasks_per_producer() { return time_factor() >= 5 ? 4000 : 10000; }

// Two rounds per stop kind, each with its own random stop moment.
template <class Pool>
void run_rounds(const std::function<std::unique_ptr<Pool>()>& make, expectations expect) {
    for (stop_kind stop : {stop_kind::shutdown, stop_kind::shutdown_now}) {
        for (int round = 0; round < 2; ++round) {
            crew_accounting::round_config config;
            config.producers = 3;
            config.tasks_per_producer = tasks_per_producer();
            config.stop = stop;
            config.seed = fresh_seed();
            config.expect = expect;
            config.termination_limit = scaled(30s);
            auto pool = make();
            const auto result = crew_accounting::run_round(*pool, config);
            BOOST_TEST_MESSAGE("seed " << config.seed << ", " << crew_accounting::name(stop) << ": " << result.summary());
            BOOST_TEST_INFO("seed " << config.seed << ", " << crew_accounting::name(stop) << ": " << result.summary());
            BOOST_TEST(result.ok(), result.report());
            if (!result.ok()) return;
        }
    }
}

crew::pool_options bounded_options() {
    return crew::pool_options{.core_pool_size = 1, .maximum_pool_size = 2, .keep_alive = 1ms, .queue_capacity = 32};
}

template <class Reject>
void run_bounded() {
    using pool = crew::basic_executor<crew::bounded_queue, Reject>;
    run_rounds<pool>([] { return std::make_unique<pool>(bounded_options()); },
                     crew_accounting::expectations_for<Reject>(true));
}

} // namespace

BOOST_AUTO_TEST_SUITE(accounting)

BOOST_AUTO_TEST_CASE(fixed_pool_accounts_for_every_task, *utf::timeout(120)) {
    run_rounds<crew::fixed_pool>([] { return std::make_unique<crew::fixed_pool>(2); },
                                 crew_accounting::expectations_for<crew::abort_policy>(false));
}

BOOST_AUTO_TEST_CASE(cached_pool_accounts_for_every_task, *utf::timeout(120)) {
    // A short keep-alive, so that workers also time out while tasks arrive.
    run_rounds<crew::cached_pool>(
        [] {
            auto pool = std::make_unique<crew::cached_pool>();
            pool->set_keep_alive(100us);
            return pool;
        },
        crew_accounting::expectations_for<crew::abort_policy>(false));
}

BOOST_AUTO_TEST_CASE(scheduled_pool_accounts_for_every_task, *utf::timeout(120)) {
    run_rounds<crew::scheduled_pool>([] { return std::make_unique<crew::scheduled_pool>(2); },
                                     crew_accounting::expectations_for<crew::abort_policy>(false));
}

BOOST_AUTO_TEST_CASE(scheduled_pool_dropping_delayed_tasks_at_shutdown_accounts_for_every_task,
                     *utf::timeout(120)) {
    auto expect = crew_accounting::expectations_for<crew::abort_policy>(false);
    expect.drops_delayed_at_shutdown = true;
    run_rounds<crew::scheduled_pool>(
        [] {
            return std::make_unique<crew::scheduled_pool>(
                crew::pool_options{.core_pool_size = 2, .execute_delayed_after_shutdown = false});
        },
        expect);
}

BOOST_AUTO_TEST_CASE(work_stealing_pool_accounts_for_every_task, *utf::timeout(120)) {
    run_rounds<crew::work_stealing_pool>([] { return std::make_unique<crew::work_stealing_pool>(2); },
                                         crew_accounting::expectations_for<crew::abort_policy>(false));
}

BOOST_AUTO_TEST_CASE(bounded_work_stealing_queue_with_caller_runs_policy_accounts_for_every_task,
                     *utf::timeout(120)) {
    using pool = crew::basic_executor<crew::bounded_work_stealing_queue, crew::caller_runs_policy>;
    run_rounds<pool>([] { return std::make_unique<pool>(bounded_options()); },
                     crew_accounting::expectations_for<crew::caller_runs_policy>(true));
}

BOOST_AUTO_TEST_CASE(bounded_work_stealing_queue_with_block_policy_accounts_for_every_task, *utf::timeout(120)) {
    using pool = crew::basic_executor<crew::bounded_work_stealing_queue, crew::block_policy>;
    run_rounds<pool>([] { return std::make_unique<pool>(bounded_options()); },
                     crew_accounting::expectations_for<crew::block_policy>(true));
}

BOOST_AUTO_TEST_CASE(bounded_queue_with_abort_policy_accounts_for_every_task, *utf::timeout(120)) {
    run_bounded<crew::abort_policy>();
}

BOOST_AUTO_TEST_CASE(bounded_queue_with_caller_runs_policy_accounts_for_every_task, *utf::timeout(120)) {
    run_bounded<crew::caller_runs_policy>();
}

BOOST_AUTO_TEST_CASE(bounded_queue_with_discard_policy_accounts_for_every_task, *utf::timeout(120)) {
    run_bounded<crew::discard_policy>();
}

BOOST_AUTO_TEST_CASE(bounded_queue_with_discard_oldest_policy_accounts_for_every_task, *utf::timeout(120)) {
    run_bounded<crew::discard_oldest_policy>();
}

BOOST_AUTO_TEST_CASE(bounded_queue_with_block_policy_accounts_for_every_task, *utf::timeout(120)) {
    run_bounded<crew::block_policy>();
}

BOOST_AUTO_TEST_SUITE_END()
