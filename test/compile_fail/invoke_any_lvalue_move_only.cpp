// invoke_any() of an lvalue range of move-only callables is refused as
// invoke_all()'s is, with one sentence saying to pass an rvalue.
// expect: invoke_all\(\) and invoke_any\(\) copy each callable of an lvalue range
// expect: pass an rvalue \(std::move\(tasks\)\)
// expect-not: use of deleted function
#include <crew/fixed_pool.hpp>

#include <memory>
#include <vector>

struct move_only_job {
    std::unique_ptr<int> value = std::make_unique<int>(1);
    int operator()() const { return *value; }
};

int main() {
    crew::fixed_pool pool(2);
    std::vector<move_only_job> jobs(3);
    int first = pool.invoke_any(jobs);
    return first;
}
