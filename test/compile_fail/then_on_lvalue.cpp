// future::then consumes its future: called on an lvalue it stops at one
// static_assert that says what to write instead.
// expect: std::move\(f\)\.then\(ex, fn\)
#include <crew/fixed_pool.hpp>

void use() {
    crew::fixed_pool pool(1);
    crew::future<int> f = pool.submit([] { return 1; });
    f.then(pool, [](int x) { return x + 1; });
}
