// The calls the linearizability checker (lincheck.hpp) records on a queue
// policy: tasks that carry an id, one recorder function per queue call, and
// random_call, which picks a call from a source of numbers (a seeded
// std::minstd_rand in test/unit/linearizability.cpp, the fuzzer's bytes in
// test/fuzz/queue_history.cpp).
#ifndef CREW_TEST_COMMON_LINCHECK_CALLS_HPP
#define CREW_TEST_COMMON_LINCHECK_CALLS_HPP

#include <crew/task.hpp>
#include <crew/wait_status.hpp>

#include "lincheck.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace crew_test_common::lincheck_calls {

namespace lc = crew_test_common::lincheck;
using lc::kind;
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A task that carries its id where a remove_if predicate can read it from a
// const task: the queue policies never look at queued_at (the pool does).
struct tagged {
    int id;
    void operator()() const noexcept {}
    steady::time_point queued_at() const noexcept { return steady::time_point(steady::duration(id)); }
};

inline int id_of(const crew::task& t) { return static_cast<int>(t.queued_at().time_since_epoch().count()); }

inline crew::task make_task(int id, int priority = 0) {
    if (priority != 0) return crew::task(crew::with_priority(priority, tagged{id}));
    return crew::task(tagged{id});
}

// ---- the calls, recorded -------------------------------------------------

inline lc::op offer_op(int id, int key = 0) {
    lc::op o;
    o.what = kind::offer;
    o.id = id;
    o.key = key;
    return o;
}
inline lc::op plain(kind k) {
    lc::op o;
    o.what = k;
    return o;
}
inline lc::op removal_op(int modulus, int residue) {
    lc::op o;
    o.what = kind::remove_if;
    o.modulus = modulus;
    o.residue = residue;
    return o;
}

template <class Q>
void record_offer(lc::recorder& rec, int thread, Q& q, int id, int priority = 0) {
    rec.record(thread, offer_op(id, priority), [&](lc::op& o) { o.ok = q.offer(make_task(id, priority)); });
}
template <class Q>
void record_poll(lc::recorder& rec, int thread, Q& q) {
    rec.record(thread, plain(kind::poll), [&](lc::op& o) {
        crew::task t;
        o.id = q.poll(t) ? id_of(t) : -1;
    });
}
template <class Q>
void record_drain(lc::recorder& rec, int thread, Q& q) {
    rec.record(thread, plain(kind::drain), [&](lc::op& o) {
        for (const crew::task& t : q.drain()) o.ids.push_back(id_of(t));
    });
}
// remove_if of the ids with id % modulus == residue; `inside` runs in the
// predicate's first call, while the queue has the tasks in hand.
template <class Q, class Inside>
void record_remove_if(lc::recorder& rec, int thread, Q& q, int modulus, int residue, Inside inside) {
    rec.record(thread, removal_op(modulus, residue), [&](lc::op& o) {
        bool first = true;
        o.count = q.remove_if([&](const crew::task& t) {
            if (std::exchange(first, false)) inside();
            const int id = id_of(t);
            const bool match = id % modulus == residue;
            if (match) o.ids.push_back(id);
            return match;
        });
        std::sort(o.ids.begin(), o.ids.end()); // a predicate may be asked twice
        o.ids.erase(std::unique(o.ids.begin(), o.ids.end()), o.ids.end());
    });
}
template <class Q>
void record_remove_if(lc::recorder& rec, int thread, Q& q, int modulus, int residue) {
    record_remove_if(rec, thread, q, modulus, residue, [] {});
}

// ---- random rounds ---------------------------------------------------------

struct workload {
    int threads = 3;
    int calls = 8; // per thread
    bool puts = false;       // put_until with a short deadline
    bool extracts = false;   // detail::segment_queue::extract_if
    bool priorities = false; // with_priority 0..2
    bool schedules = false;  // delayed_queue::schedule, due already or never
    bool due_now = true;     // with schedules: offers (due now)
    bool due_past = true;    // with schedules: tasks already due
    bool waits = false;      // synchronous_queue: poll_until as a waiting consumer
};

template <class Q, class Choose>
void random_call(lc::recorder& rec, int thread, Q& q, const workload& w, Choose& rng, int id, bool may_close,
                 steady::time_point due_base) { // due_base: 1 s ago
    const unsigned r = rng() % 100;
    const crew::interrupt_flag never{false};
    if (r < 38) {
        if constexpr (requires { q.schedule(crew::task(), steady::time_point(), nullptr, false); }) {
            // r % 3: 0 offered (due now), 1 scheduled already due, 2 never due.
            const unsigned which = !w.due_now && r % 3 == 0 ? 1 : !w.due_past && r % 3 == 1 ? 0 : r % 3;
            if (w.schedules && which != 0) {
                const bool due = which == 1;
                const int key = due ? static_cast<int>(rng() % 3) : lc::due_never;
                // One time for every task never due: FIFO among them, as the spec says.
                const steady::time_point when = due ? due_base + std::chrono::microseconds(key) : due_base + 2h;
                rec.record(thread, offer_op(id, key), [&](lc::op& o) { o.ok = q.schedule(make_task(id), when, nullptr, false); });
                return;
            }
            rec.record(thread, offer_op(id, lc::due_now), [&](lc::op& o) { o.ok = q.offer(make_task(id)); });
            return;
        }
        if (w.puts && r % 3 == 0) {
            rec.record(thread, offer_op(id), [&](lc::op& o) { o.ok = q.put_until(make_task(id), steady::now() + 50us); });
            return;
        }
        record_offer(rec, thread, q, id, w.priorities ? static_cast<int>(rng() % 3) : 0);
    } else if (r < 58) {
        record_poll(rec, thread, q);
    } else if (r < 70) {
        // Timed out: empty at some moment of the call. For a hand-off, the
        // consumer counts as waiting, and an offer may hand it a task.
        rec.record(thread, plain(w.waits ? kind::wait : kind::poll), [&](lc::op& o) {
            crew::task t;
            const auto wait = w.waits ? 300us : 30us;
            o.id = q.poll_until(t, steady::now() + wait, never) == crew::wait_status::taken ? id_of(t) : -1;
        });
    } else if (r < 80) {
        rec.record(thread, plain(kind::size), [&](lc::op& o) { o.count = q.size(); });
    } else if (r < 90) {
        const int residue = static_cast<int>(rng() % 3);
        if constexpr (requires { q.extract_if([](const crew::task&) { return true; }); }) {
            if (w.extracts && r % 2 == 0) {
                rec.record(thread, removal_op(3, residue), [&](lc::op& o) {
                    for (const crew::task& t : q.extract_if([&](const crew::task& t) { return id_of(t) % 3 == residue; }))
                        o.ids.push_back(id_of(t));
                    o.count = o.ids.size();
                });
                return;
            }
        }
        record_remove_if(rec, thread, q, 3, residue);
    } else if (r < 95) {
        record_drain(rec, thread, q);
    } else if (may_close) {
        rec.record(thread, plain(kind::close), [&](lc::op&) { q.close(); });
    } else {
        record_poll(rec, thread, q);
    }
}

} // namespace crew_test_common::lincheck_calls

#endif
