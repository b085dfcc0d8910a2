// Library code that takes "an executor" without being a template: a
// function written once against crew::any_executor accepts every pool,
// whatever its policies, and behaves exactly as that pool does.
#include <crew/crew.hpp>

#include <cstdio>
#include <string>
#include <vector>

// The library function: counts the words of each line, in parallel on
// whatever pool it is given.
std::vector<int> count_words(crew::any_executor ex, const std::vector<std::string>& lines) {
    std::vector<crew::future<int>> counts;
    for (const auto& line : lines)
        counts.push_back(ex.submit([&line] {
            int words = 0;
            bool in_word = false;
            for (char c : line) {
                const bool letter = c != ' ';
                words += letter && !in_word ? 1 : 0;
                in_word = letter;
            }
            return words;
        }));
    std::vector<int> result;
    for (auto& f : counts) result.push_back(f.get());
    return result;
}

int main() {
    const std::vector<std::string> lines = {"the quick brown fox", "jumps over", "the lazy dog", ""};
    const std::vector<int> expected = {4, 2, 3, 0};

    crew::fixed_pool fixed(2);
    crew::scheduled_pool scheduled(1);
    crew::basic_executor<crew::bounded_queue, crew::caller_runs_policy, crew::default_thread_factory, crew::spin_lock>
        bounded(crew::pool_options{.core_pool_size = 1, .queue_capacity = 1});

    bool ok = true;
    const crew::any_executor pools[] = {fixed, scheduled, bounded};
    const char* names[] = {"fixed_pool", "scheduled_pool", "bounded_queue + caller_runs + spin_lock"};
    for (int i = 0; i < 3; ++i) {
        const bool right = count_words(pools[i], lines) == expected;
        std::printf("%-4s count_words on %s\n", right ? "ok" : "FAIL", names[i]);
        ok &= right;
    }

    // The handle is the pool's: shutting down through it shuts the pool down.
    crew::any_executor handle = fixed;
    handle.shutdown();
    const bool closed = fixed.is_shutdown() && handle.await_termination(std::chrono::seconds(10));
    std::printf("%-4s shutdown() through the handle terminated the pool\n", closed ? "ok" : "FAIL");
    ok &= closed;
    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
