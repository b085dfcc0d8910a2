// Unit tests for crew::detail::ctl: the packed run state | worker count word.

#include <crew/detail/ctl.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>

namespace ctl = crew::detail::ctl;

namespace {

constexpr std::array<ctl::word, 5> all_states{ctl::running, ctl::shutdown, ctl::stop, ctl::tidying,
                                              ctl::terminated};

// Worker counts that exercise the low bit, the middle and the top of the field.
constexpr std::array<ctl::word, 5> sample_counts{0, 1, 12345, ctl::count_mask - 1, ctl::count_mask};

} // namespace

TEST_CASE("ctl count_mask covers exactly the low 61 bits", "[ctl]") {
    STATIC_REQUIRE(ctl::count_bits == 61);
    STATIC_REQUIRE(ctl::count_mask == (std::uint64_t{1} << 61) - 1);
    STATIC_REQUIRE((ctl::count_mask & (std::uint64_t{1} << 60)) != 0);
    STATIC_REQUIRE((ctl::count_mask & (std::uint64_t{1} << 61)) == 0);
    // The largest count still leaves the run state untouched.
    STATIC_REQUIRE(ctl::run_state_of(ctl::of(ctl::running, ctl::count_mask)) == ctl::running);
}

TEST_CASE("ctl run states live above the count bits and are distinct", "[ctl]") {
    STATIC_REQUIRE(ctl::running == 0);
    for (std::size_t i = 0; i < all_states.size(); ++i) {
        CAPTURE(i);
        REQUIRE((all_states[i] & ctl::count_mask) == 0);
        REQUIRE(ctl::run_state_of(all_states[i]) == all_states[i]);
        REQUIRE(ctl::worker_count_of(all_states[i]) == 0);
        for (std::size_t j = i + 1; j < all_states.size(); ++j) REQUIRE(all_states[i] != all_states[j]);
    }
    // TERMINATED is the largest state and still fits in the word.
    STATIC_REQUIRE((ctl::terminated >> ctl::count_bits) == 4);
}

TEST_CASE("ctl packs and unpacks every run state with any worker count", "[ctl]") {
    for (const auto state : all_states) {
        for (const auto count : sample_counts) {
            CAPTURE(state, count);
            const auto c = ctl::of(state, count);
            REQUIRE(ctl::run_state_of(c) == state);
            REQUIRE(ctl::worker_count_of(c) == count);
        }
    }
    STATIC_REQUIRE(ctl::of(ctl::running, 0) == 0);
    STATIC_REQUIRE(ctl::worker_count_of(ctl::of(ctl::stop, 7)) == 7);
    STATIC_REQUIRE(ctl::run_state_of(ctl::of(ctl::stop, 7)) == ctl::stop);
}

TEST_CASE("ctl adding to the word changes only the worker count", "[ctl]") {
    // The executor increments/decrements the whole word in one CAS.
    for (const auto state : all_states) {
        CAPTURE(state);
        auto c = ctl::of(state, 41);
        c += 1;
        REQUIRE(ctl::run_state_of(c) == state);
        REQUIRE(ctl::worker_count_of(c) == 42);
        c -= 42;
        REQUIRE(c == state);
        REQUIRE(ctl::worker_count_of(c) == 0);
    }
}

TEST_CASE("ctl run states are ordered RUNNING < SHUTDOWN < STOP < TIDYING < TERMINATED", "[ctl]") {
    STATIC_REQUIRE(ctl::running < ctl::shutdown);
    STATIC_REQUIRE(ctl::shutdown < ctl::stop);
    STATIC_REQUIRE(ctl::stop < ctl::tidying);
    STATIC_REQUIRE(ctl::tidying < ctl::terminated);
}

TEST_CASE("ctl state comparisons ignore the worker count", "[ctl]") {
    for (std::size_t i = 0; i < all_states.size(); ++i) {
        for (std::size_t j = 0; j < all_states.size(); ++j) {
            for (const auto count : sample_counts) {
                CAPTURE(i, j, count);
                const auto c = ctl::of(all_states[i], count);
                REQUIRE(ctl::run_state_less_than(c, all_states[j]) == (i < j));
                REQUIRE(ctl::run_state_at_least(c, all_states[j]) == (i >= j));
            }
        }
    }
    // The boundary cases spelled out: a full count never reaches the next state.
    STATIC_REQUIRE(ctl::run_state_less_than(ctl::of(ctl::shutdown, ctl::count_mask), ctl::stop));
    STATIC_REQUIRE(ctl::run_state_at_least(ctl::of(ctl::stop, 0), ctl::stop));
    STATIC_REQUIRE(!ctl::run_state_at_least(ctl::of(ctl::running, ctl::count_mask), ctl::shutdown));
    STATIC_REQUIRE(ctl::run_state_at_least(ctl::of(ctl::terminated, 3), ctl::tidying));
}

TEST_CASE("ctl is_running holds only in RUNNING whatever the worker count", "[ctl]") {
    for (const auto count : sample_counts) {
        CAPTURE(count);
        REQUIRE(ctl::is_running(ctl::of(ctl::running, count)));
        REQUIRE_FALSE(ctl::is_running(ctl::of(ctl::shutdown, count)));
        REQUIRE_FALSE(ctl::is_running(ctl::of(ctl::stop, count)));
        REQUIRE_FALSE(ctl::is_running(ctl::of(ctl::tidying, count)));
        REQUIRE_FALSE(ctl::is_running(ctl::of(ctl::terminated, count)));
    }
}
