// crew::rejection_context: what a RejectPolicy sees of the refusing pool.
// A user's policy reaches the pool's public queries through pool(), and the
// steps it may take on the refused task's behalf through the context's own
// members; the pool keeps those steps private (compile_fail.reject_surface_private).
#include "support.hpp"

#include <crew/fixed_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <type_traits>

namespace utf = boost::unit_test;
using namespace crew_test;

namespace {

// What the policy saw, read by the test after the refused execute returns.
struct seen {
    std::size_t queue_size = 99;
    std::size_t pool_size = 99;
    bool shut_down = true;
    bool paused = true;
    bool own_worker = true;
    bool swapped = false;
};

// Replaces the oldest queued task with the refused one and runs the old
// one on the caller (a "newest wins" policy a user might write), recording
// what the context reports.
struct newest_wins_policy {
    seen* out = nullptr;
    template <class Context>
    void rejected_execution(crew::task&& t, Context& context) {
        static_assert(std::is_same_v<Context, crew::rejection_context<std::remove_cvref_t<decltype(context.pool())>>>);
        out->queue_size = context.pool().queue_size();
        out->pool_size = context.pool().pool_size();
        out->shut_down = context.is_shutdown();
        out->paused = context.is_paused();
        out->own_worker = context.called_from_own_worker();
        crew::task oldest;
        if (context.remove_oldest_queued(oldest)) {
            out->swapped = context.try_execute(t);
            oldest(); // on the caller, after the swap
        } else {
            t.reject();
        }
    }
};
static_assert(crew::reject_policy<newest_wins_policy>);

} // namespace

BOOST_AUTO_TEST_SUITE(rejection_context)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_policy_sees_the_pool_through_its_context_and_can_swap_the_queue_head) {
    seen s;
    gate blocked; // outlives the pool
    run_counter old_ran, new_ran;
    crew::basic_executor<crew::bounded_queue, newest_wins_policy> pool(one_worker_one_slot, {},
                                                                        newest_wins_policy{&s});
    occupy(pool, blocked, 1);
    pool.execute([&] { old_ran.hit(); }); // fills the one slot
    pool.execute([&] { new_ran.hit(); }); // refused: the policy swaps it in

    BOOST_TEST(s.queue_size == 1u);
    BOOST_TEST(s.pool_size == 1u);
    BOOST_TEST(!s.shut_down);
    BOOST_TEST(!s.paused);
    BOOST_TEST(!s.own_worker);
    BOOST_TEST(s.swapped);
    BOOST_TEST(old_ran.count() == 1); // ran on this thread, inside the policy
    BOOST_TEST(new_ran.count() == 0); // queued in its place
    BOOST_TEST(pool.queue_size() == 1u);
    blocked.open();
    BOOST_TEST(new_ran.wait_for_count(1));
    pool.shutdown();
    BOOST_TEST(pool.await_termination(std::chrono::seconds(30)));
    BOOST_TEST(pool.rejected_task_count() == 1u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_policy_called_from_a_worker_of_the_pool_knows_it) {
    seen s;
    gate blocked;
    crew::basic_executor<crew::bounded_queue, newest_wins_policy> pool(
        crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 2, .queue_capacity = 1}, {},
        newest_wins_policy{&s});
    occupy(pool, blocked, 1);
    run_counter ran;
    auto inner = pool.submit([&] {
        pool.execute([&] { ran.hit(); }); // fills the slot (nobody idle to take it: see below)
        pool.execute([&] { ran.hit(); }); // refused: the policy runs on this worker
    });
    // The second worker runs `inner`; the slot fills behind it, and the
    // second execute is refused on that worker's thread.
    inner.get();
    BOOST_TEST(s.own_worker);
    blocked.open();
    BOOST_TEST(ran.wait_for_count(2));
}

BOOST_AUTO_TEST_SUITE_END()
