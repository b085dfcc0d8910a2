#ifndef CREW_DETAIL_QUEUE_TASK_HEAP_HPP
#define CREW_DETAIL_QUEUE_TASK_HEAP_HPP

#include <crew/task.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace crew::detail {

// Max-heap of tasks on (priority, then arrival): higher priority first, FIFO
// among equals. Unbounded.
class task_heap {
  public:
    // The first allocation's entries: enough that a short burst does not regrow.
    static constexpr std::size_t first_entries = 16;

    bool empty() const noexcept { return entries_.empty(); }
    std::size_t size() const noexcept { return entries_.size(); }

    void push(task&& t) {
        if (entries_.size() == entries_.capacity()) // grow geometrically; may throw, t stays intact
            entries_.reserve(std::max(first_entries, entries_.capacity() * 2));
        entries_.push_back({std::move(t), next_sequence_++});
        std::push_heap(entries_.begin(), entries_.end(), runs_later);
    }

    task pop() noexcept {
        std::pop_heap(entries_.begin(), entries_.end(), runs_later);
        task t = std::move(entries_.back().job);
        entries_.pop_back();
        return t;
    }

    // As task_ring::extract_into.
    template <class Pred>
    void extract_into(Pred pred, std::vector<task>& out) {
        std::vector<char> drop(entries_.size());
        std::size_t dropping = 0;
        for (std::size_t i = 0; i < entries_.size(); ++i) dropping += drop[i] = pred(std::as_const(entries_[i].job)) ? 1 : 0;
        if (dropping == 0) return;
        out.reserve(out.size() + dropping);
        std::size_t kept = 0;
        for (std::size_t i = 0; i < entries_.size(); ++i) {
            if (drop[i]) out.push_back(std::move(entries_[i].job)); // reserved
            else if (kept++ != i) entries_[kept - 1] = std::move(entries_[i]);
        }
        entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(kept), entries_.end());
        std::make_heap(entries_.begin(), entries_.end(), runs_later);
    }

    void drain_into(std::vector<task>& out) {
        out.reserve(out.size() + entries_.size());
        while (!empty()) out.push_back(pop());
    }

  private:
    struct entry {
        task job;
        std::uint64_t sequence;
    };
    // The heap's "less": a runs after b.
    static bool runs_later(const entry& a, const entry& b) noexcept {
        if (a.job.priority() != b.job.priority()) return a.job.priority() < b.job.priority();
        return a.sequence > b.sequence;
    }

    std::vector<entry> entries_;
    std::uint64_t next_sequence_ = 0;
};

} // namespace crew::detail

#endif
