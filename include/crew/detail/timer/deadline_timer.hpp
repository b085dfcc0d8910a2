#ifndef CREW_DETAIL_TIMER_DEADLINE_TIMER_HPP
#define CREW_DETAIL_TIMER_DEADLINE_TIMER_HPP

// Room detail/timer/ (README): time. Durations clamped to nanoseconds
// (time.hpp), a thread's timer slack, and the process-wide timer thread that
// future deadlines fall back on (this header). It may include detail/sync/.
// The delayed queue's heap is a queue (detail/queue/), a scheduled task's
// state a future (detail/future/schedule.hpp).

// The process-wide timer behind future::within and on_timeout without a
// scheduled pool of the user's (Java's CompletableFuture.Delayer): one
// thread, started on first use, sleeping until the earliest deadline of a
// min-heap of intrusive nodes.
//
// Cost: nothing until the first deadline. An insert wakes the thread only
// when it is due before the thread's own wake-up; a remove never wakes it
// (the thread may then wake once for nothing, and sleeps again). So a
// deadline met in time costs one insert and one remove under a short lock,
// and deadlines of one length, met in time, wake the thread at most once
// per length of time.
//
// The thread is detached and the service never destroyed: it keeps no
// process alive, and a deadline firing during exit finds its mutex intact.
// A node's `fire` runs on the timer thread, outside the lock, and must not
// throw; it only completes futures (no task of any pool runs here).

#include <crew/detail/thread_name.hpp>
#include <crew/detail/timer/time.hpp>

#include <condition_variable>
#include <cstddef>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace crew::detail {

struct timer_node {
    static constexpr std::size_t not_queued = std::numeric_limits<std::size_t>::max();
    clock::time_point due{};
    void (*fire)(timer_node&) noexcept = nullptr;
    std::size_t index = not_queued; // in the heap; the service's, under its lock
};

class deadline_timer {
  public:
    // The process's timer; starts its thread on the first call.
    static deadline_timer& instance() {
        static deadline_timer* const timer = [] {
            auto* t = new deadline_timer; // never deleted: see the header comment
            std::thread([t] { t->run(); }).detach();
            return t;
        }();
        return *timer;
    }

    // Queues `node` to fire at node.due; wakes the thread only if it sleeps
    // past that. Throws only what a vector's growth throws.
    void insert(timer_node& node) {
        bool sooner;
        {
            std::lock_guard lock(mutex_);
            heap_.push_back(&node);
            node.index = heap_.size() - 1;
            sift_up(node.index);
            sooner = node.due < sleeping_until_;
            notifies_ += sooner ? 1 : 0;
        }
        if (sooner) changed_.notify_one();
    }

    // True if `node` was queued and now never fires; false if it fired or
    // is firing (then its `fire` runs, or ran, to the end).
    bool remove(timer_node& node) noexcept {
        std::lock_guard lock(mutex_);
        if (node.index == timer_node::not_queued) return false;
        erase_at(node.index);
        return true;
    }

    // How many deadlines are queued (tests: one met in time leaves none).
    std::size_t pending() const {
        std::lock_guard lock(mutex_);
        return heap_.size();
    }

    // How many inserts woke the thread (tests).
    std::size_t notifies() const {
        std::lock_guard lock(mutex_);
        return notifies_;
    }
    // When the thread wakes by itself: max() while it waits for a first
    // deadline, min() while it is awake (tests).
    clock::time_point sleeping_until() const {
        std::lock_guard lock(mutex_);
        return sleeping_until_;
    }

  private:
    deadline_timer() = default;

    [[noreturn]] void run() noexcept {
        set_current_thread_name("crew-deadlines");
        std::unique_lock lock(mutex_);
        for (;;) {
            if (heap_.empty()) {
                sleeping_until_ = clock::time_point::max();
                changed_.wait(lock);
                continue;
            }
            timer_node* const first = heap_.front();
            if (clock::now() < first->due) {
                // A removal never wakes it: it may wake for a deadline gone
                // meanwhile, once, and sleeps again.
                // A copy: wait_until reads its time point again on waking,
                // and the node may be removed and freed meanwhile.
                const clock::time_point due = first->due;
                sleeping_until_ = due;
                changed_.wait_until(lock, due);
                continue;
            }
            erase_at(0);
            sleeping_until_ = clock::time_point::min(); // awake: it looks again before sleeping
            lock.unlock();
            first->fire(*first);
            lock.lock();
        }
    }

    bool before(std::size_t a, std::size_t b) const noexcept { return heap_[a]->due < heap_[b]->due; }
    void swap_at(std::size_t a, std::size_t b) noexcept {
        std::swap(heap_[a], heap_[b]);
        heap_[a]->index = a;
        heap_[b]->index = b;
    }
    void sift_up(std::size_t i) noexcept {
        while (i > 0 && before(i, (i - 1) / 2)) {
            swap_at(i, (i - 1) / 2);
            i = (i - 1) / 2;
        }
    }
    void sift_down(std::size_t i) noexcept {
        for (;;) {
            std::size_t least = i;
            for (std::size_t child = 2 * i + 1; child <= 2 * i + 2 && child < heap_.size(); ++child)
                if (before(child, least)) least = child;
            if (least == i) return;
            swap_at(i, least);
            i = least;
        }
    }
    void erase_at(std::size_t i) noexcept {
        heap_[i]->index = timer_node::not_queued;
        const std::size_t last = heap_.size() - 1;
        if (i != last) {
            heap_[i] = heap_[last];
            heap_[i]->index = i;
        }
        heap_.pop_back();
        if (i < heap_.size()) {
            timer_node* const moved = heap_[i];
            sift_up(i);
            sift_down(moved->index);
        }
    }

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<timer_node*> heap_; // a min-heap on due; guarded by mutex_
    clock::time_point sleeping_until_ = clock::time_point::min(); // when the thread wakes by itself; guarded
    std::size_t notifies_ = 0;                                      // guarded by mutex_
};

} // namespace crew::detail

#endif
