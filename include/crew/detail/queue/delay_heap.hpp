#ifndef CREW_DETAIL_QUEUE_DELAY_HEAP_HPP
#define CREW_DETAIL_QUEUE_DELAY_HEAP_HPP

// The heap of scheduled nodes behind crew::delayed_queue: a 4-ary min-heap of
// small keys (due time, sequence number, node id: four children in 96
// contiguous bytes) over a slab of nodes that hold the tasks. Earliest due
// first, FIFO among equal due times by the caller's sequence number.
//
// Removing a task (a cancelled future's) empties its node at once and leaves
// its key to be dropped when it reaches the head, or when such keys outnumber
// the live ones (a rebuild): so no move in the heap writes to a node, and the
// head, if any, is always a live task.
//
// Not thread-safe: its owner's mutex guards it (delayed_queue's mutex_).
// Nothing here allocates but reserve(): the owner reserves room for every key
// it may insert, and nothing else throws. A key's room is the
// owner's to account for: key_count() falls by one for each key dropped.

#include <crew/detail/timer/time.hpp>
#include <crew/schedule_slot.hpp>
#include <crew/task.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace crew::detail {

class delay_heap {
  public:
    struct node {
        task work;
        schedule_slot* slot = nullptr; // null for plain tasks
        bool periodic = false;
        bool dead = false;      // removed: its key is still in the heap
        std::uint64_t mark = 0; // the owner's, carried along (delayed_queue: its due-now FIFO's count at scheduling)
    };

    // A task to queue, with its place: what insert takes, and what its owner
    // may hold before it can insert (delayed_queue's staging list).
    struct entry {
        task work;
        clock::time_point due;
        std::uint64_t sequence; // FIFO among equal due times
        std::uint64_t mark;     // as node::mark
        schedule_slot* slot;    // null for plain tasks
        bool periodic;
    };

    // Room for `n` keys and nodes in all. Strong guarantee.
    void reserve(std::size_t n) {
        heap_.reserve(n);
        nodes_.reserve(n);
        free_nodes_.reserve(n); // so that freeing a node never allocates
    }

    // No live task queued (the head is live: see drop_dead_heads).
    bool empty() const noexcept { return heap_.empty(); }
    // Live tasks queued.
    std::size_t size() const noexcept { return heap_.size() - dead_; }
    // Keys in the heap, removed tasks' included: the room in use.
    std::size_t key_count() const noexcept { return heap_.size(); }
    // Requires: !empty().
    clock::time_point head_due() const noexcept { return heap_.front().due; }
    std::uint64_t head_mark() const noexcept { return nodes_[heap_.front().node].mark; }

    // Queues `e.work`; `e.slot`, if given, is kept up to date with its node.
    // Requires: room reserved for one more key.
    void insert(entry&& e) noexcept {
        const std::size_t id = acquire_node();
        node& n = nodes_[id];
        n.work = std::move(e.work);
        n.slot = e.slot;
        n.periodic = e.periodic;
        n.dead = false;
        n.mark = e.mark;
        if (e.slot) e.slot->node = id;
        heap_.push_back({e.due, e.sequence, id});
        sift_up(heap_.size() - 1);
    }

    // Takes the head out. Requires: !empty().
    task pop_head() noexcept {
        task t = pop_key();
        drop_dead_heads();
        return t;
    }

    // Takes out the task `slot` belongs to; an empty task if it is not queued.
    task remove(schedule_slot& slot) {
        if (slot.node == schedule_slot::not_queued) return task();
        node& n = nodes_[slot.node];
        task removed = std::move(n.work);
        n.slot = nullptr;
        n.dead = true;
        slot.node = schedule_slot::not_queued;
        ++dead_;
        drop_dead_heads();
        if (dead_ >= rebuild_after_dead && 2 * dead_ > heap_.size()) rebuild([](const key&, node&) { return false; });
        return removed;
    }

    // Moves into `out` every live task for which pred(due, const node&)
    // holds, and drops every removed task's key; O(n). Requires: room in
    // `out` for size() more tasks.
    template <class Pred>
    void extract_if(Pred pred, std::vector<task>& out) {
        rebuild([&](const key& k, node& n) {
            if (!pred(k.due, std::as_const(n))) return false;
            out.push_back(std::move(n.work)); // capacity reserved
            return true;
        });
    }

    // Empties the heap, calling visit(due, task&&) for each live task in due
    // order (FIFO among equal due times).
    template <class Visit>
    void drain(Visit visit) {
        std::sort(heap_.begin(), heap_.end(), [](const key& a, const key& b) { return earlier(a, b); });
        for (const key& k : heap_) {
            const bool dead = nodes_[k.node].dead;
            task t = release_node(k.node);
            if (!dead) visit(k.due, std::move(t));
        }
        heap_.clear();
        dead_ = 0;
    }

