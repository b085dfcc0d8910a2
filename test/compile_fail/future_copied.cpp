// A future is move-only; copying one fails with a note that says so and
// what to do instead.
// expect: use of deleted function .*future
// expect: a future is move-only: std::move it
#include <crew/fixed_pool.hpp>

int main() {
    crew::fixed_pool pool(1);
    auto f = pool.submit([] { return 1; });
    auto copy = f;
    (void)copy;
}
