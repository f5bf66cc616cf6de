#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make check's test of the profiling interface (PMPI):
#  1. weft_pmpi.h is in step with mpi.h (every MPI_X has its PMPI_X);
#  2. libweft_mpi exports every function of mpi.h as a weak MPI_X and a
#     strong PMPI_X (what lets a tool's MPI_X win, even in a static link);
#  3. a counting tool sees exactly the program's own calls, linked in
#     before libweft_mpi (pmpi_linked) and loaded with LD_PRELOAD
#     (pmpi_count); without the tool the same program runs unchanged.
set -u
builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
fail=0
say() { printf '%s\n' "$*"; }

if perl "$srcdir/mpi/pmpi-decls.pl" --check "$srcdir/mpi/include/mpi.h" "$srcdir/mpi/include/weft_pmpi.h"; then
    say "PASS weft_pmpi.h matches mpi.h"
else
    say "FAIL weft_pmpi.h does not match mpi.h"; fail=1
fi

lib="$builddir/.libs/libweft_mpi.so"
if [ ! -f "$lib" ] || ! command -v nm >/dev/null 2>&1; then
    say "SKIP symbol check: no $lib or no nm"
else
    names=$(sed -n 's/^[A-Za-z_][A-Za-z_ ]*[ *]PMPI_\([A-Za-z0-9_]*\)(.*/\1/p' "$srcdir/mpi/include/weft_pmpi.h")
    syms=$(nm -D --defined-only "$lib")
    bad=0
    for n in $names; do
        printf '%s\n' "$syms" | grep -q " W MPI_$n\$" || { say "FAIL MPI_$n is not a weak symbol of libweft_mpi"; bad=1; }
        printf '%s\n' "$syms" | grep -q " T PMPI_$n\$" || { say "FAIL PMPI_$n is not a defined symbol of libweft_mpi"; bad=1; }
    done
    [ "$bad" = 0 ] && say "PASS $(printf '%s\n' "$names" | wc -l) functions: MPI_X weak, PMPI_X defined" || fail=1
fi

tool="$builddir/tests/mpi/.libs/libpmpi_tool.so"
run() {   # run NAME: the rest is the command
    name=$1; shift
    if out=$(timeout 120 "$@" 2>&1) && printf '%s\n' "$out" | grep -qx 'No Errors'; then
        say "PASS $name"
    else
        say "FAIL $name"; printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'; fail=1
    fi
}
for np in 1 2 3; do
    run "tool linked in, np=$np" "$builddir/weftrun" --oversubscribe -np "$np" "$builddir/tests/mpi/pmpi_linked" tool
    # In a sanitizer build the program brings the ASan runtime in itself;
    # a preloaded tool comes before it, which ASan refuses by default.
    run "tool by LD_PRELOAD, np=$np" "$builddir/weftrun" --oversubscribe -np "$np" -x LD_PRELOAD="$tool" \
        -x ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
        "$builddir/tests/mpi/pmpi_count" tool
    run "no tool, np=$np" "$builddir/weftrun" --oversubscribe -np "$np" "$builddir/tests/mpi/pmpi_count" none
done
exit $fail