  private:
    struct key {
        clock::time_point due;
        std::uint64_t sequence; // FIFO among equal due times
        std::size_t node;
    };

    // The nodes, in chunks that never move: growing allocates a chunk and
    // moves no task. Ids are dense; size() of them are in use or free.
    class node_slab {
      public:
        node& operator[](std::size_t id) noexcept { return chunks_[id / chunk][id % chunk]; }
        const node& operator[](std::size_t id) const noexcept { return chunks_[id / chunk][id % chunk]; }
        std::size_t size() const noexcept { return size_; }
        // Room for `n` nodes. Strong guarantee.
        void reserve(std::size_t n) {
            const std::size_t chunks = (n + chunk - 1) / chunk;
            if (chunks <= chunks_.size()) return;
            chunks_.reserve(chunks);
            while (chunks_.size() < chunks) chunks_.push_back(std::make_unique<node[]>(chunk)); // capacity reserved
        }
        // A new id. Requires: room reserved.
        std::size_t add() noexcept { return size_++; }

      private:
        static constexpr std::size_t chunk = 1024;
        std::vector<std::unique_ptr<node[]>> chunks_;
        std::size_t size_ = 0;
    };

    static constexpr std::size_t arity = 4;

    static bool earlier(const key& a, const key& b) noexcept {
        return a.due < b.due || (a.due == b.due && a.sequence < b.sequence);
    }

    std::size_t acquire_node() noexcept {
        if (!free_nodes_.empty()) {
            const std::size_t id = free_nodes_.back();
            free_nodes_.pop_back();
            return id;
        }
        return nodes_.add(); // room reserved
    }

    // Frees a node (already out of the heap) and returns its task.
    task release_node(std::size_t id) noexcept {
        node& n = nodes_[id];
        if (n.slot) n.slot->node = schedule_slot::not_queued;
        n.slot = nullptr;
        free_nodes_.push_back(id); // capacity reserved
        return std::move(n.work);
    }

    task pop_key() noexcept {
        const std::size_t id = heap_.front().node;
        const key last = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) {
            heap_.front() = last;
            sift_down(0);
        }
        return release_node(id);
    }

    // Keeps the invariant that the head, if any, is a live task: the heap is
    // empty exactly when no task is queued in it.
    void drop_dead_heads() noexcept {
        while (!heap_.empty() && nodes_[heap_.front().node].dead) {
            (void)pop_key();
            --dead_;
        }
    }

    void sift_up(std::size_t index) noexcept {
        const key moving = heap_[index];
        while (index > 0) {
            const std::size_t parent = (index - 1) / arity;
            if (!earlier(moving, heap_[parent])) break;
            heap_[index] = heap_[parent];
            index = parent;
        }
        heap_[index] = moving;
    }

    void sift_down(std::size_t index) noexcept {
        const key moving = heap_[index];
        const std::size_t n = heap_.size();
        for (;;) {
            const std::size_t first = arity * index + 1;
            if (first >= n) break;
            std::size_t best = first;
            const std::size_t end = std::min(first + arity, n);
            for (std::size_t c = first + 1; c < end; ++c)
                if (earlier(heap_[c], heap_[best])) best = c;
            if (!earlier(heap_[best], moving)) break;
            heap_[index] = heap_[best];
            index = best;
        }
        heap_[index] = moving;
    }

    // Drops the removed tasks' keys and the live tasks for which
    // drop(key, node&) holds (drop moves out what it keeps), then restores
    // the heap in O(n).
    template <class Drop>
    void rebuild(Drop drop) {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < heap_.size(); ++i) {
            const key k = heap_[i];
            node& n = nodes_[k.node];
            if (n.dead || drop(k, n)) (void)release_node(k.node);
            else heap_[kept++] = k;
        }
        dead_ = 0;
        heap_.resize(kept);
        for (std::size_t i = heap_.size() / arity + 1; i-- > 0;)
            if (i < heap_.size()) sift_down(i);
    }

    std::vector<key> heap_;
    node_slab nodes_;
    std::vector<std::size_t> free_nodes_;
    std::size_t dead_ = 0; // keys in heap_ of removed tasks (never the head)
    // Removed keys are swept by a rebuild once there are this many and they
    // are over half the heap: a few cancels cost no rebuild, many cost one.
    static constexpr std::size_t rebuild_after_dead = 32;
};

} // namespace crew::detail

#endif
