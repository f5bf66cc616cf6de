#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench.sh: osu_pt2pt under weft, Open MPI and MPICH on this host, two ranks
# bound to cores, the implementations interleaved rep by rep; and weft's own
# weft_bench on the same engine ("engine"), so the latency table shows what
# the MPI layer adds (column mpi-engine, in ns).
#
#   bench.sh [--reps N] [--sizes LIST] [--mode lat|bw|both]
#
# Builds osu_pt2pt.c with mpicc.openmpi, mpicc.mpich and $WEFTCC (default:
# weftcc of the build tree, else on PATH; skipped with a note if missing),
# runs each N times (default 5) and prints, per size, median [min-max] for
# each implementation and weft / best peer (latency: below 1 is better;
# bandwidth: above 1 is better). Raw lines are kept in $BENCH_DIR (default a
# fresh temporary directory), file raw.txt: "<impl> <rep> lat|bw <bytes> <value>".
#   WEFTRUN   weft's launcher (default: weftrun of the build tree, else PATH)
#   OMPI_RUN  default: mpirun.openmpi --allow-run-as-root -np 2 --bind-to core --mca pml ob1 --mca btl self,vader
#   MPICH_RUN default: mpiexec.mpich -n 2 -bind-to core

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

reps=5
sizes="0,1,8,64,1024,4096,65536,1048576,4194304"
mode="both"
while [ $# -gt 0 ]; do
    case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --mode) mode="$2"; shift 2 ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/weft-bench.XXXXXX")}
mkdir -p "$dir"
raw="$dir/raw.txt"
: >"$raw"

find_tool() { # $1 env value, $2 name in the build tree / on PATH
    if [ -n "$1" ]; then echo "$1"; return; fi
    if [ -x "$top/$2" ]; then echo "$top/$2"; return; fi
    command -v "$2" 2>/dev/null || true
}
weftcc=$(find_tool "${WEFTCC:-}" weftcc)
weftrun=$(find_tool "${WEFTRUN:-}" weftrun)
ompi_run=${OMPI_RUN:-"mpirun.openmpi --allow-run-as-root -np 2 --bind-to core --mca pml ob1 --mca btl self,vader"}
mpich_run=${MPICH_RUN:-"mpiexec.mpich -n 2 -bind-to core"}

impls=()
declare -A run_cmd
build() { # impl compiler
    # shellcheck disable=SC2086
    if $2 -std=c11 -O2 -Wall "$here/osu_pt2pt.c" -o "$dir/osu_$1" >"$dir/build_$1.log" 2>&1; then
        impls+=("$1")
    else
        echo "# note: building with '$2' failed, $1 skipped (see $dir/build_$1.log)"
    fi
}
if [ -n "$weftcc" ] && command -v "${weftcc%% *}" >/dev/null 2>&1 && [ -n "$weftrun" ]; then
    build weft "$weftcc"
    run_cmd[weft]="$weftrun -np 2 --bind-to core"
    # weft's own benchmark on the same engine: MPI minus this is what the
    # MPI layer adds (the "mpi-engine" column). Not a peer.
    if [ -x "$top/tests/bench/weft_bench" ]; then
        impls+=(engine)
        run_cmd[engine]="$weftrun -np 2 --bind-to core"
        engine_prog="$top/tests/bench/weft_bench"
    fi
else
    echo "# note: weftcc or weftrun not found (set WEFTCC / WEFTRUN); weft skipped"
fi
if command -v mpicc.openmpi >/dev/null 2>&1; then
    build ompi mpicc.openmpi
    run_cmd[ompi]="$ompi_run"
else
    echo "# note: mpicc.openmpi not found; Open MPI skipped"
fi
if command -v mpicc.mpich >/dev/null 2>&1; then
    build mpich mpicc.mpich
    run_cmd[mpich]="$mpich_run"
else
    echo "# note: mpicc.mpich not found; MPICH skipped"
fi
[ ${#impls[@]} -eq 0 ] && { echo "bench.sh: nothing to run" >&2; exit 1; }

for rep in $(seq 1 "$reps"); do
    for impl in "${impls[@]}"; do
        # shellcheck disable=SC2086
        if [ "$impl" = engine ]; then
            cmd="${run_cmd[$impl]} $engine_prog $mode $sizes"
        else
            cmd="${run_cmd[$impl]} $dir/osu_$impl --mode $mode $sizes"
        fi
        # shellcheck disable=SC2086
        if ! timeout 600 $cmd >"$dir/out_${impl}_$rep.txt" 2>&1; then
            echo "# note: $impl rep $rep failed:"
            tail -n 5 "$dir/out_${impl}_$rep.txt" | sed 's/^/#   /'
        fi
        awk -v i="$impl" -v r="$rep" '($1 == "lat" || $1 == "bw") && NF == 3 { print i, r, $1, $2, $3 }' \
            "$dir/out_${impl}_$rep.txt" >>"$raw"
    done
done

# ---- the table ----
awk -v impls="${impls[*]}" -v sizes="$sizes" '
function median(arr, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
    return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
{ key = $1 SUBSEP $3 SUBSEP $4; cnt[key]++; val[key, cnt[key]] = $5 }
END {
    ni = split(impls, I, " "); ns = split(sizes, S, ",")
    for (kk = 1; kk <= 2; kk++) {
        kind = kk == 1 ? "lat" : "bw"
        unit = kind == "lat" ? "us (one-way)" : "MB/s"
        any = 0
        for (x in cnt) { split(x, p, SUBSEP); if (p[2] == kind) any = 1 }
        if (!any) continue
        printf "\n%s, %s: median [min-max] of %s\n", kind, unit, "the reps"
        printf "%-9s", "bytes"
        for (i = 1; i <= ni; i++) printf "  %-28s", I[i]
        if (index(" " impls " ", " weft ")) printf "  %s", "weft/best peer"
        if (kind == "lat" && index(" " impls " ", " engine ")) printf "  %s", "mpi-engine ns"
        printf "\n"
        for (s = 1; s <= ns; s++) {
            printf "%-9s", S[s]
            best = ""; weftm = ""; enginem = ""
            for (i = 1; i <= ni; i++) {
                key = I[i] SUBSEP kind SUBSEP S[s]; n = cnt[key]
                if (!n) { printf "  %-28s", "-"; continue }
                delete a; lo = ""; hi = ""
                for (j = 1; j <= n; j++) { a[j] = val[key, j] + 0; if (lo == "" || a[j] < lo) lo = a[j]; if (hi == "" || a[j] > hi) hi = a[j] }
                m = median(a, n)
                fmt = kind == "lat" ? "%.3f [%.3f-%.3f]" : "%.1f [%.1f-%.1f]"
                printf "  %-28s", sprintf(fmt, m, lo, hi)
                if (I[i] == "weft") weftm = m
                else if (I[i] == "engine") enginem = m
                else if (best == "" || (kind == "lat" ? m < best : m > best)) best = m
            }
            if (index(" " impls " ", " weft ")) {
                if (weftm != "" && best != "" && best > 0) printf "  %.2f", weftm / best
                else printf "  -"
            }
            if (kind == "lat" && index(" " impls " ", " engine ")) {
                if (weftm != "" && enginem != "") printf "  %+.0f", (weftm - enginem) * 1000
                else printf "  -"
            }
            printf "\n"
        }
    }
}' "$raw"
echo
echo "# raw results: $raw"
