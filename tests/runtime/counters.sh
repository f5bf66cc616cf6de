#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The counter page (weft/counters.h) of real jobs:
#  - exact: a scripted exchange over btl/scif and btl/tcp counts every
#    message and byte, by protocol, and the unexpected queue exactly
#    (tests/runtime/weft_counters.c checks the numbers in the ranks);
#  - ifroom: over btl/scif a 64 KiB message into an empty ring goes
#    eagerly, by rendezvous with btl_scif_eager_if_room=false;
#  - another process maps a running rank's page read-only through
#    /proc/PID/fd (the memfd) and reads the bytes it sent;
#  - nothing is left behind after SIGKILL of a rank or of weftrun: the
#    ranks, the only holders of their memfds, are gone, no file of it
#    exists anywhere (TMPDIR, /dev/shm), the session dir goes as weftrun
#    already arranges.
# Every job is bounded by timeout; waits are bounded polls.
set -u

builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
prog=$builddir/tests/runtime/weft_counters
weftrun=$builddir/weftrun
limit=120
if [ ! -x "$prog" ] || [ ! -x "$weftrun" ]; then
    echo "SKIP: $prog or $weftrun is not built"
    exit 77
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/weft-counters.XXXXXX") || exit 99
trap 'rm -rf "$root"' EXIT
trap 'exit 130' INT TERM
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
jobtmp=$root/tmp; mkdir -p "$jobtmp"
out=$root/out err=$root/err
failures=0
pass() { echo "ok - $1"; }
fail() {
    echo "not ok - $1: $2"
    # A hang's report (weftrun --timeout --get-stack-traces) is long: keep all of it.
    if grep -q "stack traces of" "$err"; then sed 's/^/    /' "$err" | head -n 600; else sed 's/^/    /' "$err" | tail -n 20; fi
    failures=$((failures + 1))
}
skip() { echo "ok - $1 # SKIP $2"; }
loaded() { "$builddir/weft_info" --parsable | grep -q "^mca:btl:$1:status:loaded"; }

# --- exact counts over each transport --------------------------------------
for btl in self,scif self,tcp; do
    t="exact-$btl"
    if ! loaded "${btl#self,}"; then skip "$t" "btl/${btl#self,} is not built"; continue; fi
    env TMPDIR="$jobtmp" timeout -k 5 $limit "$weftrun" --timeout 100 --get-stack-traces -np 2 --mca btl "$btl" \
        --mca engine_base_eager_limit 4096 "$prog" exact >"$out" 2>"$err"
    rc=$?
    n=$(grep -c "^counters: rank [01] ok" "$out")
    if [ "$rc" = 0 ] && [ "$n" = 2 ]; then pass "$t"; else fail "$t" "exit $rc, $n ranks ok"; fi
    grep "^counters: rank" "$out" | grep -v " ok$" | sed "s/^/    $btl: /"
    # tcp has no RDMA: every rendezvous went in chunks.
    if [ "$btl" = self,tcp ] && ! grep -q "sent eager 6/4213 rdma 0/0 chunks 4/1418209" "$out"; then
        fail "$t-protocols" "expected 6 eager (4213 B) and 4 chunked (1418209 B) sends"
    fi
done

# --- btl/scif's eager-if-room range ------------------------------------------
# Toward a peer it reads with process_vm_readv, btl/scif asks for a 32 KiB
# eager limit and offers eager_if_room up to its ring's limit (64 KiB with
# 2 MiB rings): a 64 KiB message into an empty ring goes eagerly. With
# btl_scif_eager_if_room=false it goes by rendezvous; a peer it cannot read
# keeps the ring's limit (eager either way). The cost of one
# process_vm_readv call is pinned above btl_scif_single_copy_call_us's
# threshold: timed at start-up, a host where that call is cheap takes 16 KiB
# and no eager-if-room range instead (as this test's first fresh machine did).
for if_room in true false; do
    t="scif-eager-if-room-$if_room"
    if ! loaded scif; then skip "$t" "btl/scif is not built"; continue; fi
    env TMPDIR="$jobtmp" timeout -k 5 $limit "$weftrun" --timeout 100 --get-stack-traces -np 2 --mca btl self,scif \
        --mca btl_scif_eager_if_room "$if_room" --mca btl_scif_single_copy_call_us 5 "$prog" ifroom >"$out" 2>"$err"
    rc=$?
    line=$(grep "^ifroom: " "$out")
    lim=$(echo "$line" | sed -n 's/^ifroom: eager_limit \([0-9]*\),.*/\1/p')
    # A peer it reads: limit 32 KiB, and the ring's 64 KiB while it has room
    # unless turned off. One it cannot read: the ring's limit, no such range.
    want=eager room=0
    if [ "${lim:-0}" -lt 65536 ]; then
        if [ "$if_room" = true ]; then room=65536; else want=rendezvous; fi
    fi
    n=$(grep -c "^counters: rank [01] ok" "$out")
    if [ "$rc" = 0 ] && [ "$n" = 2 ] &&
        [ "$line" = "ifroom: eager_limit $lim, eager_if_room $room, 65536 bytes by $want" ]; then
        pass "$t ($line)"
    else
        fail "$t" "exit $rc, $n ranks ok, '$line' (expected 65536 bytes by $want)"
    fi
done

