#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A two-host job: Open MPI's mpirun launches tests/runtime/weft_probe on the
# network-namespace hosts h1 and h2 of shared/netns (each its own network
# and UTS namespace). Checks ranks, node ids, peer classes (same node vs
# other node, from PMIx, not host names) and the modex across hosts, and
# that a failure on h2 ends the job. With a second veth pair between the
# hosts, btl/tcp has two modules that reach the other host: the engine
# stripes rendezvous data over both, and a stress job checks that every
# message still arrives whole and in order.
#
# Needs root, `ip netns`, mpirun.openmpi and the netns scripts (found in
# WEFT_NETNS_DIR, else ../shared/netns beside the source tree); skips with
# the reason otherwise.
set -u

builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
srcdir_abs=${WEFT_ABS_SRCDIR:-$(pwd)}
probe=$builddir/tests/runtime/weft_probe
stress=$builddir/tests/runtime/weft_stress
netns=${WEFT_NETNS_DIR:-$srcdir_abs/../shared/netns}

skip() { echo "SKIP: $*"; exit 77; }
[ -x "$probe" ] || skip "$probe is not built"
[ "$(id -u)" = 0 ] || skip "needs root for ip netns"
command -v ip >/dev/null 2>&1 && ip netns list >/dev/null 2>&1 || skip "ip netns is not available"
command -v mpirun.openmpi >/dev/null 2>&1 || skip "mpirun.openmpi is not installed"
[ -x "$netns/setup" ] || skip "no netns scripts in $netns (set WEFT_NETNS_DIR)"

root=$(mktemp -d "${TMPDIR:-/tmp}/weft-netns.XXXXXX") || exit 99
cleanup() {
    ip -n h1 link del weftrail1 >/dev/null 2>&1
    "$netns/teardown" >/dev/null 2>&1 || NETNS_FORCE=1 "$netns/teardown" >/dev/null 2>&1
    rm -rf "$root"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

"$netns/setup" >"$root/setup.log" 2>&1 || { cat "$root/setup.log"; skip "netns setup failed"; }

failures=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; failures=$((failures + 1)); }
has() { if grep -q -- "$3" "$2"; then pass "$1: has '$3'"; else fail "$1: no '$3'"; sed 's/^/#   /' "$2" | head -30; fi; }
count_is() {
    n=$(grep -c -- "$3" "$2")
    if [ "$n" -eq "$4" ]; then pass "$1: '$3' x$4"; else fail "$1: '$3' x$n, expected $4"; sed 's/^/#   /' "$2" | head -30; fi
}

run() {   # ARGS for the probe; output in $root/out, $root/err, status in $rc
    # Ranks on h2 get only what -x forwards (sanitizer suppressions).
    # shellcheck disable=SC2086
    set -- -x LSAN_OPTIONS -x TSAN_OPTIONS ${RUN_X:-} "$probe" "$@"
    LSAN_OPTIONS=${LSAN_OPTIONS:-} TSAN_OPTIONS=${TSAN_OPTIONS:-} \
    "$netns/in-host" h1 timeout -k 5 120 mpirun.openmpi --allow-run-as-root \
        --hostfile "$netns/hostfile" --mca plm_rsh_agent "$netns/rsh-agent" \
        -np 4 "$@" >"$root/out" 2>"$root/err"
    rc=$?
}

run ok
if [ $rc -eq 0 ]; then pass "two-host job exits 0"; else fail "two-host job exits $rc"; sed 's/^/#   /' "$root/err" | head -30; fi
count_is two-host "$root/out" "probe: done" 4
has two-host "$root/out" "probe: rank 0 of 4 local 0/2 node 0 nodes 2 singleton 0 .* host h1"
has two-host "$root/out" "probe: rank 3 of 4 local 1/2 node 1 nodes 2 singleton 0 .* host h2"
# Ranks 0,1 on h1 and 2,3 on h2: each rank sees 1 self, 1 same-node, 2 other-node peers.
count_is two-host "$root/out" "peer [0-9]* class 0 " 4
count_is two-host "$root/out" "peer [0-9]* class 1 " 4
count_is two-host "$root/out" "peer [0-9]* class 2 " 8
count_is two-host "$root/out" "rank 0 peer 2 class 2 node 1 " 1
count_is two-host "$root/out" "rank 2 peer 0 class 2 node 0 " 1
if grep "probe: rank [0-9]* peer" "$root/out" | grep -v "cards \([0-9]*\)/\1 " >/dev/null; then
    fail "two-host: a peer's cards are missing from the modex"
else
    pass "two-host: every peer's cards in the modex"
fi

# btl/tcp carries the other-host peers over the veth (unless tcp is excluded).
if grep "probe: rank [0-9]* peer [0-9]* class 2 " "$root/out" | grep -q "transports [^ ]*tcp/"; then
    count_is two-host-tcp "$root/out" "class 2 .*transports [^ ]*tcp/nsveth" 8
    run connect 2
    if [ $rc -eq 0 ]; then pass "connect across hosts exits 0"; else fail "connect across hosts exits $rc"; sed 's/^/#   /' "$root/err" | head -30; fi
    # Every rank, rank 2 itself (btl/self) included.
    count_is connect-across "$root/out" "probe: rank [0-9]* connected to 2" 4
    # The default modex across hosts under mpirun: direct, with a fence
    # without data; each rank fetched the card of the one peer it contacted
    # (rank 2 itself: the three that connected to it), from the other host
    # for ranks 0 and 1.
    RUN_X="-x WEFT_MCA_rte_base_verbose=debug" run connect 2
    if [ $rc -eq 0 ]; then pass "direct modex across hosts exits 0"; else fail "direct modex across hosts exits $rc"; sed 's/^/#   /' "$root/err" | head -30; fi
    count_is direct-across "$root/err" "modex: direct (rte_base_modex=auto); a fence without data" 4
    count_is direct-across "$root/err" "modex direct: rank [013] read the cards of 1 of 3 peers" 3
