// Unit tests for detail::pool_link's table: a scheduled future's ticket
// reaches its pool while the pool lives, nothing once the pool is gone, and
// never the pool that was given the dead pool's entry afterwards (the
// generation check; without it the last test fails).

#include <crew/detail/future/pool_link.hpp>

#include <catch2/catch.hpp>

#include <memory>

namespace {

struct counting_link final : crew::detail::pool_link {
    int cancels = 0;
    void on_cancelled(const std::unique_lock<std::recursive_mutex>& held, crew::schedule_slot&) noexcept override {
        REQUIRE(held.owns_lock()); // the ticket calls under its entry's mutex
        ++cancels;
    }
};

} // namespace

TEST_CASE("pool_link: a ticket reaches its pool while the pool holds the entry", "[pool_link]") {
    counting_link pool;
    crew::detail::link_registration registration(pool);
    crew::schedule_slot slot;
    const crew::detail::link_ticket ticket = registration.ticket();
    ticket.cancelled(slot);
    ticket.cancelled(slot);
    CHECK(pool.cancels == 2);
}

TEST_CASE("pool_link: a ticket of a dead pool reaches nothing", "[pool_link]") {
    counting_link pool;
    auto registration = std::make_unique<crew::detail::link_registration>(pool);
    const crew::detail::link_ticket ticket = registration->ticket();
    registration.reset();
    crew::schedule_slot slot;
    ticket.cancelled(slot); // no pool: must not call through
    CHECK(pool.cancels == 0);
}

TEST_CASE("pool_link: a stale ticket does not reach the next pool given the same entry", "[pool_link]") {
    counting_link first, second;
    auto a = std::make_unique<crew::detail::link_registration>(first);
    const crew::detail::link_ticket stale = a->ticket();
    a.reset();
    crew::detail::link_registration b(second); // the free list is LIFO: the same entry
    REQUIRE(b.ticket().entry() == stale.entry());
    crew::schedule_slot slot;
    stale.cancelled(slot);
    CHECK(second.cancels == 0);
    CHECK(first.cancels == 0);
    b.ticket().cancelled(slot);
    CHECK(second.cancels == 1);
}

TEST_CASE("pool_link: live pools hold distinct entries", "[pool_link]") {
    counting_link links[40]; // more than one chunk of entries
    std::unique_ptr<crew::detail::link_registration> registrations[40];
    for (int i = 0; i < 40; ++i) registrations[i] = std::make_unique<crew::detail::link_registration>(links[i]);
    for (int i = 0; i < 40; ++i)
        for (int j = i + 1; j < 40; ++j)
            CHECK(registrations[i]->ticket().entry() != registrations[j]->ticket().entry());
    crew::schedule_slot slot;
    for (int i = 0; i < 40; ++i) registrations[i]->ticket().cancelled(slot);
    for (int i = 0; i < 40; ++i) CHECK(links[i].cancels == 1);
}
