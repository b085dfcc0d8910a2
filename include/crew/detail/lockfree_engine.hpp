#ifndef CREW_DETAIL_LOCKFREE_ENGINE_HPP
#define CREW_DETAIL_LOCKFREE_ENGINE_HPP

// The engine of crew::lockfree_queue: Boost.Lockfree's MPMC queue carrying
// slot pointers, a free stack of slots, and the consumer-state word that
// decides who spins, who parks and whom a producer wakes. The public face,
// with what a user needs to know, is <crew/policies/lockfree_queue.hpp>.

#include <crew/detail/consumer_wait.hpp>
#include <crew/detail/parking_word.hpp>
#include <crew/detail/spin.hpp>
#include <crew/detail/tsan.hpp>
#include <crew/pool_options.hpp>
#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include <boost/lockfree/queue.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace crew::detail {

// Boost.Lockfree's free lists read a node's `next` index with a plain load
// that may race with its reuse; the tagged compare-and-swap that follows
// discards what it read if so. Benign on the hardware, but a data race to
// ThreadSanitizer (boostorg/lockfree#22, #78): calls into Boost run in this
// scope, so that its plain accesses are not checked while its atomics still
// synchronise the tasks handed through it.
using boost_lockfree_call = tsan_unchecked_scope;

// The largest Capacity: Boost.Lockfree indexes a compile-time sized node
// array with 16 bits, the value 65535 meaning "null", and its queue adds one
// dummy node.
inline constexpr std::size_t lockfree_queue_max_capacity = 65534;

// The queue itself, with the parking primitive as a parameter (the tests run
// both). Tasks live in a pool of Capacity slots made once, at construction.
// Boost.Lockfree (which holds only trivially copyable values) carries slot
// pointers in FIFO order (`ready_`); the unused slots form an intrusive stack
// (`free_head_`). A task moves into its slot on offer and out of it on poll;
// nothing allocates after the constructor.
//
// Consumers coordinate through one 64-bit word, `state_`:
//   bits  0-15  available: published tasks no consumer has claimed
//   bit   16    held: remove_if has a task in hand (it counts in size())
//   bits 17-31  spinning consumers
//   bits 32-47  parked consumers
//   bits 48-63  parked consumers already being woken (signalled)
// A consumer claims a task by decrementing `available` before popping it, so
// a claimed pop always finds a node. Because publishing a task and a consumer
// announcing that it parks are read-modify-writes of the same word, one of
// the two always sees the other: the producer wakes the consumer, or the
// consumer takes the task instead of parking. No wake-up is lost.
//
// A wake-up costs the waker a system call, so it is made only when needed:
// not while a consumer spins (that one takes the task: a spinner never stops
// spinning while a task is available, it claims it in the same step), and
// not for more parked consumers than there are unclaimed tasks (`signalled`
// counts the wake-ups under way; each returning consumer takes one off). A
// consumer that claims a task and leaves others behind, with none spinning
// and parked consumers not yet signalled, wakes one: a backlog fans out.
//
// Producers pass a gate, `gate_` (closed bit | offers in flight), on a cache
// line of its own: with one producer it never leaves that producer's cache.
// Puts waiting for a slot count themselves in `putters_` (generation << 32 |
// count); the first release that sees them wakes them all and starts a new
// generation, so the releases after it make no system call.
template <std::size_t Capacity, class ParkingWord>
class basic_lockfree_queue : public consumer_waits<basic_lockfree_queue<Capacity, ParkingWord>> {
    static_assert(Capacity >= 1 && Capacity <= lockfree_queue_max_capacity,
                  "crew::lockfree_queue<Capacity>: Capacity must be in [1, 65534]; Boost.Lockfree's compile-time "
                  "capacity indexes its nodes with 16 bits and its queue needs one more node than it holds");

  public:
    explicit basic_lockfree_queue(const pool_options& = {})
        : slots_(std::make_unique<slot[]>(Capacity)),
          next_free_(std::make_unique<std::atomic<std::uint32_t>[]>(Capacity)),
          ready_(std::make_unique<ready_list>()) {
        // Slot i links to i + 1, so that the first offers take the first slots.
        for (std::uint32_t i = 0; i < Capacity; ++i) next_free_[i].store(i + 1, std::memory_order_relaxed);
        free_head_.store(0, std::memory_order_release);
    }

