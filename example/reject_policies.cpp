// What each RejectPolicy does with a task the pool refuses. Every pool here
// is saturated: one worker (busy until its gate opens) and a queue of one,
// already taken.
#include <crew/crew.hpp>

#include <atomic>
#include <cstdio>
#include <latch>
#include <thread>

template <class Policy>
struct saturated {
    std::latch gate{1}; // declared first: it must outlive the pool's worker
    crew::basic_executor<crew::bounded_queue, Policy> pool{crew::pool_options{.core_pool_size = 1, .queue_capacity = 1}};
    crew::future<int> queued;

    saturated() {
        pool.execute([this] { gate.wait(); });
        queued = pool.submit([] { return 1; });
    }
    ~saturated() {
        if (!gate.try_wait()) gate.count_down(); // let the worker go, if not done yet
    }
};

template <class F>
bool throws_rejected(F&& f) {
    try {
        f();
    } catch (const crew::rejected_execution_error&) {
        return true;
    }
    return false;
}

int main() {
    bool ok = true;
    {
        saturated<crew::abort_policy> s;
        ok &= throws_rejected([&] { s.pool.execute([] {}); });
        std::puts("abort_policy:          execute() threw rejected_execution_error");
    }
    {
        saturated<crew::caller_runs_policy> s;
        std::thread::id ran_on;
        s.pool.execute([&ran_on] { ran_on = std::this_thread::get_id(); });
        ok &= ran_on == std::this_thread::get_id();
        std::puts("caller_runs_policy:    the task ran at once, on the submitting thread");
    }
    {
        saturated<crew::discard_policy> s;
        auto dropped = s.pool.submit([] { return 2; });
        ok &= throws_rejected([&] { dropped.get(); });
        std::puts("discard_policy:        dropped; its future's get() threw rejected_execution_error");
    }
    {
        saturated<crew::discard_oldest_policy> s;
        auto newest = s.pool.submit([] { return 2; }); // takes the queued task's place
        s.gate.count_down();
        ok &= throws_rejected([&] { s.queued.get(); }) && newest.get() == 2;
        std::puts("discard_oldest_policy: the oldest queued task was dropped, the new one ran");
    }
    {
        saturated<crew::block_policy> s;
        std::atomic<bool> opened{false}, opened_before_return{false};
        std::thread producer([&] {
            s.pool.execute([] {}); // waits for room in the queue
            opened_before_return = opened.load();
        });
        opened = true;
        s.gate.count_down(); // the worker moves on, the queue makes room
        producer.join();
        ok &= opened_before_return.load();
        std::puts("block_policy:          execute() waited until the queue had room");
    }
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
