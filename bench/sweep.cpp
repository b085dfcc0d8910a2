// SWEEP (issue #26): workers × producers. N no-op tasks (default 1,000,000)
// from P producer threads into a pool of T workers, at each point T×P of a
// list, for seven contenders: the textbook pool, moodycamel, Asio's
// thread_pool, a TBB task_arena, crew fixed_pool, crew lockfree_queue<4096>
// + block_policy and crew work_stealing_pool. Each
// run is W1/W2's (common/throughput.hpp: a warm-up pass of N/10, then the
// timed pass, each on a fresh pool) in a forked child with the harness's
// watchdog (--alarm). Repetitions are the outer loop: each visits every point,
// and at each point every contender, the order rotated per repetition, so
// drift spreads over everything.
//
// Per point: each contender's median M tasks/s, and the median over
// repetitions of each crew contender's throughput divided by TBB's and by
// moodycamel's in the same repetition; with --counters, context switches and
// futex calls per million tasks (common/counters.hpp), warm-up included.
// Written to DIR/SWEEP.md and DIR/SWEEP.csv (every run) after every point,
// so a sweep cut short keeps the runs it finished.
//
//   sweep [--points 2x1,4x4,...] [--tasks N] [--budget SECONDS] [--reps N] [--smoke]
//         [--counters] [--only NAME] [--out DIR] [--alarm SECONDS]
//
//   --points LIST     T x P pairs, comma-separated (default below)
//   --tasks N         tasks per timed pass (default 1,000,000; --smoke 20,000)
//   --budget SECONDS  start no repetition that would, at the pace of those
//                     before it, end past SECONDS from the start (the tables
//                     then say how many ran); default: no limit
#include "common/throughput.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using bench::options;
using bench::values;

constexpr const char* default_points = "2x1,4x4,8x8,15x15,16x1,16x4,8x1,8x4,16x16";

struct point {
    int workers;
    int producers;
    std::string label() const { return std::to_string(workers) + "x" + std::to_string(producers); }
};

std::vector<point> parse_points(const std::string& list) {
    std::vector<point> points;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) {
        if (item.empty()) continue;
        const auto x = item.find_first_of("xX");
        char* end = nullptr;
        const long t = x == std::string::npos ? 0 : std::strtol(item.c_str(), &end, 10);
        const bool t_ok = x != std::string::npos && end == item.c_str() + x;
        const long p = t_ok ? std::strtol(item.c_str() + x + 1, &end, 10) : 0;
        if (!t_ok || *end != '\0' || t < 1 || p < 1 || t > 1024 || p > 1024) {
            std::fprintf(stderr, "sweep: bad point '%s' in --points (want WORKERSxPRODUCERS, e.g. 16x4)\n",
                         item.c_str());
            std::exit(2);
        }
        points.push_back({static_cast<int>(t), static_cast<int>(p)});
    }
    if (points.empty()) {
        std::fprintf(stderr, "sweep: --points names no point\n");
        std::exit(2);
    }
    return points;
}

// A contender of the sweep: runs one point (workers, producers, tasks).
struct sweeper {
    std::string name;
    bool is_crew;
    std::function<values(long tasks, int producers, int workers)> run;
};

template <class Pool>
sweeper make(const char* name, bool is_crew) {
    return {name, is_crew, [](long tasks, int producers, int workers) {
                return bench::throughput<Pool>(tasks, producers, workers);
            }};
}

std::vector<sweeper> sweepers(const options& o) {
    std::vector<sweeper> all = {
        make<bench::textbook_pool>("textbook mutex+cv+deque", false),
        make<bench::moodycamel_pool>("moodycamel BlockingConcurrentQueue", false),
        make<bench::asio_pool>("asio thread_pool", false),
        make<bench::tbb_arena_pool>("tbb task_arena", false),
        make<bench::crew_fixed>("crew fixed_pool", true),
        make<bench::crew_lockfree_block>("crew lockfree_queue<4096>+block", true),
        make<bench::crew_work_stealing>("crew work_stealing_pool", true),
    };
    std::vector<sweeper> chosen;
    for (auto& s : all)
        if (o.only.empty() || s.name.find(o.only) != std::string::npos) chosen.push_back(std::move(s));
    return chosen;
}

// Everything measured so far: runs[point][contender] holds one `values` per
// finished repetition (throughput, then the two counts with --counters).
using table = std::vector<std::vector<std::vector<values>>>;

double median_at(const std::vector<values>& reps, std::size_t metric) {
    std::vector<double> xs;
    for (const auto& v : reps) xs.push_back(metric < v.size() ? v[metric] : bench::nan());
    return bench::detail::median_of(std::move(xs));
}

