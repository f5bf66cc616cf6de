#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The compiler wrappers as a user meets them: weftcc and weftcxx from the
# build tree show their flags, build an unmodified MPI program in C and in
# C++, and the programs run as a job under weftrun and as a singleton; a
# program using a function outside the subset fails to compile (mpi.h
# declares only what libweft_mpi implements).
set -u

builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
weftcc=$builddir/weftcc weftcxx=$builddir/weftcxx weftrun=$builddir/weftrun
if [ ! -x "$weftcc" ] || [ ! -x "$weftrun" ]; then
    echo "SKIP: weftcc or weftrun is not built"
    exit 77
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/weft-wrapper.XXXXXX") || exit 99
trap 'rm -rf "$root"' EXIT
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

failures=0
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; failures=$((failures + 1)); }
check() { if eval "$2"; then ok "$1"; else notok "$1"; fi; }

check "--showme:compile names the header directory" \
    '"$weftcc" --showme:compile | grep -q -- "-I.*mpi/include"'
check "--showme:link links libweft_mpi and libweft" \
    '"$weftcc" --showme:link | grep -q -- "-lweft_mpi -lweft"'
check "--showme prints a command and runs nothing" \
    '"$weftcc" --showme x.c -o x | grep -q "x.c -o x" && [ ! -e x ]'
check "-c compiles without link flags" \
    '! "$weftcc" -show -c x.c | grep -q -- -lweft_mpi'

cat > "$root/ring.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) {
        if (rank == 0) {
            token = 1;
            MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
    } else {
        token = 1;
    }
    if (rank == 0)
        printf("token %d of %d\n", token, size);
    MPI_Finalize();
    return 0;
}
C
cat > "$root/sum.cc" <<'CXX'
#include <mpi.h>
#include <cstdio>
#include <vector>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<long> v(4, rank + 1), s(4);
    MPI_Allreduce(v.data(), s.data(), 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("sum %ld\n", s[3]);
    MPI_Finalize();
}
CXX
cat > "$root/outside.c" <<'C'
#include <mpi.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_File f;   /* MPI-IO is not in the subset */
    MPI_Finalize();
    return 0;
}
C

if "$weftcc" -o "$root/ring" "$root/ring.c" 2>"$root/err"; then
    ok "weftcc builds a C MPI program"
    # stdout only: a sanitizer build's runtime reports on stderr.
    out=$(timeout 120 "$weftrun" -np 2 "$root/ring" 2>"$root/err")
    check "the C program runs under weftrun -np 2" '[ "$out" = "token 2 of 2" ]' || sed 's/^/# /' "$root/err"
    out=$(timeout 120 "$root/ring" 2>"$root/err")
    check "the C program runs as a singleton" '[ "$out" = "token 1 of 1" ]' || sed 's/^/# /' "$root/err"
else
    notok "weftcc builds a C MPI program"; sed 's/^/# /' "$root/err"
fi
if "$weftcxx" -o "$root/sum" "$root/sum.cc" 2>"$root/err"; then
    ok "weftcxx builds a C++ MPI program"
    out=$(timeout 120 "$weftrun" -np 2 "$root/sum" 2>"$root/err")
    check "the C++ program runs under weftrun -np 2" '[ "$out" = "sum 3" ]' || sed 's/^/# /' "$root/err"
else
    notok "weftcxx builds a C++ MPI program"; sed 's/^/# /' "$root/err"
fi
if "$weftcc" -o "$root/outside" "$root/outside.c" 2>"$root/err"; then
    notok "a program using MPI_File (outside the subset) does not compile"
else
    check "a program using MPI_File (outside the subset) does not compile" 'grep -q MPI_File "$root/err"'
fi

[ $failures -eq 0 ] || { echo "$failures failed"; exit 1; }
exit 0
