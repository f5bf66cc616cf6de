#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Start-up benchmark: wall time of a job that runs init + barrier +
# finalize, weft (weftrun) beside Open MPI (mpirun) and MPICH (mpiexec) in
# one hyperfine run per N, so the numbers are comparable. Prints a table of
# medians and weft / best-peer ratios. Not a test: no thresholds.
#
#   tests/bench/startup.sh [N ...]        (default: 2 4 8 16)
#   RUNS=30 WARMUP=3 tests/bench/startup.sh 2 4
#
# Run from the build directory. Peers that are not installed are skipped.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-20}
warmup=${WARMUP:-3}
nps=${*:-2 4 8 16}
command -v hyperfine >/dev/null 2>&1 || { echo "startup.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
me=startup
. "$here/peers.sh"

printf '%-4s %12s %12s %12s %10s %14s\n' N "weft ms" "ompi ms" "mpich ms" ratio "weft ms/rank"
for n in $nps; do
    set -- -n weft "$weftrun -np $n --oversubscribe $weftprog"
    [ -n "$ompi" ] && set -- "$@" -n ompi "$ompi -np $n $work/mpi_ompi"
    [ -n "$mpich" ] && set -- "$@" -n mpich "$mpich -np $n $work/mpi_mpich"
    hyperfine -N --style none --warmup "$warmup" --runs "$runs" --export-json "$work/n$n.json" "$@" >/dev/null 2>&1 ||
        hyperfine --style none --warmup "$warmup" --runs "$runs" --export-json "$work/n$n.json" "$@" >/dev/null
    python3 - "$work/n$n.json" "$n" <<'PY'
import json, sys
res = {r["command"]: r["median"] * 1000 for r in json.load(open(sys.argv[1]))["results"]}
n = int(sys.argv[2])
w = res.get("weft"); o = res.get("ompi"); m = res.get("mpich")
peers = [v for v in (o, m) if v]
ratio = w / min(peers) if peers else float("nan")
f = lambda v: "%.1f" % v if v else "-"
print("%-4d %12s %12s %12s %10.2f %14.2f" % (n, f(w), f(o), f(m), ratio, w / n))
PY
done
echo "(medians over $runs runs after $warmup warm-up; ratio = weft / best peer, lower is better)"