// Median over repetitions of a[r][0] / b[r][0] (throughput over throughput).
double median_ratio(const std::vector<values>& a, const std::vector<values>& b) {
    std::vector<double> ratios;
    for (std::size_t r = 0; r < a.size() && r < b.size(); ++r)
        ratios.push_back(b[r][0] != 0 && !std::isnan(b[r][0]) ? a[r][0] / b[r][0] : bench::nan());
    return bench::detail::median_of(std::move(ratios));
}

struct report {
    const options& o;
    const std::vector<point>& points;
    const std::vector<sweeper>& cs;
    long tasks;
    std::string futex_note;

    // `stopped`: why fewer repetitions than asked, or which point a
    // repetition in progress has reached; empty: none.
    std::string markdown(const table& runs, int reps_done, const std::string& stopped) const {
        using bench::detail::fmt;
        std::ostringstream md;
        md << "### SWEEP: " << tasks << " no-op tasks from P producers into T workers, per point T×P\n\n";
        md << "Machine: " << bench::detail::machine_line() << ". ";
        if (reps_done > 0)
            md << "Median of " << reps_done << " interleaved repetition" << (reps_done == 1 ? "" : "s") << stopped;
        else
            md << "One repetition, unfinished" << stopped;
        md << "; each run a warm-up pass of a tenth of the tasks, then the timed pass, each on a fresh pool, in a "
              "forked child. A ratio is the median over repetitions of the crew contender's throughput divided "
              "by the other's in the same repetition (above 1: crew is faster).\n";
        const auto heading = [&](const std::vector<std::string>& columns) {
            md << "\n| T×P |";
            for (const auto& c : columns) md << " " << c << " |";
            md << "\n|---|";
            for (std::size_t k = 0; k < columns.size(); ++k) md << "---:|";
            md << "\n";
        };
        std::vector<std::string> names;
        for (const auto& c : cs) names.push_back(c.name);

        md << "\n**throughput**, million tasks/s, medians (higher is better)\n";
        heading(names);
        for (std::size_t p = 0; p < points.size(); ++p) {
            md << "| " << points[p].label() << " |";
            for (std::size_t i = 0; i < cs.size(); ++i) md << " " << fmt(median_at(runs[p][i], 0)) << " |";
            md << "\n";
        }

        for (const char* other : {"tbb task_arena", "moodycamel BlockingConcurrentQueue"}) {
            std::size_t b = cs.size();
            for (std::size_t i = 0; i < cs.size(); ++i)
                if (cs[i].name == other) b = i;
            std::vector<std::string> crews;
            for (const auto& c : cs)
                if (c.is_crew) crews.push_back(c.name);
            if (crews.empty()) continue;
            md << "\n**crew / " << other << "**, throughput of each crew contender over " << other
               << "'s, median of per-repetition ratios (above 1: crew is faster" << (b == cs.size() ? "; not run: –" : "")
               << ")\n";
            heading(crews);
            for (std::size_t p = 0; p < points.size(); ++p) {
                md << "| " << points[p].label() << " |";
                for (std::size_t i = 0; i < cs.size(); ++i)
                    if (cs[i].is_crew)
                        md << " " << fmt(b == cs.size() ? bench::nan() : median_ratio(runs[p][i], runs[p][b])) << " |";
                md << "\n";
            }
        }

        if (o.counters) {
            const std::pair<const char*, std::string> counts[] = {
                {"context switches", "getrusage, voluntary + involuntary"}, {"futex calls", futex_note}};
            for (std::size_t k = 0; k < 2; ++k) {
                md << "\n**" << counts[k].first << "**, per million tasks, medians (lower is better; "
                   << counts[k].second << (counts[k].second.rfind("n/a", 0) == 0 ? "" : ", warm-up included")
                   << ")\n";
                heading(names);
                for (std::size_t p = 0; p < points.size(); ++p) {
                    md << "| " << points[p].label() << " |";
                    for (std::size_t i = 0; i < cs.size(); ++i) {
                        const double med = median_at(runs[p][i], 1 + k);
                        md << " " << (std::isnan(med) ? std::string("n/a") : fmt(med)) << " |";
                    }
                    md << "\n";
                }
            }
        }
        return md.str();
    }

    void write(const table& runs, int reps_done, const std::string& stopped) const {
        const std::string md = markdown(runs, reps_done, stopped);
        if (o.out_dir.empty()) return;
        std::ofstream(o.out_dir + "/SWEEP.md") << md;
        std::ofstream csv(o.out_dir + "/SWEEP.csv");
        csv << "workload,point,workers,producers,metric,unit,contender,rep,value\n";
        const char* metric_names[] = {"throughput", "context switches", "futex calls"};
        const char* units[] = {"million tasks/s", "per million tasks", "per million tasks"};
        const std::size_t n_metrics = o.counters ? 3 : 1;
        for (std::size_t p = 0; p < points.size(); ++p)
            for (std::size_t i = 0; i < cs.size(); ++i)
                for (std::size_t r = 0; r < runs[p][i].size(); ++r)
                    for (std::size_t j = 0; j < n_metrics; ++j)
                        csv << "SWEEP," << points[p].label() << "," << points[p].workers << ","
                            << points[p].producers << ",\"" << metric_names[j] << "\",\"" << units[j] << "\",\""
                            << cs[i].name << "\"," << r + 1 << "," << runs[p][i][r][j] << "\n";
    }
};

} // namespace

