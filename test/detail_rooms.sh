#!/usr/bin/env bash
# The rooms of include/crew/detail/ and what each may include (each room's
# main header states its rule; doc/design.md draws the house). A header of a
# room may include the public headers, the cross-cutting headers at the top
# of detail/ (sanitizers, test_seam, report, thread_name, ctl), its own
# room, and the rooms listed for it here; the cross-cutting headers include
# no room. Fails naming every include that breaks the rule.
#
#   bash test/detail_rooms.sh [INCLUDE_DIR]     # default: include/ beside test/
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)/include}
detail=$root/crew/detail

declare -A may_include=(
    [sync]=""                          # parking, fences, spinning, lock contracts
    [timer]="sync"                     # clocks, timer slack, the process-wide timer
    [queue]="sync timer"               # the queue engines behind the QueuePolicies
    [work_stealing]="sync"             # worker records, spawn deques, helping, fork-join
    [future]="sync timer work_stealing" # future states, links, deadlines, scheduled tasks
    [coroutine]="future sync"          # crew::coroutine's frames, chains and stops
)

bad=0
for dir in "$detail"/*/; do
    room=$(basename "$dir")
    if [[ -z ${may_include[$room]+set} ]]; then
        echo "detail/$room/: a room this script does not know (add its rule)"; bad=1; continue
    fi
    for header in "$dir"*.hpp; do
        while read -r other; do
            [[ $other == "$room" ]] && continue
            [[ " ${may_include[$room]} " == *" $other "* ]] && continue
            echo "${header#"$root"/}: includes detail/$other/, which room '$room' may not"; bad=1
        done < <(sed -n 's|^#include <crew/detail/\([a-z_]*\)/.*|\1|p' "$header")
    done
done
for header in "$detail"/*.hpp; do
    if grep -q '^#include <crew/detail/[a-z_]*/' "$header"; then
        echo "${header#"$root"/}: a cross-cutting header includes a room"; bad=1
    fi
done
[[ $bad == 0 ]] && echo "detail/ rooms: every include follows the rules"
exit $bad
