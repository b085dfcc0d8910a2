// invoke_all() of an lvalue range of move-only callables (which it would
// have to copy) is refused with one sentence saying to pass an rvalue, and
// the caller's use of the result raises nothing more.
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
    auto futures = pool.invoke_all(jobs);
    int sum = 0;
    for (auto& f : futures) sum += f.get();
    return sum;
}
