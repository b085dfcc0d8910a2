// A reject policy given in the QueuePolicy slot is refused, naming the slot
// and the type that was put there.
// expect: QueuePolicy slot \(1st template argument\) must model crew::queue_policy
// expect: \[with Q = crew::abort_policy\]
#include <crew/basic_executor.hpp>

crew::basic_executor<crew::abort_policy> pool;
