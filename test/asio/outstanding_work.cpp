// execution::outstanding_work on a pool's executor: a tracked handle
// (require(ex, outstanding_work.tracked), prefer, asio::make_work_guard,
// ex.on_work_started()) counts as the pool's outstanding work, and the
// pool's destructor waits until none is left before it shuts down; an
// untracked handle (every pool_executor) does not keep the pool.
#include "support.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>

#include <boost/test/unit_test.hpp>

#include <future>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

using namespace crew_asio_test;
namespace utf = boost::unit_test;

namespace {

using pool_type = crew::fixed_pool;
using executor = pool_type::executor_type;
using tracked = crew::tracked_pool_executor<pool_type>;

static_assert(std::is_same_v<asio::require_result<executor, execution::outstanding_work_t::tracked_t>::type, tracked>);
static_assert(std::is_same_v<asio::require_result<tracked, execution::outstanding_work_t::untracked_t>::type, executor>);
static_assert(std::is_same_v<asio::require_result<tracked, execution::blocking_t::never_t>::type, tracked>);
static_assert(execution::is_executor<tracked>::value);
static_assert(asio::can_query<tracked, execution::context_t>::value);
static_assert(std::is_nothrow_copy_constructible_v<tracked>);
// The plain handle pays nothing for it: still a trivially copyable pair.
static_assert(std::is_trivially_copyable_v<executor>);

std::size_t tracked_count(pool_type& pool) { return crew_outstanding_work(pool).count(); }

// Yields until the destructor of `pool`, running on another thread, waits
// for its outstanding work.
void until_the_destructor_waits(pool_type& pool) {
    while (!crew_outstanding_work(pool).waited_on()) std::this_thread::yield();
}

} // namespace

BOOST_AUTO_TEST_SUITE(outstanding_work)

BOOST_AUTO_TEST_CASE(query_tells_tracked_from_untracked, *utf::timeout(60)) {
    pool_type pool(1);
    const executor ex = pool.get_executor();
    BOOST_TEST((asio::query(ex, execution::outstanding_work) == execution::outstanding_work.untracked));
    const tracked t = asio::require(ex, execution::outstanding_work.tracked);
    BOOST_TEST((asio::query(t, execution::outstanding_work) == execution::outstanding_work.tracked));
    const auto preferred = asio::prefer(ex, execution::outstanding_work.tracked);
    BOOST_TEST((asio::query(preferred, execution::outstanding_work) == execution::outstanding_work.tracked));
    const executor back = asio::require(t, execution::outstanding_work.untracked);
    BOOST_TEST((asio::query(back, execution::outstanding_work) == execution::outstanding_work.untracked));
    BOOST_TEST((asio::query(asio::require(ex, execution::outstanding_work.untracked), execution::outstanding_work) ==
                execution::outstanding_work.untracked));
    // The other properties carry over.
    const auto never = asio::require(t, execution::blocking.never);
    BOOST_TEST((asio::query(never, execution::blocking) == execution::blocking.never));
    BOOST_TEST((asio::query(never, execution::outstanding_work) == execution::outstanding_work.tracked));
    BOOST_TEST(!asio::require(never, execution::outstanding_work.untracked).runs_inline_on_own_thread());
    BOOST_TEST((&asio::query(t, execution::context) == &asio::query(ex, execution::context)));
    BOOST_TEST((&t.context() == &pool));
    BOOST_TEST((t == preferred));
    BOOST_TEST((back == ex));
}

