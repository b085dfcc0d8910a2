// What a run costs the kernel, for `--counters` (bench/run.sh passes it to W1
// and W3): context switches and futex(2) calls per million tasks, measured in
// the forked child around one contender's run, so that each row of a table
// gets its own counts from the same repetitions as its throughput.
//
//   context switches  getrusage(RUSAGE_SELF + RUSAGE_CHILDREN), voluntary plus
//                     involuntary: every thread of the run, even those that
//                     have exited. Needs no privilege. (`perf stat -e
//                     context-switches` run by a user at perf_event_paranoid
//                     2 counts only user mode and reports 0: not used.)
//   futex calls       the syscalls:sys_enter_futex tracepoint through
//                     perf_event_open(2), the counter `perf stat` reads, but
//                     opened in-process so that it follows only this run's
//                     threads (inherit). Needs tracefs readable (usually
//                     root) and perf events allowed (containers' seccomp may
//                     refuse them); otherwise "n/a", and the table says why.
//                     Counting, not sampling: it adds no measurable cost.
//                     (`strace -f -c` would stop every thread at each system
//                     call and change the very contention being measured.)
//
// Tasks are counted by the workloads that know them (bench::count_tasks):
// W1/W2's throughput_pass and bench::round_trip. A run that counted no task
// (the Java peer, which runs in a subprocess) gets "n/a".
#ifndef CREW_BENCH_COUNTERS_HPP
#define CREW_BENCH_COUNTERS_HPP

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#if defined(__linux__) && __has_include(<linux/perf_event.h>)
#include <linux/perf_event.h>
#include <sys/syscall.h>
#define CREW_BENCH_HAVE_PERF_EVENT 1
#else
#define CREW_BENCH_HAVE_PERF_EVENT 0
#endif

namespace bench {

// Tasks this process has run so far (warm-up included: the counters cover
// the whole run). Relaxed: only the totals before and after a run are read.
inline std::atomic<long> tasks_counted{0};
inline void count_tasks(long n) { tasks_counted.fetch_add(n, std::memory_order_relaxed); }

namespace detail {

// futex(2) calls made from now on by this process and the threads and
// processes it starts afterwards. value() is NaN when unavailable.
class futex_counter {
  public:
    futex_counter() {
#if CREW_BENCH_HAVE_PERF_EVENT
        long id = -1;
        for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
            std::ifstream f(std::string(dir) + "/events/syscalls/sys_enter_futex/id");
            if (f >> id) break;
            id = -1;
        }
        if (id < 0) {
            why_ = "cannot read the syscalls:sys_enter_futex tracepoint id in tracefs (not root?)";
            return;
        }
        perf_event_attr attr{};
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_TRACEPOINT;
        attr.config = static_cast<std::uint64_t>(id);
        attr.inherit = 1; // the pool's threads, created after this
        attr.exclude_hv = 1;
        fd_ = open(attr);
        if (fd_ < 0 && (errno == EACCES || errno == EPERM)) {
            // perf_event_paranoid >= 2 refuses kernel-mode counting to users;
            // a syscall-entry tracepoint still fires with the caller's user
            // registers, so it is counted in user mode too.
            attr.exclude_kernel = 1;
            fd_ = open(attr);
        }
        if (fd_ < 0) why_ = std::string("perf_event_open refused: ") + std::strerror(errno);
#else
        why_ = "no perf_event_open on this system";
#endif
    }
    futex_counter(const futex_counter&) = delete;
    futex_counter& operator=(const futex_counter&) = delete;
    ~futex_counter() {
        if (fd_ >= 0) ::close(fd_);
    }

    bool available() const { return fd_ >= 0; }
    const std::string& why_not() const { return why_; }

    double value() const {
        std::uint64_t n = 0;
        if (fd_ < 0 || ::read(fd_, &n, sizeof n) != static_cast<ssize_t>(sizeof n)) return std::nan("");
        return static_cast<double>(n);
    }

  private:
#if CREW_BENCH_HAVE_PERF_EVENT
    static int open(perf_event_attr& attr) {
        return static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
    }
#endif
    int fd_ = -1;
    std::string why_;
};

inline double context_switches() {
    double n = 0;
    for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
        rusage usage{};
        if (::getrusage(who, &usage) != 0) return std::nan("");
        n += static_cast<double>(usage.ru_nvcsw + usage.ru_nivcsw);
    }
    return n;
}

// Counts from construction to per_million_tasks(): {context switches, futex
// calls}, each per million tasks counted meanwhile; NaN where unknown.
class run_counters {
  public:
    run_counters() : tasks_(tasks_counted.load()), switches_(context_switches()), futexes_(futex_.value()) {}
    std::pair<double, double> per_million_tasks() const {
        const double futexes = futex_.value() - futexes_, switches = context_switches() - switches_;
        const long tasks = tasks_counted.load() - tasks_;
        if (tasks <= 0) return {std::nan(""), std::nan("")};
        const double per = 1e6 / static_cast<double>(tasks);
        return {switches * per, futexes * per};
    }

  private:
    futex_counter futex_;
    long tasks_;
    double switches_;
    double futexes_;
};

} // namespace detail
} // namespace bench

#endif
