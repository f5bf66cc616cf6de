#!/usr/bin/env bash
# third-party.sh: build third-party MPI suites unmodified with this build's
# weftcc/weftcxx and run what they built under weftrun.
#
#   third-party.sh [--osu DIR] [--imb DIR] [--np-list '2 4'] [--work DIR] [--keep]
#
# --osu DIR   an unpacked OSU Micro-Benchmarks tree (5.x or 7.x, with its
#             configure script). It is configured out of tree with
#             CC=weftcc CXX=weftcxx and built with make -k; every benchmark
#             it built runs at each --np-list size with few iterations:
#             pt2pt, collectives (blocking, nonblocking, persistent,
#             neighbourhood), startup, and one-sided with every -w and -s
#             option the benchmark accepts.
# --imb DIR   an Intel MPI Benchmarks tree: IMB-MPI1, IMB-NBC, IMB-RMA and
#             IMB-EXT are built with CC=weftcc CXX=weftcxx and run with
#             -npmin 2 -iter 100 (-msglog 0:12 to stay short).
# Neither suite is part of weft: nothing is fetched or committed. A suite
# whose directory is not given (or not there) is skipped with a word saying
# so. One line per benchmark run: "PASS name np=N (options)", "FAIL ...",
# "NOTBUILT name", or "N/A ... (needs another rank count)"; then a summary.
# Exit status 0 only when everything built and every run passed or was N/A.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=${WEFT_ABS_BUILDDIR:-$top}
osu="" imb="" np_list="2 4" work="${TMPDIR:-/tmp}/weft-third-party-$$" keep=0 tmo=120
while [ $# -gt 0 ]; do
    case "$1" in
    --osu) osu=$2; shift 2 ;;
    --imb) imb=$2; shift 2 ;;
    --np-list) np_list=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --timeout) tmo=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "third-party.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
for tool in weftcc weftcxx weftrun; do
    [ -x "$builddir/$tool" ] || { echo "SKIP: $builddir/$tool is not built (run make first)"; exit 77; }
done
if { [ -z "$osu" ] || [ ! -d "$osu" ]; } && { [ -z "$imb" ] || [ ! -d "$imb" ]; }; then
    echo "SKIP: no third-party suite given (--osu DIR and/or --imb DIR: unpacked source trees)"
    exit 77
