// crew::parallel_reduce, crew::transform_reduce and crew::parallel_for_blocks
// (doc/composition.md, "parallel_reduce, transform_reduce and
// parallel_for_blocks"): correct results on every kind of executor; the
// result in index order (a non-commutative reduce, blocks made to finish
// out of order) and the same bits on every run; no deadlock on a worker;
// failures; blocks that tile the range.
#include "composition_support.hpp"
#include "support.hpp"

#include <crew/any_executor.hpp>
#include <crew/parallel_for.hpp>
#include <crew/parallel_reduce.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <latch>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

using namespace crew_test;
namespace utf = boost::unit_test;

namespace {

// A pool of `Threads` workers, used as itself or through a crew::any_executor.
template <class Pool, int Threads, bool Erased>
using reduce_setup = executor_setup<Pool, Erased, Threads>;

using reduce_setups =
    std::tuple<reduce_setup<crew::fixed_pool, 4, false>, reduce_setup<crew::work_stealing_pool, 4, false>,
               reduce_setup<crew::fixed_pool, 1, false>, reduce_setup<crew::work_stealing_pool, 1, false>,
               reduce_setup<crew::cached_pool, 0, false>, reduce_setup<crew::fixed_pool, 4, true>,
               reduce_setup<crew::work_stealing_pool, 4, true>, reduce_setup<crew::fixed_pool, 1, true>>;

// Associative, not commutative: concatenation. Takes its left side as an
// rvalue, so each step appends in place.
const auto concatenate = [](std::string a, const std::string& b) {
    a += b;
    return a;
};

std::string piece(long i) { return std::to_string(i) + ","; }

std::string concatenated(long first, long last) {
    std::string all;
    for (long i = first; i < last; ++i) all += piece(i);
    return all;
}

// 2x2 matrices of integers modulo a prime, multiplied: associative, not
// commutative.
using matrix = std::array<std::uint64_t, 4>;
constexpr std::uint64_t prime = 1'000'000'007;
constexpr matrix unit{1, 0, 0, 1};

matrix multiply(const matrix& a, const matrix& b) {
    return {(a[0] * b[0] + a[1] * b[2]) % prime, (a[0] * b[1] + a[1] * b[3]) % prime,
            (a[2] * b[0] + a[3] * b[2]) % prime, (a[2] * b[1] + a[3] * b[3]) % prime};
}

matrix matrix_of(long i) {
    const auto u = static_cast<std::uint64_t>(i);
    return {u % 7 + 1, u % 5, u % 3, u % 11 + 2};
}

// Terms whose floating-point sum depends on the order of the additions.
double term(long i) { return (i % 3 == 0 ? 1e16 : i % 3 == 1 ? 1.0 : -1e16) * (1.0 + static_cast<double>(i % 17) / 7); }

// What parallel_reduce promises for a grain: each block folded from the
// identity in index order, the block results folded in block order.
double by_blocks(long first, long last, long grain) {
    double result = 0.0;
    for (long b = first; b < last; b += grain) {
        double block = 0.0;
        for (long i = b; i < std::min(last, b + grain); ++i) block += term(i);
        result += block;
    }
    return result;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The blocks that parallel_for_blocks handed out, checked to tile a range.
class block_log {
  public:
    void add(long first, long last) {
        std::lock_guard lock(m_);
        blocks_.emplace_back(first, last);
    }
    // True if the blocks cover [first, last) once, in blocks of `grain`
    // (the last may be shorter, none is empty); grain 0: any one size.
    bool tiles(long first, long last, long grain) {
        std::lock_guard lock(m_);
        std::sort(blocks_.begin(), blocks_.end());
        if (blocks_.empty()) return first == last;
        if (grain == 0) grain = blocks_.front().second - blocks_.front().first;
        long next = first;
        for (std::size_t k = 0; k < blocks_.size(); ++k) {
            const auto [b, e] = blocks_[k];
            if (b != next || e <= b) return false;
            const bool last_block = k + 1 == blocks_.size();
            if (last_block ? e - b > grain : e - b != grain) return false;
            next = e;
        }
        return next == last;
    }
    std::size_t size() {
        std::lock_guard lock(m_);
        return blocks_.size();
    }

  private:
    std::mutex m_;
    std::vector<std::pair<long, long>> blocks_;
};

} // namespace

BOOST_AUTO_TEST_SUITE(parallel_reduce)

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(sums_are_correct_on_every_kind_of_executor, Setup, reduce_setups) {
    Setup s;
    decltype(auto) ex = s.ex();
    const long n = 100'000;
    const long expected = n * (n - 1) / 2;
    BOOST_TEST(crew::parallel_reduce(ex, 0L, n, 0L, [](long i) { return i; }, std::plus<>{}) == expected);
    BOOST_TEST(crew::parallel_reduce(ex, 0L, n, 0L, [](long i) { return i; }, std::plus<>{}, 7) == expected);
    BOOST_TEST(crew::parallel_reduce(ex, 0L, n, 0L, [](long i) { return i; }, std::plus<>{}, 1) == expected);
    // fn returns int, the identity (so the result) is a long long: no overflow.
    BOOST_TEST(crew::parallel_reduce(ex, 0, 1'000'000, 0LL, [](int i) { return i; }, std::plus<>{}) ==
               999'999LL * 1'000'000 / 2);
    // A range of negative indices, and a grain larger than the range.
    BOOST_TEST(crew::parallel_reduce(ex, -500, 500, 0L, [](int i) { return long{i}; }, std::plus<>{}, 10'000) == -500L);

    std::vector<int> v(50'000);
    std::iota(v.begin(), v.end(), 1);
    const auto square = [](int x) { return static_cast<long long>(x) * x; };
    long long squares = 0;
    for (int x : v) squares += square(x);
    BOOST_TEST(crew::transform_reduce(ex, v, 0LL, std::plus<>{}, square) == squares);
    BOOST_TEST(crew::transform_reduce(ex, v, 0LL, std::plus<>{}, square, 3) == squares);

    std::vector<std::atomic<int>> hits(20'000);
    crew::parallel_for_blocks(ex, 0, 20'000, [&](int b, int e) {
        for (int i = b; i < e; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
    });
    BOOST_TEST(std::all_of(hits.begin(), hits.end(), [](const auto& h) { return h.load() == 1; }));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(an_empty_range_returns_the_identity_and_submits_nothing) {
    crew::fixed_pool pool(2);
    pool.shutdown(); // any helper would be refused with a throw: none is made
    int calls = 0;
    const auto counted = [&](int i) {
        ++calls;
        return std::to_string(i);
    };
    BOOST_TEST(crew::parallel_reduce(pool, 7, 7, std::string("identity"), counted, concatenate) == "identity");
    BOOST_TEST(crew::parallel_reduce(pool, 7, 7, std::string("identity"), counted, concatenate, 1) == "identity");
    const std::vector<int> none;
    const auto length = [&](int x) { return static_cast<long>(counted(x).size()); };
    BOOST_TEST(crew::transform_reduce(pool, none, 42L, std::plus<>{}, length) == 42L);
    crew::parallel_for_blocks(pool, 3u, 3u, [&](unsigned, unsigned) { ++calls; });
    BOOST_TEST(calls == 0);
    BOOST_TEST(pool.rejected_task_count() == 0u);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(a_non_commutative_reduce_gives_the_sequential_answer, Setup, reduce_setups) {
    Setup s;
    decltype(auto) ex = s.ex();
    const long n = 3'000;
    const std::string expected = concatenated(0, n);
    for (long grain : {1L, 3L, 64L, 5'000L})
        BOOST_TEST(crew::parallel_reduce(ex, 0L, n, std::string(), piece, concatenate, grain) == expected);
    BOOST_TEST(crew::parallel_reduce(ex, 0L, n, std::string(), piece, concatenate) == expected);

    matrix product = unit;
    for (long i = 0; i < 10'000; ++i) product = multiply(product, matrix_of(i));
    BOOST_TEST((crew::parallel_reduce(ex, 0L, 10'000L, unit, matrix_of, multiply) == product));
    BOOST_TEST((crew::parallel_reduce(ex, 0L, 10'000L, unit, matrix_of, multiply, 1) == product));

    std::vector<std::string> words;
    for (long i = 0; i < 2'000; ++i) words.push_back(piece(i));
    const auto upper = [](const std::string& w) { return "<" + w + ">"; };
    std::string joined;
    for (const auto& w : words) joined += upper(w);
    BOOST_TEST(crew::transform_reduce(ex, words, std::string(), concatenate, upper) == joined);
    BOOST_TEST(crew::transform_reduce(ex, words, std::string(), concatenate, upper, 1) == joined);
}

// Block 1 is made to finish before block 0 starts its reduce: a result
// combined in completion order would be "1,0,".
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(blocks_finishing_out_of_order_are_combined_in_index_order) {
    if (one_hardware_thread()) return;
    crew::fixed_pool pool(2);
    std::latch second_done(1);
    std::atomic<bool> counted_down{false};
    std::atomic<int> order{0};
    int finished_first = -1;
    const auto fn = [&](long i) {
        if (i == 0) second_done.wait(); // the thread that claimed block 0 cannot claim block 1
        if (order.fetch_add(1) == 0) finished_first = static_cast<int>(i);
        return piece(i);
    };
    const auto reduce = [&](std::string a, const std::string& b) {
        a += b;
        if (b == piece(1) && !counted_down.exchange(true)) second_done.count_down(); // block 1's fold is done
        return a;
    };
    BOOST_TEST(crew::parallel_reduce(pool, 0L, 2L, std::string(), fn, reduce, 1) == "0,1,");
    BOOST_TEST(finished_first == 1);
}

// The same bits on every run, on every pool size, for a sum of doubles whose
// value depends on the order of the additions: the fixed partition, folded
// in index order.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(floating_point_results_are_the_same_bits_on_every_run) {
    const long n = 200'000, grain = 1'000;
    const double expected = by_blocks(0, n, grain);
    double sequential = 0.0;
    for (long i = 0; i < n; ++i) sequential += term(i);
    BOOST_TEST_MESSAGE("by blocks " << expected << ", one by one " << sequential);
    BOOST_TEST(!same_bits(expected, sequential)); // else this test could not tell orders apart

    crew::fixed_pool one(1), two(2), four(4);
    crew::work_stealing_pool stealing(4);
    for (int run = 0; run < 20; ++run) {
        BOOST_TEST(same_bits(crew::parallel_reduce(one, 0L, n, 0.0, term, std::plus<>{}, grain), expected));
        BOOST_TEST(same_bits(crew::parallel_reduce(two, 0L, n, 0.0, term, std::plus<>{}, grain), expected));
        BOOST_TEST(same_bits(crew::parallel_reduce(four, 0L, n, 0.0, term, std::plus<>{}, grain), expected));
        crew::any_executor erased(stealing);
        BOOST_TEST(same_bits(crew::parallel_reduce(erased, 0L, n, 0.0, term, std::plus<>{}, grain), expected));
    }
    // Without a grain: the same bits run after run for one pool size.
    const double first = crew::parallel_reduce(four, 0L, n, 0.0, term, std::plus<>{});
    for (int run = 0; run < 20; ++run)
        BOOST_TEST(same_bits(crew::parallel_reduce(four, 0L, n, 0.0, term, std::plus<>{}), first));
}

// A small grain over a large range: blocks are made larger (at most 4,096
// block results kept), still correct and in order.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_small_grain_over_a_large_range_is_still_in_order) {
    crew::fixed_pool pool(2);
    const long n = 100'000;
    BOOST_TEST(crew::parallel_reduce(pool, 0L, n, std::string(), piece, concatenate, 1) == concatenated(0, n));
    // The grain becomes ceil(n / 4096) = 25: the promise for that grain.
    BOOST_TEST(!same_bits(by_blocks(0, n, 25), by_blocks(0, n, 1))); // else this test could not tell
    BOOST_TEST(same_bits(crew::parallel_reduce(pool, 0L, n, 0.0, term, std::plus<>{}, 1), by_blocks(0, n, 25)));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_reduction_on_a_worker_of_a_pool_of_one_completes) {
    crew::fixed_pool pool(1);
    const long expected = 999L * 1'000 / 2;
    const auto identity_fn = [](long i) { return i; };
    BOOST_TEST(pool.submit([&] { return crew::parallel_reduce(pool, 0L, 1'000L, 0L, identity_fn, std::plus<>{}, 1); })
                   .get() == expected);
    // Nested: each index a reduction of its own.
    BOOST_TEST(pool.submit([&] {
                       return crew::parallel_reduce(pool, 0L, 10L, 0L, [&](long i) {
                           const long from = i * 100, to = (i + 1) * 100;
                           return crew::parallel_reduce(pool, from, to, 0L, identity_fn, std::plus<>{}, 1);
                       }, std::plus<>{}, 1);
                   })
                   .get() == 999L * 1'000 / 2);
    std::vector<int> v(1'000, 2);
    const auto same = [](int x) { return x; };
    BOOST_TEST(pool.submit([&] { return crew::transform_reduce(pool, v, 0, std::plus<>{}, same, 1); }).get() == 2'000);
    std::atomic<int> covered{0};
    pool.submit([&] {
            crew::parallel_for_blocks(pool, 0, 1'000, [&](int b, int e) { covered += e - b; }, 1);
        })
        .get();
    BOOST_TEST(covered.load() == 1'000);

    crew::work_stealing_pool stealing(1);
    BOOST_TEST(stealing.submit([&] {
                           return crew::parallel_reduce(stealing, 0L, 1'000L, 0L, identity_fn, std::plus<>{}, 1);
                       })
                   .get() == expected);
}

// On a worker, with the pool's other worker busy, the helpers it submits
// never start: the reduction must not wait for them.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(a_reduction_on_a_worker_never_waits_for_helpers_that_cannot_start) {
    gate held;
    crew::fixed_pool pool(2);
    occupy(pool, held, 1);
    std::set<std::thread::id> threads;
    std::mutex m;
    const auto result = pool.submit([&] {
                                return crew::parallel_reduce(pool, 0L, 1'000L, std::string(), [&](long i) {
                                    std::lock_guard lock(m);
                                    threads.insert(std::this_thread::get_id());
                                    return piece(i);
                                }, concatenate, 1);
                            })
                            .get();
    BOOST_TEST(result == concatenated(0, 1'000));
    BOOST_TEST(threads.size() == 1u); // the worker alone
    held.open();
    pool.wait_idle(); // the helpers start now and find nothing to do
}

// Every worker held: the caller runs the blocks one after another, so the
// one that throws is the last to run.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(the_first_exception_is_rethrown_and_blocks_not_started_are_skipped) {
    gate held;
    crew::fixed_pool pool(2);
    occupy(pool, held, 2);
    std::atomic<int> calls{0};
    BOOST_CHECK_EXCEPTION(crew::parallel_reduce(pool, 0, 100, 0L, [&](int i) {
        calls.fetch_add(1);
        if (i == 3) throw custom_error(3);
        return long{i};
    }, std::plus<>{}, 1), custom_error, [](const custom_error& e) { return e.code == 3; });
    BOOST_TEST(calls.load() == 4);

    // A reduce that throws on its third call: blocks 0, 1 and 2 ran, no more.
    std::atomic<int> fn_calls{0}, reduce_calls{0};
    BOOST_CHECK_EXCEPTION(crew::parallel_reduce(pool, 0, 100, 0L, [&](int i) {
        fn_calls.fetch_add(1);
        return long{i};
    }, [&](long a, long b) {
        if (reduce_calls.fetch_add(1) == 2) throw custom_error(7);
        return a + b;
    }, 1), custom_error, [](const custom_error& e) { return e.code == 7; });
    BOOST_TEST(fn_calls.load() == 3);

    std::vector<int> v(100, 1);
    std::atomic<int> transforms{0};
    BOOST_CHECK_EXCEPTION(crew::transform_reduce(pool, v, 0, std::plus<>{}, [&](int x) {
        if (transforms.fetch_add(1) == 5) throw custom_error(5);
        return x;
    }, 2), custom_error, [](const custom_error& e) { return e.code == 5; });
    BOOST_TEST(transforms.load() == 6);

    std::atomic<int> blocks{0};
    BOOST_CHECK_EXCEPTION(crew::parallel_for_blocks(pool, 0, 100, [&](int b, int) {
        blocks.fetch_add(1);
        if (b == 20) throw custom_error(20);
    }, 10), custom_error, [](const custom_error& e) { return e.code == 20; });
    BOOST_TEST(blocks.load() == 3);

    held.open();
    pool.wait_idle(); // the helpers start now and find nothing to do
    BOOST_TEST(calls.load() == 4);
    BOOST_TEST(fn_calls.load() == 3);
    BOOST_TEST(transforms.load() == 6);
    BOOST_TEST(blocks.load() == 3);
}

// A helper's block throws while the caller's block runs: the exception
// reaches the caller, after the caller's block finished.
BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(an_exception_in_a_helpers_block_reaches_the_caller) {
    if (one_hardware_thread()) return;
    crew::fixed_pool pool(2);
    const auto caller = std::this_thread::get_id();
    std::latch both(2), thrown(1);
    bool caller_finished = false;
    BOOST_CHECK_EXCEPTION(crew::parallel_reduce(pool, 0, 2, 0, [&](int) {
        both.arrive_and_wait();
        if (std::this_thread::get_id() != caller) {
            thrown.count_down();
            throw custom_error(2);
        }
        thrown.wait();
        caller_finished = true;
        return 1;
    }, std::plus<>{}, 1), custom_error, [](const custom_error& e) { return e.code == 2; });
    BOOST_TEST(caller_finished);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(transform_reduce_over_random_access_ranges) {
    crew::fixed_pool pool(3);
    const std::vector<int> v{3, 1, 4, 1, 5, 9, 2, 6};
    BOOST_TEST(crew::transform_reduce(pool, v, 0, std::plus<>{}, [](int x) { return x; }) == 31);
    BOOST_TEST(crew::transform_reduce(pool, v, 1L, std::multiplies<>{}, [](const int& x) { return long{x}; }, 1) ==
               6480L);

    std::deque<std::string> d;
    for (int i = 0; i < 1'000; ++i) d.push_back(std::string(static_cast<std::size_t>(i % 7), 'x'));
    std::size_t letters = 0;
    for (const auto& s : d) letters += s.size();
    BOOST_TEST(crew::transform_reduce(pool, d, std::size_t{0}, std::plus<>{}, [](const std::string& s) {
        return s.size();
    }, 10) == letters);

    std::array<double, 64> a{};
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
    BOOST_TEST(crew::transform_reduce(pool, a, 0.0, std::plus<>{}, [](double x) { return x * 2; }) == 64.0 * 63.0);

    // A view (std::span) over part of a vector.
    std::vector<int> numbers(10'000);
    std::iota(numbers.begin(), numbers.end(), 0);
    const std::span<const int> tail(numbers.data() + 100, 9'900);
    long long squares = 0;
    for (int i : tail) squares += static_cast<long long>(i) * i;
    BOOST_TEST(crew::transform_reduce(pool, tail, 0LL, std::plus<>{}, [](int i) {
        return static_cast<long long>(i) * i;
    }) == squares);

    // The elements by reference: transform may look at them in place.
    std::vector<std::string> words{"a", "bb", "ccc"};
    BOOST_TEST(crew::transform_reduce(pool, words, std::string(), concatenate, [](std::string& w) -> std::string& {
        return w;
    }, 1) == "abbccc");
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE_TEMPLATE(parallel_for_blocks_tiles_the_range_with_blocks_of_the_grain, Setup, reduce_setups) {
    Setup s;
    decltype(auto) ex = s.ex();
    for (long grain : {1L, 7L, 1'000L, 50'000L}) {
        block_log log;
        crew::parallel_for_blocks(ex, -1'234L, 10'000L, [&](long b, long e) { log.add(b, e); }, grain);
        BOOST_TEST(log.tiles(-1'234, 10'000, grain), "grain " << grain);
    }
    block_log automatic;
    crew::parallel_for_blocks(ex, 0L, 100'000L, [&](long b, long e) { automatic.add(b, e); });
    BOOST_TEST(automatic.tiles(0, 100'000, 0));
    BOOST_TEST(automatic.size() > 1u); // without a grain, a range this large is shared out
    BOOST_TEST(automatic.size() <= 8u * std::max(1u, std::thread::hardware_concurrency()));
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(parallel_for_blocks_takes_the_index_type_over_any_integer_range) {
    crew::fixed_pool pool(2);
    std::atomic<int> whole{0};
    crew::parallel_for_blocks(pool, std::int8_t(-128), std::int8_t(127), [&](auto b, auto e) {
        static_assert(std::is_same_v<decltype(b), std::int8_t>);
        whole += e - b;
    }, 3);
    BOOST_TEST(whole.load() == 255);
    const auto umax = std::numeric_limits<std::uint64_t>::max();
    std::atomic<std::uint64_t> top{0};
    crew::parallel_for_blocks(pool, umax - 1'000, umax, [&](std::uint64_t b, std::uint64_t e) { top += e - b; }, 7);
    BOOST_TEST(top.load() == 1'000u);
    std::atomic<long> mixed{0};
    crew::parallel_for_blocks(pool, 0, std::size_t{10}, [&](auto b, auto e) {
        static_assert(std::is_same_v<decltype(b), std::size_t>);
        mixed += static_cast<long>(e - b);
    });
    BOOST_TEST(mixed.load() == 10);
    BOOST_TEST(crew::parallel_reduce(pool, INT_MAX - 100, INT_MAX, 0L, [](int i) { return long{i >= INT_MAX - 100}; },
                                     std::plus<>{}, 1) == 100L);
}

BOOST_TEST_DECORATOR(*utf::timeout(60))
BOOST_AUTO_TEST_CASE(invalid_arguments_name_the_argument) {
    crew::fixed_pool pool(2);
    const auto fn = [](auto i) { return static_cast<long>(i); };
    const auto blocks = [](auto, auto) {};
    BOOST_CHECK_EXCEPTION(crew::parallel_reduce(pool, 5, 3, 0L, fn, std::plus<>{}), std::invalid_argument,
                          names("first"));
    BOOST_CHECK_EXCEPTION(crew::parallel_reduce(pool, 0, 10, 0L, fn, std::plus<>{}, 0), std::invalid_argument,
                          names("grain"));
    BOOST_CHECK_EXCEPTION(crew::parallel_reduce(pool, 0, 10, 0L, fn, std::plus<>{}, -1), std::invalid_argument,
                          names("grain"));
    BOOST_CHECK_EXCEPTION(crew::parallel_reduce(pool, -1, std::size_t{10}, 0L, fn, std::plus<>{}),
                          std::invalid_argument, names("first"));
    BOOST_CHECK_EXCEPTION(crew::parallel_for_blocks(pool, 5, 3, blocks), std::invalid_argument, names("first"));
    BOOST_CHECK_EXCEPTION(crew::parallel_for_blocks(pool, 0, 10, blocks, 0), std::invalid_argument, names("grain"));
    BOOST_CHECK_EXCEPTION(crew::parallel_for_blocks(pool, 0, 10, blocks, -3), std::invalid_argument, names("grain"));
    std::vector<int> v(10);
    BOOST_CHECK_EXCEPTION(crew::transform_reduce(pool, v, 0L, std::plus<>{}, fn, 0), std::invalid_argument,
                          names("grain"));
    // The message says which function.
    BOOST_CHECK_EXCEPTION(crew::parallel_reduce(pool, 5, 3, 0L, fn, std::plus<>{}), std::invalid_argument,
                          names("crew::parallel_reduce"));
    BOOST_CHECK_EXCEPTION(crew::parallel_for_blocks(pool, 0, 10, blocks, 0), std::invalid_argument,
                          names("crew::parallel_for_blocks"));
}

BOOST_AUTO_TEST_SUITE_END()
