// with_priority through the executor: priority_queue orders by it, other
// queues ignore it.
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <mutex>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

template <class Pool>
std::vector<int> run_order(Pool& pool) {
    gate blocked;
    std::mutex m;
    std::vector<int> order;
    auto note = [&](int id) {
        return [&, id] {
            std::lock_guard lock(m);
            order.push_back(id);
        };
    };
    pool.execute([&] { blocked.wait(); }); // occupies the only worker
    pool.execute(crew::with_priority(1, note(1)));
    pool.execute(crew::with_priority(5, note(2)));
    pool.execute(note(3)); // priority 0
    pool.execute(crew::with_priority(5, note(4)));
    pool.execute(crew::with_priority(-2, note(5)));
    pool.execute(crew::with_priority(3, [&, f = note(6)](std::stop_token) { f(); }));
    blocked.open();
    pool.wait_idle();
    return order;
}

} // namespace

BOOST_AUTO_TEST_SUITE(priority)

BOOST_AUTO_TEST_CASE(priority_queue_runs_highest_first_and_fifo_among_equals, *utf::timeout(60)) {
    crew::basic_executor<crew::priority_queue> pool(1);
    const std::vector<int> expected{2, 4, 6, 1, 3, 5};
    BOOST_TEST(run_order(pool) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(other_queues_ignore_priorities, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    const std::vector<int> expected{1, 2, 3, 4, 5, 6};
    BOOST_TEST(run_order(pool) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