# --- the page from another process, and SIGKILL ----------------------------
# The memfd of PID's page: /proc/PID/fd/N, or nothing.
page_of() {
    for f in /proc/"$1"/fd/*; do
        case $(readlink "$f" 2>/dev/null) in /memfd:weft-counters*) echo "$f"; return 0 ;; esac
    done
    return 1
}
wait_for() {   # FILE PATTERN COUNT, at most 60 s
    i=0
    while n=$(grep -c -- "$2" "$1" 2>/dev/null); [ "${n:-0}" -lt "$3" ]; do
        i=$((i + 1)); [ $i -gt 1200 ] && return 1; sleep 0.05
    done
}
gone() {   # PID exits (or is a zombie), at most 10 s
    i=0
    while kill -0 "$1" 2>/dev/null; do
        st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
        [ "$st" = Z ] && return 0
        i=$((i + 1)); [ $i -gt 200 ] && return 1; sleep 0.05
    done
}
left_files() { find "$jobtmp" /dev/shm -name '*weft-counters*' 2>/dev/null; }

for victim in rank weftrun; do
    t="sigkill-$victim"
    # The last job's output must not satisfy wait_for before this job's
    # shell has truncated it (a loaded machine let the second case read the
    # first one's pids, then an empty file).
    rm -f "$out" "$err"
    env TMPDIR="$jobtmp" timeout -k 5 $limit sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$root/pid" \
        "$weftrun" -np 2 --mca btl self,tcp --mca engine_base_eager_limit 4096 "$prog" hold >"$out" 2>"$err" &
    bg=$!
    why=
    wait_for "$out" "pid [0-9]" 2 || why="$why the ranks never got to hold;"
    r0=$(sed -n 's/^counters: rank 0 pid \([0-9]*\)$/\1/p' "$out")
    r1=$(sed -n 's/^counters: rank 1 pid \([0-9]*\)$/\1/p' "$out")
    page=$(page_of "$r0") || why="$why rank 0 (pid $r0) has no weft-counters memfd;"
    if [ -n "$page" ]; then
        # Rank 0 sent rank 1 the 10 scripted messages, 5 unexpected ones and a go.
        got=$("$prog" read "$page" 2>&1)
        [ "$got" = "page: rank 0 of 2 sent-to-1 1422543" ] || why="$why reading $page gave '$got';"
    fi
    if [ $victim = rank ]; then kill -KILL "$r1"; else kill -KILL "$(cat "$root/pid")"; fi
    { wait $bg; } 2>/dev/null
    # The memfd lives as long as a process holds it: only the ranks did
    # (weftrun never opens it), so with them gone it is gone. Other jobs on
    # the machine hold pages of their own and are not looked at.
    gone "$r0" || why="$why rank 0 survived;"
    gone "$r1" || why="$why rank 1 survived;"
    for p in "$r0" "$r1"; do page_of "$p" >/dev/null && why="$why pid $p still holds its page;"; done
    [ -z "$(left_files)" ] || why="$why files left: $(left_files);"
    if [ $victim = rank ]; then
        ls -d "$jobtmp"/weftrun.* >/dev/null 2>&1 && why="$why weftrun left its session dir;"
    fi
    rm -rf "$jobtmp"/weftrun.*
    if [ -z "$why" ]; then pass "$t"; else fail "$t" "$why"; fi
done

# --- weft_top --json on a running 4-rank job ---------------------------------
t="weft_top-json"
top=$builddir/weft_top
if [ -x "$top" ]; then
    rm -f "$out" "$err"
    env TMPDIR="$jobtmp" timeout -k 5 $limit sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$root/pid" \
        "$weftrun" -np 4 --oversubscribe --mca btl self,tcp --mca engine_base_eager_limit 4096 "$prog" hold \
        >"$out" 2>"$err" &
    bg=$!
    why=
    wait_for "$out" "pid [0-9]" 4 || why="$why the ranks never got to hold;"
    session=$(ls -d "$jobtmp"/weftrun.* 2>/dev/null | head -n 1)
    timeout 60 "$top" --json --count 3 --interval 200 "$session" >"$root/top" 2>>"$err" ||
        why="$why weft_top failed;"
    [ "$(wc -l <"$root/top")" = 3 ] || why="$why weft_top printed $(wc -l <"$root/top") lines, not 3;"
    tick=0
    while read -r line; do
        ranks=$(printf '%s\n' "$line" | grep -o '"rank":[0-9]*' | tr '\n' ' ')
        [ "$ranks" = '"rank":0 "rank":1 "rank":2 "rank":3 ' ] || why="$why tick $tick has ranks '$ranks';"
        printf '%s\n' "$line" | grep -q "\"tick\":$tick," || why="$why line $tick is not tick $tick;"
        tick=$((tick + 1))
    done <"$root/top"
    # Rank 0 sent rank 1 all it will: its peer 1 shows the exchange's messages.
    head -n 1 "$root/top" | grep -q '"rank":0,[^]]*"peer":1,"transport":"tcp' ||
        why="$why rank 0's peer 1 is not on tcp in the first tick;"
    kill -TERM "$(cat "$root/pid")"
    { wait $bg; } 2>/dev/null
    if [ -z "$why" ]; then pass "$t"; else fail "$t" "$why"; sed 's/^/    /' "$root/top"; fi
    rm -rf "$jobtmp"/weftrun.*
else
    skip "$t" "weft_top is not built"
fi

[ $failures = 0 ] && exit 0
exit 1
