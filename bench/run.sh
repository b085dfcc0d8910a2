#!/usr/bin/env bash
# Runs crew's benchmark suite: installs the Debian packages the peers need
# (when missing), builds bench/ in Release, runs the six workloads with crew
# and its peers interleaved, and writes tables and plots.
#
#   bash bench/run.sh                 # the full suite: 5 repetitions (~25 min on 2 cores)
#   bash bench/run.sh --smoke         # tiny sizes, 1 repetition: builds and runs everything (~1 min)
#   bash bench/run.sh --reps 7 --only W1,W3
#   bash bench/run.sh --publish       # also copy the tables and plots into doc/
#
# Options:
#   --smoke        tiny sizes (CI: proves the programs still build and run)
#   --reps N       repetitions of every contender (default 5; smoke: 1)
#   --only LIST    comma-separated workloads (W1..W6)
#   --out DIR      results directory (default build/bench/results, smoke: build/bench/smoke)
#   --build DIR    build directory (default build/bench)
#   --no-install   never call apt-get; fail if a package is missing
#   --no-java      leave out the Java peer
#   --publish      write the tables into doc/benchmarks.md (between the
#                  "results" markers) and the plots into doc/img/
#
# Results: DIR/W<n>.md (tables), DIR/W<n>.csv (every repetition),
# DIR/W<n>.dat (gnuplot data), DIR/results.md (all tables with the machine),
# DIR/throughput.png and DIR/lateness.png.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build/bench"
out=""
smoke=0
reps=""
only="W1,W2,W3,W4,W5,W6"
install=1
java=1
publish=0

while [[ $# -gt 0 ]]; do
    case "$1" in
        --smoke) smoke=1 ;;
        --reps) reps="$2"; shift ;;
        --only) only="$2"; shift ;;
        --out) out="$2"; shift ;;
        --build) build="$2"; shift ;;
        --no-install) install=0 ;;
        --no-java) java=0 ;;
        --publish) publish=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if [[ -z "$out" ]]; then
    if [[ $smoke == 1 ]]; then out="$build/smoke"; else out="$build/results"; fi
fi
if [[ -z "$reps" ]]; then
    if [[ $smoke == 1 ]]; then reps=1; else reps=5; fi
fi

# ---- packages -----------------------------------------------------------------
packages=(cmake g++ libboost-dev libboost-thread-dev libboost-chrono-dev libtbb-dev libconcurrentqueue-dev gnuplot-nox)
if [[ $java == 1 ]] && ! command -v javac >/dev/null 2>&1; then packages+=(default-jdk-headless); fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    if [[ $install == 0 ]]; then
        echo "run.sh: missing packages: ${missing[*]}" >&2
        exit 1
    fi
    echo "run.sh: installing ${missing[*]}"
    sudo=""
    [[ $(id -u) == 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# ---- build --------------------------------------------------------------------
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))
cmake -S "$root/bench" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$jobs"

# ---- run ----------------------------------------------------------------------
mkdir -p "$out"
rm -f "$out"/*.png
args=(--reps "$reps" --out "$out")
[[ $smoke == 1 ]] && args+=(--smoke)
if [[ $java == 1 && -f "$build/java/CrewPeers.class" ]]; then args+=(--java "$build/java"); fi

declare -A program=([W1]=w1_throughput_1p [W2]=w2_throughput_2p [W3]=w3_round_trip
                    [W4]=w4_timers [W5]=w5_idle [W6]=w6_allocations)
status=0
for w in W1 W2 W3 W4 W5 W6; do
    [[ ",$only," == *",$w,"* ]] || continue
    echo "== $w"
    rm -f "$out/$w".md "$out/$w".csv "$out/$w".dat "$out/$w"_*.dat
    started=$(date -u '+%Y-%m-%d %H:%M UTC')
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    "$build/${program[$w]}" "${args[@]}" || status=1
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)
    # Each table says when it ran and how busy the machine was (a workload
    # run again alone keeps the others' tables, with their own dates).
    if [[ -f "$out/$w.md" ]]; then
        note="_Ran $started, $reps repetition(s)$([[ $smoke == 1 ]] && echo ', smoke sizes' || true); load average (1, 5, 15 min) before: $load_before, after: $load_after._"
        { head -n 1 "$out/$w.md"; echo; echo "$note"; tail -n +2 "$out/$w.md"; } > "$out/$w.md.tmp"
        mv "$out/$w.md.tmp" "$out/$w.md"
    fi
done

# ---- summary and plots --------------------------------------------------------
{
    echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) hardware threads"
    echo "- Memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo); kernel $(uname -r)"
    echo "- Compiler: $(c++ --version | head -1); Boost $(sed -n 's/#define BOOST_LIB_VERSION "\(.*\)"/\1/p' /usr/include/boost/version.hpp); oneTBB $(dpkg-query -W -f='${Version}' libtbb-dev 2>/dev/null); concurrentqueue $(dpkg-query -W -f='${Version}' libconcurrentqueue-dev 2>/dev/null)"
    command -v java >/dev/null && echo "- Java: $(java -version 2>&1 | head -1)"
    echo
    for w in W1 W2 W3 W4 W5 W6; do
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
