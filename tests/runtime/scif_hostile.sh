#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# btl/scif against a hostile local process: a live 2-rank job
# (tests/runtime/scif_target) runs tests/runtime/scif_stranger against both
# ranks' scif ports (truncatable and oversized rings, forged hellos, another
# uid when root, silent and many connections) and then checks its own
# traffic. Passes when the stranger was refused every time, the job's
# results are right, and each rank counted its refusals. Bounded by timeout.
set -u

builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
target=$builddir/tests/runtime/scif_target
stranger=$builddir/tests/runtime/scif_stranger
weftrun=$builddir/weftrun
limit=300

if [ ! -x "$target" ] || [ ! -x "$stranger" ] || [ ! -x "$weftrun" ]; then
    echo "SKIP: scif_target, scif_stranger or weftrun is not built"
    exit 77
fi
if ! "$builddir/weft_info" --parsable | grep -q "^mca:btl:scif:status:loaded"; then
    echo "SKIP: btl/scif is not built"
    exit 77
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/weft-scif-hostile.XXXXXX") || exit 99
trap 'rm -rf "$root"' EXIT
trap 'exit 130' INT TERM
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
HOME=$root/home; export HOME; mkdir -p "$HOME"
out=$root/out err=$root/err

failures=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; failures=$((failures + 1)); }

# A short handshake deadline and a small pending cap, so the silent
# connections are dropped (and evicted) while the stranger waits.
env TMPDIR="$root" timeout -k 5 $limit "$weftrun" -np 2 --mca btl self,scif \
    --mca btl_scif_handshake_timeout 1 --mca btl_scif_max_pending 8 \
    --mca btl_base_verbose info "$target" "$stranger" >"$out" 2>"$err"
rc=$?
sed 's/^/#   out: /' "$out"
sed 's/^/#   err: /' "$err" | head -40
[ $rc -eq 124 ] && echo "# the job timed out after ${limit}s"
if [ $rc -eq 0 ]; then pass "the attacked job exits 0"; else fail "the attacked job exits $rc"; fi
n=$(grep -c "^scif_target: rank [01] ok" "$out")
if [ "$n" -eq 2 ]; then pass "both ranks' traffic after the attack is correct"; else
    fail "$n of 2 ranks report correct traffic"; fi
if grep -q "^stranger: all attempts refused" "$out"; then pass "every attempt was refused"; else
    fail "the stranger was not refused every time"; fi
if grep -q "NOT REFUSED" "$out"; then fail "some attempts were accepted"; fi
# Each rank counted every stranger's connection once and said so at finalize.
counted=0
for line in $(sed -n 's/^stranger: pid \([0-9]*\): \([0-9]*\) connections$/\1:\2/p' "$out"); do
    pid=${line%%:*} made=${line#*:}
    if grep -q ":$pid\] btl/scif info: btl/scif: refused $made incoming connections" "$err"; then
        counted=$((counted + 1))
    else
        fail "pid $pid does not report $made refused connections at finalize"
    fi
done
if [ $counted -eq 2 ]; then pass "each rank counted each of the stranger's connections once"; else
    fail "$counted of 2 ranks report the right refusal count"; fi

if [ $failures -gt 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
exit 0
