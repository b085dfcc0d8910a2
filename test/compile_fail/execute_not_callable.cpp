// execute() of something that cannot be called is refused with a sentence
// that says a callable is needed.
// expect: execute\(\) needs a callable as f\(\) or f\(std::stop_token\)
#include <crew/basic_executor.hpp>
#include <crew/policies/queue.hpp>

void submit_a_number(crew::basic_executor<crew::unbounded_queue>& pool) {
    pool.execute(42);
}
