#!/usr/bin/env bash
# Runs crew's benchmark suite: installs the Debian packages the peers need
# (when missing), builds bench/ in Release, runs the six workloads with crew
# and its peers interleaved, and writes tables and plots. W1 and W3 also
# report context switches and futex calls per million tasks (n/a where the
# system refuses to count them; see bench/common/counters.hpp). W4 also
# reports the cost of one schedule() call and the lateness of the tasks due
# during the scheduling burst and after it; W6 has schedule() rows beside the
# execute() rows.
#
# LEADER runs bench/leader_wakeups.cpp: crew::delayed_queue's wake-up counts
# (per task, idle per grace period, for one task due later), crew alone: the
# counts the unit tests no longer assert (they depend on the machine's load).
#
# SWEEP (issue #26; only with --only, never in the default suite) runs
# bench/sweep.cpp: 1,000,000 no-op tasks from P producers into T workers at
# each point TxP (default 2x1,4x4,8x8,15x15,16x1,16x4,8x1,8x4,16x16; --points
# to choose), for the textbook pool, moodycamel, Asio, a TBB arena and crew's
# fixed_pool, lockfree_queue and work_stealing_pool, always with the counters:
# M tasks/s, crew / TBB and crew / moodycamel, context switches and futex calls
# per million tasks. Its 2x1 and 16x1 points are W1 at T = 2 and T = 16 (16
# workers on 2 CPUs: a wake storm). On 2 cores its 16-worker points are slow
# (seconds per run): roughly 1 min per repetition (estimated from smoke runs).
#
#   bash bench/run.sh                 # the full suite: 5 repetitions (~25 min on 2 cores)
#   bash bench/run.sh --smoke         # tiny sizes, 1 repetition: builds and runs everything (~1 min)
#   bash bench/run.sh --reps 7 --only W1,W3
#   bash bench/run.sh --only W4 --slack-sweep   # crew scheduled_pool's timer slack: default (10 us), 1, 5, 50 us, 0 (system's)
#   bash bench/run.sh --publish       # also copy the tables and plots into doc/
#   bash bench/run.sh --micro         # the Google Benchmark microbenchmarks instead (~3 min)
#   bash bench/run.sh --only SWEEP --reps 3                    # the workers x producers sweep
#   bash bench/run.sh --only SWEEP --points 2x1,16x1 --reps 5  # W1's counts at T = 2 and T = 16
#
# Options:
#   --smoke        tiny sizes (CI: proves the programs still build and run)
#   --reps N       repetitions of every contender (default 5; smoke: 1)
#   --only LIST    comma-separated workloads (W1..W6, LEADER, SWEEP)
#   --points LIST  SWEEP's points, WORKERSxPRODUCERS, comma-separated (e.g. 2x1,16x1)
#   --out DIR      results directory (default build/bench/results, smoke: build/bench/smoke)
#   --build DIR    build directory (default build/bench)
#   --no-install   never call apt-get; fail if a package is missing
#   --no-java      leave out the Java peer
#   --slack-sweep  W4 runs crew scheduled_pool with pool_options::timer_slack
#                  at its default (10 us), 1, 5, 50 us and 0 (the system's)
#                  instead of its usual crew contenders; the peers stay (W4's
#                  tables then say "timer-slack sweep" in their title;
#                  not with --publish)
#   --publish      write the tables into doc/benchmarks.md (between the
#                  "results" markers) and the plots into doc/img/
#   --micro        run the microbenchmarks (bench/micro_*.cpp, built when
#                  libbenchmark-dev is installed) instead of the workloads
#                  (--only does not apply); with --reps N > 1, N repetitions
#                  in random order, then the medians sorted by name
#   --micro-args A extra Google Benchmark flags for --micro, one string
#                  (e.g. '--benchmark_filter=handoff --benchmark_min_time=2')
#
# Results: DIR/W<n>.md (tables), DIR/W<n>.csv (every repetition), DIR/SWEEP.md and .csv,
# DIR/W<n>.dat (gnuplot data), DIR/results.md (all tables with the machine),
# DIR/throughput.png and DIR/lateness.png; DIR/micro_*.txt and .json.
# --smoke also runs each microbenchmark once, briefly, if they were built.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build/bench"
out=""
smoke=0
reps=""
only="W1,W2,W3,W4,W5,W6,LEADER"
install=1
java=1
publish=0
micro=0
micro_args=""
slack_sweep=0
points=""

while [[ $# -gt 0 ]]; do
    case "$1" in
        --smoke) smoke=1 ;;
        --reps) reps="$2"; shift ;;
        --only) only="$2"; shift ;;
        --points) points="$2"; shift ;;
        --out) out="$2"; shift ;;
        --build) build="$2"; shift ;;
        --no-install) install=0 ;;
        --no-java) java=0 ;;
        --slack-sweep) slack_sweep=1 ;;
        --publish) publish=1 ;;
        --micro) micro=1 ;;
        --micro-args) micro_args="$2"; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if [[ $slack_sweep == 1 && $publish == 1 ]]; then
    echo "run.sh: --slack-sweep does not go with --publish (doc/benchmarks.md's W4 is the usual contenders)" >&2
    exit 2
