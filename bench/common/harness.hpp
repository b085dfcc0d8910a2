// The benchmark harness shared by the workload programs: command line,
// interleaved repetitions (each run in a forked child, so that no run
// inherits another's threads or heap), the Java peer as a subprocess, and the
// tables (stdout, Markdown, CSV, gnuplot data).
//
// A program describes its metrics and its contenders; run() does the rest.
// With --counters, every run also reports context switches and futex calls
// per million tasks (common/counters.hpp). A program may take flags of its
// own (parse's `extra`, seen in options::flags; one with a value is read by
// options::value) and ask for a note under the title and a summary table of
// medians (run's `extra`). Each run has a watchdog (--alarm SECONDS).
#ifndef CREW_BENCH_HARNESS_HPP
#define CREW_BENCH_HARNESS_HPP

#include "counters.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace bench {

using clock = std::chrono::steady_clock;

struct options {
    int reps = 5;             // repetitions of every contender
    bool smoke = false;       // tiny sizes: proves the program builds and runs
    bool isolate = true;      // each run in a forked child
    std::string out_dir;      // where to write <id>.md/.csv/.dat; empty: nowhere
    std::string java;         // classpath holding CrewPeers.class; empty: no Java peer
    std::string only;         // run only contenders whose name contains this
    bool counters = false;    // also context switches and futex calls per million tasks
    int alarm_s = 0;          // a run still going after this many seconds dies (and fails); 0: 120 smoke, 900 else
    std::vector<std::string> flags; // the program's own flags given (parse's `extra`)
    std::vector<std::pair<std::string, std::string>> flag_values; // those of them that take a value, with it
    int rep = 0;              // set by the harness: the repetition being run
    std::string contender;    // set by the harness: the name of the contender being run

    bool has(const std::string& flag) const { return std::find(flags.begin(), flags.end(), flag) != flags.end(); }
    // The value given to a flag that takes one (the last, if repeated), else `fallback`.
    std::string value(const std::string& flag, const std::string& fallback = {}) const {
        std::string v = fallback;
        for (const auto& [name, given] : flag_values)
            if (name == flag) v = given;
        return v;
    }
};

// A flag of one program's own, with a line of help; `takes_value`: it is
// followed by a value (options::value).
struct flag {
    std::string name;
    std::string help;
    bool takes_value = false;
};

// What run() prints besides one table per metric.
struct report_layout {
    struct column {
        std::size_t metric; // index into the workload's metrics
        std::string label;  // the column's heading; empty: "<metric name>, <unit>"
    };
    std::string note;           // a paragraph under the title (Markdown); empty: none
    std::string summary_title;  // says what the summary's columns are
    std::vector<column> summary; // metrics shown side by side (medians) in one table at the end; empty: none
};

struct metric {
    std::string name;
    std::string unit;
    bool higher_is_better;
};

using values = std::vector<double>; // one per metric, NaN where not applicable

struct contender {
    std::string name;
    bool is_crew;
    std::function<values(const options&)> run;
};

inline double nan() { return std::nan(""); }

// ---- measurement helpers ----------------------------------------------------

inline std::chrono::microseconds process_cpu_time() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return std::chrono::seconds(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           std::chrono::microseconds(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// Resident set size from /proc/self/status, in KiB.
inline long rss_kib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
    return -1;
}

// Pins the whole process (and the forked runs, and Java, which inherit the
// mask) to one CPU, the first it may use: W3 and bench/ab.sh's round trip
// measure the hand-off itself, not two CPUs racing. False where affinity
// cannot be set.
inline bool pin_to_one_cpu() {
#if defined(__linux__)
    cpu_set_t allowed;
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        return ::sched_setaffinity(0, sizeof one, &one) == 0;
    }
#endif
    return false;
}


// q in [0, 1] of sorted samples (nearest rank).
inline double quantile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return nan();
    const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size()))) ;
    return sorted[std::min(sorted.size() - 1, i == 0 ? 0 : i - 1)];
}

