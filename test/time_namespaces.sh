#!/usr/bin/env bash
# Runs the unit and executor suites of a built tree again inside Linux time
# namespaces whose monotonic clock reads about 60 s and about ten years, so
# that no test can depend on how long the machine has been up (a due time an
# hour in the past is before the steady clock's epoch on a machine booted a
# minute ago). Needs unshare --time (util-linux >= 2.36, Linux >= 5.6); where
# that is refused (an old kernel, a container without CAP_SYS_ADMIN), it says
# so and exits 0.
#
#   bash test/time_namespaces.sh [build-dir]     (default: build/dev)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/dev}
suites=("$build/test/crew_unit_tests" "$build/test/crew_executor_tests")

for binary in "${suites[@]}"; do
    [[ -x $binary ]] || { echo "time_namespaces: $binary is not built" >&2; exit 1; }
done

if ! unshare --time --fork true 2>/dev/null; then
    echo "time_namespaces: unshare --time is refused on this machine; skipping the uptime runs"
    exit 0
fi

monotonic_now() { python3 -c 'import time; print(int(time.monotonic()))'; }

# label, the monotonic clock's reading (seconds) wanted at the start
targets=("about 60 s:60" "about ten years:315576000")
for target in "${targets[@]}"; do
    label=${target%%:*}
    want=${target##*:}
    for binary in "${suites[@]}"; do
        offset=$((want - $(monotonic_now)))
        echo "-- $(basename "$binary") with the monotonic clock at $label (offset ${offset} s)"
        (cd "$build/test" && unshare --time --monotonic="$offset" --fork "$binary")
    done
done
echo "time_namespaces: every suite passed at each uptime"
