#!/usr/bin/env bash
# Builds issue #26's benchmarks here (Release) and gathers them, with every
# shared library they load except glibc's own, into one folder that runs on
# a bare x86-64 Linux machine (no packages, no compiler, no Java; glibc at
# least as new as the one named in its MANIFEST.txt):
#
#   bash bench/device.sh              # builds, bundles into build/device
#   bash bench/device.sh --check      # and runs the bundle's smoke with the
#                                     # system's copies of its libraries hidden
#   then, on the device:  bash build/device/run.sh           # <= 8 min on 16 cores
#                         bash build/device/run.sh --smoke   # seconds: proves it runs
#
# The bundle (build/device, under build/, which git ignores):
#   bin/sweep             the workers x producers sweep (bench/sweep.cpp)
#   bin/compose_tbb       crew::task_group (fixed_pool, work_stealing_pool) and
#                         parallel_for against oneTBB (bench/compose_tbb.cpp)
#   bin/w1_throughput_1p  W1 (--workers N for T = N)
#   lib/                  libstdc++, libgcc_s, oneTBB (and libtbbmalloc, which
#                         libtbb loads by itself), Boost.Thread/Chrono: what
#                         ldd lists plus what libtbb dlopens, less glibc
#   run.sh                sets LD_LIBRARY_PATH to lib/ and runs the steps (its
#                         header says which and how long), results in
#                         ${OUT:-./results}
#   MANIFEST.txt          commit, compiler, glibc needed, whether
#                         crew::work_stealing_pool was built in, checksums
#   glibc/                (--with-glibc only) this machine's ld.so, libc and
#                         libm: run.sh starts the programs through that
#                         ld.so where the device's glibc is too old for them
#
# Built on Debian 12 the bundle needs glibc >= 2.36 (libstdc++ calls
# arc4random): Debian 12, Ubuntu 22.10 or later, RHEL 10. On an older system
# (Ubuntu 22.04 has 2.35) only a bundle made with --with-glibc runs.
#
# Options:
#   --build DIR   CMake build directory (default build/bench)
#   --dest DIR    the bundle (default build/device; emptied first)
#   --jobs N      parallel compile jobs (default 2)
#   --with-glibc  also bundle glibc (ld.so, libc, libm) in glibc/, used only
#                 where the device's own cannot start the programs
#   --check       then run `run.sh --smoke` under env -i, in a mount
#                 namespace where the system's copies of the bundled
#                 libraries are hidden (needs root and unshare; otherwise
#                 only the LD_DEBUG check below), results in DEST/check
#
# Every bundle is checked: with LD_LIBRARY_PATH at lib/ alone, each program's
# --help must load, and LD_DEBUG=files must show every library it opened
# (needed or dlopened) coming from lib/ or being glibc's.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build/bench"
dest="$root/build/device"
jobs=2
check=0
with_glibc=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --build) build="$2"; shift ;;
        --dest) dest="$2"; shift ;;
        --jobs) jobs="$2"; shift ;;
        --check) check=1 ;;
        --with-glibc) with_glibc=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "device.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$dest" in /*) ;; *) dest="$PWD/$dest" ;; esac
programs=(sweep compose_tbb w1_throughput_1p)
# glibc's own libraries: the device's, never bundled (they go with its ld.so).
glibc_re='^(ld-linux[^/]*|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|libcrypt|libthread_db)\.so'

# ---- build --------------------------------------------------------------------
started=$SECONDS
cmake -S "$root/bench" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$jobs" --target "${programs[@]}"
echo "device.sh: built ${programs[*]} in $((SECONDS - started)) s"

# ---- gather -------------------------------------------------------------------
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib"
for p in "${programs[@]}"; do cp "$build/$p" "$dest/bin/"; done

# copy_deps FILE: every library ldd resolves for FILE, less glibc, into lib/.
copy_deps() {
    local name path
    while read -r name path; do
        [[ "$name" =~ $glibc_re ]] && continue
        if [[ -z "$path" || ! -f "$path" ]]; then
            echo "device.sh: $1 needs $name, which ldd does not find" >&2
            exit 1
        fi
        [[ -f "$dest/lib/$name" ]] || cp -L "$path" "$dest/lib/$name"
    done < <(ldd "$1" | awk '$2 == "=>" { print $1, (($3 ~ /^\//) ? $3 : "") }')
}
for p in "${programs[@]}"; do copy_deps "$dest/bin/$p"; done
# libtbb dlopens libtbbmalloc (its allocator, from its own directory) where it
# finds one: bundle it, so the device's TBB runs as it does here.
if [[ -f "$dest/lib/libtbb.so.12" ]]; then
    tbbmalloc=$(dirname "$(ldd "$dest/bin/sweep" | awk '$1 == "libtbb.so.12" { print $3 }')")/libtbbmalloc.so.2
    if [[ -f "$tbbmalloc" ]]; then
        cp -L "$tbbmalloc" "$dest/lib/"
        copy_deps "$dest/lib/libtbbmalloc.so.2"
    fi
fi
for l in "$dest"/lib/*; do copy_deps "$l"; done
if [[ $with_glibc == 1 ]]; then
    mkdir -p "$dest/glibc"
    while read -r name path; do
        [[ "$(basename "$name")" =~ $glibc_re && -f "$path" ]] && cp -L "$path" "$dest/glibc/$(basename "$path")"
    done < <(for f in "$dest"/bin/* "$dest"/lib/*; do ldd "$f"; done |
             awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 } $1 ~ /^\/.*ld-linux/ { print $1, $1 }' | sort -u)
    [[ -f "$dest/glibc/ld-linux-x86-64.so.2" ]] || { echo "device.sh: --with-glibc: no ld-linux-x86-64.so.2 found" >&2; exit 1; }
fi

# ---- run.sh -------------------------------------------------------------------
cat > "$dest/run.sh" <<'RUN'
#!/usr/bin/env bash
# crew's issue-#26 benchmarks, bundled by bench/device.sh; needs only bash,
# coreutils and glibc (see MANIFEST.txt). On a 16-core machine:
#
#   bash run.sh                # <= 8 min: the steps below, results in ${OUT:-./results}
#   bash run.sh --smoke        # tiny sizes, 1 repetition: seconds
#   bash run.sh --w1           # also W1 at T = 2 and T = 16 (all W1's pools), within the same deadline
#
# Steps (each prints its elapsed time; run.log has every line they printed):
#   1. compose_tbb: C1 parallel_for, C2 fib(30), C3 quicksort of 10^7 ints,
#      crew::task_group on fixed_pool and on work_stealing_pool against
#      tbb::task_group, 5 repetitions (C1.md, C2.md, C3.md, .csv)
#   2. sweep: 1,000,000 no-op tasks at the points 2x1,4x4,8x8,15x15,16x1,
#      16x4,8x1,8x4,16x16 (T workers x P producers), 7 contenders, with
#      context switches and futex calls per million tasks, 3 repetitions,
#      fewer if the next would pass the deadline (SWEEP.md, SWEEP.csv,
#      rewritten after every point)
#   3. (--w1) W1 at 2 and at 16 workers with the counters, 3 repetitions
#      (W1.md, W1_T16.md), its time kept back from the sweep's budget
#
# Options:
#   --smoke          tiny sizes, 1 repetition
#   --w1             step 3
#   --deadline S     seconds for all steps (default 450); the sweep gets what
#                    steps 1 (and 3) leave, and every step has a hard limit
#   --points LIST    the sweep's points instead (e.g. 2x1,16x1)
#   --reps N         the sweep's repetitions (default 3)
#   --bundled-glibc  start the programs through glibc/'s ld.so even where the
#                    system's glibc would do (only in a bundle made with
#                    bench/device.sh --with-glibc; otherwise it is used only
#                    where the system's glibc cannot start them)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$here/lib"
out="${OUT:-./results}"
smoke=0
w1=0
deadline=450
points=""
reps=3
bundled_glibc=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --smoke) smoke=1 ;;
        --w1) w1=1 ;;
        --deadline) deadline="$2"; shift ;;
        --points) points="$2"; shift ;;
        --reps) reps="$2"; shift ;;
        --bundled-glibc) bundled_glibc=1 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
: > "$out/run.log"
: > "$out/times.txt"
started=$SECONDS

# launch: what starts a program: nothing (the system's ld.so and glibc) or,
# where those cannot (a glibc older than MANIFEST.txt's), glibc/'s ld.so.
launch=()
bundled=("$here/glibc/ld-linux-x86-64.so.2" --library-path "$here/glibc:$here/lib")
starts() {
    local p
    for p in sweep compose_tbb w1_throughput_1p; do
        why=$(${launch[@]+"${launch[@]}"} "$here/bin/$p" --help 2>&1 >/dev/null) || { why="bin/$p: $why"; return 1; }
    done
}
if [[ $bundled_glibc == 1 ]]; then
    [[ -x "${bundled[0]}" ]] || { echo "run.sh: --bundled-glibc: this bundle has no glibc/ (bench/device.sh --with-glibc)" >&2; exit 2; }
    launch=("${bundled[@]}")
fi
if ! starts; then
    if [[ ${#launch[@]} == 0 && -x "${bundled[0]}" ]]; then
        echo "run.sh: the system's glibc cannot start the programs ($(echo "$why" | head -1)); using glibc/'s"
        launch=("${bundled[@]}")
        starts || { echo "run.sh: not with glibc/'s either: $why" >&2; exit 1; }
    else
        echo "run.sh: the programs do not start here:" >&2
        echo "$why" | head -5 >&2
        grep -i glibc "$here/MANIFEST.txt" >&2
        exit 1
    fi
fi

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "cpus: nproc $(nproc), online $(getconf _NPROCESSORS_ONLN), cgroup cpu.max $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo n/a)"
    echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "kernel: $(uname -r); glibc $(getconf GNU_LIBC_VERSION 2>/dev/null | cut -d' ' -f2)$([[ ${#launch[@]} == 0 ]] || echo ", the programs started through the bundle's glibc")"
    echo "perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo n/a); tracefs: $(ls -d /sys/kernel/tracing/events/syscalls /sys/kernel/debug/tracing/events/syscalls 2>/dev/null | head -1 || true)"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"
cat "$out/machine.txt"
if [[ $(nproc) != "$(getconf _NPROCESSORS_ONLN)" ]]; then
    echo "run.sh: note: $(nproc) CPUs usable of $(getconf _NPROCESSORS_ONLN) online (affinity): the pools are sized by the points, compose_tbb by the usable CPUs"
fi

status=0
# step NAME LIMIT COMMAND...: runs COMMAND (all output to run.log; on the
# console only its progress summaries and failures), killed past LIMIT s.
step() {
    local name=$1 limit=$2 t0=$SECONDS rc
    shift 2
    echo "== $name (limit ${limit} s, $((SECONDS - started)) s so far)"
    echo "== $name: $*" >> "$out/run.log"
    timeout -k 10 "$limit" ${launch[@]+"${launch[@]}"} "$@" 2>&1 | tee -a "$out/run.log" |
        grep --line-buffered -E '^(SWEEP|C[0-9]|W1[_T0-9]*):|run failed|no result|wrong result|not found when built'
    rc=${PIPESTATUS[0]} # (grep finding nothing is no failure)
    [[ $rc == 124 || $rc == 137 ]] && echo "run.sh: $name passed its limit of $limit s and was stopped"
    [[ $rc != 0 ]] && status=1
    echo "$name $((SECONDS - t0)) s, exit $rc" | tee -a "$out/times.txt"
}

common=(--out "$out" --alarm 60)
sweep_reps=$reps
if [[ $smoke == 1 ]]; then
    common+=(--smoke)
    sweep_reps=1
fi
reserve_w1=0
[[ $w1 == 1 ]] && reserve_w1=150

step compose_tbb 150 "$here/bin/compose_tbb" "${common[@]}"

# The sweep's budget: what is left of the deadline, less step 3's share and
# a margin for its last repetition running long; its hard limit a little more.
budget=$((deadline - (SECONDS - started) - reserve_w1 - 20))
(( budget < 30 )) && budget=30
sweep_args=("${common[@]}" --counters --reps "$sweep_reps" --budget "$budget")
[[ -n "$points" ]] && sweep_args+=(--points "$points")
step sweep $((budget + 40)) "$here/bin/sweep" "${sweep_args[@]}"

if [[ $w1 == 1 ]]; then
    left=$((deadline - (SECONDS - started)))
    (( left < 60 )) && left=60
    step w1_T2 $((left / 2)) "$here/bin/w1_throughput_1p" "${common[@]}" --counters --reps "$sweep_reps"
    left=$((deadline - (SECONDS - started)))
    (( left < 30 )) && left=30
    step w1_T16 "$left" "$here/bin/w1_throughput_1p" "${common[@]}" --counters --reps "$sweep_reps" --workers 16
fi

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
echo "all $((SECONDS - started)) s" | tee -a "$out/times.txt"
echo
for f in C2 C3 SWEEP; do
    [[ -f "$out/$f.md" ]] && { cat "$out/$f.md"; echo; }
done
echo "run.sh: results in $out (*.md, *.csv, run.log, times.txt, machine.txt)"
exit $status
RUN
chmod +x "$dest/run.sh"

# ---- manifest -------------------------------------------------------------------
glibc_needed=$(objdump -T "$dest"/bin/* "$dest"/lib/* 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -1)
ws="no (<crew/work_stealing_pool.hpp> absent when built: no work_stealing_pool rows)"
[[ -f "$root/include/crew/work_stealing_pool.hpp" ]] && ws="yes"
{
    echo "crew issue-#26 device bundle, made by bench/device.sh"
    echo "built: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -m), $(c++ --version | head -1)"
    echo "commit: $(git -C "$root" rev-parse --short HEAD)$([[ -z $(git -C "$root" status --porcelain -- include bench) ]] || echo ' + uncommitted changes in include/ or bench/')"
    echo "crew::work_stealing_pool built in: $ws"
    if [[ $with_glibc == 1 ]]; then
        echo "needs: x86-64 Linux; glibc >= ${glibc_needed#GLIBC_}, or else glibc/ (bundled) is used"
    else
        echo "needs: x86-64 Linux with glibc >= ${glibc_needed#GLIBC_} (bundled: everything else; older: bench/device.sh --with-glibc)"
    fi
    echo
    (cd "$dest" && sha256sum bin/* lib/* $([[ -d glibc ]] && echo glibc/*) run.sh)
} > "$dest/MANIFEST.txt"

# ---- self-containment -------------------------------------------------------------
# With lib/ alone on the path, every library each program opens (needed or
# dlopened: LD_DEBUG=libs's "calling init: PATH") is lib/'s or glibc's.
# loaded COMMAND...: the paths of the libraries COMMAND opened.
loaded() {
    (cd "$dest" && env -i LD_LIBRARY_PATH="$dest/lib" LD_DEBUG=libs "$@" 2>&1 >/dev/null) |
        sed -n 's/.*calling init: \(.*\)$/\1/p' | sort -u
}
for p in "${programs[@]}"; do
    opened=$(loaded "$dest/bin/$p" --help)
    [[ -n "$opened" ]] || { echo "device.sh: bin/$p: LD_DEBUG showed no library (cannot check)" >&2; exit 1; }
    while read -r f; do
        [[ "$f" == "$dest/lib/"* || "$(basename "$f")" =~ $glibc_re ]] && continue
        echo "device.sh: bin/$p loads $f from outside the bundle" >&2
        exit 1
    done <<< "$opened"
done
# --help exits before TBB dlopens its allocator: make sure that one resolves too.
if [[ -f "$dest/lib/libtbbmalloc.so.2" ]]; then
    grep -qx "$dest/lib/libtbbmalloc.so.2" <<< "$(loaded "$dest/bin/sweep" --smoke --only tbb --points 2x1 --no-isolate)" ||
        { echo "device.sh: libtbb did not load the bundled libtbbmalloc.so.2" >&2; exit 1; }
fi

echo "device.sh: bundle in $dest ($(du -sh "$dest" | cut -f1)): $(cd "$dest" && echo bin/* lib/*)"
grep -E '^(commit|crew::work_stealing_pool built in|needs):' "$dest/MANIFEST.txt"

# ---- --check -------------------------------------------------------------------------
if [[ $check == 1 ]]; then
    hide=()
    for l in "$dest"/lib/*; do
        n=$(basename "$l")
        for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do
            [[ -e "$d/$n" && ! -L "$d" ]] && hide+=("$(readlink -f "$d/$n")")
        done
    done
    mapfile -t hide < <(printf '%s\n' "${hide[@]}" | sort -u)
    echo "device.sh: --check: run.sh --smoke under env -i, hiding ${#hide[@]} system copies: ${hide[*]}"
    mounts=""
    for h in "${hide[@]}"; do mounts+="mount --bind /dev/null '$h' && "; done
    if [[ $(id -u) == 0 ]] && unshare -m true 2>/dev/null; then
        unshare -m bash -c "${mounts} cd '$dest' && env -i PATH=/usr/bin:/bin OUT='$dest/check' bash '$dest/run.sh' --smoke"
    else
        echo "device.sh: --check: not root or no unshare: the system copies stay visible" >&2
        (cd "$dest" && env -i PATH=/usr/bin:/bin OUT="$dest/check" bash "$dest/run.sh" --smoke)
    fi
fi
