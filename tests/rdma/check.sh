#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# make check-rdma: btl/openib on a real RDMA device (the Soft-RoCE VM:
#   ../shared/rdma-vm/run-in-rxe-vm --workdir "$PWD" -- make check-rdma).
# Exits 77 (skipped) where no RDMA port is ACTIVE, never passing openib
# untested. Every job has a time bound; Soft-RoCE under emulation is slow,
# so the bounds are generous (they guard against hangs, they measure nothing).
set -u
builddir=$(cd "${1:-.}" && pwd)
cd "$builddir"
failures=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

if ! command -v ibv_devinfo >/dev/null || ! ibv_devinfo 2>/dev/null | grep -q "PORT_ACTIVE"; then
    echo "SKIP: no ACTIVE RDMA port here (run inside ../shared/rdma-vm/run-in-rxe-vm)"
    exit 77
fi
if ! ./weft_info --parsable | grep -q "^mca:btl:openib:status:loaded"; then
    echo "FAIL: btl/openib is not built although an RDMA port is active"
    ./weft_info --parsable | grep "btl:openib" | head -5
    exit 1
fi
if ./weft_info --parsable | grep -q "^mca:btl:openib:status:unavailable"; then
    fail "btl/openib says it cannot run: $(./weft_info --parsable | grep '^mca:btl:openib:reason' | head -1)"
fi

# 1. The btl conformance suite over each cpc, and openib's own tests.
if timeout -k 5 900 tests/unit/weft_unit_tests --gtest_filter='*openib*:*Openib*' --gtest_brief=1 \
        > rdma-unit.log 2>&1; then
    pass "conformance suite and btl/openib tests: $(grep -E '^\[  PASSED  \]' rdma-unit.log | sed 's/.*\] *//')"
else
    fail "conformance suite and btl/openib tests (rdma-unit.log):"
    grep -E "FAILED|Failure|parent:|child:" rdma-unit.log | head -20
fi

# 2. Real jobs under weftrun over openib alone, one per cpc: ping-pong
#    (eager and rendezvous sizes) and the engine's checked stress stream.
run_job() {   # run_job CPC OUT TIMEOUT ARGS...: 0 if the job ran
    local cpc=$1 out=$2 limit=$3; shift 3
    timeout -k 5 "$limit" ./weftrun -np 2 --mca btl self,openib --mca btl_openib_cpc "$cpc" "$@" > "$out" 2>&1
}
for cpc in udcm rdmacm oob; do
    out=rdma-job-$cpc.log
    if run_job "$cpc" "$out" 300 tests/bench/weft_bench lat 8,4096,65536,1048576 &&
       [ "$(grep -c '^lat ' "$out")" = 4 ]; then
        pass "ping-pong over openib/$cpc: $(grep '^lat 8 ' "$out")"
    else
        fail "ping-pong over openib/$cpc:"; tail -5 "$out"
    fi
    if run_job "$cpc" "$out" 600 tests/runtime/weft_stress 20000 any &&
       [ "$(grep -c 'stress: rank [01] ok 10000 messages received, 10000 sent' "$out")" = 2 ]; then
        pass "stress (20000 checked messages, eager and RDMA rendezvous) over openib/$cpc"
    else
        fail "stress over openib/$cpc:"; tail -5 "$out"
    fi
done

# 3. Four ranks, every pair connecting at once (simultaneous connects: each
#    pair's two requests cross), over each cpc; oob wires every pair inside
#    weft_init instead (the modex carries each pair's queue pair numbers).
for cpc in udcm rdmacm oob; do
    out=rdma-np4-$cpc.log
    if timeout -k 5 600 ./weftrun -np 4 --oversubscribe --mca btl self,openib --mca btl_openib_cpc "$cpc" \
            tests/runtime/weft_stress 20000 any > "$out" 2>&1 &&
       [ "$(grep -c 'stress: rank [0-3] ok' "$out")" = 4 ]; then
        pass "stress with 4 ranks over openib/$cpc"
    else
        fail "stress with 4 ranks over openib/$cpc:"; tail -5 "$out"
    fi
done

if [ $failures -gt 0 ]; then
    echo "check-rdma: $failures check(s) failed"
    exit 1
fi
echo "check-rdma: all checks passed"
