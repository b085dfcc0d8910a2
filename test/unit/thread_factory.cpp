// Unit tests for crew::default_thread_factory (crew/policies/thread_factory.hpp).
// Thread names are read inside the new thread with pthread_getname_np.

#include <crew/concepts.hpp>
#include <crew/policies/thread_factory.hpp>
#include <crew/task.hpp>

#include <catch2/catch.hpp>

#include "../common/lifetime.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <latch>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

std::string current_thread_name() {
    char buffer[64] = {};
    if (pthread_getname_np(pthread_self(), buffer, sizeof buffer) != 0) return "<pthread_getname_np failed>";
    return buffer;
}

// Starts one thread with `factory`, joins it and returns the name it ran under.
template <class Factory>
std::string name_of_new_thread(Factory& factory) {
    std::string name;
    std::thread t = factory.new_thread(crew::task([&name] { name = current_thread_name(); }));
    t.join();
    return name;
}

std::string expected_name(const std::string& prefix, std::uint64_t pool, int thread) {
    return prefix + '-' + std::to_string(pool) + '-' + std::to_string(thread);
}

struct body_state {
    std::atomic<int> runs{0};
    std::atomic<int> owners_destroyed{0};
};

// Counts runs, and destructions of the instance that was not moved from.
struct counted_body {
    body_state* state;
    crew_test_common::destruction_counter<std::atomic<int>> lifetime;
    explicit counted_body(body_state& s) : state(&s), lifetime(s.owners_destroyed) {}
    void operator()() { ++state->runs; }
};

} // namespace

TEST_CASE("default_thread_factory models crew::thread_factory", "[thread_factory]") {
    STATIC_REQUIRE(crew::thread_factory<crew::default_thread_factory>);
    STATIC_REQUIRE_FALSE(crew::thread_factory<int>);
}

TEST_CASE("default_thread_factory names threads crew-<pool>-<n>", "[thread_factory]") {
    crew::default_thread_factory factory;
    REQUIRE(factory.pool_number() >= 1);
    REQUIRE(name_of_new_thread(factory) == expected_name("crew", factory.pool_number(), 1));
}

TEST_CASE("default_thread_factory numbers threads from 1 per factory", "[thread_factory]") {
    crew::default_thread_factory first;
    REQUIRE(name_of_new_thread(first) == expected_name("crew", first.pool_number(), 1));
    REQUIRE(name_of_new_thread(first) == expected_name("crew", first.pool_number(), 2));
    REQUIRE(name_of_new_thread(first) == expected_name("crew", first.pool_number(), 3));

    crew::default_thread_factory second;
    REQUIRE(name_of_new_thread(second) == expected_name("crew", second.pool_number(), 1));
    REQUIRE(name_of_new_thread(first) == expected_name("crew", first.pool_number(), 4));
}

TEST_CASE("consecutive default_thread_factory objects get consecutive pool numbers", "[thread_factory]") {
    crew::default_thread_factory a;
    crew::default_thread_factory b;
    crew::default_thread_factory c("other");
    crew::default_thread_factory d;
    REQUIRE(b.pool_number() == a.pool_number() + 1);
    REQUIRE(c.pool_number() == a.pool_number() + 2); // a custom prefix shares the count
    REQUIRE(d.pool_number() == a.pool_number() + 3);
}

TEST_CASE("default_thread_factory uses a custom prefix", "[thread_factory]") {
    crew::default_thread_factory factory("io");
    REQUIRE(name_of_new_thread(factory) == expected_name("io", factory.pool_number(), 1));
    REQUIRE(name_of_new_thread(factory) == expected_name("io", factory.pool_number(), 2));
}

TEST_CASE("default_thread_factory cuts names to the 15 characters Linux keeps", "[thread_factory]") {
    SECTION("a long prefix") {
        crew::default_thread_factory factory("a-rather-long-thread-prefix");
        const std::string full = expected_name("a-rather-long-thread-prefix", factory.pool_number(), 1);
        const std::string name = name_of_new_thread(factory);
        REQUIRE(name.size() == 15);
        REQUIRE(name == full.substr(0, 15));
    }
    SECTION("a prefix that makes the name exactly 15 characters") {
        crew::default_thread_factory probe("x");
        const std::string tail = '-' + std::to_string(probe.pool_number() + 1) + "-1";
        REQUIRE(tail.size() < 15);
        const std::string prefix(15 - tail.size(), 'p');
        crew::default_thread_factory factory(prefix);
        REQUIRE(factory.pool_number() == probe.pool_number() + 1);
        const std::string name = name_of_new_thread(factory);
        REQUIRE(name == prefix + tail);
        REQUIRE(name.size() == 15);
    }
}

TEST_CASE("a copied default_thread_factory keeps its pool number and takes no new one", "[thread_factory]") {
    crew::default_thread_factory original("copy");
    crew::default_thread_factory copy(original);
    REQUIRE(copy.pool_number() == original.pool_number());
    REQUIRE(name_of_new_thread(copy) == expected_name("copy", original.pool_number(), 1));

    crew::default_thread_factory next;
    REQUIRE(next.pool_number() == original.pool_number() + 1);
}

TEST_CASE("default_thread_factory runs the body exactly once and then destroys it", "[thread_factory]") {
    crew::default_thread_factory factory;
    body_state state;
    std::thread t = factory.new_thread(crew::task(counted_body(state)));
    REQUIRE(t.joinable());
    t.join();
    REQUIRE(state.runs == 1);
    REQUIRE(state.owners_destroyed == 1);
}

TEST_CASE("default_thread_factory gives distinct names to threads started concurrently",
          "[thread_factory][stress]") {
    crew::default_thread_factory factory("par");
    constexpr int callers = 4;
    constexpr int per_caller = 16;
    std::mutex names_mutex;
    std::vector<std::string> names;
    std::latch start(callers);

    std::vector<std::thread> calling;
    for (int c = 0; c < callers; ++c) {
        calling.emplace_back([&] {
            start.arrive_and_wait();
            std::vector<std::thread> started;
            for (int i = 0; i < per_caller; ++i)
                started.push_back(factory.new_thread(crew::task([&] {
                    const std::string name = current_thread_name();
                    const std::lock_guard lock(names_mutex);
                    names.push_back(name);
                })));
            for (auto& t : started) t.join();
        });
    }
    for (auto& t : calling) t.join();

    REQUIRE(names.size() == callers * per_caller);
    std::set<std::string> expected;
    for (int n = 1; n <= callers * per_caller; ++n) expected.insert(expected_name("par", factory.pool_number(), n));
    const std::set<std::string> distinct(names.begin(), names.end());
    REQUIRE(distinct == expected);
}