    basic_lockfree_queue(const basic_lockfree_queue&) = delete;
    basic_lockfree_queue& operator=(const basic_lockfree_queue&) = delete;

    bool offer(task&& t) {
        if (gate_.load(std::memory_order_relaxed) & closed_bit) return false;
        slot* s = pop_free();
        if (!s) return false; // full
        return fill_and_publish(s, t);
    }

    bool put(task&& t) {
        slot* s = pop_free();
        if (!s) spin_until(spin_pauses, [&] { return (s = pop_free()) != nullptr || is_closed(); });
        while (!s) {
            if (is_closed()) return false;
            // The consumers' handshake split over two words: a store-load
            // barrier on both sides makes a releasing consumer see this
            // putter, or this putter see the released slot.
            const std::uint32_t seen = room_.load();
            const std::uint64_t generation = putters_.fetch_add(1, std::memory_order_seq_cst) >> 32;
            store_load_barrier();
            s = pop_free();
            if (!s && !is_closed()) room_.wait(seen, std::chrono::steady_clock::time_point::max());
            leave_putters(generation);
            if (!s) s = pop_free();
        }
        return fill_and_publish(s, t);
    }

    bool poll(task& out) {
        if (!try_claim()) return false;
        take_claimed(out);
        return true;
    }


    void wake_consumers() {
        // A read-modify-write, not a load: it reads the latest value, so a
        // consumer that announced itself before it is seen (and woken), and one
        // that announces itself after it synchronises with it and sees the
        // caller's flag, however the flag was stored.
        if (waiters(state_.fetch_add(0, std::memory_order_acq_rel)) != 0) consumer_.bump_and_wake(INT_MAX);
    }

    void close() {
        gate_.fetch_or(closed_bit, std::memory_order_acq_rel);
        room_.bump_and_wake(INT_MAX); // blocked puts fail now
        // An offer that passed the gate before the close publishes; wait for
        // it, so that what is queued when close() returns is final (the
        // executor's try_terminate relies on it).
        while ((gate_.load(std::memory_order_acquire) & ~closed_bit) != 0) std::this_thread::yield();
    }

    std::vector<task> drain() {
        std::lock_guard lock(maintenance_);
        std::vector<task> out;
        for (;;) {
            // Reserve before claiming: a failing push_back must not lose a task.
            if (out.size() == out.capacity()) out.reserve(out.size() + size() + 1);
            if (!try_claim()) return out;
            slot* s = pop_claimed();
            out.push_back(std::move(s->job));
            release(s);
        }
    }

    template <class Pred>
    std::size_t remove_if(Pred pred) {
        std::lock_guard lock(maintenance_);
        std::size_t removed = 0;
        // One turn of the queue: each task is taken out, tested, and put back
        // at the tail unless it matches. The task in hand keeps counting in
        // size() (the held bit), so the executor never takes the queue for
        // empty while one is out.
        for (std::size_t n = size(); n > 0; --n) {
            if (!try_claim(held_bit)) break;
            slot* s = pop_claimed();
            bool matches;
            try {
                matches = pred(std::as_const(s->job));
            } catch (...) {
                publish(s, held_bit);
                throw;
            }
            if (!matches) {
                publish(s, held_bit);
                continue;
            }
            s->job.reset();
            ++removed;
            state_.fetch_sub(held_bit, std::memory_order_acq_rel);
            release(s);
        }
        return removed;
    }

    std::size_t size() const noexcept {
        const std::uint64_t c = state_.load(std::memory_order_acquire);
        return static_cast<std::size_t>(available(c) + ((c & held_bit) ? 1 : 0));
    }

    std::size_t capacity() const noexcept { return Capacity; }

  private:
    static constexpr std::size_t cache_line = 64;

    static constexpr std::uint64_t available_one = 1;
    static constexpr std::uint64_t held_bit = std::uint64_t{1} << 16;
    static constexpr std::uint64_t spinner_one = std::uint64_t{1} << 17;
    static constexpr std::uint64_t waiter_one = std::uint64_t{1} << 32;
    static constexpr std::uint64_t signal_one = std::uint64_t{1} << 48;
    static constexpr std::uint64_t max_waiters = 0xFFFF;

