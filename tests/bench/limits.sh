#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# weft_bench --limits: behaviour, not speed. On btl/scif and on btl/tcp a
# tiny job prints every row's usual line unchanged (the form compare reads),
# a `limit <test> <bytes> <limit> <fraction>` line after each row that has a
# limit (shm: latency up to 64 B, bandwidth from 4 KiB; tcp: every size), a
# fraction that is the row's value against its limit, and the CSV's two more
# columns (empty where a row has none). Without --limits nothing changes.
#
#   make check TESTS=tests/bench/limits.sh
#   WEFTRUN=./weftrun WEFT_BENCH=tests/bench/weft_bench sh tests/bench/limits.sh
set -u

WEFTRUN=${WEFTRUN:-./weftrun}
BENCH=${WEFT_BENCH:-./tests/bench/weft_bench}
LIMIT=180   # seconds any single job may take before timeout kills it
# What is printed is checked, not how fast: few iterations keep the jobs
# short on a loaded machine.
export WEFT_BENCH_ITERS=200

for f in "$WEFTRUN" "$BENCH"; do
    [ -x "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
# Ranks must not inherit parameters from the caller's environment.
unset WEFT_BENCH_CSV WEFT_BENCH_SIZES WEFT_BENCH_LIMITS
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

work=$(mktemp -d "${TMPDIR:-/tmp}/weft-limits-test.XXXXXX") || { echo "ERROR: mktemp"; exit 99; }
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

# job NAME BTL ARGS...: runs weft_bench on BTL; output in $work/NAME.{out,err,csv}
job() {
    name=$1 btl=$2; shift 2
    WEFT_MCA_btl=$btl timeout -k 5 $LIMIT "$WEFTRUN" -np 2 "$BENCH" --csv "$work/$name.csv" "$@" \
        >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    [ $rc -eq 0 ] || { fail "$name: weft_bench exited $rc"; cat "$work/$name.err"; return 1; }
}

# check NAME EXPECTED-LIMITED: the rows' lines keep compare's form, the
# `limit` lines are exactly the EXPECTED-LIMITED "test size" pairs, each with
# a positive limit and the fraction the row reaches, and the CSV agrees.
check() {
    name=$1 expected=$2
    out=$work/$name.out csv=$work/$name.csv
    # compare's pattern for a row (../shared/bench/compare PP_LINE), unchanged
    if grep -E '^(lat|bw) ' "$out" | grep -Evq '^(lat|bw) [0-9]+ [0-9]*\.?[0-9]+$'; then
        fail "$name: a lat/bw line is not in the form compare reads:"; cat "$out"; return
    fi
    got=$(awk '$1 == "limit" { print $2, $3 }' "$out")
    if [ "$got" != "$expected" ]; then
        fail "$name: limit lines for '$(echo $got)', expected '$(echo $expected)':"; cat "$out" "$work/$name.err"; return
    fi
    # Each limit line follows its row; fraction = limit / value (latency) or value / limit (bandwidth).
    # Value and limit are printed rounded, so the fraction is checked against
    # the range their last printed digits allow (a bandwidth of 0.40 against
    # a limit of 0.08 under load is anything from 4.4 to 5.4).
    if ! awk 'function half(x) { return index(x, ".") ? 0.5 * 10 ^ -(length(x) - index(x, ".")) : 0.5 }
              $1 != "limit" { test = $1; size = $2; value = $3; next }
              $2 != test || $3 != size || NF != 5 || $4 <= 0 || value <= 0 { bad = 1; next }
              { hv = half(value); hl = half($4)
                if ($2 == "bw") { lo = (value - hv) / ($4 + hl); hi = ($4 > hl) ? (value + hv) / ($4 - hl) : 1e30 }
                else { lo = ($4 - hl) / (value + hv); hi = (value > hv) ? ($4 + hl) / (value - hv) : 1e30 }
                if ($5 < lo * 0.99 - 0.001 || $5 > hi * 1.01 + 0.001) bad = 1 }
              END { exit bad }' "$out"; then
        fail "$name: a limit line does not follow its row or its fraction is not the row against the limit:"
        cat "$out"; return
    fi
    if [ "$(head -1 "$csv")" != "test,size,value,unit,limit,fraction" ]; then
        fail "$name: CSV header is '$(head -1 "$csv")'"; return
    fi
    csv_limited=$(tail -n +2 "$csv" | awk -F, 'NF != 6 { print "bad", NR; next } $5 != "" { print $1, $2 }')
    csv_limits=$(tail -n +2 "$csv" | awk -F, '$5 != "" { print $1, $2, $5, $6 }')
    text_limits=$(awk '$1 == "limit" { print $2, $3, $4, $5 }' "$out")
    if [ "$csv_limited" != "$expected" ] || [ "$csv_limits" != "$text_limits" ]; then
        fail "$name: the CSV's limit columns differ from the text:"; cat "$csv" "$out"; return
    fi
    pass "$name"
}

# 1. shm: the cache-line floor up to 64 B, memcpy from 4 KiB, nothing between.
if job shm self,scif --limits both 8,1024,4096; then
    check shm "lat 8
bw 4096"
fi

# 2. tcp: the busy-polled loopback socket at every size.
if job tcp self,tcp --limits both 8,65536; then
    check tcp "lat 8
bw 8
lat 65536
bw 65536"
fi

# 3. WEFT_BENCH_LIMITS=1 does what --limits does, for other modes' rows too.
export WEFT_BENCH_LIMITS=1
if job env self,scif latdist 8; then
    check env "latmed 8
latavg 8
latp90 8
latp99 8"
fi
# rawdist: the transport's own round trips, timed alike; percentiles in order.
if job rawdist self,scif rawdist 8; then
    check rawdist "rawmed 8
rawavg 8
rawp90 8
rawp99 8"
    if awk '$1 == "rawmed" { m = $3 } $1 == "rawp90" { p90 = $3 } $1 == "rawp99" { p99 = $3 }
            END { exit !(m > 0 && m <= p90 && p90 <= p99) }' "$work/rawdist.out"; then
        pass "rawdist percentiles in order"
    else
        fail "rawdist: median, p90, p99 out of order:"; cat "$work/rawdist.out"
    fi
fi
unset WEFT_BENCH_LIMITS

# 4. Without --limits: no limit lines, and the CSV keeps its four columns.
if job plain self,scif lat 8; then
    if grep -q '^limit' "$work/plain.out" || [ "$(head -1 "$work/plain.csv")" != "test,size,value,unit" ]; then
        fail "without --limits the output changed:"; cat "$work/plain.out" "$work/plain.csv"
    else
        pass "without --limits"
    fi
fi

[ $failures -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
exit 0
