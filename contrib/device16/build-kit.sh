#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# build-kit.sh SRC OSU OUT.tar.xz: a weft build of the tree SRC installed in
# /tmp/weft-dk, the OSU Micro-Benchmarks of the unpacked tree OSU built with
# its weftcc and with MPICH's mpicc, and a process_vm_readv probe, packed by
# ../shared/device-kit/assemble into OUT.tar.xz (about 13 MiB) for run.sh.
# Scratch goes to ${TMPDIR:-/tmp}/weft-device16.
set -euo pipefail
src=$(cd "$1" && pwd); osu=$(cd "$2" && pwd); out=$3
here=$(cd "$(dirname "$0")" && pwd)
assemble=${ASSEMBLE:-$here/../../../shared/device-kit/assemble}
[ -x "$assemble" ] || { echo "no device-kit assemble at $assemble (set ASSEMBLE)"; exit 2; }
command -v mpicc.mpich >/dev/null || { echo "mpicc.mpich is missing (apt-get install mpich)"; exit 2; }
work=${TMPDIR:-/tmp}/weft-device16; rm -rf "$work"; mkdir -p "$work"
git -C "$src" diff HEAD > "$work/tree.diff"   # the working tree as it is, not only what is committed
git clone -q "$src" "$work/weft"
(cd "$work/weft" && { [ ! -s "$work/tree.diff" ] || git apply "$work/tree.diff"; } &&
    ./autogen.sh >/dev/null 2>&1 && ./configure -q --prefix=/tmp/weft-dk >/dev/null &&
    make -j"$(nproc)" >"$work/build.log" 2>&1 && rm -rf /tmp/weft-dk && make install >>"$work/build.log" 2>&1) ||
    { echo "the weft build failed: $work/build.log"; exit 1; }
# The OSU programs run.sh uses, compiled directly (its configure needs nothing of ours).
build_osu() { # CC OUTDIR
    mkdir -p "$2/obj"
    for u in osu_util osu_util_mpi osu_util_graph osu_util_validation osu_util_papi; do
        "$1" -O2 -w -DPACKAGE_VERSION='"7.4"' -I "$osu/c/util" -c "$osu/c/util/$u.c" -o "$2/obj/$u.o"
    done
    for b in pt2pt/standard/osu_latency pt2pt/standard/osu_bw pt2pt/standard/osu_bibw pt2pt/standard/osu_mbw_mr \
        collective/blocking/osu_allreduce collective/blocking/osu_alltoall collective/blocking/osu_allgather \
        collective/blocking/osu_bcast collective/blocking/osu_barrier collective/blocking/osu_reduce; do
        "$1" -O2 -w -DPACKAGE_VERSION='"7.4"' -I "$osu/c/util" "$osu/c/mpi/$b.c" "$2"/obj/*.o -o "$2/$(basename "$b")" -lm
    done
}
build_osu /tmp/weft-dk/bin/weftcc "$work/osu-weft"
build_osu mpicc.mpich "$work/osu-mpich"
mkdir -p "$work/probe"
gcc -O2 "$here/cma_probe.c" -o "$work/probe/cma_probe"
"$assemble" /tmp/weft-dk "$out" "$work/osu-weft" "$work/osu-mpich" "$work/probe"