    static std::uint64_t available(std::uint64_t c) noexcept { return c & 0xFFFF; }
    static std::uint64_t spinners(std::uint64_t c) noexcept { return (c >> 17) & 0x7FFF; }
    static std::uint64_t waiters(std::uint64_t c) noexcept { return (c >> 32) & 0xFFFF; }
    static std::uint64_t signalled(std::uint64_t c) noexcept { return c >> 48; }

    static constexpr std::uint32_t closed_bit = std::uint32_t{1} << 31; // in gate_; the rest counts offers
    static constexpr std::uint64_t putter_count_mask = 0xFFFFFFFF;      // in putters_; the rest is a generation

    static constexpr std::uint32_t no_slot = static_cast<std::uint32_t>(Capacity);

    // How long a waiting consumer (or put) spins before parking, in pause
    // instructions: some 5 to 20 us on current x86 (a pause takes 10 to 40 ns),
    // long enough to bridge the gaps of a steady producer, short enough that
    // an idle worker costs nothing measurable. At most one consumer fewer
    // than there are usable CPUs spins; the others park at once.
    static constexpr int spin_pauses = 512;

    struct alignas(cache_line) slot {
        task job;
    };
    using ready_list = boost::lockfree::queue<slot*, boost::lockfree::capacity<Capacity>>;

    bool is_closed() const noexcept { return (gate_.load(std::memory_order_seq_cst) & closed_bit) != 0; }

    // ---- the free stack: a Treiber stack of slot indices whose head carries
    // a 32-bit tag against ABA. The links are atomic, so reading a link that
    // a concurrent push rewrites (the failing CAS then discards it) is no
    // data race.

    // The new head word: index, with the tag of `head` plus one.
    static std::uint64_t retagged(std::uint64_t head, std::uint64_t index) noexcept {
        return (((head >> 32) + 1) << 32) | index;
    }

    slot* pop_free() noexcept {
        std::uint64_t head = free_head_.load(std::memory_order_acquire);
        for (;;) {
            const auto index = static_cast<std::uint32_t>(head);
            if (index == no_slot) return nullptr;
            const std::uint64_t next = next_free_[index].load(std::memory_order_relaxed);
            if (free_head_.compare_exchange_weak(head, retagged(head, next), std::memory_order_acquire,
                                                 std::memory_order_acquire))
                return &slots_[index];
        }
    }

    void push_free(slot* s) noexcept {
        const auto index = static_cast<std::uint64_t>(s - slots_.get());
        std::uint64_t head = free_head_.load(std::memory_order_relaxed);
        do {
            next_free_[index].store(static_cast<std::uint32_t>(head), std::memory_order_relaxed);
        } while (!free_head_.compare_exchange_weak(head, retagged(head, index), std::memory_order_release,
                                                   std::memory_order_relaxed));
    }

    // ---- Boost: every call goes through these two.

    bool pop_ready(slot*& s) noexcept {
        [[maybe_unused]] const boost_lockfree_call scope;
        return ready_->pop(s);
    }
    bool push_ready(slot* s) noexcept {
        [[maybe_unused]] const boost_lockfree_call scope;
        return ready_->bounded_push(s);
    }

    // ---- producers

    // Requires: s was taken from the free stack. Passes the gate (refused
    // once closed), moves t in, queues and publishes it.
    bool fill_and_publish(slot* s, task& t) {
        if (gate_.fetch_add(1, std::memory_order_acquire) & closed_bit) {
            gate_.fetch_sub(1, std::memory_order_release);
            release(s);
            return false;
        }
        s->job = std::move(t);
        publish(s, 0);
        gate_.fetch_sub(1, std::memory_order_release);
        return true;
    }

    // Queues s and makes it available, clearing `held` (remove_if) in the
    // same step; wakes a parked consumer if none spins or is being woken.
    void publish(slot* s, std::uint64_t held) {
        // Never fails: Capacity + 1 nodes, and every node in use belongs to a
        // slot that is not free, plus the dummy. The loop is only a guard.
        while (!push_ready(s)) cpu_relax();
        const std::uint64_t before = state_.fetch_add(available_one - held, std::memory_order_acq_rel);
        if (waiters(before) > signalled(before) && spinners(before) == 0) wake_one();
    }

