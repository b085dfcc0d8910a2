// submit() of a callable that needs arguments is refused with one sentence
// saying what submit() accepts, and nothing after it.
// expect: submit\(\) needs a callable as f\(\) or f\(std::stop_token\)
#include <crew/fixed_pool.hpp>

int main() {
    crew::fixed_pool pool(1);
    auto f = pool.submit([](int x) { return x; });
    (void)f;
}
