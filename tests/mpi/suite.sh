#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make check's MPI suite: every program of tests/mpi under this build's
# weftrun at 1, 2, 3 and 4 ranks (oversubscribed on small hosts), once over
# self+scif and once over self+tcp; then three of them under Open MPI's
# mpirun. run-suite.sh does the work.
set -u
builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
srcdir=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$builddir/weftrun" ] || [ ! -x "$builddir/tests/mpi/p2p_basic" ]; then
    echo "SKIP: weftrun or the MPI test programs are not built"
    exit 77
fi
# No parameter from the caller's environment changes what is tested.
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
variants="--env WEFT_MCA_btl=self,tcp"
if "$builddir/weft_info" --parsable 2>/dev/null | grep -q '^mca:btl:scif:'; then
    variants="--env WEFT_MCA_btl=self,scif $variants"
else
    echo "# btl/scif is not built here: self+tcp only"
fi
# shellcheck disable=SC2086
# weftrun's own timeout comes first, so a hang shows where every rank was.
bash "$srcdir/run-suite.sh" --launcher "$builddir/weftrun --oversubscribe --timeout 100 --get-stack-traces" \
    --bindir "$builddir/tests/mpi" --np-list '1 2 3 4' --timeout 120 $variants || exit 1
# The same programs under Open MPI's launcher (weft is a plain PMIx client).
if command -v mpirun.openmpi >/dev/null 2>&1; then
    launcher="mpirun.openmpi --oversubscribe --mca btl self --mca pml ob1"   # as tests/runtime/jobs.sh
    [ "$(id -u)" = 0 ] && launcher="$launcher --allow-run-as-root"
    bash "$srcdir/run-suite.sh" --launcher "$launcher" --bindir "$builddir/tests/mpi" \
        --np-list '2 4' --timeout 120 --env WEFT_MCA_btl=self,scif,tcp p2p_basic coll win_basic || exit 1
else
    echo "# mpirun.openmpi is not installed: the runs under Open MPI's launcher are skipped"
fi
exit 0
