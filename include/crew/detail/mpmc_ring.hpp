#ifndef CREW_DETAIL_MPMC_RING_HPP
#define CREW_DETAIL_MPMC_RING_HPP

// A bounded multi-producer, multi-consumer FIFO ring of tasks without a lock:
// Vyukov's design, a sequence number per cell. A position is claimed by a
// compare-exchange on the shared head or tail; the cell's sequence number
// then says whether it is free to fill for that position (seq == 2 p),
// filled and ready to take (seq == 2 p + 1), or still held by the previous
// lap. (Vyukov counts p and p + 1, which cannot tell "ready" from "free for
// the next lap" when the ring has one cell; doubling can.) A task
// and its "ready" mark travel together on the cell's line, so a hand-off
// costs one read-modify-write per side and no lock.
//
// Capacity is exact, from one cell up, and need not be a power of two.
// Positions are 64-bit (62 bits for the position, doubled in the sequence
// numbers; two flag bits) and never wrap in practice (a century at a
// billion a second).
//
// close() sets the closed bit in the tail word itself, so a claim either
// came before it in that word's order or fails: after close() and
// wait_published(), every task that got in is visible, and no push succeeds.
//
// Two more bits let an owner (spill_queue, under its mutex) take the ring
// over, each set in the word the other side claims in, so that a claim either
// came before the bit or fails: divert() turns producers away (try_push says
// `diverted`; push_as_owner still pushes), hold_consumers() turns consumers
// away (try_pop says no; pop_as_owner still pops).

#include <crew/detail/test_seam.hpp>
#include <crew/task.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

namespace crew::detail {

class mpmc_ring {
  public:
    // Requires: cells >= 1.
    explicit mpmc_ring(std::size_t cells)
        : cells_(cells), mask_((cells & (cells - 1)) == 0 ? cells - 1 : 0), slots_(new cell[cells]) {
        for (std::size_t i = 0; i < cells; ++i) slots_[i].seq.store(free_for(i), std::memory_order_relaxed);
    }

    std::size_t capacity() const noexcept { return cells_; }

    // Tasks claimed for filling and not yet taken; exact when nobody is
    // pushing or popping. Under races it never counts too few (head is read
    // first) nor more than the ring holds (clamped: pops and pushes between
    // the two reads would otherwise make it look overfull).
    std::size_t size() const noexcept {
        const std::uint64_t head = head_.load(std::memory_order_acquire) & ~held_bit;
        const std::uint64_t tail = tail_.load(std::memory_order_acquire) & ~tail_bits;
        return tail > head ? static_cast<std::size_t>(std::min<std::uint64_t>(tail - head, cells_)) : 0;
    }

    // Positions claimed but not yet taken, or claimed and not yet published:
    // true while size() is. Lock-free.
    bool empty() const noexcept { return size() == 0; }

    // True if at one moment during the call every cell was claimed by a
    // producer and none of them yet by a consumer. try_push also says `full`
    // while a consumer that has claimed the oldest cell is still moving its
    // task out: that take has happened, and the ring has room. Head is read
    // twice around tail, so the pair is one moment's.
    bool full() const noexcept {
        for (;;) {
            const std::uint64_t head = head_.load(std::memory_order_seq_cst) & ~held_bit;
            const std::uint64_t tail = tail_.load(std::memory_order_seq_cst) & ~tail_bits;
            if ((head_.load(std::memory_order_seq_cst) & ~held_bit) == head) return tail - head >= cells_;
        }
    }

    enum class push_result { pushed, full, closed, diverted };

    // Claims the next cell and fills it with `t`; if full, closed or
    // diverted, `t` is left intact. `after_claim` runs between the claim and
    // the publish (a seam for the tests of close(); the queues pass nothing).
    template <class AfterClaim = void (*)() noexcept>
    push_result try_push(task& t, AfterClaim after_claim = [] () noexcept {}) noexcept {
        return push(t, diverted_bit, after_claim);
    }

    // As try_push, but pushes while diverted (never once closed). For the
    // owner that diverted the ring: one thread at a time.
    push_result push_as_owner(task& t) noexcept {
        return push(t, 0, [] () noexcept {});
    }

    enum class pop_result { popped, none_ready, held };

    // Takes the oldest task; `none_ready` if empty or the oldest claim's
    // producer has not finished filling its cell, `held` while consumers are
    // held (the owner has the tasks: wait for it, do not report "empty").
    pop_result try_pop_or_held(task& out) noexcept { return pop(out, held_bit); }

    // As try_pop_or_held, false for both refusals.
    bool try_pop(task& out) noexcept { return pop(out, held_bit) == pop_result::popped; }

    // As try_pop, but pops while consumers are held. For the owner that holds them.
    bool pop_as_owner(task& out) noexcept { return pop(out, 0) == pop_result::popped; }

