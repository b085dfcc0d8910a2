// Unit tests for crew::detail::spawn_deque (crew/detail/work_stealing/spawn_deque.hpp):
// the Chase–Lev deque of a worker's task_group spawns, and its ticket count.
//
// Mutations these tests were checked against (by editing a copy of the
// header):
// - pop() taking the last item without the compare-exchange on top (so a
//   thief can take it too): "owner and thieves take every item exactly
//   once" counts items taken twice;
// - grow() not copying the live items into the bigger ring: "pop is newest
//   first, steal oldest first, across growth" fails at once.

#include <crew/detail/work_stealing/spawn_deque.hpp>

#include <catch2/catch.hpp>

#include "support.hpp"

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using namespace crew_unit_test;

namespace {

// An item that knows its number (and, as its owner, its parity: for
// steal_if); run_spawned is never called here.
const int parities[2] = {0, 1};
class item final : public crew::detail::spawned_task {
  public:
    explicit item(int n) : spawned_task(nullptr, &parities[n % 2]), number(n) {}
    std::exception_ptr run_spawned() noexcept override { return {}; }
    const int number;
};

// The deque, owned by the test (one reference, let go at the end).
struct owned_deque {
    crew::detail::spawn_deque* d = new crew::detail::spawn_deque(nullptr, nullptr, nullptr);
    ~owned_deque() { d->release_owner(); }
};

int number_of(crew::detail::spawned_task* t) { return t == nullptr ? -1 : static_cast<item*>(t)->number; }

} // namespace

TEST_CASE("spawn_deque: pop is newest first, steal oldest first, across growth", "[spawn_deque]") {
    owned_deque o;
    std::vector<std::unique_ptr<item>> items;
    for (int i = 0; i < 300; ++i) items.push_back(std::make_unique<item>(i)); // past 64, 128 and 256
    for (auto& i : items) o.d->push(i.get());
    REQUIRE_FALSE(o.d->looks_empty());
    REQUIRE(number_of(o.d->pop()) == 299);
    REQUIRE(number_of(o.d->steal()) == 0);
    REQUIRE(number_of(o.d->steal()) == 1);
    REQUIRE(number_of(o.d->pop()) == 298);
    for (int expected = 297; expected >= 2; --expected) REQUIRE(number_of(o.d->pop()) == expected);
    REQUIRE(o.d->looks_empty());
    REQUIRE(o.d->pop() == nullptr);
    REQUIRE(o.d->steal() == nullptr);
}

// One thread, random pushes, pops and steals, against std::deque.
TEST_CASE("spawn_deque: a random sequence of calls matches a sequential deque", "[spawn_deque]") {
    owned_deque o;
    std::deque<int> model;
    std::vector<std::unique_ptr<item>> items;
    std::minstd_rand rng(20261129);
    for (int step = 0; step < 20'000; ++step) {
        const unsigned op = rng() % 8;
        if (op < 4) { // push more often than take, so that it grows
            items.push_back(std::make_unique<item>(step));
            o.d->push(items.back().get());
            model.push_back(step);
        } else if (op < 6) {
            const int expected = model.empty() ? -1 : model.back();
            if (!model.empty()) model.pop_back();
            REQUIRE(number_of(o.d->pop()) == expected);
        } else {
            const int expected = model.empty() ? -1 : model.front();
            if (!model.empty()) model.pop_front();
            REQUIRE(number_of(o.d->steal()) == expected);
        }
        REQUIRE(o.d->looks_empty() == model.empty());
    }
}