else
    pass "# SKIP two-host-tcp: btl/tcp not in use for class 2 peers"
fi

# Two rails: a second veth pair (10.78.0.0/24) between the same two hosts.
# Each rank's tcp has two modules reaching the other host with the same
# exclusivity, so large messages are shared between them (one rank per host;
# unbound, since mpirun would put both on core 0 of their "node").
if [ -x "$stress" ] && ip link add weftrail1 netns h1 type veth peer name weftrail2 netns h2 2>"$root/rail.err" &&
    ip -n h1 addr add 10.78.0.1/24 dev weftrail1 && ip -n h2 addr add 10.78.0.2/24 dev weftrail2 &&
    ip -n h1 link set weftrail1 up && ip -n h2 link set weftrail2 up; then
    printf 'h1 slots=1\nh2 slots=1\n' >"$root/hostfile1"
    LSAN_OPTIONS=${LSAN_OPTIONS:-} TSAN_OPTIONS=${TSAN_OPTIONS:-} \
    "$netns/in-host" h1 timeout -k 5 300 mpirun.openmpi --allow-run-as-root --bind-to none \
        --hostfile "$root/hostfile1" --mca plm_rsh_agent "$netns/rsh-agent" -np 2 \
        -x LSAN_OPTIONS -x TSAN_OPTIONS -x WEFT_MCA_btl=self,tcp -x WEFT_MCA_engine_base_verbose=info \
        -x WEFT_MCA_btl_base_verbose=info "$stress" 20000 >"$root/out" 2>"$root/err"
    rc=$?
    if [ $rc -eq 0 ]; then pass "two-rail stress exits 0"; else fail "two-rail stress exits $rc"; sed 's/^/#   /' "$root/err" | tail -30; fi
    count_is two-rail "$root/out" "stress: rank [01] ok 10000 messages received, 10000 sent" 2
    has two-rail "$root/err" "peers other-node: tcp/nsveth1 + tcp/weftrail1 (large messages shared)"
    # Both modules carried a share of the rendezvous data, on both sides.
    count_is two-rail "$root/err" "rendezvous data to rank [01] striped: tcp/nsveth[12] [1-9][0-9]* B ([0-9]*%), tcp/weftrail[12] [1-9][0-9]* B" 2
else
    pass "# SKIP two-rail: no second veth pair ($(cat "$root/rail.err" 2>/dev/null))"
fi

# Two ranks that time-slice one core: mpirun's default binding puts each
# host's rank on core 0 of its "node", the same core of this machine. A
# busy-polling rank used to spin out a whole time slice per message (4-7 ms
# one way), so weft_bench with no arguments ran for hours, and whoever
# killed it saw rank 1 report the reset of the killed rank 0's connection.
# Ping-pong and stream of an eager and a rendezvous size within a bound that
# spinning ranks need several times over (lat 0 alone took 90-150 s). 2000
# round trips per row (1000 at 64 KiB): at 4-7 ms per message the three
# ping-pongs alone take 40-70 s, while ranks that hand the core over finish in seconds even when
# other jobs load the machine (at load 8 lat 8 took 2.3 ms one way, and the
# full 10000 round trips ran past the bound).
bench=$builddir/tests/bench/weft_bench
if [ -x "$bench" ]; then
    LSAN_OPTIONS=${LSAN_OPTIONS:-} TSAN_OPTIONS=${TSAN_OPTIONS:-} \
    "$netns/in-host" h1 timeout -k 5 60 mpirun.openmpi --allow-run-as-root --report-bindings \
        --hostfile "$netns/hostfile" --mca plm_rsh_agent "$netns/rsh-agent" -np 2 --map-by node \
        -x LSAN_OPTIONS -x TSAN_OPTIONS -x WEFT_MCA_btl=self,tcp -x WEFT_BENCH_ITERS=2000 "$bench" both 0,8,65536 \
        >"$root/out" 2>"$root/err"
    rc=$?
    if [ $rc -eq 0 ]; then pass "ranks sharing core 0: benchmark exits 0"; else
        fail "ranks sharing core 0: benchmark exits $rc$([ $rc -eq 124 ] && echo ' (timed out after 60 s)')"
        sed 's/^/#   /' "$root/out" "$root/err" | tail -30
    fi
    count_is shared-core "$root/err" "MCW rank [01] bound to [^ ]* 0\[core 0\[" 2
    count_is shared-core "$root/out" "^lat [0-9]* [0-9.]*$" 3
    count_is shared-core "$root/out" "^bw [0-9]* [0-9.]*$" 3
else
    pass "# SKIP shared-core: $bench is not built"
fi

run exit 5 3
if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then pass "failure on h2 ends the job ($rc)"; else fail "failure on h2: rc $rc"; fi

if [ $failures -gt 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
