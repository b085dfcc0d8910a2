// execute() drops what its callable returns; a crew::coroutine is lazy, so
// dropping it would destroy it unstarted. Refused with a sentence pointing
// to crew::spawn.
// expect: this one returns a crew::coroutine, which is lazy
// expect: crew::spawn\(pool, f\(\)\)
#include <crew/coroutine.hpp>
#include <crew/fixed_pool.hpp>

int main() {
    crew::fixed_pool pool(1);
    pool.execute([]() -> crew::coroutine<int> { co_return 1; });
}