int main(int argc, char** argv) {
    const options o = bench::parse(
        argc, argv,
        {{"--points", std::string("T x P pairs, comma-separated (default ") + default_points + ")", true},
         {"--tasks", "tasks per timed pass (default 1,000,000; --smoke 20,000)", true},
         {"--budget", "seconds: start no repetition that would end past them (default: no limit)", true}});
    const std::vector<point> points = parse_points(o.value("--points", default_points));
    const long tasks = std::max(1L, std::atol(o.value("--tasks", o.smoke ? "20000" : "1000000").c_str()));
    const double budget = std::atof(o.value("--budget", "0").c_str());
    const std::vector<sweeper> cs = sweepers(o);
    if (cs.empty()) {
        std::fprintf(stderr, "sweep: --only '%s' matches no contender\n", o.only.c_str());
        return 2;
    }

    const std::size_t m = o.counters ? 3 : 1;
    report out{o, points, cs, tasks, {}};
    if (o.counters) {
        const bench::detail::futex_counter probe; // the children will meet the same refusal, if any
        out.futex_note = probe.available() ? "perf_event_open, tracepoint syscalls:sys_enter_futex"
                                           : "n/a: " + probe.why_not();
    }
    std::fprintf(stderr, "SWEEP: %ld no-op tasks, %zu points, %zu contenders, %d repetitions%s%s\n", tasks,
                 points.size(), cs.size(), o.reps, o.smoke ? ", smoke sizes" : "", o.counters ? ", counters" : "");

    table runs(points.size(), std::vector<std::vector<values>>(cs.size()));
    const auto start = bench::clock::now();
    const auto elapsed = [&] { return std::chrono::duration<double>(bench::clock::now() - start).count(); };
    int failures = 0, reps_done = 0;
    std::string stopped;
    for (int rep = 0; rep < o.reps; ++rep) {
        if (budget > 0 && rep > 0 && elapsed() + elapsed() / rep > budget) {
            stopped = " (of " + std::to_string(o.reps) + " asked: the next would have passed the " +
                      bench::detail::fmt(budget) + " s budget)";
            std::fprintf(stderr, "SWEEP: stopping after %d repetition(s), %.1f s: the next would pass --budget %.1f\n",
                         rep, elapsed(), budget);
            break;
        }
        for (std::size_t p = 0; p < points.size(); ++p) {
            const int workers = points[p].workers, producers = points[p].producers;
            for (std::size_t k = 0; k < cs.size(); ++k) {
                const std::size_t i = (k + static_cast<std::size_t>(rep)) % cs.size();
                options run_o = o;
                run_o.rep = rep;
                run_o.contender = cs[i].name;
                const bench::contender c{cs[i].name, cs[i].is_crew, [&, i, workers, producers](const options&) {
                                             return cs[i].run(tasks, producers, workers);
                                         }};
                std::fprintf(stderr, "  rep %d/%d  %-6s %-36s", rep + 1, o.reps, points[p].label().c_str(),
                             cs[i].name.c_str());
                const auto run_start = bench::clock::now();
                values v = bench::detail::run_isolated(c, run_o, m);
                v.resize(m, bench::nan());
                if (std::isnan(v[0])) {
                    std::fprintf(stderr, "  %s at %s: no result\n", cs[i].name.c_str(), points[p].label().c_str());
                    ++failures;
                }
                std::string shown;
                for (double x : v) {
                    shown += ' ';
                    shown += bench::detail::fmt(x);
                }
                std::fprintf(stderr, "%s   (%.1f s)\n", shown.c_str(),
                             std::chrono::duration<double>(bench::clock::now() - run_start).count());
                runs[p][i].push_back(std::move(v));
            }
            // Cut short now (a `timeout`, a lost machine), the files still hold every finished run.
            if (p + 1 < points.size())
                out.write(runs, reps_done,
                          (rep == 0 ? std::string(" (") : " (and repetition " + std::to_string(rep + 1) + " ") +
                              "up to point " + points[p].label() + ", still running)");
        }
        reps_done = rep + 1;
        out.write(runs, reps_done, "");
        std::fprintf(stderr, "SWEEP: repetition %d done, %.1f s in all\n", reps_done, elapsed());
    }
    out.write(runs, reps_done, stopped);
    std::cout << out.markdown(runs, reps_done, stopped) << std::flush;
    std::fprintf(stderr, "SWEEP: %.1f s in all\n", elapsed());
    if (failures) std::fprintf(stderr, "SWEEP: %d run(s) gave no result\n", failures);
    return failures ? 1 : 0;
}
