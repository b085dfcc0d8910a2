// <crew/asio.hpp> on a compiler where Asio cannot deduce its traits.
//
// GCC and Clang have expression SFINAE, so Asio deduces `execute_member`,
// `equality_comparable`, `query_free` and `require_free` from the
// expressions, and the trait specialisations at the end of <crew/asio.hpp>
// are compiled out. Here Asio is told the compiler lacks it, so Asio reads
// those specialisations instead (as it would on such a compiler) and this
// program checks that they describe the handle: without them the
// static_asserts fail. Its own program, not part of the suite's: the macro
// must be the same in every translation unit that includes Asio.
// Exits 0 when every check holds.
#define BOOST_ASIO_DISABLE_WORKING_EXPRESSION_SFINAE 1

#include <crew/asio.hpp>
#include <crew/fixed_pool.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdio>
#include <future>
#include <type_traits>

#if defined(BOOST_ASIO_HAS_DEDUCED_QUERY_FREE_TRAIT) || defined(BOOST_ASIO_HAS_DEDUCED_REQUIRE_FREE_TRAIT) ||      \
    defined(BOOST_ASIO_HAS_DEDUCED_EXECUTE_MEMBER_TRAIT) || defined(BOOST_ASIO_HAS_DEDUCED_EQUALITY_COMPARABLE_TRAIT)
#error "Asio still deduces its traits: this check would not test the specialisations"
#endif

namespace asio = boost::asio;
namespace execution = boost::asio::execution;
using executor = crew::fixed_pool::executor_type;

static_assert(execution::is_executor<executor>::value);
static_assert(asio::can_require<executor, execution::blocking_t::never_t>::value);
static_assert(asio::can_require<executor, execution::blocking_t::possibly_t>::value);
static_assert(asio::can_require<executor, execution::outstanding_work_t::tracked_t>::value);
static_assert(asio::can_query<executor, execution::context_t>::value);
static_assert(asio::can_query<executor, execution::blocking_t>::value);

// The tracked handle that require(ex, outstanding_work.tracked) gives.
using tracked = crew::tracked_pool_executor<crew::fixed_pool>;
static_assert(std::is_same_v<asio::require_result<executor, execution::outstanding_work_t::tracked_t>::type, tracked>);
static_assert(execution::is_executor<tracked>::value);
static_assert(asio::can_require<tracked, execution::blocking_t::never_t>::value);
static_assert(asio::can_require<tracked, execution::blocking_t::possibly_t>::value);
static_assert(asio::can_require<tracked, execution::outstanding_work_t::untracked_t>::value);
static_assert(asio::can_query<tracked, execution::context_t>::value);
static_assert(asio::can_query<tracked, execution::blocking_t>::value);
static_assert(asio::can_query<tracked, execution::outstanding_work_t>::value);

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) ++failures;
}

template <class T>
bool ready(const std::future<T>& f) {
    return f.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
}

} // namespace

int main() {
    crew::fixed_pool pool(2);
    const auto ex = pool.get_executor();
    check(asio::query(ex, execution::blocking) == execution::blocking.possibly, "the default handle is blocking.possibly");
    check(asio::query(asio::require(ex, execution::blocking.never), execution::blocking) == execution::blocking.never,
          "require(blocking.never) makes it never-blocking");

    auto value = asio::post(ex, asio::use_future([&] { return ex.running_in_this_thread(); }));
    check(ready(value) && value.get(), "post(use_future) runs on a worker");

    auto inline_on_worker = asio::post(ex, asio::use_future([&] {
        bool ran = false;
        asio::dispatch(asio::require(ex, execution::blocking.possibly), [&] { ran = true; });
        return ran;
    }));
    check(ready(inline_on_worker) && inline_on_worker.get(), "dispatch through a possibly handle runs inline on a worker");

    std::promise<bool> in_strand;
    const auto strand = asio::make_strand(ex);
    asio::post(strand, [&] { in_strand.set_value(strand.running_in_this_thread() && ex.running_in_this_thread()); });
    auto s = in_strand.get_future();
    check(ready(s) && s.get(), "a strand over the pool runs its handler on a worker");

    std::promise<bool> fired;
    asio::io_context io;
    asio::steady_timer timer(io, std::chrono::milliseconds(1));
    timer.async_wait(asio::bind_executor(ex, [&](boost::system::error_code ec) {
        fired.set_value(!ec && ex.running_in_this_thread());
    }));
    io.run();
    auto t = fired.get_future();
    check(ready(t) && t.get(), "a timer's handler bound to the pool runs on a worker");

    const tracked work = asio::require(ex, execution::outstanding_work.tracked);
    check(asio::query(work, execution::outstanding_work) == execution::outstanding_work.tracked &&
              asio::query(ex, execution::outstanding_work) == execution::outstanding_work.untracked,
          "outstanding_work: the tracked handle says tracked, the plain one untracked");
    auto through_tracked = asio::post(asio::require(work, execution::blocking.never),
                                      asio::use_future([&] { return ex.running_in_this_thread(); }));
    check(ready(through_tracked) && through_tracked.get(), "post through a tracked handle runs on a worker");
    return failures == 0 ? 0 : 1;
}
