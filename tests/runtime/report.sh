#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# weftrun --report (rte_base_report): the end-of-job summary of a
# deterministic job (tests/runtime/weft_counters exact over btl/tcp, the
# eager limit pinned) against tests/golden/report-tcp.txt, and the same as
# JSON (--report=json:FILE). What depends on timing is normalized: the job
# id, the duration, the measured bandwidth, the interface, and the AGAIN retries a busy
# socket may or may not cause.
#
#   WEFT_UPDATE_GOLDEN=1 make check TESTS=tests/runtime/report.sh   rewrites it
set -u

builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
prog=$builddir/tests/runtime/weft_counters
weftrun=$builddir/weftrun
golden=$srcdir/tests/golden/report-tcp.txt
if [ ! -x "$prog" ] || [ ! -x "$weftrun" ]; then
    echo "SKIP: $prog or $weftrun is not built"
    exit 77
fi
if ! "$builddir/weft_info" --parsable | grep -q "^mca:btl:tcp:status:loaded"; then
    echo "SKIP: btl/tcp is not built"
    exit 77
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/weft-report.XXXXXX") || exit 99
trap 'rm -rf "$root"' EXIT
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
# The report is on stderr; a sanitizer build's leak checker must not add its
# list of suppressions used there.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}print_suppressions=0"
failures=0
run() {   # run REPORT-OPTION: the job; its stderr in $root/err
    env TMPDIR="$root" timeout -k 5 120 "$weftrun" -np 2 --mca btl self,tcp --mca engine_base_eager_limit 4096 \
        "$1" "$prog" exact >"$root/out" 2>"$root/err"
}
normalize() {
    sed -e 's/job [^ ,]*, /job @JOB@, /' -e 's/ranks, [0-9.]* s$/ranks, @SECONDS@ s/' \
        -e 's/, [0-9.]* MB\/s (/, @MB\/S@ (/' -e 's/ tcp\/[^ ]* / tcp\/@IF@ /' \
        -e '/(the transport answered AGAIN)$/d' \
        -e '/AGAIN answers (ring, socket or queue full)$/d' "$1"
}

run --report; rc=$?
grep '^weft report\|^  ' "$root/err" >"$root/report" || true
normalize "$root/report" >"$root/normalized"
if [ "${WEFT_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$root/normalized" "$golden"
    echo "updated $golden"
fi
if [ "$rc" = 0 ] && diff -u "$golden" "$root/normalized"; then
    echo "ok - --report (text) matches $(basename "$golden")"
else
    echo "not ok - --report (text): exit $rc, or the report differs from $(basename "$golden") (above)"
    sed 's/^/    /' "$root/err" | tail -n 30
    failures=$((failures + 1))
fi

(cd "$root" && run --report=json:"$root/report.json"); rc=$?
# One object; rank 0 sent rank 1 the exchange's 1422543 bytes, rank 1 sent
# rank 0 two 1-byte messages: 1422545 bytes over tcp in all.
if [ "$rc" = 0 ] && [ "$(wc -l <"$root/report.json")" = 1 ] &&
    grep -q '"transports":\[{"class":"same-node","module":"tcp[^"]*","messages":18,"bytes":1422545,' \
        "$root/report.json" && grep -q '"unexpected_hwm":{"rank":1,"depth":5}' "$root/report.json"; then
    echo "ok - --report=json:FILE"
else
    echo "not ok - --report=json:FILE: exit $rc"
    sed 's/^/    /' "$root/report.json" "$root/err" 2>/dev/null | tail -n 20
    failures=$((failures + 1))
fi
[ $failures = 0 ]