fi
mkdir -p "$work" || exit 2
[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
export PATH="$builddir:$PATH"
launcher=("$builddir/weftrun" --oversubscribe)

pass=0 fail=0 na=0 notbuilt=0
failed=()
# run LABEL NP ARGS...: one benchmark run, classified.
run() {
    local label=$1 np=$2; shift 2
    local out rc
    out=$(timeout "$tmo" "${launcher[@]}" -np "$np" "$@" 2>&1); rc=$?
    if [ $rc = 0 ]; then
        echo "PASS $label np=$np"; pass=$((pass + 1))
    elif printf '%s' "$out" | grep -qiE 'requires (exactly|at least|an even)|number of processes|even number|process(es)? count|more than 1 node'; then
        echo "N/A  $label np=$np (needs another rank count or more nodes)"; na=$((na + 1))
    elif printf '%s' "$out" | grep -q 'exited without calling weft_finalize' &&
         ! printf '%s' "$out" | grep -qE '^weft MPI:|weft_abort'; then
        # It ran to the end and returned from main without MPI_Finalize
        # (OSU 7.4's osu_latency_mt does): a bug of the suite, which Open
        # MPI's mpirun reports too.
        echo "PASS $label np=$np (but it returned without MPI_Finalize: the suite's bug)"; pass=$((pass + 1))
    else
        [ $rc = 124 ] && out="(timed out after ${tmo}s)"$'\n'"$out"
        echo "FAIL $label np=$np (exit $rc)"; printf '%s\n' "$out" | tail -n 8 | sed 's/^/    /'
        fail=$((fail + 1)); failed+=("$label/np=$np")
    fi
}

if [ -n "$osu" ] && [ -d "$osu" ]; then
    osu=$(cd "$osu" && pwd)
    echo "# OSU: $osu"
    b="$work/osu-build"; mkdir -p "$b"
    if ! (cd "$b" && "$osu/configure" CC=weftcc CXX=weftcxx >configure.log 2>&1); then
        echo "FAIL OSU configure (see $b/configure.log)"; tail -n 20 "$b/configure.log" | sed 's/^/    /'
        fail=$((fail + 1)); failed+=("osu-configure")
    else
        (cd "$b" && make -k -j2 >make.log 2>&1)
        # Every benchmark source, and whether its program was built.
        while IFS= read -r src; do
            name=$(basename "$src" .c); rel=${src#"$osu"/}; dir=$(dirname "$rel")
            exe="$b/$dir/$name"
            if ! grep -qw "$name" "$b/$dir/Makefile" 2>/dev/null; then
                echo "N/A  $name ($dir: not a program of the suite's own Makefile)"; na=$((na + 1))
                continue
            fi
            if [ ! -x "$exe" ] && grep -qE "^#am__append_[0-9]+ = .*\<$(basename "$dir")\>" "$b/$(dirname "$dir")/Makefile" 2>/dev/null; then
                # The suite's configure left the directory out (OSU builds
                # collective/persistent only where MPI_Session_init, MPI-4, exists).
                echo "N/A  $name ($dir: not configured by the suite for an MPI-3.1 library)"; na=$((na + 1))
                continue
            fi
            if [ ! -x "$exe" ]; then
                echo "NOTBUILT $name ($dir)"; notbuilt=$((notbuilt + 1)); failed+=("$name(not built)")
                grep -E "^$osu/$rel:[0-9]+:[0-9]+: error|$name.*undefined reference" "$b/make.log" | head -n 4 | sed 's/^/    /'
                continue
            fi
            for np in $np_list; do
                case "$dir" in
                *startup*) run "$name" "$np" "$exe" ;;
                *one-sided*)
                    syncs="lock flush flush_local lock_all pscw fence"
                    grep -q 'synctype *= *ACTIVE_SYNC' "$src" && syncs="pscw fence"
                    for w in create allocate dynamic; do
                        for s in $syncs; do
                            run "$name -w $w -s $s" "$np" "$exe" -w "$w" -s "$s" -i 20 -x 2 -m 1:4096
                        done
                    done ;;
                *) run "$name" "$np" "$exe" -i 20 -x 2 -m 1:4096 ;;
                esac
            done
        done < <(find "$osu/c/mpi" -name 'osu_*.c' | sort)
    fi
else
    echo "SKIP OSU: no --osu DIR given (an unpacked OSU Micro-Benchmarks tree)"
fi

if [ -n "$imb" ] && [ -d "$imb" ]; then
    imb=$(cd "$imb" && pwd)
    echo "# IMB: $imb"
    b="$work/imb-build"; mkdir -p "$b"; cp -R "$imb/." "$b/"
    for t in IMB-MPI1 IMB-NBC IMB-RMA IMB-EXT; do
        if ! (cd "$b" && make CC=weftcc CXX=weftcxx "$t" >"make-$t.log" 2>&1) || [ ! -x "$b/$t" ]; then
            echo "NOTBUILT $t"; notbuilt=$((notbuilt + 1)); failed+=("$t(not built)")
            grep -E 'error|undefined reference' "$b/make-$t.log" | head -n 6 | sed 's/^/    /'
            continue
        fi
        for np in $np_list; do
            run "$t" "$np" "$b/$t" -npmin 2 -iter 100 -msglog 0:12 -time 5
        done
    done
else
    echo "SKIP IMB: no --imb DIR given (an Intel MPI Benchmarks tree)"
fi

echo "# third-party: $pass passed, $fail failed, $notbuilt not built, $na n/a${failed[*]:+: ${failed[*]}}"
[ $fail = 0 ] && [ $notbuilt = 0 ]
