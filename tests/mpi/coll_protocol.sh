#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# coll_protocol.sh: which protocol carries the sends of MPI_Bcast (mpi/coll.cc's
# binomial tree) and MPI_Allgather (recursive doubling, mpi/coll_allgather.cc),
# read from weftrun --report=json over btl/scif with its single copy taken
# from 8 KiB (btl_scif_single_copy_call_us under 1.25):
#  - bcast, 2 ranks: rank 1 is a leaf, so the 64 KiB vectors go as a plain
#    MPI_Send's do, by the rendezvous's single copy (a forwarded send would
#    go eagerly through the ring: 1.2-1.5x slower there on a 2-vCPU VM);
#  - bcast, 4 ranks, binomial forced: ranks 1 and 3 are leaves (by single
#    copy), rank 2 passes the data on (forwarded: eagerly while the ring
#    has room);
#  - allgather, 2 ranks: the one exchange passes nothing on, so both 64 KiB
#    blocks of each call go by single copy (forwarded, 1.3-1.6x slower on
#    that VM).
# A plain MPI_Send of the same vectors first shows that the single copy
# works here; where it does not (a container that refuses
# process_vm_readv), the test skips.
set -u
builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
prog="$builddir/tests/mpi/coll_protocol"
if [ ! -x "$builddir/weftrun" ] || [ ! -x "$prog" ]; then
    echo "SKIP: weftrun or tests/mpi/coll_protocol is not built"
    exit 77
fi
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
out=$(mktemp -d "${TMPDIR:-/tmp}/weft-coll-protocol.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
vector=65536 calls=8

# job NAME NP [ARGS...]: runs the program; its report in $out/NAME.json.
job() {
    name=$1 np=$2
    shift 2
    WEFT_MCA_btl=self,scif WEFT_MCA_btl_scif_single_copy_call_us=0.5 timeout 120 "$builddir/weftrun" \
        --oversubscribe -np "$np" --report=json:"$out/$name.json" "$prog" "$@" >"$out/$name.log" 2>&1
    if [ $? -ne 0 ] || ! grep -qx 'No Errors' "$out/$name.log"; then
        echo "FAIL $name: the job failed"
        tail -20 "$out/$name.log"
        exit 1
    fi
}
# field NAME KEY: KEY's value in the scif transport of NAME's report.
field() { sed -n "s/.*\"module\":\"scif\"[^}]*\"$2\":\([0-9]*\).*/\1/p" "$out/$1.json"; }

job send 2 send
if [ "$(field send rndv_rdma_bytes)" != $((vector * calls)) ]; then
    echo "SKIP: a plain 64 KiB MPI_Send did not go by single copy here (report: $(cat "$out/send.json"))"
    exit 77
fi
failed=0
job two 2
if [ "$(field two rndv_rdma_bytes)" != $((vector * calls)) ]; then
    echo "FAIL 2 ranks: the leaf's vectors did not all go by single copy: $(cat "$out/two.json")"
    failed=1
else
    echo "PASS 2 ranks: the leaf got $calls vectors by single copy"
fi
WEFT_MCA_mpi_coll_bcast_algorithm=binomial job four 4
rdma=$(field four rndv_rdma_bytes)
if [ -z "$rdma" ] || [ "$rdma" -lt $((2 * vector * calls)) ] || [ "$rdma" -gt $((3 * vector * calls)) ]; then
    echo "FAIL 4 ranks: $rdma bytes by single copy, expected the two leaves' $((2 * vector * calls)) (and at most the forwarded ones too): $(cat "$out/four.json")"
    failed=1
else
    echo "PASS 4 ranks: the leaves got their vectors by single copy ($rdma bytes)"
fi
job allgather 2 allgather
if [ "$(field allgather rndv_rdma_bytes)" != $((2 * vector * calls)) ]; then
    echo "FAIL allgather, 2 ranks: the blocks did not all go by single copy: $(cat "$out/allgather.json")"
    failed=1
else
    echo "PASS allgather, 2 ranks: both ranks' $calls blocks went by single copy"
fi
exit $failed
