#!/usr/bin/env bash
# A/B of crew against an earlier crew, interleaved: builds bench/ab_workloads.cpp
# (this tree's copy) once against REV_A's include/ and once against REV_B's
# (default: the working tree, uncommitted changes included), then runs W1
# (1 producer), W2 (2 producers), W3 (round trip on one CPU) and fork-join
# (fib through task_group), and with --only ws1 W1 on a work_stealing_pool,
# with both binaries, alternating which goes first in each repetition, and
# prints, per metric, both medians and the median, lowest and highest of the
# per-repetition ratios B / A.
#
#   bash bench/ab.sh                    # the release point (bench/release_point) against the working tree
#   bash bench/ab.sh 070984f            # 070984f against the working tree
#   bash bench/ab.sh 070984f HEAD       # two revisions
#   bash bench/ab.sh --reps 12 --only w1,w2 --workers 16
#   bash bench/ab.sh --smoke            # tiny sizes, 1 repetition: proves it builds and runs
#
# Options: --reps N (default 8; at least 8 for a claim), --only LIST (w1,w2,w3,fj,ws1),
# --workers N (pool size; default 2), --out FILE (default build/ab/results.md),
# --smoke. Every change to a queue, a wake-up, the worker loop or a future's hot
# path quotes this table, against the release point, in its commit message.
#
# Run it on a quiet machine: no build, test or helper beside it (2 cores).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

reps=8
only=w1,w2,w3,fj
workers=2
smoke=0
out=$root/build/ab/results.md
revs=()
while (($#)); do
    case $1 in
        --reps) reps=$2; shift ;;
        --only) only=$2; shift ;;
        --workers) workers=$2; shift ;;
        --out) out=$2; shift ;;
        --smoke) smoke=1 ;;
        -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
        -*) echo "ab.sh: unknown option $1" >&2; exit 2 ;;
        *) revs+=("$1") ;;
    esac
    shift
done
((${#revs[@]} <= 2)) || { echo "ab.sh: at most two revisions" >&2; exit 2; }
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "ab.sh: --reps must be a positive integer" >&2; exit 2; }
[[ $workers =~ ^[1-9][0-9]*$ ]] || { echo "ab.sh: --workers must be a positive integer" >&2; exit 2; }
IFS=, read -r -a workloads <<<"$only"
for w in "${workloads[@]}"; do
    [[ $w =~ ^(w1|w2|w3|fj|ws1)$ ]] || { echo "ab.sh: unknown workload '$w' (w1, w2, w3, fj, ws1)" >&2; exit 2; }
done
((smoke)) && reps=1

release_point=$(grep -v '^#' bench/release_point | awk 'NF { print $1; exit }')
rev_a=${revs[0]:-$release_point}
if ((${#revs[@]} == 0)) && ! git rev-parse --verify --quiet "$rev_a^{commit}" >/dev/null; then
    # A shallow clone may lack the release point: compare HEAD instead, and say so.
    echo "ab.sh: note: the release point $rev_a is not in this clone; A is HEAD instead" >&2
    rev_a=HEAD
fi
rev_b=${revs[1]:-WORKTREE}

# Builds ab_workloads against one side's headers into build/ab/<label>/.
build_side() {
    local rev=$1 dir
    if [[ $rev == WORKTREE ]]; then
        dir=$root/build/ab/worktree
        rm -rf "$dir" && mkdir -p "$dir"
        cp -r include "$dir/include"
    else
        local sha
        sha=$(git rev-parse --verify --quiet "$rev^{commit}") || { echo "ab.sh: no revision '$rev'" >&2; exit 2; }
        dir=$root/build/ab/${sha:0:12}
        rm -rf "$dir" && mkdir -p "$dir"
        git archive "$sha" include | tar -x -C "$dir"
    fi
    echo "ab.sh: building $rev" >&2
    g++ -std=c++20 -O3 -DNDEBUG -pthread -Wall -Wextra -I "$dir/include" -I bench bench/ab_workloads.cpp -o "$dir/ab_workloads"
    echo "$dir/ab_workloads"
}

bin_a=$(build_side "$rev_a")
bin_b=$(build_side "$rev_b")
label_a=$rev_a
label_b=$rev_b
[[ $rev_b == WORKTREE ]] && label_b="working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- include || echo '+changes'))"

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
args=(--workers "$workers")
((smoke)) && args+=(--smoke)
for ((rep = 1; rep <= reps; ++rep)); do
    if ((rep % 2)); then order=(A B); else order=(B A); fi
    for w in "${workloads[@]}"; do
        for side in "${order[@]}"; do
            bin=$bin_a
            [[ $side == B ]] && bin=$bin_b
            line=$(timeout 300 "$bin" "$w" "${args[@]}" | grep '^RESULT') ||
                { echo "ab.sh: $side ($w) failed" >&2; exit 1; }
            echo "$rep $side $line" >>"$raw"
        done
    done
    echo "ab.sh: repetition $rep of $reps done" >&2
done

mkdir -p "$(dirname "$out")"
python3 - "$raw" "$label_a" "$label_b" "$reps" "$workers" >"$out" <<'EOF'
import sys, statistics
raw, label_a, label_b, reps, workers = sys.argv[1:6]
# metric -> (higher is better, unit)
known = {"mtps": (True, "M tasks/s"), "cpu_ns": (False, "CPU ns/task"), "p50_us": (False, "p50 us"),
         "p99_us": (False, "p99 us"), "ms": (False, "ms"), "cpu_ms": (False, "CPU ms")}
values = {}  # (workload, metric) -> {rep: {side: value}}
order = []
for line in open(raw):
    rep, side, _, workload, *pairs = line.split()
    for pair in pairs:
        if "=" not in pair: continue
        key, value = pair.split("=", 1)
        if key not in known: continue
        k = (workload, key)
        if k not in values: values[k] = {}; order.append(k)
        values[k].setdefault(int(rep), {})[side] = float(value)
print(f"# A/B: A = {label_a}, B = {label_b}")
print()
print(f"{reps} interleaved repetitions (the first of each pair alternates), {workers} workers. "
      "Ratio: B / A per repetition; 'better' says which way is good.")
print()
print("| workload | metric | A median | B median | B/A median | B/A min | B/A max | better |")
print("|---|---|---:|---:|---:|---:|---:|---|")
for k in order:
    per = values[k]
    a = [per[r]["A"] for r in sorted(per) if "A" in per[r] and "B" in per[r]]
    b = [per[r]["B"] for r in sorted(per) if "A" in per[r] and "B" in per[r]]
    ratios = [y / x for x, y in zip(a, b) if x > 0]
    higher, unit = known[k[1]]
    if not ratios:  # one side only (fork-join where a revision has no task_group)
        only_a = [per[r]["A"] for r in per if "A" in per[r]]
        only_b = [per[r]["B"] for r in per if "B" in per[r]]
        fa = f"{statistics.median(only_a):.3f}" if only_a else "n/a"
        fb = f"{statistics.median(only_b):.3f}" if only_b else "n/a"
        print(f"| {k[0]} | {unit} | {fa} | {fb} | n/a | n/a | n/a | {'higher' if higher else 'lower'} |")
        continue
    print(f"| {k[0]} | {unit} | {statistics.median(a):.3f} | {statistics.median(b):.3f} | "
          f"{statistics.median(ratios):.3f} | {min(ratios):.3f} | {max(ratios):.3f} | {'higher' if higher else 'lower'} |")
if not order:
    print("(no measurable results: fork-join is n/a where a revision has no task_group)")
EOF
cat "$out"