    // Signals and wakes one parked consumer, if tasks are unclaimed, no
    // consumer spins, and fewer are being woken than are parked.
    void wake_one() {
        std::uint64_t c = state_.load(std::memory_order_relaxed);
        while (available(c) != 0 && spinners(c) == 0 && waiters(c) > signalled(c))
            if (state_.compare_exchange_weak(c, c + signal_one, std::memory_order_acq_rel, std::memory_order_relaxed)) {
                consumer_.bump_and_wake(1);
                return;
            }
    }

    // ---- consumers

    // Decrements `available` if positive, adding `also` in the same step
    // (the held bit for remove_if; minus one spinner for a spinner). It
    // synchronises with every publish before it (all writers of state_ are
    // read-modify-writes), so the pop that follows finds a node. `after` is
    // the new value.
    bool try_claim(std::uint64_t also, std::uint64_t& after) noexcept {
        std::uint64_t c = state_.load(std::memory_order_relaxed);
        while (available(c) != 0) {
            after = c - available_one + also;
            if (state_.compare_exchange_weak(c, after, std::memory_order_acq_rel, std::memory_order_relaxed))
                return true;
        }
        return false;
    }
    bool try_claim(std::uint64_t also = 0) noexcept {
        std::uint64_t after;
        return try_claim(also, after);
    }

    // Requires: a successful try_claim.
    slot* pop_claimed() noexcept {
        slot* s = nullptr;
        while (!pop_ready(s)) cpu_relax(); // never loops: see try_claim
        return s;
    }

    // Takes the claimed task; if the claim (leaving `after`) left others
    // behind that nobody would come for, wakes a parked consumer first.
    wait_status take_claimed(task& out, std::uint64_t after) {
        if (available(after) != 0 && spinners(after) == 0 && waiters(after) > signalled(after)) wake_one();
        return take_claimed(out);
    }
    wait_status take_claimed(task& out) {
        slot* s = pop_claimed();
        out = std::move(s->job);
        release(s);
        return wait_status::taken;
    }

    // Returns s to the free stack; wakes the parked puts, if any.
    void release(slot* s) {
        push_free(s);
        store_load_barrier();
        std::uint64_t p = putters_.load(std::memory_order_acquire);
        while ((p & putter_count_mask) != 0)
            if (putters_.compare_exchange_weak(p, ((p >> 32) + 1) << 32, std::memory_order_acq_rel,
                                               std::memory_order_acquire)) {
                room_.bump_and_wake(INT_MAX);
                return;
            }
    }

    // A put leaves the count, unless a release already emptied it (a later
    // generation): each put is counted out exactly once.
    void leave_putters(std::uint64_t generation) noexcept {
        std::uint64_t p = putters_.load(std::memory_order_relaxed);
        while ((p >> 32) == generation && (p & putter_count_mask) != 0)
            if (putters_.compare_exchange_weak(p, p - 1, std::memory_order_relaxed)) return;
    }

    // Orders the store before it with the load after it (Dekker). Under
    // ThreadSanitizer, which does not model fences, a read-modify-write of one
    // shared word gives the same guarantee in a way it understands.
    void store_load_barrier() noexcept {
#if defined(CREW_DETAIL_TSAN)
        tsan_barrier_.fetch_add(0, std::memory_order_seq_cst);
#else
        std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
    }

    // Becomes a spinner unless as many spin as there are hardware threads.
    bool start_spinning() noexcept {
        std::uint64_t c = state_.load(std::memory_order_relaxed);
        while (spinners(c) < max_spinners_)
            if (state_.compare_exchange_weak(c, c + spinner_one, std::memory_order_acq_rel, std::memory_order_relaxed))
                return true;
        return false;
    }

    enum class next_step { claimed, parked, neither };

