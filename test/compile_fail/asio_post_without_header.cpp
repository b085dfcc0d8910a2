// A pool's executor handed to Boost.Asio's post() in a translation unit
// without <crew/asio.hpp> fails with one sentence naming the header (from
// pool_executor's require, which Asio finds only without that header),
// instead of "no match for call to asio_require_fn::impl" inside Asio, and
// only once however many properties Asio asks for.
// expect: crew: to hand a pool's get_executor\(\) to Boost\.Asio
// expect: #include <crew/asio\.hpp> in this translation unit
// expect-not: error: no match for call
// One static_assert, not one per property Asio asks for (there were five):
// expect-not: to hand a pool's get_executor\(\) to Boost\.Asio(.|\n)*to hand a pool's get_executor\(\) to Boost\.Asio
#include <crew/fixed_pool.hpp>

#include <boost/asio/post.hpp>

int main() {
    crew::fixed_pool pool(1);
    boost::asio::post(pool.get_executor(), [] {});
}