BOOST_AUTO_TEST_CASE(the_tracked_count_goes_to_zero_when_tracked_executors_are_destroyed, *utf::timeout(60)) {
    pool_type pool(1);
    const executor ex = pool.get_executor();
    BOOST_TEST(tracked_count(pool) == 0u);
    {
        const executor plain_copy = ex; // untracked: not counted
        (void)plain_copy;
        tracked t = asio::require(ex, execution::outstanding_work.tracked);
        BOOST_TEST(tracked_count(pool) == 1u);
        tracked copy = t;
        BOOST_TEST(tracked_count(pool) == 2u);
        tracked moved = std::move(copy); // the count moves with it
        BOOST_TEST(tracked_count(pool) == 2u);
        copy = moved; // a moved-from handle may be assigned to
        BOOST_TEST(tracked_count(pool) == 3u);
        copy = t; // assigning a tracked handle to one: no change
        BOOST_TEST(tracked_count(pool) == 3u);
        const auto never = asio::require(t, execution::blocking.never);
        BOOST_TEST(tracked_count(pool) == 4u);
        const executor untracked = asio::require(t, execution::outstanding_work.untracked);
        (void)untracked;
        BOOST_TEST(tracked_count(pool) == 4u);
        {
            auto guard = asio::make_work_guard(ex);
            BOOST_TEST(tracked_count(pool) == 5u);
            guard.reset();
            BOOST_TEST(tracked_count(pool) == 4u);
        }
        ex.on_work_started();
        BOOST_TEST(tracked_count(pool) == 5u);
        ex.on_work_finished();
        BOOST_TEST(tracked_count(pool) == 4u);
        {
            const asio::any_io_executor any = asio::prefer(asio::any_io_executor(ex), execution::outstanding_work.tracked);
            BOOST_TEST(tracked_count(pool) == 5u);
            const auto strand = asio::make_strand(t);
            BOOST_TEST(tracked_count(pool) == 6u);
        }
        BOOST_TEST(tracked_count(pool) == 4u);
    }
    BOOST_TEST(tracked_count(pool) == 0u);
    // Work that went through the pool and its tracked handles leaves none.
    {
        worker_probe probe;
        asio::post(asio::require(ex, execution::outstanding_work.tracked), probe.handler(ex));
        BOOST_TEST(probe.ran_on_a_worker());
        auto strand = asio::make_strand(ex);
        std::future<int> r = asio::post(strand, asio::use_future([] { return 7; }));
        BOOST_REQUIRE(ready_within(r));
        BOOST_TEST(r.get() == 7);
    }
    pool.shutdown();
    BOOST_REQUIRE(pool.await_termination(scaled(10s)));
    BOOST_TEST(tracked_count(pool) == 0u);
}

// The destructor waits for a tracked handle held elsewhere, and the pool
// still runs what it is given meanwhile; once the handle goes, it shuts down.
BOOST_AUTO_TEST_CASE(a_tracked_executor_keeps_the_destructor_waiting_and_the_pool_running, *utf::timeout(60)) {
    auto* pool = new pool_type(1);
    std::optional<tracked> held(asio::require(pool->get_executor(), execution::outstanding_work.tracked));
    std::future<void> destroyed = std::async(std::launch::async, [pool] { delete pool; });
    until_the_destructor_waits(*pool);
    BOOST_TEST(!pool->is_shutdown());
    BOOST_TEST((destroyed.wait_for(std::chrono::seconds(0)) == std::future_status::timeout));
    worker_probe probe;
    asio::post(*held, probe.handler(*held));
    BOOST_TEST(probe.ran_on_a_worker());
    held.reset();
    BOOST_TEST(ready_within(destroyed));
}

// An untracked handle (or one made untracked again) does not hold the
// destructor: it returns while the handles still exist (never to be used).
BOOST_AUTO_TEST_CASE(an_untracked_executor_does_not_keep_the_pool_alive, *utf::timeout(60)) {
    auto* pool = new pool_type(1);
    const executor ex = pool->get_executor();
    const executor untracked =
        asio::require(asio::require(ex, execution::outstanding_work.tracked), execution::outstanding_work.untracked);
    const auto preferred = asio::prefer(ex, execution::outstanding_work.untracked);
    BOOST_TEST((asio::query(preferred, execution::outstanding_work) == execution::outstanding_work.untracked));
    std::future<void> destroyed = std::async(std::launch::async, [pool] { delete pool; });
    BOOST_TEST(ready_within(destroyed));
    (void)untracked;
}

BOOST_AUTO_TEST_SUITE_END()