    // In one step: claims a task if one is available; otherwise leaves the
    // spinners (if `spinning`) and, if `park`, announces a parked consumer
    // (unless 65535 are parked already: then `neither`, and the caller
    // yields and retries).
    next_step claim_or_stop(bool spinning, bool park, std::uint64_t& after) noexcept {
        std::uint64_t c = state_.load(std::memory_order_relaxed);
        for (;;) {
            next_step step;
            if (available(c) != 0) {
                step = next_step::claimed;
                after = c - available_one - (spinning ? spinner_one : 0);
            } else {
                step = park && waiters(c) < max_waiters ? next_step::parked : next_step::neither;
                after = c - (spinning ? spinner_one : 0) + (step == next_step::parked ? waiter_one : 0);
            }
            if (state_.compare_exchange_weak(c, after, std::memory_order_seq_cst, std::memory_order_relaxed))
                return step;
        }
    }

    // A parked consumer returns: it leaves the parked count and takes one
    // wake-up signal off, whichever consumer it was meant for (so the count
    // of those under way may only fall short, which costs at most a spare
    // wake-up, never a lost one).
    void unpark() noexcept {
        std::uint64_t c = state_.load(std::memory_order_relaxed);
        while (!state_.compare_exchange_weak(c, c - waiter_one - (signalled(c) != 0 ? signal_one : 0),
                                             std::memory_order_seq_cst, std::memory_order_relaxed)) {
        }
    }

    // detail::wait_for_task's two steps. The sleep spins briefly (one
    // spinner per spare CPU), then announces itself and parks; either may
    // claim a task that arrives meanwhile.
    friend consumer_waits<basic_lockfree_queue>;

    wait_status wait_for(task& out, const interrupt_flag& interrupted,
                         std::chrono::steady_clock::time_point deadline) {
        std::uint64_t after = 0;
        const wait_status status = wait_for_task(
            interrupted, deadline, [&] { return try_claim(0, after); },
            [&] { return sleep_or_claim(deadline, interrupted, after); });
        if (status == wait_status::taken) return take_claimed(out, after);
        return status;
    }

    // True if it claimed a task (its position in `after`).
    bool sleep_or_claim(std::chrono::steady_clock::time_point deadline, const interrupt_flag& interrupted,
                        std::uint64_t& after) {
        const bool spinning = start_spinning();
        if (spinning && spin_until(spin_pauses, [&] {
                return available(state_.load(std::memory_order_relaxed)) != 0 ||
                       interrupted.load(std::memory_order_relaxed);
            })) {
            // A task came (or the flag was set): claim it, or stop spinning.
            return claim_or_stop(true, false, after) == next_step::claimed;
        }
        // Read the word before announcing: a publish or wake_consumers that
        // sees the announcement changes the word after this read, so the
        // futex wait below cannot sleep through it.
        const std::uint32_t seen = consumer_.load();
        const next_step step = claim_or_stop(spinning, !interrupted.load(std::memory_order_seq_cst), after);
        if (step == next_step::claimed) return true;
        if (step == next_step::neither) {
            std::this_thread::yield();
            return false;
        }
        if (!interrupted.load(std::memory_order_seq_cst)) consumer_.wait(seen, deadline);
        unpark();
        return false;
    }

    alignas(cache_line) std::atomic<std::uint64_t> state_{0};
    alignas(cache_line) std::atomic<std::uint32_t> gate_{0};      // closed_bit | offers in flight
    alignas(cache_line) std::atomic<std::uint64_t> free_head_{0}; // tag << 32 | index (no_slot: empty)
    alignas(cache_line) ParkingWord consumer_;                    // parked consumers wait here
    alignas(cache_line) std::atomic<std::uint64_t> putters_{0};   // generation << 32 | puts waiting for a slot
    ParkingWord room_;                                             // ... who park here
#if defined(CREW_DETAIL_TSAN)
    std::atomic<std::uint32_t> tsan_barrier_{0};
#endif
    std::unique_ptr<slot[]> slots_;
    std::unique_ptr<std::atomic<std::uint32_t>[]> next_free_; // the free stack's links
    std::unique_ptr<ready_list> ready_; // heap: a compile-time sized Boost queue holds its nodes inline
    std::mutex maintenance_;             // one drain or remove_if at a time
    // A spinner holds a CPU that a producer may need, so spinners never fill
    // every CPU the process may use; on one CPU nobody spins.
    const std::uint64_t max_spinners_ = std::min<std::uint64_t>(usable_cpu_count() - 1, 0x7FFF);
};


} // namespace crew::detail

#endif
