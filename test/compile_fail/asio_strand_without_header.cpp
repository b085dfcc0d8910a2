// A strand over a pool's executor in a translation unit without
// <crew/asio.hpp> fails with a sentence naming the header (from
// pool_executor's query, which Asio finds only without that header). Before,
// the only error was "no matching function for call to use_service" inside
// Asio (which took the pool itself for the strand's execution_context);
// GCC now prints only the sentence, Clang the sentence first and that error
// after it.
// expect: crew: to hand a pool's get_executor\(\) to Boost\.Asio
// expect: #include <crew/asio\.hpp> in this translation unit
#include <crew/fixed_pool.hpp>

#include <boost/asio/strand.hpp>

int main() {
    crew::fixed_pool pool(1);
    auto strand = boost::asio::make_strand(pool.get_executor());
    (void)strand;
}
