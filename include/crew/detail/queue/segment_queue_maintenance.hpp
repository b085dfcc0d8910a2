#ifndef CREW_DETAIL_QUEUE_SEGMENT_QUEUE_MAINTENANCE_HPP
#define CREW_DETAIL_QUEUE_SEGMENT_QUEUE_MAINTENANCE_HPP

// segment_queue's maintenance: close(), drain(), extract_if() (and so
// remove_if()), and the freeze they share (diverting the producers, holding
// the consumers, taking every task out and putting the survivors back), all
// under maint_mutex_. Off the hot path, and a concept of its own on top of
// the lock-free rings, so it is written apart from them (issue #34: one
// concept per header).
//
// Included at the end of <crew/detail/queue/segment_queue.hpp>, whose class
// body declares every member defined here (the public ones documented
// there); including this file alone includes that header first.
//
// close() is linearisable with offers: it sets a shut bit in the last
// segment's tail word (waiting for a linker to open the next), so a claim
// comes before it or fails, then waits until every claimed cell is
// published (under maint_mutex_, holding consumers meanwhile so that the
// segments stay put). Consumers still drain what is queued.
//
// remove_if, extract_if and drain take maint_mutex_ and freeze the queue:
// the last segment diverted (producers wait on the mutex), the first held
// (consumers wait on the mutex), every claimed cell published; then every
// task comes out, oldest first, the emptied segments are kept aside, and
// the survivors go back in order at the tail, ahead of any later offer,
// into the kept segments (so nothing allocates). size() counts the tasks in
// the maintenance's hands meanwhile (moving_, a sequence lock).

#include <crew/detail/queue/segment_queue.hpp>

