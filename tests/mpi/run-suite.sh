#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run-suite.sh: run weft's MPI test programs at several rank counts.
#
#   run-suite.sh [--launcher 'CMD'] [--np-option OPT] [--np-list '1 2 3 4']
#                [--bindir DIR] [--env 'K=V ...']... [--cc 'CC'] [--timeout S]
#                [program ...]
#
# Each program runs as `timeout S $LAUNCHER -np N $BINDIR/prog` (--np-option
# -n for srun, which has no -np) and passes
# when it exits 0 and prints a line exactly "No Errors"; errors_fatal passes
# when it exits non-zero without timing out (the job must abort). Every
# --env gives one variant: the whole list runs once per variant with those
# variables set (e.g. --env WEFT_MCA_btl=self,scif --env WEFT_MCA_btl=self,tcp).
# One line per run: "PASS prog np=N (variant)" or "FAIL ..." followed by the
# tail of its output. Exit status 0 only if every run passed.
#
# --cc 'mpicc ...' builds the programs into BINDIR first (C11, -Wall -Wextra).
# The default launcher is weft's weftrun ($WEFTRUN, else ./weftrun of the
# build tree, else weftrun on PATH). Against Open MPI 4.1 on one host:
#   run-suite.sh --launcher 'mpirun.openmpi --allow-run-as-root --oversubscribe --mca osc pt2pt' \
#                --cc mpicc.openmpi --bindir /tmp/mpitests-ompi
# (its default one-sided component, osc/rdma, refuses windows on one-process
# communicators: open-mpi/ompi#10726).

set -u

# ---- the programs, and the fewest ranks each needs ----
PROGRAMS_AND_MIN_NP="
p2p_basic        1
p2p_order        1
p2p_truncate     1
p2p_probe_cancel 1
datatypes        1
comm             1
coll             1
onesided         1
win_basic        1
errhandler       1
init_thread      1
errors_fatal     1
pmpi_count       1

# (p2p, requests, threads, environment)
p2p_persistent   1
p2p_mprobe       1
env_info         1
thread_multiple  1

# (collectives)
coll_ops         1
coll_nb          1
coll_scratch     1
coll_algos       1

# (communicators, topologies, attributes)
attr             1
topo             1
neighbor         1
comm_more        1
intercomm        1

# (one-sided)
win_atomic       1
win_epochs       1
win_osu          1

# (tool information interface)
mpit             1
# (mpi4py's cases)
datatypes_dist   1
intercomm_coll   2
"
# Programs whose job must end in failure.
EXPECT_ABORT="errors_fatal"

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

launcher=""
np_option="-np"
np_list="1 2 3 4"
bindir="$here"
cc=""
tmo=120
envs=()
progs=()

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

while [ $# -gt 0 ]; do
    case "$1" in
    --launcher) launcher="$2"; shift 2 ;;
    --np-option) np_option="$2"; shift 2 ;;
    --np-list) np_list="$2"; shift 2 ;;
    --bindir) bindir="$2"; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --cc) cc="$2"; shift 2 ;;
    --timeout) tmo="$2"; shift 2 ;;
    -h | --help) usage 0 ;;
    --*) echo "run-suite.sh: unknown option $1" >&2; usage 2 ;;
    *) progs+=("$1"); shift ;;
    esac
done

if [ -z "$launcher" ]; then
    if [ -n "${WEFTRUN:-}" ]; then
        launcher="$WEFTRUN"
    elif [ -x "$top/weftrun" ]; then
        launcher="$top/weftrun"
    else
        launcher="weftrun"
    fi
fi

min_np_of() {
    echo "$PROGRAMS_AND_MIN_NP" | awk -v p="$1" '$1 == p { print $2; found = 1 } END { if (!found) print 1 }'
}

if [ ${#progs[@]} -eq 0 ]; then
    # shellcheck disable=SC2207
    progs=($(echo "$PROGRAMS_AND_MIN_NP" | awk 'NF == 2 && $1 !~ /^#/ { print $1 }'))
fi
[ ${#envs[@]} -eq 0 ] && envs=("")

if [ -n "$cc" ]; then
    mkdir -p "$bindir" || exit 2
    for p in "${progs[@]}"; do
        # shellcheck disable=SC2086
        if ! $cc -std=c11 -Wall -Wextra -O1 -I"$here" "$here/$p.c" -o "$bindir/$p" >"$bindir/$p.build.log" 2>&1; then
            echo "BUILD-FAIL $p (see $bindir/$p.build.log)"
            tail -n 20 "$bindir/$p.build.log" | sed 's/^/    /'
            exit 1
        fi
    done
fi

# The label of a variant: the values of its K=V words ("self,scif").
label_of() {
    [ -z "$1" ] && { echo "default"; return; }
    local out="" w
    for w in $1; do out="${out:+$out }${w#*=}"; done
    echo "$out"
}

pass=0
fail=0
failed_list=""
out=$(mktemp "${TMPDIR:-/tmp}/run-suite.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT

for variant in "${envs[@]}"; do
    label=$(label_of "$variant")
    for p in "${progs[@]}"; do
        min=$(min_np_of "$p")
        for np in $np_list; do
            [ "$np" -lt "$min" ] && continue
            if [ ! -x "$bindir/$p" ]; then
                echo "FAIL $p np=$np ($label): $bindir/$p is missing (build with --cc)"
                fail=$((fail + 1))
                failed_list="$failed_list $p/np=$np/$label"
                continue
            fi
            # shellcheck disable=SC2086
            env $variant timeout -k 10 "$tmo" $launcher "$np_option" "$np" "$bindir/$p" >"$out" 2>&1 </dev/null
            rc=$?
            ok=0
            why=""
            case " $EXPECT_ABORT " in
            *" $p "*)
                if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
                    why="the job did not end (timeout ${tmo}s): an error under MPI_ERRORS_ARE_FATAL must end the whole job"
                elif [ $rc -eq 0 ]; then
                    why="exit status 0: the job was expected to abort"
                elif grep -q '^ERROR:' "$out"; then
                    why="the erroneous call returned instead of aborting"
                else
                    ok=1
                fi
                ;;
            *)
                if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
                    why="timeout after ${tmo}s"
                elif [ $rc -ne 0 ]; then
                    why="exit status $rc"
                elif ! grep -qx 'No Errors' "$out"; then
                    why="no line \"No Errors\""
                else
                    ok=1
                fi
                ;;
            esac
            if [ $ok -eq 1 ]; then
                echo "PASS $p np=$np ($label)"
                pass=$((pass + 1))
            else
                echo "FAIL $p np=$np ($label): $why"
                # A hang's report (weftrun --get-stack-traces) is long: keep all of it.
                lines=15
                { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && lines=600
                tail -n "$lines" "$out" | sed 's/^/    /'
                fail=$((fail + 1))
                failed_list="$failed_list $p/np=$np/$label"
            fi
        done
    done
done

echo "# $pass passed, $fail failed${failed_list:+:$failed_list}"
[ $fail -eq 0 ]
