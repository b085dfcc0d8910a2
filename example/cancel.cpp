// Cancelling a long computation through its stop token.
//
// submit() a task that takes a std::stop_token; future::cancel(true) asks it
// to stop, and get() then throws crew::cancellation_error. The same token is
// requested by shutdown_now().
#include <crew/crew.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <future>
#include <stop_token>

int main() {
    crew::fixed_pool pool(2);

    // Counts primes until asked to stop; the result is only ever partial.
    auto count_primes = [](std::stop_token token) {
        std::uint64_t primes = 0;
        for (std::uint64_t n = 2; !token.stop_requested(); ++n) {
            bool prime = true;
            for (std::uint64_t d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
            primes += prime;
        }
        return primes;
    };

    auto endless = pool.submit(count_primes);
    if (endless.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout)
        std::puts("still counting after 50 ms: cancelling");
    std::printf("cancel(true) -> %s\n", endless.cancel(true) ? "true" : "false");
    try {
        endless.get();
    } catch (const crew::cancellation_error& e) {
        std::printf("get() threw cancellation_error: %s\n", e.what());
    }

    // The same task under shutdown_now(): the worker's stop request reaches
    // it, it returns what it has, and the pool terminates promptly.
    std::promise<void> started;
    auto second = pool.submit([&](std::stop_token token) {
        started.set_value();
        return count_primes(token);
    });
    started.get_future().wait(); // a task still queued would be handed back instead
    pool.shutdown_now();
    std::printf("after shutdown_now(): %llu primes counted before stopping\n",
                static_cast<unsigned long long>(second.get()));
    std::printf("terminated: %s\n", pool.await_termination(std::chrono::seconds(5)) ? "yes" : "no");
}
