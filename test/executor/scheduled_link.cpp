// The link from a scheduled future back to its pool (detail/future/pool_link.hpp):
// a future may outlive its pool and still be cancelled; a pool built later,
// which may be given the dead pool's entry in the link table, never hears of
// that cancel; and a cancel racing the pool's destruction is safe.
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

std::atomic<int> spied_removes{0};

// A delayed queue that counts the removals its pool asks of it.
struct spying_queue : crew::delayed_queue {
    using crew::delayed_queue::delayed_queue;
    crew::task remove(crew::schedule_slot& slot) {
        spied_removes.fetch_add(1);
        return crew::delayed_queue::remove(slot);
    }
};
using spying_pool = crew::basic_executor<spying_queue>;

// A future whose pool is gone, still pending: the pool handed its task back
// (shutdown_now), and the task is kept alive in `handed_back`.
crew::scheduled_future<void> orphaned_future(std::vector<crew::task>& handed_back) {
    crew::scheduled_pool pool(1);
    auto far = pool.schedule(1h, [] {});
    handed_back = pool.shutdown_now();
    return far;
}

} // namespace

BOOST_AUTO_TEST_SUITE(scheduled_link)

BOOST_AUTO_TEST_CASE(a_future_cancelled_after_its_pool_died_completes_and_reaches_no_pool, *utf::timeout(60)) {
    std::vector<crew::task> handed_back;
    auto stale = orphaned_future(handed_back);
    BOOST_TEST(handed_back.size() == 1u);
    BOOST_TEST(!stale.is_done());
    BOOST_TEST(stale.cancel(true));
    BOOST_TEST(stale.is_cancelled());
    handed_back.clear(); // the task dies unrun: already cancelled
    BOOST_CHECK_THROW(stale.get(), crew::cancellation_error);
}

// The next pool takes the dead pool's entry (the table's free list is LIFO).
// A cancel that reached it would make it remove a slot that is not its own
// (remove_on_cancel is on): with the generation check left out of
// link_ticket::cancelled, spied_removes is 1.
BOOST_AUTO_TEST_CASE(a_stale_future_cancel_does_not_reach_the_pool_built_after_its_own, *utf::timeout(60)) {
    std::vector<crew::task> handed_back;
    auto stale = orphaned_future(handed_back);
    spying_pool next(1);
    next.set_remove_on_cancel(true);
    spied_removes = 0;
    std::atomic<int> runs{0};
    auto mine = next.schedule(20ms, [&] {
        runs.fetch_add(1);
        return 7;
    });
    BOOST_TEST(stale.cancel(true));
    BOOST_TEST(spied_removes.load() == 0);
    BOOST_TEST(next.queue_size() == 1u);
    BOOST_TEST(mine.get() == 7);
    BOOST_TEST(runs.load() == 1);

    // Its own futures still reach it.
    auto far = next.schedule(1h, [] {});
    BOOST_TEST(far.cancel(true));
    BOOST_TEST(spied_removes.load() == 1);
    BOOST_TEST(next.queue_size() == 0u);
}

// The same with the public alias: the later pool's task still runs, and its
// own cancels still work.
BOOST_AUTO_TEST_CASE(a_pool_built_after_a_stale_future_s_pool_runs_its_tasks, *utf::timeout(60)) {
    std::vector<crew::task> handed_back;
    auto stale = orphaned_future(handed_back);
    crew::scheduled_pool next(1);
    next.set_remove_on_cancel(true);
    auto mine = next.schedule(20ms, [] { return 8; });
    auto cancelled = next.schedule(1h, [] { return 9; });
    BOOST_TEST(stale.cancel(true));
    BOOST_TEST(next.queue_size() == 2u);
    BOOST_TEST(cancelled.cancel(true));
    BOOST_TEST(next.queue_size() == 1u);
    BOOST_TEST(mine.get() == 8);
}

// Cancels race the pool's destruction (which drops its delayed tasks, as
// execute_delayed_after_shutdown is off) while another thread builds pools
// that take the freed entries. A cancel either reaches the live pool or
// finds the link cut; nothing is touched after the pool died (ASan, TSan).
BOOST_AUTO_TEST_CASE(cancels_racing_the_pools_destruction_are_safe, *utf::timeout(300)) {
    const int rounds = std::max(20, static_cast<int>(400 / time_factor()));
    std::atomic<bool> stop{false};
    std::thread churn([&] {
        while (!stop.load()) {
            crew::scheduled_pool other(1);
            other.set_remove_on_cancel(true);
            auto f = other.schedule(1h, [] {});
            f.cancel(true);
        }
    });
    for (int round = 0; round < rounds; ++round) {
        std::vector<crew::scheduled_future<void>> futures;
        std::thread canceller;
        {
            crew::scheduled_pool pool(1);
            pool.set_execute_delayed_after_shutdown(false);
            pool.set_remove_on_cancel(round % 2 == 0);
            for (int i = 0; i < 16; ++i) futures.push_back(pool.schedule(1h, [] {}));
            canceller = std::thread([&] {
                for (auto& f : futures) f.cancel(true);
            });
        } // the pool dies while the canceller works
        canceller.join();
        for (auto& f : futures) BOOST_TEST_REQUIRE(f.is_cancelled());
    }
    stop = true;
    churn.join();
}

BOOST_AUTO_TEST_SUITE_END()
