// A LockPolicy with lock() and unlock() but no try_lock() is not Lockable and
// is refused, naming the slot and the missing member.
// expect: LockPolicy slot
// expect: required expression 'l\.try_lock\(\)' is invalid
#include <crew/basic_executor.hpp>
#include <crew/policies/queue.hpp>

struct basic_lockable_only {
    void lock() {}
    void unlock() {}
};

crew::basic_executor<crew::unbounded_queue, crew::abort_policy, crew::default_thread_factory, basic_lockable_only>
    pool;
