// before_execute / after_execute, escaping exceptions, and bad callables.
#include "support.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

// A thread factory that counts the threads it made.
struct counting_factory {
    std::shared_ptr<std::atomic<int>> made = std::make_shared<std::atomic<int>>(0);
    crew::default_thread_factory inner;
    std::thread new_thread(crew::task body) {
        made->fetch_add(1);
        return inner.new_thread(std::move(body));
    }
};

} // namespace

BOOST_AUTO_TEST_SUITE(hooks)

BOOST_AUTO_TEST_CASE(before_and_after_execute_wrap_each_task_on_its_worker, *utf::timeout(60)) {
    std::mutex m;
    std::vector<std::string> events;
    auto record = [&](std::string e) {
        std::lock_guard lock(m);
        events.push_back(std::move(e) + (crew::detail::current_worker ? "@worker" : "@other"));
    };
    crew::fixed_pool pool(crew::pool_options{
        .core_pool_size = 1,
        .before_execute = [&] { record("before"); },
        .after_execute = [&](std::exception_ptr e) { record(e ? "after-error" : "after-ok"); },
    });
    pool.execute([&] { record("task"); });
    pool.execute([&] { throw std::runtime_error("boom"); });
    pool.wait_idle();
    const std::vector<std::string> expected{"before@worker", "task@worker", "after-ok@worker",
                                            "before@worker", "after-error@worker"};
    BOOST_TEST(events == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(after_execute_receives_the_exception_that_escaped, *utf::timeout(60)) {
    escaped_message escaped;
    crew::fixed_pool pool(crew::pool_options{.core_pool_size = 1, .after_execute = escaped.hook()});
    pool.execute([] { throw std::runtime_error("the message"); });
    BOOST_TEST(escaped.future().get() == "the message");
}

BOOST_AUTO_TEST_CASE(without_a_hook_an_escaping_exception_goes_to_stderr_with_the_thread_name, *utf::timeout(60)) {
    crew::fixed_pool pool(1);
    std::string text;
    {
        stderr_capture capture;
        pool.execute([] { throw std::runtime_error("lost in the pool"); });
        pool.wait_idle(); // the report is written before the task counts as completed
        text = capture.text();
    }
    BOOST_TEST(text.find("lost in the pool") != std::string::npos);
    BOOST_TEST(text.find("crew-") != std::string::npos); // the default factory's thread name
}

BOOST_AUTO_TEST_CASE(throwing_tasks_neither_shrink_nor_replace_workers, *utf::timeout(60)) {
    counting_factory factory;
    crew::basic_executor<crew::unbounded_queue, crew::abort_policy, counting_factory> pool(
        crew::pool_options{.core_pool_size = 2, .after_execute = [](std::exception_ptr) {}}, factory);
    for (int i = 0; i < 50; ++i) pool.execute([] { throw std::logic_error("x"); });
    pool.wait_idle();
    BOOST_TEST(pool.pool_size() == 2u);
    BOOST_TEST(factory.made->load() == 2);
    BOOST_TEST(pool.completed_task_count() == 50u);
}

BOOST_AUTO_TEST_CASE(a_throwing_before_execute_skips_the_task_and_reaches_after_execute, *utf::timeout(60)) {
    run_counter ran;
    std::atomic<int> errors{0};
    std::atomic<bool> fail_next{true};
    crew::fixed_pool pool(crew::pool_options{
        .core_pool_size = 1,
        .before_execute =
            [&] {
                if (fail_next.exchange(false)) throw std::runtime_error("not now");
            },
        .after_execute =
            [&](std::exception_ptr e) {
                if (e) errors.fetch_add(1);
            },
    });
    pool.execute([&] { ran.hit(); });
    pool.execute([&] { ran.hit(); });
    pool.wait_idle();
    BOOST_TEST(ran.count() == 1);
    BOOST_TEST(errors.load() == 1);
    BOOST_TEST(pool.pool_size() == 1u);
}

BOOST_AUTO_TEST_CASE(an_empty_callable_throws_invalid_argument, *utf::timeout(30)) {
    crew::fixed_pool pool(1);
    BOOST_CHECK_THROW(pool.execute(std::function<void()>{}), std::invalid_argument);
    void (*null_function)() = nullptr;
    BOOST_CHECK_THROW(pool.execute(null_function), std::invalid_argument);
    BOOST_CHECK_THROW(pool.execute(crew::task{}), std::invalid_argument);
    BOOST_TEST(pool.task_count() == 0u);
    BOOST_TEST(pool.pool_size() == 0u);
}

BOOST_AUTO_TEST_CASE(a_stop_token_task_gets_the_workers_token, *utf::timeout(30)) {
    crew::fixed_pool pool(1);
    std::promise<bool> possible;
    pool.execute([&](std::stop_token token) { possible.set_value(token.stop_possible()); });
    BOOST_TEST(possible.get_future().get());
}

BOOST_AUTO_TEST_SUITE_END()
