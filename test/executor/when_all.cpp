// when_all and when_any: aggregates completed by their inputs' completions,
// blocking no thread (doc/composition.md, "when_all and when_any").
#include <crew/any_executor.hpp>
#include <crew/crew.hpp>
#include <crew/when_all.hpp>
#include <crew/when_any.hpp>

#include "composition_support.hpp"
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <list>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace utf = boost::unit_test;
using namespace crew_test;

BOOST_AUTO_TEST_SUITE(when_all)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(when_all_hands_every_input_back_done, Setup, executor_setups) {
    Setup s;
    auto all = crew::when_all(s.pool.submit([] { return 1; }), s.pool.submit([] { return std::string("two"); }),
                              s.pool.submit([] {}));
    auto [one, two, three] = all.get();
    BOOST_TEST(one.is_done());
    BOOST_TEST(two.is_done());
    BOOST_TEST(three.is_done());
    BOOST_TEST(one.get() == 1);
    BOOST_TEST(two.get() == "two");
    three.get();

    std::vector<crew::future<int>> many;
    for (int i = 0; i < 100; ++i) many.push_back(s.pool.submit([i] { return i; }));
    auto range = crew::when_all(std::move(many)).then(s.ex(), [](std::vector<crew::future<int>> done) {
        int sum = 0;
        for (auto& f : done) sum += f.get();
        return sum;
    });
    BOOST_TEST(range.get() == 4950);
}

BOOST_AUTO_TEST_CASE(a_failed_or_cancelled_input_does_not_fail_the_aggregate, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    gate held;
    occupy(pool, held, 1);
    auto failing = pool.submit([]() -> int { throw std::runtime_error("input"); });
    auto cancelled = pool.submit([] { return 2; });
    BOOST_TEST(cancelled.cancel());
    auto all = crew::when_all(std::move(failing), std::move(cancelled));
    BOOST_TEST(!all.is_done());
    held.open();
    auto [f, c] = all.get();
    BOOST_CHECK_THROW(f.get(), std::runtime_error);
    BOOST_CHECK_THROW(c.get(), crew::cancellation_error);
}

BOOST_AUTO_TEST_CASE(when_all_of_nothing_is_done_at_once, *utf::timeout(60)) {
    auto none = crew::when_all();
    BOOST_TEST(none.is_done());
    BOOST_TEST(std::tuple_size_v<decltype(none.get())> == 0u);
    auto empty = crew::when_all(std::vector<crew::future<int>>{});
    BOOST_TEST(empty.is_done());
    BOOST_TEST(empty.get().empty());
}

BOOST_AUTO_TEST_CASE(when_all_blocks_no_thread, *utf::timeout(60)) {
    // One worker, and every input queued behind a held task: an aggregate
    // that waited on a worker (or on the caller) could never finish.
    crew::fixed_pool pool(1);
    gate held;
    occupy(pool, held, 1);
    std::list<crew::future<int>> inputs; // any range; its futures are moved from
    for (int i = 0; i < 50; ++i) inputs.push_back(pool.submit([i] { return i; }));
    auto total = crew::when_all(inputs).then(pool, [](std::vector<crew::future<int>> done) {
        int sum = 0;
        for (auto& f : done) sum += f.get();
        return sum;
    });
    BOOST_TEST(!inputs.front().valid());
    BOOST_TEST(!total.is_done());
    held.open();
    BOOST_TEST(total.get() == 1225);
}

BOOST_AUTO_TEST_CASE(inputs_without_a_state_are_refused, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    BOOST_CHECK_THROW(crew::when_all(crew::future<int>{}), std::invalid_argument);
    std::vector<crew::future<int>> some;
    some.push_back(pool.submit([] { return 1; }));
    some.emplace_back();
    BOOST_CHECK_THROW(crew::when_all(std::move(some)), std::invalid_argument);
    std::vector<crew::future<int>> none;
    BOOST_CHECK_THROW(crew::when_any(std::move(none)), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(inputs_completing_during_registration_are_counted_once, *utf::timeout(300)) {
    crew::fixed_pool pool(2);
    const int rounds = std::max(100, static_cast<int>(1000 / time_factor()));
    for (int r = 0; r < rounds; ++r) {
        std::vector<crew::future<int>> inputs;
        for (int i = 0; i < 16; ++i) inputs.push_back(pool.submit([i] { return i; }));
        auto done = crew::when_all(std::move(inputs)).get();
        int sum = 0;
        for (auto& f : done) sum += f.get();
        BOOST_TEST_REQUIRE(sum == 120);
    }
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(when_any_names_the_first_input_done, Setup, executor_setups) {
    Setup s;
    gate slow;
    std::vector<crew::future<int>> inputs;
    inputs.push_back(submit_held(s.pool, slow, 0)); // holds one of the two workers
    auto done = s.pool.submit([] { return 1; });
    done.wait();
    inputs.push_back(std::move(done));
    auto first = crew::when_any(std::move(inputs));
    auto result = first.get();
    BOOST_TEST(result.index == 1u);
    BOOST_TEST(result.futures.size() == 2u);
    BOOST_TEST(result.futures[1].get() == 1);
    BOOST_TEST(!result.futures[0].is_done());
    slow.open();
    BOOST_TEST(result.futures[0].get() == 0);
}

BOOST_AUTO_TEST_CASE(when_any_outlives_inputs_still_running_after_everything_is_dropped, *utf::timeout(60)) {
    // The losers' hooks live in the aggregate: dropping the result and the
    // futures before they finish must leave nothing dangling (ASan).
    crew::fixed_pool pool(3);
    gate slow;
    {
        std::vector<crew::future<int>> inputs;
        inputs.push_back(submit_held(pool, slow, 0));
        inputs.push_back(submit_held(pool, slow, 1));
        inputs.push_back(pool.submit([] { return 2; }));
        auto result = crew::when_any(std::move(inputs)).get();
        BOOST_TEST(result.index == 2u);
    }
    slow.open();
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(30s)));
}

BOOST_AUTO_TEST_CASE(when_any_of_inputs_racing_to_finish_picks_exactly_one, *utf::timeout(300)) {
    crew::fixed_pool pool(2);
    const int rounds = std::max(100, static_cast<int>(1000 / time_factor()));
    for (int r = 0; r < rounds; ++r) {
        std::vector<crew::future<int>> inputs;
        for (int i = 0; i < 4; ++i) inputs.push_back(pool.submit([i] { return i; }));
        auto result = crew::when_any(std::move(inputs)).get();
        BOOST_TEST_REQUIRE(result.index < 4u);
        BOOST_TEST_REQUIRE(result.futures[result.index].is_done());
        BOOST_TEST_REQUIRE(result.futures[result.index].get() == static_cast<int>(result.index));
    }
}

BOOST_AUTO_TEST_SUITE_END()
