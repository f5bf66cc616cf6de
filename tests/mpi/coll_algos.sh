#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# coll_algos.sh: tests/mpi/coll_algos at 1, 2, 3, 4, 5, 7 and 8 ranks, once
# with the algorithms chosen by size and once per forced set (the
# mpi_coll_*_algorithm parameters), each result against the program's
# serial reference; with mpi_coll_verbose, each forced algorithm must be
# the one that ran.
set -u
builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
prog="$builddir/tests/mpi/coll_algos"
if [ ! -x "$builddir/weftrun" ] || [ ! -x "$prog" ]; then
    echo "SKIP: weftrun or tests/mpi/coll_algos is not built"
    exit 77
fi
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
out=$(mktemp -d "${TMPDIR:-/tmp}/weft-coll-algos.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
np_list=${COLL_ALGOS_NP:-"1 2 3 4 5 7 8"}
failed=0

# run NAME NP 'VAR=VALUE ...' 'PATTERN|...': the program passes, and with
# 2 or more ranks every pattern (an extended regular expression) matches a
# line of its verbose report.
run() {
    name=$1 np=$2 vars=$3 patterns=$4
    log="$out/$name.$np"
    # shellcheck disable=SC2086
    env WEFT_MCA_mpi_coll_verbose=true $vars timeout 180 "$builddir/weftrun" --oversubscribe -np "$np" "$prog" \
        >"$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || ! grep -qx 'No Errors' "$log"; then
        echo "FAIL $name np=$np (exit $rc)"
        tail -20 "$log"
        failed=1
        return
    fi
    if [ "$np" -ge 2 ]; then
        old_ifs=$IFS
        IFS='|'
        for pat in $patterns; do
            if ! grep -Eq "$pat" "$log"; then
                echo "FAIL $name np=$np: no report line matching '$pat'"
                grep 'mpi_coll' "$log"
                failed=1
            fi
        done
        IFS=$old_ifs
    fi
    echo "PASS $name np=$np"
}

pow2() { case $1 in 1 | 2 | 4 | 8 | 16) return 0 ;; esac; return 1; }

for np in $np_list; do
    # Chosen by size (ranks that yield rather than sleep: the halving
    # algorithms need 4 ranks and ranks awake), and by how ranks wait.
    if [ "$np" -ge 4 ]; then halving="rabenseifner"; rsg="reduce_scatter_gather"; a2a="scattered \(medium"; else halving="recursive_doubling \(fewer than 4"; rsg="binomial \(fewer than 4"; a2a="pairwise"; fi
    # Barrier: linear at 3-4 ranks; bcast: linear up to 4 ranks for small
    # messages; else dissemination and the binomial tree.
    case $np in 3 | 4) barrier_auto="linear" ;; *) barrier_auto="dissemination" ;; esac
    if [ "$np" -le 4 ]; then bcast_small="linear"; else bcast_small="binomial"; fi
    run auto "$np" "WEFT_MCA_rte_base_progress=yield" "MPI_Barrier of 0 bytes on $np ranks: $barrier_auto|MPI_Bcast of 4 bytes on $np ranks: $bcast_small|MPI_Bcast of [0-9]+ bytes on $np ranks: binomial|MPI_Allreduce of [0-9]+ bytes on $np ranks: $halving|MPI_Allreduce of 4 bytes on $np ranks: recursive_doubling|MPI_Reduce of [0-9]+ bytes on $np ranks: $rsg|MPI_Alltoall of [0-9]+ bytes on $np ranks: $a2a"
    if pow2 "$np"; then ag_auto="recursive_doubling \(power of two"; else ag_auto="bruck \(small"; fi
    [ "$np" -ge 4 ] && run asleep "$np" "WEFT_MCA_rte_base_progress=block" "MPI_Allreduce of 20012 bytes on $np ranks: recursive_doubling \(ranks sleep|MPI_Allgather of [0-9]+ bytes on $np ranks: $ag_auto|MPI_Alltoall .*: scattered \(ranks share cores|MPI_Bcast of [0-9]+ bytes on $np ranks: linear \(ranks share cores|MPI_Reduce of [0-9]+ bytes on $np ranks: binomial \(ranks share cores, small vector"
    run trees "$np" "WEFT_MCA_mpi_coll_allreduce_algorithm=recursive_doubling WEFT_MCA_mpi_coll_reduce_algorithm=binomial WEFT_MCA_mpi_coll_allgather_algorithm=bruck WEFT_MCA_mpi_coll_alltoall_algorithm=bruck WEFT_MCA_mpi_coll_barrier_algorithm=dissemination WEFT_MCA_mpi_coll_bcast_algorithm=binomial" \
        "MPI_Barrier .*: dissemination \(forced|MPI_Bcast .*: binomial \(forced|MPI_Allreduce .*: recursive_doubling \(forced|MPI_Reduce .*: binomial \(forced|MPI_Allgather .*: bruck \(forced|MPI_Alltoall .*: bruck \(forced"
    if pow2 "$np"; then doubling="recursive_doubling \(forced"; else doubling="bruck \(recursive doubling forced"; fi
    run halving "$np" "WEFT_MCA_mpi_coll_allreduce_algorithm=rabenseifner WEFT_MCA_mpi_coll_reduce_algorithm=reduce_scatter_gather WEFT_MCA_mpi_coll_allgather_algorithm=recursive_doubling WEFT_MCA_mpi_coll_alltoall_algorithm=pairwise" \
        "MPI_Allreduce .*: rabenseifner \(forced|MPI_Reduce .*: reduce_scatter_gather \(forced|MPI_Allgather .*: $doubling|MPI_Alltoall .*: pairwise \(forced"
    run ring "$np" "WEFT_MCA_mpi_coll_allgather_algorithm=ring WEFT_MCA_mpi_coll_alltoall_algorithm=scattered WEFT_MCA_mpi_coll_barrier_algorithm=linear WEFT_MCA_mpi_coll_bcast_algorithm=linear" \
        "MPI_Allgather .*: ring \(forced|MPI_Alltoall .*: scattered \(forced|MPI_Barrier .*: linear \(forced|MPI_Bcast .*: linear \(forced"
    # The binomial reduce pipelined in 64-byte segments: hundreds of them
    # at the larger counts, two in flight per child, every root. Below 4
    # ranks no rank both receives and sends, and the vectors go whole.
    if [ "$np" -ge 4 ]; then
        run segments "$np" "WEFT_MCA_mpi_coll_reduce_algorithm=binomial WEFT_MCA_mpi_coll_reduce_segment_size=64" \
            "MPI_Reduce of [0-9]+ bytes on $np ranks: binomial \(pipelined in segments"
    elif [ "$np" -ge 2 ]; then
        run whole "$np" "WEFT_MCA_mpi_coll_reduce_algorithm=binomial WEFT_MCA_mpi_coll_reduce_segment_size=64" \
            "MPI_Reduce .*: binomial \(forced"
        if grep -q 'pipelined in segments' "$out/whole.$np"; then
            echo "FAIL whole np=$np: a reduce on fewer than 4 ranks was pipelined"
            failed=1
        fi
    fi
done
exit $failed
