// An any_executor does not own its pool: converting a temporary pool would
// leave it dangling, so it does not compile, and the note says why.
// expect: use of deleted function .*any_executor
// expect: an any_executor of a temporary pool would dangle
#include <crew/any_executor.hpp>
#include <crew/fixed_pool.hpp>

int main() {
    crew::any_executor ex = crew::fixed_pool(1);
    ex.shutdown();
}
