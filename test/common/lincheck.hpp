// A linearizability checker for the queue policies (Wing & Gong's search,
// with Lowe's memoisation, as in Knossos and Porcupine).
//
// Threads record each call on one queue as an `op`: its invocation and
// response ticks (one shared atomic counter), its arguments and its result.
// check() then looks for a sequential order of the calls that respects real
// time (a call that returned before another began comes first) and in which
// every result is what a `spec` (the sequential queue) would answer. It
// explores the calls that may go next by depth-first search and remembers
// each (calls done, queue state) it has seen, so a 4 x 10 call history is
// checked in milliseconds.
//
// Some calls are not one atomic step in crew, and saying so is part of the
// spec: an offer to a ring claims its place, then publishes it (a poll may
// find "nothing ready" behind a claimed head); lockfree_queue's remove_if
// takes the tasks out one at a time and puts the survivors back one at a
// time; delayed_queue's remove_if does its FIFO, then its heap. Such a call
// is several steps, each placed somewhere inside the call's interval.
#ifndef CREW_TEST_COMMON_LINCHECK_HPP
#define CREW_TEST_COMMON_LINCHECK_HPP

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace crew_test_common::lincheck {

enum class kind : std::uint8_t {
    offer,     // offer, put_until, schedule: `id` (with `key`), accepted or not (`ok`)
    poll,      // poll, poll_until: `id` taken, or -1 (nothing, or timed out)
    wait,      // synchronous_queue's poll_until: counted as a waiting consumer, then `id` or -1
    remove_if, // remove_if/extract_if of the ids with id % modulus == residue: `ids` removed, `count` returned
    drain,     // `ids` returned, in the order returned
    close,
    size,      // `count` returned
};

struct op {
    kind what = kind::poll;
    int thread = 0;
    std::uint64_t call = 0; // ticks of the shared counter, before and after
    std::uint64_t ret = 0;
    int id = -1;
    int key = 0; // offer: priority (priority order) or due rank (due order)
    bool ok = false;
    int modulus = 1, residue = 0;
    std::vector<int> ids;
    std::size_t count = 0;
};

using history = std::vector<op>;

// Due ranks for spec::order::due: scheduled tasks already due have ranks
// below due_now; offered tasks are due now; due_never ones are never taken.
inline constexpr int due_now = 1'000'000;
inline constexpr int due_never = 2'000'000;

struct spec {
    // per_source: FIFO per offering thread, none across them (a
    // work_stealing_queue's injector: one shard per submitting thread); a
    // poll may take the oldest task of any thread.
    enum class order { fifo, priority, due, per_source };
    enum class removal {
        atomic,         // remove_if and drain are one step
        one_by_one,     // lockfree_queue: one at a time out, then one at a time back (or freed)
        fifo_then_heap, // delayed_queue: remove_if does the due-now tasks, then the others
        per_source,     // work_stealing_queue: remove_if and drain do one offering thread's tasks at a
                        // time, atomically each (a shard), in any order
    };
    order ordering = order::fifo;
    std::size_t capacity = std::numeric_limits<std::size_t>::max();
    // A mutex-guarded size() is a linearisable read. Otherwise it may count
    // too many by one per call that overlaps it (a task counted while it
    // moves), and never too few: what segment_queue and lockfree_queue promise.
    bool exact_size = false;
    // Ring queues: an offer claims its place, then publishes; a poll, and
    // nothing else, may come back empty while the head is claimed but not
    // published. remove_if and drain must not pass such a head.
    bool claim_then_publish = false;
    removal removing = removal::atomic;
    bool hand_off = false; // synchronous_queue: an offer succeeds only for a waiting consumer
};

// Records a history: each thread fills its own ops, merged after the join.
class recorder {
  public:
    explicit recorder(int threads, std::size_t ops_per_thread = 16) : logs_(static_cast<std::size_t>(threads)) {
        for (auto& log : logs_) log.reserve(ops_per_thread);
    }
    std::uint64_t tick() noexcept { return clock_.fetch_add(1, std::memory_order_seq_cst); }

    // Calls `f(o)` between the two ticks; `o` gets the arguments before and
    // the result inside `f`.
    template <class F>
    void record(int thread, op o, F f) {
        o.thread = thread;
        o.call = tick();
        f(o);
        o.ret = tick();
        logs_[static_cast<std::size_t>(thread)].push_back(std::move(o));
    }

    history merged() const {
        history h;
        for (const auto& log : logs_) h.insert(h.end(), log.begin(), log.end());
        std::sort(h.begin(), h.end(), [](const op& a, const op& b) { return a.call < b.call; });
        return h;
    }

  private:
    std::atomic<std::uint64_t> clock_{1};
    std::vector<history> logs_;
};

inline const char* name(kind k) {
    switch (k) {
    case kind::offer: return "offer";
    case kind::poll: return "poll";
    case kind::wait: return "wait";
    case kind::remove_if: return "remove_if";
    case kind::drain: return "drain";
    case kind::close: return "close";
    case kind::size: return "size";
    }
    return "?";
}

inline std::string describe(const op& o) {
    std::ostringstream s;
    s << "t" << o.thread << " [" << o.call << ", " << o.ret << "] " << name(o.what);
    switch (o.what) {
    case kind::offer: s << "(" << o.id << ", key " << o.key << ") -> " << (o.ok ? "true" : "false"); break;
    case kind::poll:
    case kind::wait: s << " -> " << o.id; break;
    case kind::remove_if:
    case kind::drain:
        if (o.what == kind::remove_if) s << "(id % " << o.modulus << " == " << o.residue << ") -> " << o.count;
        s << " [";
        for (std::size_t i = 0; i < o.ids.size(); ++i) s << (i ? " " : "") << o.ids[i];
        s << "]";
        break;
    case kind::size: s << " -> " << o.count; break;
    case kind::close: break;
    }
    return s.str();
}

inline std::string describe(const history& h) {
    std::string out;
    for (const op& o : h) out += describe(o) + "\n";
    return out;
}

enum class verdict { linearizable, not_linearizable, gave_up };

class checker {
  public:
    checker(const history& h, const spec& s) : h_(h), s_(s), slack_(h.size(), 0) {
        for (std::size_t i = 0; i < h_.size(); ++i) {
            if (h_[i].what != kind::size) continue;
            for (std::size_t j = 0; j < h_.size(); ++j)
                if (j != i && h_[j].what != kind::size && h_[j].call < h_[i].ret && h_[i].call < h_[j].ret)
                    ++slack_[i];
        }
        for (const op& o : h_)
            if (o.what == kind::offer) {
                keys_.emplace_back(o.id, o.key);
                sources_.emplace_back(o.id, o.thread);
                all_sources_ |= source_bit(o.thread);
            }
        std::sort(keys_.begin(), keys_.end());
        std::sort(sources_.begin(), sources_.end());
    }

    verdict run(std::size_t budget = 2'000'000) {
        budget_ = budget;
        node n;
        n.progress.assign(h_.size(), 0);
        const bool found = search(n);
        if (found) return verdict::linearizable;
        return budget_ == 0 ? verdict::gave_up : verdict::not_linearizable;
    }

    std::size_t explored() const { return seen_.size(); }

  private:
    static constexpr std::uint16_t done = 0xFFFF;

    struct item {
        int id;
        bool published;
    };
    struct state {
        std::vector<item> queued; // arrival order
        bool closed = false;
        int waiting = 0; // hand-off: consumers counted
        // one_by_one removal (lockfree_queue's maintenance mutex: one at a time)
        int holder = -1;
        std::vector<int> held;
        std::size_t processed = 0; // of held
        std::size_t dropped = 0;   // freed, still counted by size() until the call ends
    };
    struct node {
        std::vector<std::uint16_t> progress;
        state st;
    };

    int key_of(int id) const {
        const auto it = std::lower_bound(keys_.begin(), keys_.end(), std::pair<int, int>(id, std::numeric_limits<int>::min()));
        return it != keys_.end() && it->first == id ? it->second : 0;
    }

    // per_source: the thread that offered `id`, as a bit (at most 15 threads).
    static std::uint16_t source_bit(int thread) noexcept { return static_cast<std::uint16_t>(1u << (thread & 15)); }
    std::uint16_t source_of(int id) const {
        const auto it = std::lower_bound(sources_.begin(), sources_.end(), std::pair<int, int>(id, std::numeric_limits<int>::min()));
        return it != sources_.end() && it->first == id ? source_bit(it->second) : 0;
    }
    // per_source: whether queued[i] is the oldest task of its thread.
    bool source_head(const state& st, std::size_t i) const {
        const std::uint16_t src = source_of(st.queued[i].id);
        for (std::size_t j = 0; j < i; ++j)
            if (source_of(st.queued[j].id) == src) return false;
        return true;
    }

    // per_source removal: one step per offering thread, in any order;
    // progress 1 + the threads done. `take(it)`: the step removes it; the
    // step is allowed only if every task of the thread is published and
    // `check(removed ids of the thread, in order)` holds.
    template <class Emit, class Take, class Check>
    void per_source_steps(const state& st, std::uint16_t progress, Emit& emit, Take take, Check check) const {
        const std::uint16_t finished = progress == 0 ? 0 : static_cast<std::uint16_t>(progress - 1u);
        if (finished == all_sources_) {
            emit(state(st), done);
            return;
        }
        for (int t = 0; t < 16; ++t) {
            const std::uint16_t src = source_bit(t);
            if ((all_sources_ & src) == 0 || (finished & src) != 0) continue;
            state next = st;
            next.queued.clear();
            std::vector<int> removed;
            bool ok = true;
            for (const item& it : st.queued) {
                if (source_of(it.id) != src) {
                    next.queued.push_back(it);
                    continue;
                }
                if (!it.published) ok = false; // a shard's removal waits for its claimed cells
                if (take(it.id)) removed.push_back(it.id);
                else next.queued.push_back(it);
            }
            if (!ok || !check(src, removed)) continue;
            emit(std::move(next), static_cast<std::uint16_t>(1u + (finished | src)));
        }
    }

    // The ids of `ids` that `src` offered, in order.
    std::vector<int> of_source(const std::vector<int>& ids, std::uint16_t src) const {
        std::vector<int> out;
        for (const int id : ids)
            if (source_of(id) == src) out.push_back(id);
        return out;
    }

    bool matches(const op& o, int id) const { return ((id % o.modulus) + o.modulus) % o.modulus == o.residue; }

    // The index in queued of the task a poll takes next; -1 if none.
    int best(const state& st) const {
        int b = -1;
        for (std::size_t i = 0; i < st.queued.size(); ++i) {
            const int k = key_of(st.queued[i].id);
            if (s_.ordering == spec::order::fifo) return 0;
            if (s_.ordering == spec::order::due && k == due_never) continue;
            if (b < 0) {
                b = static_cast<int>(i);
                continue;
            }
            const int bk = key_of(st.queued[static_cast<std::size_t>(b)].id);
            if (s_.ordering == spec::order::priority ? k > bk : k < bk) b = static_cast<int>(i);
        }
        return b;
    }

    std::size_t occupied(const state& st) const { return st.queued.size() + st.held.size() - st.processed; }

    bool all_published(const state& st) const {
        return std::all_of(st.queued.begin(), st.queued.end(), [](const item& i) { return i.published; });
    }

    // The order drain returns: arrival order, or by key with arrival order
    // among equals; priority_queue's drain order is unspecified (compared as sets).
    std::vector<int> drain_order(const state& st) const {
        std::vector<item> all = st.queued;
        if (s_.ordering == spec::order::due)
            std::stable_sort(all.begin(), all.end(), [&](const item& a, const item& b) { return key_of(a.id) < key_of(b.id); });
        std::vector<int> ids;
        for (const item& i : all) ids.push_back(i.id);
        return ids;
    }

    static bool same_set(std::vector<int> a, std::vector<int> b) {
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        return a == b;
    }

    // Calls emit(new state, new progress) for each step op i may take now.
    template <class Emit>
    void steps(const state& st, std::size_t i, std::uint16_t progress, Emit emit) const {
        const op& o = h_[i];
        switch (o.what) {
        case kind::offer: {
            if (progress == 1) { // claimed: publish
                state next = st;
                for (item& it : next.queued)
                    if (it.id == o.id) it.published = true;
                emit(std::move(next), done);
                return;
            }
            const bool room = s_.hand_off ? st.waiting > static_cast<int>(st.queued.size()) : occupied(st) < s_.capacity;
            const bool accepts = !st.closed && room;
            if (accepts != o.ok) return;
            if (!accepts) {
                emit(state(st), done);
                return;
            }
            state next = st;
            next.queued.push_back(item{o.id, !s_.claim_then_publish});
            emit(std::move(next), s_.claim_then_publish ? 1 : done);
            return;
        }
        case kind::poll: {
            if (s_.ordering == spec::order::per_source) {
                if (o.id < 0) {
                    // A poll looks at one shard after another, each of which
                    // may show an unpublished head (shards are shared by
                    // threads): "nothing" is no snapshot of the whole queue,
                    // so it is always allowed. Lost tasks show in the drains.
                    emit(state(st), done);
                    return;
                }
                for (std::size_t j = 0; j < st.queued.size(); ++j) {
                    if (st.queued[j].id != o.id) continue;
                    if (!st.queued[j].published || !source_head(st, j)) return;
                    state next = st;
                    next.queued.erase(next.queued.begin() + static_cast<std::ptrdiff_t>(j));
                    emit(std::move(next), done);
                    return;
                }
                return;
            }
            const int b = best(st);
            if (o.id < 0) {
                // Nothing to take, or (rings) the head is claimed and unpublished.
                if (b < 0 || (s_.claim_then_publish && !st.queued[static_cast<std::size_t>(b)].published))
                    emit(state(st), done);
                return;
            }
            if (b < 0 || st.queued[static_cast<std::size_t>(b)].id != o.id || !st.queued[static_cast<std::size_t>(b)].published)
                return;
            state next = st;
            next.queued.erase(next.queued.begin() + b);
            emit(std::move(next), done);
            return;
        }
        case kind::wait: {
            state next = st;
            if (progress == 0) { // counted as waiting
                ++next.waiting;
                emit(std::move(next), 1);
                return;
            }
            // Leaves: with the first handed-off task if there is one, else with nothing.
            --next.waiting;
            if (st.queued.empty() ? o.id >= 0 : o.id != st.queued.front().id) return;
            if (!st.queued.empty()) next.queued.erase(next.queued.begin());
            emit(std::move(next), done);
            return;
        }
        case kind::remove_if: remove_steps(st, i, progress, emit); return;
        case kind::drain: drain_steps(st, i, progress, emit); return;
        case kind::close: {
            state next = st;
            next.closed = true;
            emit(std::move(next), done);
            return;
        }
        case kind::size: {
            const std::size_t n = s_.hand_off ? st.queued.size() : occupied(st) + st.dropped;
            const std::size_t most = std::min(s_.capacity, n + (s_.exact_size ? 0 : slack_[i]));
            if (o.count >= n && o.count <= std::max(n, most)) emit(state(st), done);
            return;
        }
        }
    }

    // A one-by-one removal's first step: op i becomes the holder, if no other is.
    template <class Emit>
    static void start_one_by_one(const state& st, std::size_t i, Emit& emit) {
        if (st.holder >= 0) return;
        state next = st;
        next.holder = static_cast<int>(i);
        emit(std::move(next), 1);
    }

    template <class Emit>
    void remove_steps(const state& st, std::size_t i, std::uint16_t progress, Emit emit) const {
        const op& o = h_[i];
        if (o.count != o.ids.size()) return;
        if (s_.removing == spec::removal::per_source) {
            per_source_steps(
                st, progress, emit, [&](int id) { return matches(o, id); },
                [&](std::uint16_t src, const std::vector<int>& removed) {
                    return same_set(removed, of_source(o.ids, src));
                });
            return;
        }
        if (s_.removing == spec::removal::atomic || s_.removing == spec::removal::fifo_then_heap) {
            // fifo_then_heap: progress 0 does the due-now tasks, 1 + n the rest (n removed so far).
            const bool split = s_.removing == spec::removal::fifo_then_heap;
            if (s_.claim_then_publish && !split && !all_published(st)) return;
            state next;
            next = st;
            next.queued.clear();
            std::size_t removed = progress == 0 ? 0 : progress - 1u;
            for (const item& it : st.queued) {
                const bool in_part = !split || ((key_of(it.id) == due_now) == (progress == 0));
                if (in_part && matches(o, it.id)) {
                    if (std::find(o.ids.begin(), o.ids.end(), it.id) == o.ids.end()) return;
                    if (!it.published) return; // a removal does not pass an unpublished task
                    ++removed;
                } else {
                    next.queued.push_back(it);
                }
            }
            if (split && progress == 0) {
                if (removed > o.ids.size()) return;
                emit(std::move(next), static_cast<std::uint16_t>(1 + removed));
                return;
            }
            if (removed != o.ids.size()) return;
            emit(std::move(next), done);
            return;
        }
        // one_by_one: 0 start; 1 taking out; 2 putting back; then the end.
        if (progress == 0) return start_one_by_one(st, i, emit);
        if (progress == 1) {
            if (!st.queued.empty() && st.queued.front().published) {
                state next = st;
                next.held.push_back(next.queued.front().id);
                next.queued.erase(next.queued.begin());
                emit(std::move(next), 1);
            }
            emit(state(st), 2);
            return;
        }
        state next = st;
        if (st.processed < st.held.size()) {
            const int id = st.held[st.processed];
            if (matches(o, id)) ++next.dropped;
            else next.queued.push_back(item{id, true});
            ++next.processed;
            emit(std::move(next), 2);
            return;
        }
        std::vector<int> removed;
        for (const int id : st.held)
            if (matches(o, id)) removed.push_back(id);
        if (!same_set(removed, o.ids)) return;
        next.holder = -1;
        next.held.clear();
        next.processed = 0;
        next.dropped = 0;
        emit(std::move(next), done);
    }

    template <class Emit>
    void drain_steps(const state& st, std::size_t i, std::uint16_t progress, Emit emit) const {
        const op& o = h_[i];
        if (s_.removing == spec::removal::per_source) {
            per_source_steps(
                st, progress, emit, [](int) { return true; },
                [&](std::uint16_t src, const std::vector<int>& removed) { return removed == of_source(o.ids, src); });
            return;
        }
        if (s_.removing != spec::removal::one_by_one) {
            if (s_.claim_then_publish && !all_published(st)) return;
            const std::vector<int> expected = drain_order(st);
            if (s_.ordering == spec::order::priority ? !same_set(expected, o.ids) : expected != o.ids) return;
            state next = st;
            next.queued.clear();
            emit(std::move(next), done);
            return;
        }
        // one_by_one: progress 0 start, 1 + k after k taken (each leaves at once).
        if (progress == 0) return start_one_by_one(st, i, emit);
        const std::size_t k = progress - 1u;
        if (k < o.ids.size()) {
            if (st.queued.empty() || st.queued.front().id != o.ids[k] || !st.queued.front().published) return;
            state next = st;
            next.queued.erase(next.queued.begin());
            emit(std::move(next), static_cast<std::uint16_t>(progress + 1));
            return;
        }
        if (!st.queued.empty() && st.queued.front().published) return; // it stops only when nothing is ready
        state next = st;
        next.holder = -1;
        emit(std::move(next), done);
    }

    std::string key(const node& n) const {
        std::string k;
        k.reserve(n.progress.size() * 2 + n.st.queued.size() * 4 + 16);
        for (const std::uint16_t p : n.progress) k.append(reinterpret_cast<const char*>(&p), sizeof p);
        auto put = [&](int v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
        put(n.st.closed ? 1 : 0);
        put(n.st.waiting);
        put(n.st.holder);
        put(static_cast<int>(n.st.processed));
        put(static_cast<int>(n.st.dropped));
        put(-1);
        for (const item& it : n.st.queued) put(it.id * 2 + (it.published ? 1 : 0));
        put(-2);
        for (const int id : n.st.held) put(id);
        return k;
    }

    bool search(const node& n) {
        // The earliest response among unfinished calls: a call invoked after
        // it cannot take a step before that call has finished.
        std::uint64_t horizon = std::numeric_limits<std::uint64_t>::max();
        bool all_done = true;
        for (std::size_t i = 0; i < h_.size(); ++i)
            if (n.progress[i] != done) {
                all_done = false;
                horizon = std::min(horizon, h_[i].ret);
            }
        if (all_done) return true;
        if (budget_ == 0) return false;
        if (!seen_.insert(key(n)).second) return false;
        --budget_;
        for (std::size_t i = 0; i < h_.size(); ++i) {
            if (n.progress[i] == done || h_[i].call > horizon) continue;
            bool found = false;
            steps(n.st, i, n.progress[i], [&](state next, std::uint16_t p) {
                if (found) return;
                node child{n.progress, std::move(next)};
                child.progress[i] = p;
                found = search(child);
            });
            if (found) return true;
        }
        return false;
    }

    const history& h_;
    const spec& s_;
    std::vector<std::size_t> slack_;        // size ops: how many calls overlap each
    std::vector<std::pair<int, int>> keys_; // offer id -> key
    std::vector<std::pair<int, int>> sources_; // offer id -> offering thread
    std::uint16_t all_sources_ = 0;            // per_source: every offering thread, as bits
    std::unordered_set<std::string> seen_;
    std::size_t budget_ = 0;
};

// Whether some sequential order of `h`, respecting real time, gives every
// call the result `s` would. gave_up: the search met its node budget first.
inline verdict check(const history& h, const spec& s, std::size_t budget = 2'000'000) {
    checker c(h, s);
    return c.run(budget);
}

} // namespace crew_test_common::lincheck

#endif