// Filename-safe form of a contender's name.
inline std::string slug(const std::string& name) {
    std::string s;
    for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return s;
}

// Waits for a flag set by the last task, without spinning (the producer must
// not take a core from the workers it measures).
class completion {
  public:
    explicit completion(long expected) : left_(expected) {}
    void hit() {
        if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            done_.store(true, std::memory_order_release);
            done_.notify_all();
        }
    }
    void wait() {
        while (!done_.load(std::memory_order_acquire)) done_.wait(false, std::memory_order_acquire);
    }

  private:
    alignas(64) std::atomic<long> left_;
    alignas(64) std::atomic<bool> done_{false};
};

// ---- the Java peer ------------------------------------------------------------

// Runs `java -cp <classpath> CrewPeers <workload> <impl> [--smoke]` and reads
// the line "RESULT v1 v2 ..." it prints.
inline values run_java(const options& o, const std::string& workload, const std::string& impl, std::size_t n) {
    std::string command = "java -Xms256m -cp '" + o.java + "' CrewPeers " + workload + " " + impl;
    if (o.smoke) command += " --smoke";
    if (!o.out_dir.empty() && o.rep == 0) command += " --out '" + o.out_dir + "'";
    command += " 2>&1";
    values v(n, nan());
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) return v;
    char line[4096];
    while (std::fgets(line, sizeof line, pipe)) {
        if (std::strncmp(line, "RESULT", 6) != 0) {
            std::fputs(line, stderr);
            continue;
        }
        std::istringstream in(line + 6);
        for (auto& x : v) {
            std::string word;
            if (!(in >> word)) break;
            x = word == "nan" ? nan() : std::strtod(word.c_str(), nullptr);
        }
    }
    ::pclose(pipe);
    return v;
}

// The Java peer `impl` of CrewPeers: "tpe" (ThreadPoolExecutor) or "stpe"
// (ScheduledThreadPoolExecutor); "stpe-schedule" is the latter measured
// through schedule() where the workload has such a row (W6).
inline contender java_peer(const std::string& workload, const std::string& impl, std::size_t n_metrics) {
    std::string name = impl.rfind("stpe", 0) == 0 ? "java ScheduledThreadPoolExecutor" : "java ThreadPoolExecutor";
    if (impl == "stpe-schedule") name += ", schedule()";
    return {std::move(name), false, [=](const options& o) { return run_java(o, workload, impl, n_metrics); }};
}

// ---- running ---------------------------------------------------------------------

// The common flags, and `extra`: the program's own (each seen in options::flags).
inline options parse(int argc, char** argv, const std::vector<flag>& extra = {}) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--reps") o.reps = std::max(1, std::atoi(next().c_str()));
        else if (a == "--smoke") o.smoke = true;
        else if (a == "--out") o.out_dir = next();
        else if (a == "--java") o.java = next();
        else if (a == "--only") o.only = next();
        else if (a == "--no-isolate") o.isolate = false;
        else if (a == "--counters") o.counters = true;
        else if (a == "--alarm") o.alarm_s = std::max(1, std::atoi(next().c_str()));
        else if (auto f = std::find_if(extra.begin(), extra.end(), [&](const flag& g) { return g.name == a; });
                 f != extra.end()) {
            o.flags.push_back(a);
            if (f->takes_value) o.flag_values.emplace_back(a, next());
        } else {
            std::string own;
            for (const auto& f : extra) own += " [" + f.name + (f.takes_value ? " VALUE]" : "]");
            std::fprintf(stderr,
                         "usage: %s [--reps N] [--smoke] [--out DIR] [--java CLASSPATH] [--only NAME] "
                         "[--no-isolate] [--counters] [--alarm SECONDS]%s\n",
                         argv[0], own.c_str());
            for (const auto& f : extra) std::fprintf(stderr, "  %-14s %s\n", f.name.c_str(), f.help.c_str());
            std::exit(a == "--help" ? 0 : 2);
        }
    }
    if (o.smoke && o.reps == 5) o.reps = 1;
    return o;
}