namespace crew::detail {

inline void segment_queue::close() {
    {
        std::unique_lock lock(maint_mutex_);
        closed_.store(true, std::memory_order_seq_cst);
        maintaining_.store(true, std::memory_order_seq_cst);
        for (;;) { // the shut bit on the open last segment: no claim after it
            segment* s = tail_seg_.load(std::memory_order_acquire);
            if ((s->tail.fetch_or(shut_bit, std::memory_order_seq_cst) & closed_bit) == 0) break;
            std::this_thread::yield(); // a linker is opening the next segment
        }
        // Consumers held, so that the walk sees the segments stay put.
        segment* first = hold_first();
        begin_move(lock, queued_frozen(first));
        wait_published(lock, first);
        end_move(lock);
        first->head.fetch_and(~held_bit, std::memory_order_seq_cst);
        maintaining_.store(false, std::memory_order_seq_cst);
    }
    not_full_.notify_all();
}

inline std::vector<task> segment_queue::drain() {
    std::vector<task> out;
    {
        std::unique_lock lock(maint_mutex_);
        out = take_all(lock);
        std::vector<task> none;
        put_back(lock, none);
    }
    give_back_permits(out.size());
    if (!out.empty()) not_full_.notify_all();
    return out;
}

template <class Pred>
std::vector<task> segment_queue::extract_if(Pred pred) {
    std::vector<task> removed;
    {
        std::unique_lock lock(maint_mutex_);
        std::vector<task> all = take_all(lock);
        std::vector<char> drop;
        try {
            drop.resize(all.size());
            std::size_t dropping = 0;
            for (std::size_t i = 0; i < all.size(); ++i) dropping += drop[i] = pred(std::as_const(all[i])) ? 1 : 0;
            removed.reserve(dropping);
        } catch (...) {
            put_back(lock, all);
            throw;
        }
        std::size_t kept = 0;
        for (std::size_t i = 0; i < all.size(); ++i) {
            if (drop[i]) removed.push_back(std::move(all[i])); // reserved
            else if (kept++ != i) all[kept - 1] = std::move(all[i]);
        }
        all.erase(all.begin() + static_cast<std::ptrdiff_t>(kept), all.end());
        put_back(lock, all);
    }
    give_back_permits(removed.size());
    if (!removed.empty()) not_full_.notify_all();
    return removed; // the removed tasks die outside the lock
}

// The last segment, diverted once open (a linker may be opening it).
inline segment_queue::segment* segment_queue::divert_last(const std::unique_lock<std::mutex>& held) noexcept {
    assert_held(held, maint_mutex_);
    for (;;) {
        segment* s = tail_seg_.load(std::memory_order_acquire);
        if ((s->tail.fetch_or(diverted_bit, std::memory_order_seq_cst) & closed_bit) == 0) return s;
        std::this_thread::yield(); // the bit on a closed segment is harmless: setup rewrites the word
    }
}

// The first segment, held once unheld (a retirement may be under way).
// Only the first segment is ever unheld, so the bit lands there.
inline segment_queue::segment* segment_queue::hold_first() noexcept {
    for (;;) {
        segment* s = head_seg_.load(std::memory_order_acquire);
        if ((s->head.fetch_or(held_bit, std::memory_order_seq_cst) & held_bit) == 0) return s;
        std::this_thread::yield();
    }
}

// Requires: frozen (no producer can claim, no consumer take). Claimed
// and not yet taken, from `first` to the last segment.
inline std::size_t segment_queue::queued_frozen(segment* first) const noexcept {
    const std::uint64_t head = first->head.load(std::memory_order_acquire) & position_mask;
    const std::uint64_t tail = tail_seg_.load(std::memory_order_acquire)->tail.load(std::memory_order_acquire) & position_mask;
    return static_cast<std::size_t>(tail - head);
}

// Requires: producers unable to claim, consumers held. Waits (yielding)
// until every claimed cell from `first` on is published.
inline void segment_queue::wait_published(const std::unique_lock<std::mutex>& held, segment* first) const noexcept {
    assert_held(held, maint_mutex_);
    for (segment* s = first; s != nullptr; s = s->next.load(std::memory_order_acquire)) {
        const std::uint64_t head = s->head.load(std::memory_order_acquire) & position_mask;
        const std::uint64_t tail = s->tail.load(std::memory_order_acquire) & position_mask;
        for (std::uint64_t p = head; p < tail; ++p)
            while (at(s, p).seq.load(std::memory_order_acquire) < ready_at(p)) std::this_thread::yield();
    }
}

// Empties the queue into a vector, oldest first, frozen (put_back thaws
// it), keeping the emptied segments aside in kept_ for put_back. Reserves
// first, so a std::bad_alloc leaves every task queued. size() counts the
// tasks meanwhile, until put_back's end_move.
inline std::vector<task> segment_queue::take_all(const std::unique_lock<std::mutex>& held) {
    assert_held(held, maint_mutex_);
    maintaining_.store(true, std::memory_order_seq_cst);
    segment* last = divert_last(held);
    segment* first = hold_first();
    const std::size_t queued = queued_frozen(first);
    begin_move(held, queued);
    std::size_t segments = 1;
    for (segment* s = first; s != last; s = s->next.load(std::memory_order_acquire)) ++segments;
    std::vector<task> all;
    try {
        all.reserve(queued);
        kept_.reserve(segments);
    } catch (...) {
        thaw(held);
        throw;
    }
    wait_published(held, first);
    for (segment* s = first;; s = s->next.load(std::memory_order_acquire)) {
        std::uint64_t head = s->head.load(std::memory_order_relaxed) & position_mask;
        const std::uint64_t tail = s->tail.load(std::memory_order_relaxed) & position_mask;
        for (; head < tail; ++head) {
            cell& c = at(s, head);
            all.push_back(std::move(c.job)); // reserved
            c.seq.store(free_for(head + cells_), std::memory_order_release);
        }
        s->head.store(head | held_bit, std::memory_order_release);
        if (s == last) break;
        kept_.push_back(s); // empty, closed and held: reused by put_back, or freed
    }
    head_seg_.store(last, std::memory_order_release); // held: the consumers still wait
    return all;
}

// Requires: after take_all. Queues `all` again in order at the tail (in
// the kept segments when the last fills: nothing allocates), then thaws.
inline void segment_queue::put_back(const std::unique_lock<std::mutex>& held, std::vector<task>& all) noexcept {
    assert_held(held, maint_mutex_);
    for (task& t : all) push_as_owner(held, t);
    for (segment* s : kept_) push_free(s);
    kept_.clear();
    thaw(held);
    if (!all.empty()) not_empty_.notify_all();
}

// Requires: frozen. Pushes at the tail, linking a kept segment when the
// last is full. Only a slow taker still moving out of a cell is waited for.
inline void segment_queue::push_as_owner(const std::unique_lock<std::mutex>& held, task& t) noexcept {
    assert_held(held, maint_mutex_);
    for (;;) {
        segment* s = tail_seg_.load(std::memory_order_relaxed);
        const std::uint64_t word = s->tail.load(std::memory_order_relaxed);
        const std::uint64_t pos = word & position_mask;
        cell& c = at(s, pos);
        if (c.seq.load(std::memory_order_acquire) == free_for(pos)) {
            s->tail.fetch_add(1, std::memory_order_seq_cst); // the bits stay: + 1 moves the position
            c.job = std::move(t);
            c.seq.store(ready_at(pos), std::memory_order_release);
            return;
        }
        if (pos - (s->head.load(std::memory_order_relaxed) & position_mask) < cells_) {
            std::this_thread::yield(); // a taker from before the freeze moving out
            continue;
        }
        // Enough kept: each segment held at most cells_ of the tasks.
        assert(!kept_.empty() && "crew: segment_queue::put_back ran out of kept segments");
        segment* next = kept_.back();
        kept_.pop_back();
        while (!vacated(next)) std::this_thread::yield();
        setup(next, pos, diverted_bit | (word & shut_bit)); // closed stays closed
        s->tail.fetch_or(closed_bit, std::memory_order_seq_cst);
        s->next.store(next, std::memory_order_release);
        tail_seg_.store(next, std::memory_order_release);
        next->tail.fetch_and(~closed_bit, std::memory_order_seq_cst);
    }
}

// Ends a freeze: producers and consumers back in.
inline void segment_queue::thaw(const std::unique_lock<std::mutex>& held) noexcept {
    assert_held(held, maint_mutex_);
    end_move(held);
    tail_seg_.load(std::memory_order_relaxed)->tail.fetch_and(~diverted_bit, std::memory_order_seq_cst);
    head_seg_.load(std::memory_order_relaxed)->head.fetch_and(~held_bit, std::memory_order_seq_cst);
    maintaining_.store(false, std::memory_order_seq_cst);
}

// size()'s sequence lock: odd while the queue is frozen.
inline void segment_queue::begin_move(const std::unique_lock<std::mutex>& held, std::size_t queued) noexcept {
    assert_held(held, maint_mutex_);
    moving_size_.store(queued, std::memory_order_relaxed);
    moving_.store(moving_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    fence_unless_tsan(std::memory_order_release);
}

inline void segment_queue::end_move(const std::unique_lock<std::mutex>& held) noexcept {
    assert_held(held, maint_mutex_);
    moving_.store(moving_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

} // namespace crew::detail

#endif
