// The steps a RejectPolicy takes on a refused task's behalf (put, put_until,
// discard_oldest_queued, remove_oldest_queued, called_from_own_worker) are
// the pool's private members, reached through crew::rejection_context: user
// code outside a policy cannot block on the queue or drop its head.
// expect: private within this context
// expect: discard_oldest_queued
#include <crew/fixed_pool.hpp>

void use() {
    crew::fixed_pool pool(1);
    (void)pool.discard_oldest_queued();
}
