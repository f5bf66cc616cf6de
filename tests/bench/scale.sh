#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Scale benchmark: per-rank cost of an idle job on this host, weft (weftrun)
# beside Open MPI (mpirun) and MPICH (mpiexec) at the same N. For each N
# and implementation it starts `*_startup idle` (init, barrier, then wait),
# waits until every rank said "ready", and reads each rank's open file
# descriptors and resident memory from /proc (VmRSS, and of it the
# anonymous and the shared-memory part: RssAnon, RssShmem, e.g. btl/scif's
# rings); then it ends the job.
# The start-up time per rank is startup.sh's column "ms/rank". Not a test:
# no thresholds.
#
#   tests/bench/scale.sh [N ...]        (default: 2 16 64)
#
# Run from the build directory. Peers that are not installed are skipped.
set -u

here=$(cd "$(dirname "$0")" && pwd)
nps=${*:-2 16 64}
me=scale
. "$here/peers.sh"
declare -A launch
launch[weft]="$weftrun --oversubscribe -np"
[ -n "$ompi" ] && launch[ompi]="$ompi -np"
[ -n "$mpich" ] && launch[mpich]="$mpich -np"
program() { case $1 in weft) echo "$weftprog" ;; ompi) echo "$work/mpi_ompi" ;; mpich) echo "$work/mpi_mpich" ;; esac; }

median() { sort -n | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

printf '%-4s %-6s %10s %12s %12s %12s %10s\n' N impl "fds/rank" "RSS MB/rank" "anon MB" "shmem MB" "ready s"
for n in $nps; do
    for impl in weft ompi mpich; do
        [ -n "${launch[$impl]:-}" ] || continue
        out=$work/$impl.$n
        start=$(date +%s.%N)
        # shellcheck disable=SC2086
        setsid ${launch[$impl]} "$n" "$(program $impl)" idle >"$out" 2>"$out.err" &
        job=$!
        ok=0
        for _ in $(seq 1 1200); do   # at most 120 s
            [ "$(grep -c '^ready ' "$out")" -ge "$n" ] && { ok=1; break; }
            kill -0 "$job" 2>/dev/null || break
            sleep 0.1
        done
        ready=$(echo "$(date +%s.%N) - $start" | bc)
        if [ $ok = 1 ]; then
            pids=$(sed -n 's/^ready [0-9]* pid \([0-9]*\)$/\1/p' "$out")
            fds=$(for p in $pids; do ls "/proc/$p/fd" 2>/dev/null | wc -l; done | median)
            kb() { for p in $pids; do awk -v k="$1:" '$1 == k {printf "%.1f\n", $2 / 1024}' "/proc/$p/status" 2>/dev/null; done | median; }
            printf '%-4d %-6s %10s %12s %12s %12s %10.2f\n' "$n" "$impl" "$fds" "$(kb VmRSS)" "$(kb RssAnon)" \
                "$(kb RssShmem)" "$ready"
        else
            printf '%-4d %-6s %10s %12s %12s %12s %10s  (did not start: %s)\n' "$n" "$impl" - - - - - \
                "$(tail -n 1 "$out.err")"
        fi
        kill -TERM -- -"$job" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- -"$job" 2>/dev/null
        wait "$job" 2>/dev/null
    done
done
echo "(medians over the ranks of one idle job; ready s = launch until every rank printed ready)"
