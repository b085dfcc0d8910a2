// Recipe: hedged requests (doc/recipes.md).
//
// A request goes to a primary replica. If it has not answered within the
// hedge delay, the same request goes to a backup replica too; crew::when_any
// says which answers first, that answer is taken and the other request is
// cancelled with cancel(true). No thread blocks on the slower replica. Each
// replica is a pool of its own here; two submissions to one pool work the
// same way. The primary hangs on key 1 and answers the others at once.
#include <crew/crew.hpp>
#include <crew/when_any.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

namespace {

// CREW_TEST_TIME_FACTOR (set by the sanitizer builds) stretches the hedge delay.
double time_factor() {
    const char* text = std::getenv("CREW_TEST_TIME_FACTOR");
    const double factor = text ? std::atof(text) : 1.0;
    return factor > 1.0 ? factor : 1.0;
}

struct replica {
    replica(const char* n, bool hangs) : name(n), hangs_on_key_1(hangs) {}

    const char* name;
    bool hangs_on_key_1;
    std::mutex mutex;
    std::condition_variable_any never;
    std::atomic<int> hung{0}, stopped{0};
    crew::fixed_pool pool{2}; // last: destroyed first, while what its tasks use still lives

    crew::future<std::string> ask(int key) {
        return pool.submit([this, key](std::stop_token stop) {
            if (hangs_on_key_1 && key == 1) {
                ++hung;
                std::unique_lock lock(mutex);
                never.wait(lock, stop, [] { return false; }); // until cancel(true)
                ++stopped;
            }
            return "value " + std::to_string(key) + " from " + name;
        });
    }
};

// The first answer of primary and backup, asking the backup only if the
// primary is slow.
std::string hedged(replica& primary, replica& backup, int key, std::chrono::duration<double, std::milli> delay) {
    crew::future<std::string> first = primary.ask(key);
    if (first.wait_for(delay) == std::future_status::ready) return first.get();

    std::vector<crew::future<std::string>> both;
    both.push_back(std::move(first));
    both.push_back(backup.ask(key));
    auto done = crew::when_any(std::move(both)).get(); // never throws: the inputs come back
    crew::future<std::string>& winner = done.futures[done.index];
    crew::future<std::string>& other = done.futures[1 - done.index];
    try {
        std::string answer = winner.get();
        other.cancel(true); // its task sees stop requested; a late answer would be discarded anyway
        return answer;
    } catch (...) {
        return other.get(); // the first to finish failed: the other one is the answer
    }
}

} // namespace

int main() {
    replica primary{"primary", true};
    replica backup{"backup", false};
    const auto delay = std::chrono::duration<double, std::milli>(20) * time_factor();

    bool ok = true;
    auto check = [&ok](bool condition, const char* what) {
        std::printf("%-4s %s\n", condition ? "ok" : "FAIL", what);
        ok &= condition;
    };
    const std::string fast = hedged(primary, backup, 0, delay);
    const std::string slow = hedged(primary, backup, 1, delay);
    std::printf("     key 0: %s\n     key 1: %s\n", fast.c_str(), slow.c_str());
    check(fast.rfind("value 0 from ", 0) == 0, "key 0: answered (by the primary, unless the machine is very slow)");
    check(slow == "value 1 from backup", "key 1: the primary hung, the hedge to the backup answered");

    primary.pool.shutdown();
    check(primary.pool.await_termination(std::chrono::seconds(60)), "the primary's pool terminated");
    check(primary.stopped == primary.hung, "the losing request, if it had started, saw stop requested and ended");

    if (!ok) std::puts("FAILED: unexpected result");
    return ok ? 0 : 1;
}
