#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two ranks that time-slice one core: weftrun without binding, itself
# confined to one CPU by taskset, so both ranks inherit that one CPU. Each
# rank counts as one of two processes on a two-core node, so its progress is
# busy polling; a busy rank used to spin out a whole time slice per message
# (4-7 ms one way: weft_bench's `lat 0` took 145 s), where it must hand the
# core to its peer. Ping-pong and stream over btl/tcp of an eager and a
# rendezvous size, bounded by a limit that spinning ranks need several times
# over.
set -u

builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
bench=$builddir/tests/bench/weft_bench
weftrun=$builddir/weftrun
limit=60

skip() { echo "SKIP: $*"; exit 77; }
[ -x "$bench" ] || skip "$bench is not built"
[ -x "$weftrun" ] || skip "$weftrun is not built"
command -v taskset >/dev/null 2>&1 || skip "taskset is not installed"
# The first CPU this script may run on.
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
[ -n "$cpu" ] || skip "cannot read this process's CPUs from /proc/self/status"

root=$(mktemp -d "${TMPDIR:-/tmp}/weft-shared-core.XXXXXX") || exit 99
trap 'rm -rf "$root"' EXIT
trap 'exit 130' INT TERM
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

failures=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; failures=$((failures + 1)); }
count_is() {
    n=$(grep -c -- "$2" "$1")
    if [ "$n" -eq "$3" ]; then pass "'$2' x$3"; else fail "'$2' x$n, expected $3"; sed 's/^/#   /' "$1" | head -30; fi
}

timeout -k 5 $limit taskset -c "$cpu" "$weftrun" --bind-to none -np 2 -x WEFT_MCA_btl=self,tcp \
    "$bench" both 0,8,65536 >"$root/out" 2>"$root/err"
rc=$?
if [ $rc -eq 0 ]; then pass "two ranks on CPU $cpu: benchmark exits 0"; else
    fail "two ranks on CPU $cpu: benchmark exits $rc$([ $rc -eq 124 ] && echo " (timed out after $limit s)")"
    sed 's/^/#   /' "$root/out" "$root/err" | tail -30
fi
count_is "$root/out" "^lat [0-9]* [0-9.]*$" 3
count_is "$root/out" "^bw [0-9]* [0-9.]*$" 3

if [ $failures -gt 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