fi
workloads=(W1 W2 W3 W4 W5 W6 LEADER SWEEP)
IFS=, read -r -a asked <<< "$only"
for w in "${asked[@]}"; do
    [[ " ${workloads[*]} " == *" $w "* ]] || { echo "run.sh: unknown workload '$w' in --only (${workloads[*]})" >&2; exit 2; }
done
if [[ -n "$points" && ",$only," != *",SWEEP,"* ]]; then
    echo "run.sh: --points is SWEEP's: add SWEEP to --only" >&2
    exit 2
fi
if [[ -n "$points" && ! "$points" =~ ^[0-9]+[xX][0-9]+(,[0-9]+[xX][0-9]+)*$ ]]; then
    echo "run.sh: --points wants WORKERSxPRODUCERS pairs, comma-separated, no spaces (e.g. 2x1,16x1)" >&2
    exit 2
fi
if [[ -z "$out" ]]; then
    if [[ $smoke == 1 ]]; then out="$build/smoke"; else out="$build/results"; fi
fi
if [[ -z "$reps" ]]; then
    if [[ $smoke == 1 ]]; then reps=1; else reps=5; fi
fi

# ---- packages -----------------------------------------------------------------
packages=(cmake g++ libboost-dev libboost-thread-dev libboost-chrono-dev libtbb-dev libconcurrentqueue-dev gnuplot-nox)
if [[ $java == 1 ]] && ! command -v javac >/dev/null 2>&1; then packages+=(default-jdk-headless); fi
# Optional: without it the microbenchmarks are not built, nothing else changes.
optional_packages=(libbenchmark-dev)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done
missing_optional=()
for p in "${optional_packages[@]}"; do
    installed "$p" || missing_optional+=("$p")
