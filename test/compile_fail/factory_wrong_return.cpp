// A ThreadFactoryPolicy whose new_thread returns int, not std::thread, is
// refused, naming the slot and the member whose return type is wrong.
// expect: ThreadFactoryPolicy slot
// expect: 'f\.new_thread\([^']*\)' does not satisfy return-type-requirement
#include <crew/basic_executor.hpp>
#include <crew/policies/queue.hpp>

struct int_factory {
    int new_thread(crew::task) { return 0; }
};

crew::basic_executor<crew::unbounded_queue, crew::abort_policy, int_factory> pool;
