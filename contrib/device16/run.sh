#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh KIT.tar.xz OUTDIR [ROUNDS]: on the 16-core host, weft beside MPICH,
# every job alternated and repeated ROUNDS times (default 2): two ranks
# (osu_latency, osu_bw, osu_bibw), 8 pairs (osu_mbw_mr) and 16-rank
# collectives (allreduce, alltoall, allgather, bcast, reduce, barrier), one
# rank per core. OUTDIR/log.txt holds every job's output between
# "=== TAG | command" and "=== end TAG rc=N ms=N" lines (parse.py reads
# them); OUTDIR/host.txt the CPU and cma_probe's figures. Extra weft settings
# for every weft job: WEFT_EXTRA="--mca NAME VALUE ...". Each job has a
# timeout, so a hang costs one job.
set -u
kit=$1 out=$2 rounds=${3:-2}
mkdir -p "$out"
# --no-overwrite-dir: the kit's top entry would otherwise make / as private as the
# temporary directory it was packed from (0700), and every other user could no
# longer reach anything.
[ -d /tmp/weft-devkit ] || tar --no-overwrite-dir -C / -xJf "$kit" || exit 1
# shellcheck disable=SC1091
. /tmp/weft-devkit/env.sh
W=/tmp/weft-devkit/extra/1 M=/tmp/weft-devkit/extra/2 P=/tmp/weft-devkit/extra/3
# hwloc's PCI discovery is most of weftrun's start-up on a host full of devices.
export HWLOC_COMPONENTS=-pci,-opencl,-cuda,-nvml,-gl,-rsmi,-levelzero
log=$out/log.txt
: >"$log"
n16=16
[ "$(nproc)" -lt 16 ] && n16=$(nproc)
{ nproc; lscpu | grep -E "Model name|L2|L3"; "$P/cma_probe"; } >"$out/host.txt" 2>&1
job() { # TAG SECONDS COMMAND...
    local tag=$1 limit=$2 start
    shift 2
    start=$(date +%s%N)
    echo "=== $tag | $*" >>"$log"
    timeout -k 5 "$limit" "$@" >>"$log" 2>&1
    echo "=== end $tag rc=$? ms=$((($(date +%s%N) - start) / 1000000))" >>"$log"
}
# shellcheck disable=SC2206
wr=(weftrun --bind-to core ${WEFT_EXTRA:-})
mr=(mpiexec.hydra -bind-to core)
job probe 30 "${wr[@]}" -np 2 --mca btl_base_verbose info "$W/osu_latency" -m 8:8 -i 10 -x 1
for r in $(seq "$rounds"); do
    job "lat2 weft r$r" 60 "${wr[@]}" -np 2 "$W/osu_latency" -m 1:1048576 -i 1000 -x 100
    job "lat2 mpich r$r" 60 "${mr[@]}" -n 2 "$M/osu_latency" -m 1:1048576 -i 1000 -x 100
    for b in bw bibw; do
        job "${b}2 weft r$r" 60 "${wr[@]}" -np 2 "$W/osu_$b" -m 1:1048576 -i 100 -x 10
        job "${b}2 mpich r$r" 60 "${mr[@]}" -n 2 "$M/osu_$b" -m 1:1048576 -i 100 -x 10
    done
    job "mbw16 weft r$r" 90 "${wr[@]}" -np "$n16" "$W/osu_mbw_mr" -m 1:1048576 -i 100 -x 10
    job "mbw16 mpich r$r" 90 "${mr[@]}" -n "$n16" "$M/osu_mbw_mr" -m 1:1048576 -i 100 -x 10
done
for c in allreduce alltoall allgather bcast reduce barrier; do
    for r in $(seq "$rounds"); do
        job "c16 $c weft r$r" 120 "${wr[@]}" -np "$n16" "$W/osu_$c" -m 1:1048576 -i 300 -x 30
        job "c16 $c mpich r$r" 120 "${mr[@]}" -n "$n16" "$M/osu_$c" -m 1:1048576 -i 300 -x 30
    done
done
echo ALLDONE >>"$log"
