// A RejectPolicy without `rejected_execution` is refused, naming the slot and
// the missing member.
// expect: RejectPolicy slot
// expect: required expression 'p\.rejected_execution\([^']*\)' is invalid
#include <crew/basic_executor.hpp>
#include <crew/policies/queue.hpp>

struct reject_without_member {
    template <class Executor>
    void on_rejected(crew::task&&, Executor&) {} // the wrong name
};

crew::basic_executor<crew::unbounded_queue, reject_without_member> pool;