    // Refuses every later push. Returns how many positions were claimed
    // before: pass it to wait_published.
    std::uint64_t close() noexcept { return tail_.fetch_or(closed_bit, std::memory_order_seq_cst) & ~tail_bits; }

    // Turns later try_push calls away (`diverted`) until undivert(). Returns
    // how many positions were claimed before: pass it to wait_published.
    std::uint64_t divert() noexcept { return tail_.fetch_or(diverted_bit, std::memory_order_seq_cst) & ~tail_bits; }
    void undivert() noexcept { tail_.fetch_and(~diverted_bit, std::memory_order_seq_cst); }

    // Turns later try_pop calls away until release_consumers(). A pop that
    // claimed its cell before goes on (its task was taken before this call).
    void hold_consumers() noexcept { head_.fetch_or(held_bit, std::memory_order_seq_cst); }
    void release_consumers() noexcept { head_.fetch_and(~held_bit, std::memory_order_seq_cst); }

    // Waits (yielding) until every position below `horizon` is published.
    // Claims are made in order on each cell, so the last lap is enough.
    void wait_published(std::uint64_t horizon) const noexcept {
        const std::uint64_t first = horizon > cells_ ? horizon - cells_ : 0;
        for (std::uint64_t pos = first; pos < horizon; ++pos)
            while (slot(pos).seq.load(std::memory_order_acquire) < ready_at(pos)) std::this_thread::yield();
    }

  private:
    // Claims fail while `refused` (a bit of the tail word) is set.
    template <class AfterClaim>
    push_result push(task& t, std::uint64_t refused, AfterClaim after_claim) noexcept {
        std::uint64_t word = tail_.load(std::memory_order_relaxed);
        std::uint64_t pos;
        cell* c;
        for (;;) {
            if (word & closed_bit) return push_result::closed;
            if (word & refused) return push_result::diverted;
            pos = word & ~tail_bits;
            c = &slot(pos);
            const std::uint64_t seq = c->seq.load(std::memory_order_acquire);
            if (seq == free_for(pos)) {
                // The flag bits stay as they were: + 1 changes the position only.
                if (tail_.compare_exchange_weak(word, word + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
                    break;
            } else if (seq < free_for(pos)) {
                return push_result::full; // the previous lap's task is still there
            } else {
                word = tail_.load(std::memory_order_relaxed); // another producer took it
            }
        }
        after_claim();
        CREW_SEAM(ring_claimed);
        c->job = std::move(t);
        c->seq.store(ready_at(pos), std::memory_order_release);
        return push_result::pushed;
    }

    // push's mirror image on the head word. Claims fail while `refused` (a
    // bit of the head word) is set.
    pop_result pop(task& out, std::uint64_t refused) noexcept {
        std::uint64_t word = head_.load(std::memory_order_acquire);
        std::uint64_t pos;
        cell* c;
        for (;;) {
            if (word & refused) return pop_result::held;
            pos = word & ~held_bit;
            c = &slot(pos);
            const std::uint64_t seq = c->seq.load(std::memory_order_acquire);
            if (seq == ready_at(pos)) {
                if (head_.compare_exchange_weak(word, word + 1, std::memory_order_seq_cst, std::memory_order_acquire))
                    break;
            } else if (seq < ready_at(pos)) {
                return pop_result::none_ready;
            } else {
                word = head_.load(std::memory_order_acquire);
            }
        }
        CREW_SEAM(ring_pop_claimed);
        out = std::move(c->job);
        c->seq.store(free_for(pos + cells_), std::memory_order_release);
        return pop_result::popped;
    }

    static constexpr std::uint64_t closed_bit = std::uint64_t(1) << 63;   // tail: close()
    static constexpr std::uint64_t diverted_bit = std::uint64_t(1) << 62; // tail: divert()
    static constexpr std::uint64_t tail_bits = closed_bit | diverted_bit;
    static constexpr std::uint64_t held_bit = std::uint64_t(1) << 63;     // head: hold_consumers()
    static constexpr std::uint64_t free_for(std::uint64_t pos) noexcept { return 2 * pos; }
    static constexpr std::uint64_t ready_at(std::uint64_t pos) noexcept { return 2 * pos + 1; }

    struct cell {
        std::atomic<std::uint64_t> seq;
        task job;
    };

    cell& slot(std::uint64_t pos) const noexcept {
        return slots_[mask_ != 0 || cells_ == 1 ? pos & mask_ : pos % cells_];
    }

    const std::size_t cells_;
    const std::uint64_t mask_; // cells_ - 1 when cells_ is a power of two, else 0
    const std::unique_ptr<cell[]> slots_;
    alignas(64) std::atomic<std::uint64_t> tail_{0}; // producers claim here; | closed_bit, diverted_bit
    alignas(64) std::atomic<std::uint64_t> head_{0}; // consumers claim here; | held_bit
};

} // namespace crew::detail

#endif