// The owner pushes and pops (the last item often: the race on top), two
// thieves steal; every item is taken exactly once.
TEST_CASE("spawn_deque: owner and thieves take every item exactly once", "[spawn_deque][stress]") {
    const int n = static_cast<int>(200'000 / time_factor());
    owned_deque o;
    std::vector<std::unique_ptr<item>> items;
    for (int i = 0; i < n; ++i) items.push_back(std::make_unique<item>(i));
    std::vector<std::atomic<int>> taken(static_cast<std::size_t>(n));
    std::atomic<bool> done{false};
    auto take = [&](crew::detail::spawned_task* t) {
        if (t != nullptr) taken[static_cast<std::size_t>(number_of(t))].fetch_add(1);
        return t != nullptr;
    };
    auto thief = [&] {
        while (!done.load()) (void)take(o.d->steal());
        while (take(o.d->steal())) {
        }
    };
    std::thread t1(thief), t2(thief);
    std::minstd_rand rng(7);
    int next = 0;
    while (next < n) {
        const int burst = static_cast<int>(rng() % 4) + 1; // short: the deque is often down to one item
        for (int k = 0; k < burst && next < n; ++k) o.d->push(items[static_cast<std::size_t>(next++)].get());
        for (int k = static_cast<int>(rng() % 3); k > 0; --k) (void)take(o.d->pop());
    }
    while (take(o.d->pop())) {
    }
    done = true;
    t1.join();
    t2.join();
    int missing = 0, repeated = 0;
    for (auto& count : taken) {
        if (count.load() == 0) ++missing;
        if (count.load() > 1) ++repeated;
    }
    CAPTURE(missing, repeated);
    REQUIRE(missing == 0);
    REQUIRE(repeated == 0);
}

// steal_if takes the oldest only if its owner is the one asked for, and
// reads the owner from the cell, not from the item (which a claimed steal
// elsewhere may have freed).
TEST_CASE("spawn_deque: steal_if takes the oldest only if it is the owner's", "[spawn_deque]") {
    owned_deque o;
    item zero(0), one(1), two(2);
    o.d->push(&zero);
    o.d->push(&one);
    o.d->push(&two);
    const auto odd = [](const void* owner) { return owner == &parities[1]; };
    const auto even = [](const void* owner) { return owner == &parities[0]; };
    REQUIRE(o.d->oldest_is(&parities[0]));
    REQUIRE(o.d->steal_if(odd) == nullptr); // 0 is oldest, even
    REQUIRE(number_of(o.d->steal_if(even)) == 0);
    REQUIRE(o.d->oldest_is(&parities[1]));
    REQUIRE(number_of(o.d->steal_if(odd)) == 1);
    REQUIRE(o.d->steal_if(odd) == nullptr);
    REQUIRE(number_of(o.d->pop()) == 2);
    REQUIRE_FALSE(o.d->oldest_is(&parities[0]));
}

TEST_CASE("spawn_deque: at most max_tickets are counted at once", "[spawn_deque]") {
    owned_deque o;
    constexpr auto most = crew::detail::spawn_deque::max_tickets;
    for (std::uint32_t i = 0; i < most; ++i) REQUIRE(o.d->count_ticket());
    REQUIRE_FALSE(o.d->count_ticket());
    REQUIRE(o.d->tickets() == most);
    o.d->uncount_ticket();
    REQUIRE(o.d->count_ticket());
    REQUIRE_FALSE(o.d->count_ticket());
}

// A group's reference is taken on the owner's thread and let go there (no
// read-modify-write) or elsewhere (the shared count); the owner folds what
// it counted into the shared count when it leaves, so the deque outlives
// every holder and is freed once (AddressSanitizer checks both in CI).
// Against a release_owner() that drops the groups it counted, the last
// release below is a use after free.
TEST_CASE("spawn_deque: references taken and let go on and off the owner's thread add up", "[spawn_deque]") {
    auto* d = new crew::detail::spawn_deque(nullptr, nullptr, nullptr);
    REQUIRE(d->references() == 1);
    d->acquire_on_owner(); // three groups
    d->acquire_on_owner();
    d->acquire_on_owner();
    d->acquire(); // a ticket
    REQUIRE(d->references() == 5);
    std::thread([d] { d->release(); }).join(); // a group destroyed off the owner's thread
    REQUIRE(d->references() == 4);
    d->release_on_owner(); // a group destroyed on it
    REQUIRE(d->references() == 3);
    d->release_owner(); // the owner leaves: one group and the ticket hold it
    std::thread([d] {
        d->release(); // the group, off the owner's thread
        d->release(); // the ticket: the last
    }).join();
}
