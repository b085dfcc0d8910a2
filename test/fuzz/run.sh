#!/usr/bin/env bash
# Builds crew's libFuzzer targets with clang, then runs each one for a bounded
# time, starting from the seed corpus in test/fuzz/corpus/<target>/.
#
#   test/fuzz/run.sh [seconds per target (default 60)] [build directory (default build/fuzz)]
#
# Environment: CXX (default clang++), FUZZ_JOBS (build parallelism, default 2),
# FUZZ_ARGS (more libFuzzer flags, e.g. "-jobs=2 -workers=2").
# Needs clang and its runtime libraries; on Debian bookworm:
#   apt-get install clang libclang-rt-14-dev
#
# New inputs go to <build>/corpus/<target>/ (the seeds stay untouched); a
# crashing input is written to <build>/artifacts/ and the script fails.
# Replay one:  <build>/fuzz_<target> <build>/artifacts/<file>
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

seconds=${1:-60}
build=${2:-build/fuzz}

CXX=${CXX:-clang++} cmake -S test/fuzz -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "${FUZZ_JOBS:-2}"

mkdir -p "$build/artifacts"
for target in delayed_queue executor queue_history; do
    work="$build/corpus/$target"
    mkdir -p "$work"
    echo "==> fuzz_$target for ${seconds} s"
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    "$build/fuzz_$target" "$work" "test/fuzz/corpus/$target" \
        -max_total_time="$seconds" -max_len=1024 -len_control=0 -timeout=30 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" ${FUZZ_ARGS:-}
done
echo "fuzzing passed"
