// The LockPolicy guards the pool's bookkeeping (its worker set, statistics
// and the waits of wait_idle and await_termination), not the queue: tasks
// never pass through it. std::mutex is the default; crew::spin_lock spins
// briefly, then parks; any default-constructible Lockable fits, such as this
// one, which counts how often the pool takes it.
#include <crew/crew.hpp>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <vector>

struct counting_mutex {
    static inline std::atomic<long> acquired{0};
    std::mutex mutex;

    void lock() { mutex.lock(); ++acquired; }
    bool try_lock() { return mutex.try_lock() && (++acquired, true); }
    void unlock() { mutex.unlock(); }
};

template <class Lock>
long long sum_to(long long n) { // 1 + 2 + ... + n, in 8 tasks on 4 workers
    crew::basic_executor<crew::unbounded_queue, crew::abort_policy, crew::default_thread_factory, Lock> pool(4);
    std::vector<crew::future<long long>> parts;
    for (long long part = 0; part < 8; ++part)
        parts.push_back(pool.submit([=] {
            long long s = 0;
            for (long long i = part * n / 8 + 1; i <= (part + 1) * n / 8; ++i) s += i;
            return s;
        }));
    long long total = 0;
    for (auto& p : parts) total += p.get();
    return total;
}

int main() {
    const long long n = 1'000'000, expected = n * (n + 1) / 2;
    const long long with_mutex = sum_to<std::mutex>(n);
    const long long with_spin_lock = sum_to<crew::spin_lock>(n);
    const long long with_counting = sum_to<counting_mutex>(n);

    std::printf("sum of 1..%lld with std::mutex:      %lld\n", n, with_mutex);
    std::printf("sum of 1..%lld with crew::spin_lock: %lld\n", n, with_spin_lock);
    std::printf("sum of 1..%lld with counting_mutex:  %lld (the pool took the lock: %s)\n", n, with_counting,
                counting_mutex::acquired > 0 ? "yes" : "no");

    const bool ok = with_mutex == expected && with_spin_lock == expected && with_counting == expected &&
                    counting_mutex::acquired > 0;
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