done
if [[ ${#missing[@]} -gt 0 && $install == 0 ]]; then
    echo "run.sh: missing packages: ${missing[*]}" >&2
    exit 1
fi
if [[ ${#missing_optional[@]} -gt 0 && $install == 0 ]]; then
    echo "run.sh: note: ${missing_optional[*]} missing: no microbenchmarks" >&2
    missing_optional=()
fi
if [[ ${#missing[@]} -gt 0 || ${#missing_optional[@]} -gt 0 ]]; then
    echo "run.sh: installing ${missing[*]} ${missing_optional[*]}"
    sudo=""
    [[ $(id -u) == 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    if [[ ${#missing[@]} -gt 0 ]]; then
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
    fi
    # An optional package that cannot be installed costs the microbenchmarks only.
    if [[ ${#missing_optional[@]} -gt 0 ]]; then
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing_optional[@]}" ||
            echo "run.sh: note: could not install ${missing_optional[*]}: no microbenchmarks" >&2
    fi
fi

# ---- build --------------------------------------------------------------------
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))
cmake -S "$root/bench" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$jobs"

# ---- microbenchmarks -------------------------------------------------------------
micro_programs=()
for m in micro_queues micro_round_trip; do
    [[ -x "$build/$m" ]] && micro_programs+=("$m")
done

# run_micro FLAGS...: runs every microbenchmark program built, writing
# DIR/<program>.txt (the console table) and DIR/<program>.json. A program that
# fails marks the run failed (as a workload does) but the others still run.
# Google Benchmark has no watchdog (the workloads' harness has an alarm): a
# round trip that never completes is killed by `timeout` instead of hanging CI.
micro_limit=$([[ $smoke == 1 ]] && echo 300 || echo 3600)
run_micro() {
    if [[ ${#micro_programs[@]} == 0 ]]; then
        echo "run.sh: no microbenchmarks built (libbenchmark-dev missing?)" >&2
        return 0
    fi
    local m
    for m in "${micro_programs[@]}"; do
        echo "== $m"
        timeout "$micro_limit" "$build/$m" --benchmark_out="$out/$m.json" --benchmark_out_format=json "$@" |
            tee "$out/$m.txt" ||
            { echo "run.sh: $m failed" >&2; status=1; }
    done
}

# ---- run ----------------------------------------------------------------------
mkdir -p "$out"
status=0

if [[ $micro == 1 ]]; then
    flags=()
    [[ $smoke == 1 ]] && flags+=(--benchmark_min_time=0.01)
    # Google Benchmark runs repetitions back to back unless told to shuffle
    # them: random interleaving is its nearest to the workloads' rotation.
    if [[ $reps -gt 1 ]]; then
        flags+=(--benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true
                --benchmark_report_aggregates_only=true)
    fi
    read -r -a extra <<< "$micro_args"
    run_micro "${flags[@]}" "${extra[@]}"
    # Random interleaving prints the aggregates in random order; sorted by
    # name, each crew queue or pool sits beside its textbook peer.
    if [[ $reps -gt 1 ]]; then
        for m in "${micro_programs[@]}"; do
            echo "== $m, medians of $reps repetitions, by name"
            grep '_median ' "$out/$m.txt" | sort || true
        done
    fi
    echo "run.sh: microbenchmark results in $out (micro_*.txt, micro_*.json)"
    exit $status
fi
rm -f "$out"/*.png
args=(--reps "$reps" --out "$out")
[[ $smoke == 1 ]] && args+=(--smoke)
if [[ $java == 1 && -f "$build/java/CrewPeers.class" ]]; then args+=(--java "$build/java"); fi

declare -A program=([W1]=w1_throughput_1p [W2]=w2_throughput_2p [W3]=w3_round_trip
                    [W4]=w4_timers [W5]=w5_idle [W6]=w6_allocations [SWEEP]=sweep [LEADER]=leader_wakeups)
# W1 (throughput) and W3 (round trip) are where parking and waking show: their
# tables also get context switches and futex calls per million tasks, counted
# per run in the same repetitions (n/a where the system refuses a counter).
# So does SWEEP, whose points of many workers are where wake storms show.
declare -A program_args=([W1]=--counters [W3]=--counters [SWEEP]=--counters)
[[ $slack_sweep == 1 ]] && program_args[W4]=--slack-sweep
[[ -n "$points" ]] && program_args[SWEEP]+=" --points $points"
for w in "${workloads[@]}"; do
    [[ ",$only," == *",$w,"* ]] || continue
    echo "== $w"
    rm -f "$out/$w".md "$out/$w".csv "$out/$w".dat "$out/$w"_*.dat
    started=$(date -u '+%Y-%m-%d %H:%M UTC')
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    if [[ $w == LEADER ]]; then
        # crew alone (no peers, no harness): its own table on stdout.
        leader_args=(--reps "$reps")
        [[ $smoke == 1 ]] && leader_args+=(--smoke)
        "$build/${program[$w]}" "${leader_args[@]}" | tee "$out/$w.md" || status=1
    else
        "$build/${program[$w]}" "${args[@]}" ${program_args[$w]:-} || status=1
    fi
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)
    # Each table says when it ran and how busy the machine was (a workload
    # run again alone keeps the others' tables, with their own dates).
    if [[ -f "$out/$w.md" ]]; then
        note="_Ran $started, $reps repetition(s)$([[ $smoke == 1 ]] && echo ', smoke sizes' || true); load average (1, 5, 15 min) before: $load_before, after: $load_after._"
        { head -n 1 "$out/$w.md"; echo; echo "$note"; tail -n +2 "$out/$w.md"; } > "$out/$w.md.tmp"
        mv "$out/$w.md.tmp" "$out/$w.md"
    fi
done

# The smoke run proves the microbenchmarks build and run too; 0.01 s each.
if [[ $smoke == 1 ]]; then
    run_micro --benchmark_min_time=0.01
fi

# ---- summary and plots --------------------------------------------------------
{
    echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) hardware threads"
    echo "- Memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo); kernel $(uname -r)"
    echo "- Compiler: $(c++ --version | head -1); Boost $(sed -n 's/#define BOOST_LIB_VERSION "\(.*\)"/\1/p' /usr/include/boost/version.hpp); oneTBB $(dpkg-query -W -f='${Version}' libtbb-dev 2>/dev/null); concurrentqueue $(dpkg-query -W -f='${Version}' libconcurrentqueue-dev 2>/dev/null)"
    command -v java >/dev/null && echo "- Java: $(java -version 2>&1 | head -1)"
    echo
    for w in "${workloads[@]}"; do
        [[ -f "$out/$w.md" ]] && { cat "$out/$w.md"; echo; }
    done
} > "$out/results.md"

if command -v gnuplot >/dev/null && [[ -f "$out/W1.dat" && -f "$out/W2.dat" ]]; then
    gnuplot -e "dir='$out'" "$root/bench/plots.gp"
fi
echo "run.sh: results in $out (results.md, W*.csv, *.png)"

# ---- publish ------------------------------------------------------------------
if [[ $publish == 1 ]]; then
    doc="$root/doc/benchmarks.md"
    mkdir -p "$root/doc/img"
    for png in throughput lateness; do
        [[ -f "$out/$png.png" ]] && cp "$out/$png.png" "$root/doc/img/benchmarks-$png.png"
    done
    if grep -q '<!-- results:begin -->' "$doc" 2>/dev/null; then
        tmp=$(mktemp)
        awk -v results="$out/results.md" '
            /<!-- results:begin -->/ { print; while ((getline line < results) > 0) print line; skip = 1; next }
            /<!-- results:end -->/ { skip = 0 }
            !skip { print }' "$doc" > "$tmp"
        mv "$tmp" "$doc"
        echo "run.sh: updated $doc and doc/img/benchmarks-*.png"
    else
        echo "run.sh: $doc has no <!-- results:begin --> marker; copied the plots only" >&2
    fi
fi

if [[ $status != 0 ]]; then echo "run.sh: some runs failed (see above)" >&2; fi
exit $status
