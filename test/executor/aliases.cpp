// Behaviour every pool shares, typed over the aliases and policy mixes.
#include "support.hpp"

#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <future>
#include <thread>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

using bounded_caller_runs = crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy>;
using spin_locked = crew::basic_executor<crew::unbounded_queue, crew::abort_policy, crew::default_thread_factory,
                                         crew::spin_lock>;
using blocking = crew::basic_executor<crew::bounded_queue, crew::block_policy, crew::default_thread_factory,
                                      crew::spin_lock>;
using scheduled_spin_locked = crew::basic_executor<crew::delayed_queue, crew::caller_runs_policy,
                                                   crew::default_thread_factory, crew::spin_lock>;
// Bounded queues (capacity 8) get a policy that refuses no task.
using grow_first_caller_runs = crew::basic_executor<crew::grow_first_queue, crew::caller_runs_policy>;
using pools = boost::mpl::list<crew::fixed_pool, crew::cached_pool, crew::scheduled_pool,
                               crew::basic_executor<crew::priority_queue>, bounded_caller_runs, spin_locked, blocking,
                               grow_first_caller_runs, scheduled_spin_locked>;

template <class Pool>
Pool make_pool() {
    if constexpr (std::is_same_v<Pool, crew::cached_pool>) return Pool();
    else return Pool(crew::pool_options{.core_pool_size = 2, .maximum_pool_size = 2, .queue_capacity = 8});
}

} // namespace

BOOST_AUTO_TEST_SUITE(aliases)

BOOST_TEST_DECORATOR(*utf::timeout(120))
BOOST_AUTO_TEST_CASE_TEMPLATE(every_pool_runs_every_task_from_several_producers, Pool, pools) {
    Pool pool = make_pool<Pool>();
    run_counter ran;
    const int per_producer = 2000;
    std::vector<std::thread> producers;
    for (int p = 0; p < 2; ++p)
        producers.emplace_back([&] {
            for (int i = 0; i < per_producer; ++i) pool.execute([&] { ran.hit(); });
        });
    for (auto& t : producers) t.join();
    pool.shutdown();
    BOOST_TEST(pool.await_termination(scaled(20s)));
    BOOST_TEST(ran.count() == 2 * per_producer);
    BOOST_TEST(pool.is_terminated());
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(every_pool_names_its_threads_after_the_default_factory, Pool, pools) {
    Pool pool = make_pool<Pool>();
    std::promise<std::string> name;
    pool.execute([&] { name.set_value(crew::detail::current_thread_name()); });
    const std::string got = name.get_future().get();
    BOOST_TEST(got.rfind("crew-", 0) == 0u);
    BOOST_TEST(got.size() >= 8u); // crew-<pool>-<n>
}

BOOST_AUTO_TEST_SUITE_END()