namespace detail {

// c.run(o), resized to the workload's `n_metrics`, then with --counters the
// two counts (common/counters.hpp), NaN if the run gave nothing.
inline values run_counted(const contender& c, const options& o, std::size_t n_metrics) {
    if (!o.counters) return c.run(o);
    const run_counters counters;
    values v = c.run(o);
    const bool ran = std::any_of(v.begin(), v.end(), [](double x) { return !std::isnan(x); });
    const auto [switches, futexes] = counters.per_million_tasks();
    v.resize(n_metrics, nan());
    v.push_back(ran ? switches : nan());
    v.push_back(ran ? futexes : nan());
    return v;
}

inline values run_isolated(const contender& c, const options& o, std::size_t n_metrics) {
    const std::size_t workload_metrics = o.counters ? n_metrics - 2 : n_metrics;
    if (!o.isolate) return run_counted(c, o, workload_metrics);
    std::fflush(nullptr);
    int fds[2];
    if (::pipe(fds) != 0) return values(n_metrics, nan());
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        // A hung run dies and counts as failed.
        ::alarm(static_cast<unsigned>(o.alarm_s > 0 ? o.alarm_s : o.smoke ? 120 : 900));
        values v;
        try {
            v = run_counted(c, o, workload_metrics);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: %s\n", c.name.c_str(), e.what());
        }
        std::string text;
        for (double x : v) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.17g ", x);
            text += buf;
        }
        (void)!::write(fds[1], text.data(), text.size());
        ::close(fds[1]);
        std::fflush(nullptr);
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string text;
    char buf[512];
    for (ssize_t k; (k = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(k));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    values v(n_metrics, nan());
    std::istringstream in(text);
    for (auto& x : v) {
        std::string word;
        if (!(in >> word)) break;
        x = std::strtod(word.c_str(), nullptr);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        std::fprintf(stderr, "%s: run failed (status %d)\n", c.name.c_str(), status);
    return v;
}

inline double median_of(std::vector<double> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
    if (v.empty()) return nan();
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline std::string fmt(double x) {
    if (std::isnan(x)) return "–";
    char buf[64];
    const double a = std::fabs(x);
    if (a != 0 && (a >= 1e6 || a < 1e-3)) std::snprintf(buf, sizeof buf, "%.3g", x);
    else if (a >= 100) std::snprintf(buf, sizeof buf, "%.0f", x);
    else if (a >= 10) std::snprintf(buf, sizeof buf, "%.1f", x);
    else std::snprintf(buf, sizeof buf, "%.2f", x);
    return buf;
}

inline std::string machine_line() {
    std::string model = "unknown CPU";
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
        if (line.rfind("model name", 0) == 0) {
            model = line.substr(line.find(':') + 2);
            break;
        }
    return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
}

} // namespace detail

// Runs every contender `o.reps` times, interleaved (the order rotates each
// repetition), and prints and writes the tables (`layout`: a note under the
// title, a summary of medians at the end). Returns 1 if some run gave no
// result at all (it crashed, hung past its alarm, or threw).
inline int run(const std::string& id, const std::string& title, const std::vector<metric>& workload_metrics,
               std::vector<contender> all, const options& opts, const report_layout& layout = {}) {
    std::vector<contender> cs;
    for (auto& c : all)
        if (opts.only.empty() || c.name.find(opts.only) != std::string::npos) cs.push_back(std::move(c));
    // The workload's own metrics come first; --counters appends two.
    const std::size_t m0 = workload_metrics.size();
    std::vector<metric> metrics = workload_metrics;
    std::string futex_note;
    if (opts.counters) {
        metrics.push_back({"context switches", "per million tasks", false});
        metrics.push_back({"futex calls", "per million tasks", false});
        const detail::futex_counter probe; // the children will meet the same refusal, if any
        futex_note = probe.available() ? "perf_event_open, tracepoint syscalls:sys_enter_futex"
                                       : "n/a: " + probe.why_not();
    }
    const std::size_t m = metrics.size();
    // results[c][rep][metric]
    std::vector<std::vector<values>> results(cs.size(), std::vector<values>(static_cast<std::size_t>(opts.reps)));

    int failures = 0;
    std::fprintf(stderr, "%s: %s (%d repetitions%s)\n", id.c_str(), title.c_str(), opts.reps,
                 opts.smoke ? ", smoke sizes" : "");
    for (int rep = 0; rep < opts.reps; ++rep) {
        for (std::size_t k = 0; k < cs.size(); ++k) {
            const std::size_t i = (k + static_cast<std::size_t>(rep)) % cs.size();
            options o = opts;
            o.rep = rep;
            o.contender = cs[i].name;
            std::fprintf(stderr, "  rep %d/%d  %-42s", rep + 1, opts.reps, cs[i].name.c_str());
            const auto start = clock::now();
            values v = detail::run_isolated(cs[i], o, m);
            v.resize(m, nan());
            const auto own_end = v.begin() + static_cast<std::ptrdiff_t>(m0); // the counters alone are no result
            if (std::all_of(v.begin(), own_end, [](double x) { return std::isnan(x); })) {
                std::fprintf(stderr, "  %s: no result\n", cs[i].name.c_str());
                ++failures;
            }
            results[i][static_cast<std::size_t>(rep)] = v;
            std::string shown;
            for (std::size_t j = 0; j < m; ++j) {
                shown += ' ';
                shown += detail::fmt(v[j]);
            }
            std::fprintf(stderr, "%s   (%.1f s)\n", shown.c_str(),
                         std::chrono::duration<double>(clock::now() - start).count());
        }
    }

    std::ostringstream md;
    md << "### " << id << ": " << title << "\n\n";
    md << "Median of " << opts.reps << " interleaved repetition" << (opts.reps > 1 ? "s" : "")
       << " [min–max]. A ratio column `crew X / it` is the median over repetitions of crew X's value divided by "
          "this row's value in the same repetition.\n";
    if (!layout.note.empty()) md << "\n" << layout.note << "\n";
    std::vector<std::size_t> crews;
    for (std::size_t i = 0; i < cs.size(); ++i)
        if (cs[i].is_crew) crews.push_back(i);

    std::ofstream csv, dat;
    if (!opts.out_dir.empty()) {
        csv.open(opts.out_dir + "/" + id + ".csv");
        csv << "workload,metric,unit,contender,rep,value\n";
        dat.open(opts.out_dir + "/" + id + ".dat");
    }
    for (std::size_t j = 0; j < m; ++j) {
        md << "\n**" << metrics[j].name << "**, " << metrics[j].unit << " ("
           << (metrics[j].higher_is_better ? "higher" : "lower") << " is better";
        if (j == m0) md << "; getrusage, voluntary + involuntary, warm-up included";
        if (j == m0 + 1) md << "; " << futex_note << ", warm-up included";
        md << ")\n\n";
        md << "| contender | median | min–max |";
        for (std::size_t c : crews) md << " " << cs[c].name << " / it |";
        md << "\n|---|---:|---:|";
        for (std::size_t k = 0; k < crews.size(); ++k) md << "---:|";
        md << "\n";
        if (dat.is_open()) dat << "# metric " << j << ": " << metrics[j].name << " [" << metrics[j].unit << "]\n";
        for (std::size_t i = 0; i < cs.size(); ++i) {
            std::vector<double> xs;
            for (const auto& v : results[i]) xs.push_back(v[j]);
            std::vector<double> finite;
            for (double x : xs)
                if (!std::isnan(x)) finite.push_back(x);
            if (finite.empty()) {
                // A counter the system refused, or a run that counted no task
                // (the Java peer): say so rather than drop the row.
                if (j >= m0) {
                    md << "| " << cs[i].name << " | n/a | n/a |";
                    for (std::size_t k = 0; k < crews.size(); ++k) md << " n/a |";
                    md << "\n";
                }
                continue;
            }
            const double med = detail::median_of(xs);
            const auto [lo, hi] = std::minmax_element(finite.begin(), finite.end());
            md << "| " << cs[i].name << " | " << detail::fmt(med) << " | " << detail::fmt(*lo) << "–"
               << detail::fmt(*hi) << " |";
            for (std::size_t c : crews) {
                std::vector<double> ratios;
                for (std::size_t r = 0; r < results[i].size(); ++r) {
                    const double a = results[c][r][j], b = results[i][r][j];
                    ratios.push_back(b != 0 ? a / b : nan());
                }
                md << " " << detail::fmt(detail::median_of(ratios)) << " |";
            }
            md << "\n";
            if (dat.is_open())
                dat << '"' << cs[i].name << "\" " << med << " " << *lo << " " << *hi << " " << (cs[i].is_crew ? 1 : 0)
                    << "\n";
            if (csv.is_open())
                for (std::size_t r = 0; r < xs.size(); ++r)
                    csv << id << ",\"" << metrics[j].name << "\",\"" << metrics[j].unit << "\",\"" << cs[i].name
                        << "\"," << r + 1 << "," << xs[r] << "\n";
        }
        if (dat.is_open()) dat << "\n\n";
    }
    if (opts.counters) {
        // The workload's first metric and the two counts side by side (medians).
        md << "\n**" << workload_metrics[0].name << " and its cost**, medians (n/a: not available)\n\n";
        md << "| contender | " << workload_metrics[0].name << ", " << workload_metrics[0].unit
           << " | context switches / M tasks | futex calls / M tasks |\n|---|---:|---:|---:|\n";
        for (std::size_t i = 0; i < cs.size(); ++i) {
            md << "| " << cs[i].name << " |";
            for (std::size_t j : {std::size_t{0}, m0, m0 + 1}) {
                std::vector<double> xs;
                for (const auto& v : results[i]) xs.push_back(v[j]);
                const double med = detail::median_of(xs);
                md << " " << (std::isnan(med) ? std::string("n/a") : detail::fmt(med)) << " |";
            }
            md << "\n";
        }
    }
    if (!layout.summary.empty()) {
        // Chosen metrics side by side, medians only: the run at a glance.
        md << "\n**Summary**, medians" << (layout.summary_title.empty() ? "" : ": ") << layout.summary_title
           << " (–: not measured)\n\n| contender |";
        for (const auto& c : layout.summary)
            md << " " << (c.label.empty() ? metrics[c.metric].name + ", " + metrics[c.metric].unit : c.label) << " |";
        md << "\n|---|";
        for (std::size_t k = 0; k < layout.summary.size(); ++k) md << "---:|";
        md << "\n";
        for (std::size_t i = 0; i < cs.size(); ++i) {
            md << "| " << cs[i].name << " |";
            for (const auto& c : layout.summary) {
                const std::size_t j = c.metric;
                std::vector<double> xs;
                for (const auto& v : results[i]) xs.push_back(j < v.size() ? v[j] : nan());
                md << " " << detail::fmt(detail::median_of(xs)) << " |";
            }
            md << "\n";
        }
    }
    std::cout << md.str() << std::flush;
    if (!opts.out_dir.empty()) std::ofstream(opts.out_dir + "/" + id + ".md") << md.str();
    if (failures) std::fprintf(stderr, "%s: %d run(s) gave no result\n", id.c_str(), failures);
    return failures ? 1 : 0;
}

} // namespace bench

#endif
