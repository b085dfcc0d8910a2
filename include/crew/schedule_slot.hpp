#ifndef CREW_SCHEDULE_SLOT_HPP
#define CREW_SCHEDULE_SLOT_HPP

/// \file
/// `crew::schedule_slot`: where a scheduled task sits in its queue, so that
/// cancelling its future can take it out. Part of what a scheduling
/// QueuePolicy (`crew::scheduling_queue_policy`) of your own must honour.

#include <cstddef>

namespace crew {

/// The queue position of one scheduled task, owned by the task's future
/// state and kept up to date by the queue. A scheduling queue stores the
/// task's place in `node` when it queues the task with a slot, updates it as
/// the task moves, sets it back to `not_queued` when the task leaves (taken,
/// removed or drained), and `remove(slot)` takes out exactly that task. Read
/// and written only under the queue's own lock.
struct schedule_slot {
    static constexpr std::size_t not_queued = static_cast<std::size_t>(-1);
    std::size_t node = not_queued; ///< the queue's own index for the task; `not_queued` when out of the queue
};

} // namespace crew

#endif
