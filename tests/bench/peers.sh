# SPDX-License-Identifier: BSD-3-Clause
# Sourced by startup.sh and scale.sh: the weft build to measure and the
# peers beside it. Sets builddir, weftrun, weftprog (tests/bench/
# weft_startup), work (a temporary directory removed on exit), and ompi /
# mpich: the launcher command of Open MPI / MPICH with $work/mpi_ompi /
# $work/mpi_mpich built from mpi_startup.c, or empty when that peer is not
# installed. Clears WEFT_MCA_* and OMPI_MCA_* so the caller's environment
# changes nothing. Needs `here` (the script's directory) and `me` (its name).
builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
weftrun=$builddir/weftrun
weftprog=$builddir/tests/bench/weft_startup
[ -x "$weftrun" ] && [ -x "$weftprog" ] || { echo "$me: build weft first (make)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/weft-$me.XXXXXX")
trap 'rm -rf "$work"' EXIT
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\|OMPI_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
ompi="" mpich=""
if command -v mpicc.openmpi >/dev/null 2>&1 && mpicc.openmpi -O2 -o "$work/mpi_ompi" "$here/mpi_startup.c" 2>/dev/null; then
    ompi="mpirun.openmpi --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader"
fi
if command -v mpicc.mpich >/dev/null 2>&1 && mpicc.mpich -O2 -o "$work/mpi_mpich" "$here/mpi_startup.c" 2>/dev/null; then
    mpich="mpiexec.mpich"
fi
