// Unit tests for crew::task (type erasure, inline storage, the reporting
// protocol of future tasks) and crew::with_priority.
//
// This file replaces the global operator new/delete to count allocations.
// The replacement serves the whole test binary, so it only counts: every
// allocation goes to malloc/aligned_alloc (which the sanitizers intercept),
// and the count is per thread, so other tests' threads never disturb a
// measurement here.

#include <crew/errors.hpp>
#include <crew/task.hpp>

#include <catch2/catch.hpp>

#include "../common/lifetime.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

// ---- counting global allocation functions ----------------------------------
// Every replaceable form is replaced: sanitizer runtimes define each of them,
// so leaving one out would pair their allocator with our free().

namespace {
thread_local std::size_t allocations_on_this_thread = 0;

void* counted_allocate(std::size_t size) noexcept {
    ++allocations_on_this_thread;
    return std::malloc(size == 0 ? 1 : size);
}

void* counted_allocate(std::size_t size, std::align_val_t alignment) noexcept {
    ++allocations_on_this_thread;
    const auto align = static_cast<std::size_t>(alignment);
    const std::size_t rounded = size == 0 ? align : (size + align - 1) / align * align;
    return std::aligned_alloc(align, rounded);
}

void* or_throw(void* p) {
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

// Out of line, so that GCC does not see free() inlined into a delete-expression
// and warn about a new/free mismatch (-Wmismatched-new-delete).
[[gnu::noinline]] void counted_release(void* p) noexcept { std::free(p); }
} // namespace

void* operator new(std::size_t n) { return or_throw(counted_allocate(n)); }
void* operator new[](std::size_t n) { return or_throw(counted_allocate(n)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) { return or_throw(counted_allocate(n, a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return or_throw(counted_allocate(n, a)); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_allocate(n, a); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return counted_allocate(n, a);
}

void operator delete(void* p) noexcept { counted_release(p); }
void operator delete[](void* p) noexcept { counted_release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_release(p); }
void operator delete(void* p, std::size_t) noexcept { counted_release(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_release(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_release(p); }

namespace {

std::size_t allocations() noexcept { return allocations_on_this_thread; }

// A task built from a callable, moved into a second task and that assigned
// to a third, which is then run: the allocations each step made.
struct task_life {
    crew::task task; // the third, after its run
    std::size_t construct = 0;
    std::size_t moves = 0;
    std::size_t call = 0;
};

template <class F>
task_life live_a_task(F callable) {
    task_life life;
    std::size_t mark = allocations();
    auto since_mark = [&mark] {
        const std::size_t now = allocations();
        return now - std::exchange(mark, now);
    };
    crew::task t(std::move(callable));
    life.construct = since_mark();
    crew::task u(std::move(t));
    life.task = std::move(u);
    life.moves = since_mark();
    life.task();
    life.call = since_mark();
    return life;
}

// ---- test callables ---------------------------------------------------------

// Counts live instances and how often the "identity" (the object first
// constructed, followed through its moves) was destroyed.
struct lifetime_counter {
    int constructed = 0; // every instance, moved-to ones included
    int destroyed = 0;   // every instance, moved-from ones included
    int owners_destroyed = 0;
    int calls = 0;
};

template <std::size_t Padding = 1, bool NothrowMove = true>
struct counted_callable {
    lifetime_counter* counter;
    crew_test_common::destruction_counter<int> lifetime; // a copy is an identity of its own
    std::array<char, Padding> padding{};

    explicit counted_callable(lifetime_counter& c) : counter(&c), lifetime(c.owners_destroyed) {
        ++counter->constructed;
    }
    counted_callable(const counted_callable& other)
        : counter(other.counter), lifetime(other.counter->owners_destroyed), padding(other.padding) {
        ++counter->constructed;
    }
    counted_callable(counted_callable&& other) noexcept(NothrowMove)
        : counter(other.counter), lifetime(std::move(other.lifetime)), padding(other.padding) {
        ++counter->constructed;
    }
    counted_callable& operator=(const counted_callable&) = delete;
    ~counted_callable() { ++counter->destroyed; }
    void operator()() { ++counter->calls; }
};

using small_counted = counted_callable<1>;
using large_counted = counted_callable<200>;
using throwing_move_counted = counted_callable<1, false>;
static_assert(sizeof(small_counted) <= crew::task::inline_capacity);
static_assert(sizeof(large_counted) > crew::task::inline_capacity);
static_assert(!std::is_nothrow_move_constructible_v<throwing_move_counted>);

// A callable following the future-task protocol (detail::reporting_callable).
struct probe_state {
    int plain_calls = 0; // operator(): must never be used by task
    int reports = 0;     // run_and_report()
    int abandons = 0;
    int destroyed = 0;
    bool cancelled = false;
    std::exception_ptr to_report;
    std::exception_ptr abandoned_with;
    bool heard = false;            // run_and_report's argument
    bool report_if_unread = false; // abandon's second argument
};

struct reporting_probe {
    probe_state* state;
    crew_test_common::destruction_counter<int> lifetime;

    explicit reporting_probe(probe_state& s) : state(&s), lifetime(s.destroyed) {}

    void operator()() { ++state->plain_calls; }
    std::exception_ptr run_and_report(bool heard) {
        ++state->reports;
        state->heard = heard;
        return state->to_report;
    }
    void abandon(std::exception_ptr why, bool report_if_unread) noexcept {
        ++state->abandons;
        state->abandoned_with = std::move(why);
        state->report_if_unread = report_if_unread;
    }
    bool is_cancelled() const noexcept { return state->cancelled; }
};
static_assert(crew::detail::reporting_callable<reporting_probe>);
static_assert(!crew::detail::reporting_callable<small_counted>);

// After `t` let go of the reporting_probe behind `s` without running it: `t`
// is empty, the probe destroyed once, and abandoned `abandons` times.
void require_let_go_unrun(const crew::task& t, const probe_state& s, int abandons) {
    REQUIRE_FALSE(static_cast<bool>(t));
    REQUIRE(s.destroyed == 1);
    REQUIRE(s.abandons == abandons);
    REQUIRE(s.reports == 0);
}

// Rethrows `e` and returns what() of the std::exception it holds.
template <class Expected>
std::string what_of(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const Expected& x) {
        return x.what();
    } catch (...) {
        return "<unexpected exception type>";
    }
}

struct alignas(32) over_aligned_callable {
    bool* called_aligned;
    void operator()() const { *called_aligned = reinterpret_cast<std::uintptr_t>(this) % 32 == 0; }
};
struct alignas(128) very_over_aligned_callable {
    bool* called_aligned;
    void operator()() const { *called_aligned = reinterpret_cast<std::uintptr_t>(this) % 128 == 0; }
};
static_assert(sizeof(over_aligned_callable) <= crew::task::inline_capacity);
static_assert(alignof(over_aligned_callable) > alignof(std::max_align_t));

void free_function_target(int* out) { ++*out; }
int global_calls = 0;
void free_function() { ++global_calls; }

} // namespace

// ---- empty tasks ------------------------------------------------------------

TEST_CASE("a default-constructed task is empty", "[task]") {
    crew::task t;
    REQUIRE_FALSE(static_cast<bool>(t));
    REQUIRE(t.priority() == 0);
    REQUIRE_FALSE(t.is_cancelled());

    crew::task n = nullptr;
    REQUIRE_FALSE(static_cast<bool>(n));
}

TEST_CASE("reset and abandon and reject on an empty task are harmless", "[task]") {
    crew::task t;
    t.reset();
    REQUIRE_FALSE(t.abandon(std::make_exception_ptr(std::runtime_error("nobody listens"))));
    t.reject();
    REQUIRE_FALSE(static_cast<bool>(t));
}

TEST_CASE("a task wrapping a callable is non-empty and runs it", "[task]") {
    int calls = 0;
    crew::task t([&calls] { ++calls; });
    REQUIRE(static_cast<bool>(t));
    t();
    REQUIRE(calls == 1);
    REQUIRE(t.run() == nullptr);
    REQUIRE(calls == 2);
    REQUIRE(static_cast<bool>(t)); // running does not consume the callable
}

TEST_CASE("a task accepts functions and function pointers and callables with a result", "[task]") {
    int n = 0;
    crew::task with_result([&n] { return ++n; }); // the result is discarded
    with_result();
    REQUIRE(n == 1);

    global_calls = 0;
    crew::task from_function(free_function);
    crew::task from_pointer(&free_function);
    from_function();
    from_pointer();
    REQUIRE(global_calls == 2);

    crew::task bound(std::bind(free_function_target, &n));
    bound();
    REQUIRE(n == 2);
}

// ---- move semantics and lifetime ----------------------------------------------

TEMPLATE_TEST_CASE("moving a task leaves the source empty and the callable intact", "[task]", small_counted,
                   large_counted, throwing_move_counted) {
    lifetime_counter c;
    {
        crew::task a{TestType(c)};
        crew::task b(std::move(a));
        REQUIRE_FALSE(static_cast<bool>(a)); // NOLINT(bugprone-use-after-move): the contract under test
        REQUIRE(static_cast<bool>(b));
        b();
        REQUIRE(c.calls == 1);

        crew::task d;
        d = std::move(b);
        REQUIRE_FALSE(static_cast<bool>(b)); // NOLINT(bugprone-use-after-move)
        REQUIRE(static_cast<bool>(d));
        d();
        REQUIRE(c.calls == 2);
        REQUIRE(c.owners_destroyed == 0);
    }
    REQUIRE(c.owners_destroyed == 1);
    REQUIRE(c.constructed == c.destroyed);
}

TEMPLATE_TEST_CASE("a task destroys its callable exactly once", "[task]", small_counted, large_counted,
                   throwing_move_counted) {
    lifetime_counter c;
    SECTION("when the task is destroyed") {
        { crew::task t{TestType(c)}; }
        REQUIRE(c.owners_destroyed == 1);
    }
    SECTION("when it was run before") {
        {
            crew::task t{TestType(c)};
            t();
            t();
            REQUIRE(c.owners_destroyed == 0);
        }
        REQUIRE(c.calls == 2);
        REQUIRE(c.owners_destroyed == 1);
    }
    SECTION("when reset, and not again when destroyed") {
        {
            crew::task t{TestType(c)};
            t.reset();
            REQUIRE(c.owners_destroyed == 1);
            REQUIRE_FALSE(static_cast<bool>(t));
        }
        REQUIRE(c.owners_destroyed == 1);
    }
    SECTION("when abandoned or rejected") {
        {
            crew::task t{TestType(c)};
            REQUIRE_FALSE(t.abandon(std::make_exception_ptr(std::runtime_error("x"))));
            REQUIRE(c.owners_destroyed == 1);
            crew::task u{TestType(c)};
            u.reject();
            REQUIRE(c.owners_destroyed == 2);
        }
        REQUIRE(c.owners_destroyed == 2);
        REQUIRE(c.calls == 0);
    }
    SECTION("after several moves between tasks") {
        {
            crew::task a{TestType(c)};
            crew::task b(std::move(a));
            crew::task d(std::move(b));
            a = std::move(d);
            b = std::move(a);
        }
        REQUIRE(c.owners_destroyed == 1);
    }
    REQUIRE(c.constructed == c.destroyed);
}

TEST_CASE("move-assigning into a non-empty task destroys the old callable once", "[task]") {
    lifetime_counter old_one, new_one;
    {
        crew::task t{small_counted(old_one)};
        crew::task u{large_counted(new_one)};
        t = std::move(u);
        REQUIRE(old_one.owners_destroyed == 1);
        REQUIRE(new_one.owners_destroyed == 0);
        t();
        REQUIRE(new_one.calls == 1);
        REQUIRE(old_one.calls == 0);
    }
    REQUIRE(old_one.owners_destroyed == 1);
    REQUIRE(new_one.owners_destroyed == 1);
    REQUIRE(old_one.constructed == old_one.destroyed);
    REQUIRE(new_one.constructed == new_one.destroyed);
}

TEST_CASE("self-move-assignment of a task keeps its callable", "[task]") {
    lifetime_counter c;
    {
        crew::task t{small_counted(c)};
        crew::task& alias = t;
        t = std::move(alias);
        REQUIRE(static_cast<bool>(t));
        REQUIRE(c.owners_destroyed == 0);
        t();
        REQUIRE(c.calls == 1);
    }
    REQUIRE(c.owners_destroyed == 1);
}

// ---- inline vs heap storage -----------------------------------------------------

TEST_CASE("a nothrow-movable callable of up to 48 bytes is stored without allocating", "[task][allocation]") {
    std::array<int, 6> hits{};
    int* p0 = &hits[0];
    int* p1 = &hits[1];
    int* p2 = &hits[2];
    int* p3 = &hits[3];
    int* p4 = &hits[4];
    int* p5 = &hits[5];
    auto lambda = [p0, p1, p2, p3, p4, p5] { ++*p0, ++*p1, ++*p2, ++*p3, ++*p4, ++*p5; };
    static_assert(sizeof(lambda) == crew::task::inline_capacity);
    static_assert(std::is_nothrow_move_constructible_v<decltype(lambda)>);

    task_life life = live_a_task(lambda);
    const std::size_t before_run = allocations();
    (void)life.task.run();
    const std::size_t after_run = allocations();
    life.task.reset();
    const std::size_t after_reset = allocations();

    REQUIRE(life.construct == 0);
    REQUIRE(life.moves == 0);
    REQUIRE(life.call == 0);
    REQUIRE(after_run - before_run == 0);
    REQUIRE(after_reset - after_run == 0);
    REQUIRE(hits == std::array<int, 6>{2, 2, 2, 2, 2, 2});
}

TEST_CASE("the allocation counter of the task tests does count allocations", "[task][allocation]") {
    // Guards the tests above: a counter that never counts would make them vacuous.
    const std::size_t before = allocations();
    auto p = std::make_unique<int>(7);
    const std::size_t after = allocations();
    REQUIRE(after - before == 1);
    REQUIRE(*p == 7);
}

TEST_CASE("a callable larger than 48 bytes is allocated once and moved without allocating", "[task][allocation]") {
    std::array<char, 200> payload{};
    payload[0] = 'a';
    payload[199] = 'z';
    int calls = 0;
    auto lambda = [payload, &calls] { calls += payload[0] == 'a' && payload[199] == 'z'; };
    static_assert(sizeof(lambda) > 200);

    const task_life life = live_a_task(lambda);
    REQUIRE(life.construct == 1);
    REQUIRE(life.moves == 0);
    REQUIRE(life.call == 0);
    REQUIRE(calls == 1);
}

TEST_CASE("a small callable whose move may throw goes to the heap", "[task][allocation]") {
    lifetime_counter c;
    {
        throwing_move_counted callable(c);
        const std::size_t before = allocations();
        crew::task t(std::move(callable));
        const std::size_t after_construct = allocations();
        crew::task u(std::move(t));
        const std::size_t after_move = allocations();
        const int constructed_before_move = c.constructed;
        REQUIRE(after_construct - before == 1);
        REQUIRE(after_move - after_construct == 0);
        // A heap callable is moved by pointer: its move constructor is not called.
        crew::task v(std::move(u));
        REQUIRE(c.constructed == constructed_before_move);
        v();
        REQUIRE(c.calls == 1);
    }
    REQUIRE(c.owners_destroyed == 1);
    REQUIRE(c.constructed == c.destroyed);
}

TEST_CASE("an over-aligned callable goes to the heap and runs properly aligned", "[task][allocation]") {
    bool aligned = false;
    {
        const std::size_t before = allocations();
        crew::task t(over_aligned_callable{&aligned});
        const std::size_t after_construct = allocations();
        crew::task u(std::move(t));
        u();
        REQUIRE(after_construct - before == 1);
        REQUIRE(aligned);
    }
    aligned = false;
    {
        crew::task t(very_over_aligned_callable{&aligned});
        crew::task u(std::move(t));
        u();
        REQUIRE(aligned);
    }
}

// ---- priority -------------------------------------------------------------------

TEST_CASE("with_priority gives a task its priority and the priority moves with it", "[task][priority]") {
    int calls = 0;
    crew::task plain([&calls] { ++calls; });
    REQUIRE(plain.priority() == 0);

    crew::task high(crew::with_priority(7, [&calls] { calls += 10; }));
    crew::task low(crew::with_priority(-3, [&calls] { calls += 100; }));
    REQUIRE(high.priority() == 7);
    REQUIRE(low.priority() == -3);

    crew::task moved(std::move(high));
    REQUIRE(moved.priority() == 7);
    plain = std::move(low);
    REQUIRE(plain.priority() == -3);

    moved();
    plain();
    REQUIRE(calls == 110);
}

TEST_CASE("with_priority works for large callables and keeps the callable's lifetime", "[task][priority]") {
    lifetime_counter c;
    {
        crew::task t(crew::with_priority(42, large_counted(c)));
        REQUIRE(t.priority() == 42);
        t();
    }
    REQUIRE(c.calls == 1);
    REQUIRE(c.owners_destroyed == 1);
    REQUIRE(c.constructed == c.destroyed);
}

// ---- exceptions -----------------------------------------------------------------

TEST_CASE("running a plain callable propagates its exception", "[task]") {
    crew::task t([] { throw std::runtime_error("boom"); });
    REQUIRE_THROWS_WITH(t.run(), "boom");
    REQUIRE_THROWS_AS(t(), std::runtime_error);
    REQUIRE(static_cast<bool>(t)); // a throwing run does not destroy the callable
}

TEST_CASE("a task whose callable throws while being constructed stays unbuilt", "[task]") {
    struct throws_on_copy {
        throws_on_copy() = default;
        throws_on_copy(const throws_on_copy&) { throw std::runtime_error("copy"); }
        throws_on_copy(throws_on_copy&&) noexcept = default;
        void operator()() const {}
    };
    const throws_on_copy source;
    REQUIRE_THROWS_WITH(crew::task(source), "copy");
}

// ---- the reporting protocol -----------------------------------------------------

TEST_CASE("run on a reporting callable calls run_and_report and returns its exception", "[task][reporting]") {
    probe_state s;
    s.to_report = std::make_exception_ptr(std::logic_error("stored in the future"));
    {
        crew::task t{reporting_probe(s)};
        const std::exception_ptr e = t.run();
        REQUIRE(s.reports == 1);
        REQUIRE(s.plain_calls == 0);
        REQUIRE(what_of<std::logic_error>(e) == "stored in the future");

        REQUIRE_FALSE(s.heard); // nobody said a hook sees it
        REQUIRE(t.run(true) == e);
        REQUIRE(s.heard);

        s.to_report = nullptr;
        REQUIRE_NOTHROW(t()); // operator() does not rethrow what the future keeps
        REQUIRE(s.reports == 3);
        REQUIRE_FALSE(s.heard);
    }
    REQUIRE(s.abandons == 0);
    REQUIRE(s.destroyed == 1);
}

TEST_CASE("abandon delivers the exception to a reporting callable and returns true", "[task][reporting]") {
    probe_state s;
    crew::task t{reporting_probe(s)};
    REQUIRE(t.abandon(std::make_exception_ptr(std::runtime_error("why"))));
    require_let_go_unrun(t, s, 1);
    REQUIRE(what_of<std::runtime_error>(s.abandoned_with) == "why");
    REQUIRE_FALSE(s.report_if_unread);

    crew::task reported{reporting_probe(s)};
    REQUIRE(reported.abandon(std::make_exception_ptr(std::runtime_error("before_execute")), true));
    REQUIRE(s.report_if_unread);
}

TEST_CASE("abandon of a plain callable destroys it and returns false", "[task][reporting]") {
    lifetime_counter c;
    crew::task t{small_counted(c)};
    REQUIRE_FALSE(t.abandon(std::make_exception_ptr(std::runtime_error("why"))));
    REQUIRE_FALSE(static_cast<bool>(t));
    REQUIRE(c.owners_destroyed == 1);
    REQUIRE(c.calls == 0);
}

TEST_CASE("reject delivers a rejected_execution_error to a reporting callable", "[task][reporting]") {
    probe_state s;
    crew::task t{reporting_probe(s)};
    t.reject();
    require_let_go_unrun(t, s, 1);
    REQUIRE(s.abandoned_with != nullptr);
    REQUIRE_THROWS_AS(std::rethrow_exception(s.abandoned_with), crew::rejected_execution_error);
    REQUIRE_FALSE(s.report_if_unread); // a rejection is a policy's outcome, not a lost error
}

TEST_CASE("is_cancelled is forwarded from a reporting callable and false otherwise", "[task][reporting]") {
    probe_state s;
    crew::task t{reporting_probe(s)};
    REQUIRE_FALSE(t.is_cancelled());
    s.cancelled = true;
    REQUIRE(t.is_cancelled());
    crew::task moved(std::move(t));
    REQUIRE(moved.is_cancelled());
    REQUIRE_FALSE(t.is_cancelled()); // NOLINT(bugprone-use-after-move): empty now

    crew::task plain([] {});
    REQUIRE_FALSE(plain.is_cancelled());
}

TEST_CASE("reset destroys a reporting callable without abandoning it", "[task][reporting]") {
    probe_state s;
    crew::task t{reporting_probe(s)};
    t.reset();
    require_let_go_unrun(t, s, 0);
}

TEST_CASE("a reporting callable keeps the protocol through moves and with_priority", "[task][reporting]") {
    probe_state s;
    {
        crew::task t(crew::with_priority(3, reporting_probe(s)));
        crew::task u(std::move(t));
        REQUIRE(u.priority() == 3);
        s.cancelled = true;
        REQUIRE(u.is_cancelled());
        u.reject();
    }
    REQUIRE(s.abandons == 1);
    REQUIRE(s.destroyed == 1);
    REQUIRE_THROWS_AS(std::rethrow_exception(s.abandoned_with), crew::rejected_execution_error);
}
