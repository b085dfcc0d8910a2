// The package works: its headers compile, a pool runs a task, and the
// result comes back.
#include <crew/crew.hpp>

#include <cstdio>

int main() {
    crew::fixed_pool pool(2);
    crew::future<int> answer = pool.submit([] { return 6 * 7; });
    const int value = answer.get();
    std::printf("crew test_package: %d\n", value);
    return value == 42 ? 0 : 1;
}
