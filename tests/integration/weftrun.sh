#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Launcher tests: real jobs of pmix_probe (a raw PMIx client) under the built
# weftrun. One case per function; each prints PASS/FAIL and the script exits
# non-zero if any failed.
#
#   make check TESTS=tests/integration/weftrun.sh
#   WEFTRUN=./weftrun PMIX_PROBE=tests/integration/pmix_probe sh tests/integration/weftrun.sh [case...]
#
# Rules: every launch is bounded by timeout(1); nothing sleeps to
# synchronize (waits poll for a condition with a bounded loop); each case
# gets a private TMPDIR that must be empty afterwards (no session dir left);
# /dev/shm must not gain files with a name weft could give (other MPI jobs on
# the machine create theirs meanwhile). Temp files live under $TMPDIR, so the
# source tree may be read-only (distcheck).
set -u

: "${srcdir:=.}"
abs_srcdir=${WEFT_ABS_SRCDIR:-$(cd "$srcdir" && pwd)}
WEFTRUN=${WEFTRUN:-./weftrun}
PROBE=${PMIX_PROBE:-./tests/integration/pmix_probe}
for f in "$WEFTRUN" "$PROBE"; do
    [ -x "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
# Sanitizer builds: libpmix is not ours; suppress only its frames (see the files).
LSAN_OPTIONS="suppressions=$abs_srcdir/tests/integration/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
TSAN_OPTIONS="suppressions=$abs_srcdir/tests/integration/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
export LSAN_OPTIONS TSAN_OPTIONS
# Ranks must not inherit parameters from the caller's environment.
unset PMIX_MCA_gds WEFTRUN_DEBUG

work=$(mktemp -d "${TMPDIR:-/tmp}/weftrun-test.XXXXXX") || { echo "ERROR: mktemp"; exit 99; }
trap 'rm -rf "$work"' EXIT
failures=0
cores=$(hwloc-calc --number-of core machine:0 2>/dev/null || nproc)
LIMIT=60          # seconds any single launch may take before timeout kills it

# /dev/shm entries weft could have made: weft's names (scif rings are memfds,
# named weft-scif*, and never appear there unless something regresses). PMIx
# 4.2 keeps its files in the session dir, which the TMPDIR check covers.
# Open MPI's vader_segment.*, UCX's ucx_shm_posix_* and the like belong to
# other jobs on a shared machine and are not looked at.
shm_snapshot() { ls -A /dev/shm 2>/dev/null | grep -e weft -e scif | sort; }

# run NAME ARGS...: runs weftrun in the foreground with a private TMPDIR;
# sets rc, out ($d/out), err ($d/err).
run() {
    TMPDIR=$d timeout -k 5 $LIMIT "$WEFTRUN" "$@" >"$d/out" 2>"$d/err"
    rc=$?
}

# start ARGS...: weftrun in the background; $d/pid holds weftrun's own pid
# (sh execs it), bgpid the pid to wait for.
start() {
    TMPDIR=$d timeout -k 5 $LIMIT sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$d/pid" \
        "$WEFTRUN" "$@" >"$d/out" 2>"$d/err" &
    bgpid=$!
}

# wait_for FILE PATTERN COUNT: until FILE has COUNT lines matching PATTERN
# (at most 30 s).
wait_for() {
    i=0
    # A file not created yet counts as no match (grep prints nothing then).
    while n=$(grep -c -- "$2" "$1" 2>/dev/null); [ "${n:-0}" -lt "$3" ]; do
        i=$((i + 1))
        [ $i -gt 600 ] && return 1
        sleep 0.05
    done
}

# gone PID: the process no longer exists (or is a zombie of PID 1, which
# does not reap here), within 10 s.
gone() {
    i=0
    while kill -0 "$1" 2>/dev/null; do
        st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
        [ "$st" = Z ] && return 0
        i=$((i + 1))
        [ $i -gt 200 ] && return 1
        sleep 0.05
    done
}

pids_of() { sed -n 's/.*ready rank [0-9]* pid \([0-9]*\).*/\1/p' "$d/out"; }

# ---- checks used by the cases; each failing check prints why ----
why=
expect_rc() { [ "$rc" = "$1" ] || why="$why exit status $rc, expected $1;"; }
expect_err() { grep -q -- "$1" "$d/err" || why="$why stderr lacks '$1';"; }
expect_out() { grep -q -- "$1" "$d/out" || why="$why stdout lacks '$1';"; }
expect_count() { n=$(grep -c -- "$2" "$d/$1"); [ "$n" = "$3" ] || why="$why $n lines of $1 match '$2', expected $3;"; }

ranks_ok() {   # N: every rank 0..N-1 reported "rank R of N" exactly once
    expect_count out "^rank [0-9]* of $1 local_rank" "$1"
    r=0
    while [ $r -lt "$1" ]; do
        expect_count out "^rank $r of $1 local_rank $r\$" 1
        r=$((r + 1))
    done
}

# ---- cases ----
case_np1() { run -np 1 "$PROBE" ok; expect_rc 0; ranks_ok 1; }
case_np2() { run -np 2 "$PROBE" ok; expect_rc 0; ranks_ok 2; }
case_np4() { run -np 4 --oversubscribe "$PROBE" ok; expect_rc 0; ranks_ok 4; }
case_np16() { run -np 16 --oversubscribe "$PROBE" ok; expect_rc 0; ranks_ok 16; }
case_default_np() { run "$PROBE" ok; expect_rc 0; ranks_ok "$cores"; }

case_fence_upcall() {
    # P1: on one node PMIx completes fences itself; this routes them through
    # weftrun's fence_nb, which the debug log shows.
    PMIX_MCA_pmix_server_fence_localonly_opt=0 WEFTRUN_DEBUG=1 run -np 4 --oversubscribe "$PROBE" ok
    expect_rc 0; ranks_ok 4; expect_err "fence_nb [1-9][0-9]* bytes"
}

case_exit_code() {
    run -np 4 --oversubscribe "$PROBE" exit 3 1
    expect_rc 3; expect_err "^weftrun: rank 1 (pid [0-9]* on host .*) exited with status 3; killing the other"
}
case_exit_before_init() {
    run -np 2 "$PROBE" exit-before-init 7 1
    expect_rc 7; expect_err "rank 1 (pid .*) exited with status 7 before connecting to PMIx"
}
case_no_finalize() {
    run -np 2 "$PROBE" no-finalize 1
    expect_rc 1; expect_err "rank 1 (pid .*) exited without calling weft_finalize/PMIx_Finalize"
}
case_abort() {
    run -np 4 --oversubscribe "$PROBE" abort 42 2
    expect_rc 42; expect_err "rank 2 (pid .*) called abort with status 42: probe abort"
}
case_segv() {
    run -np 4 --oversubscribe "$PROBE" segv 1
    expect_rc 139; expect_err "rank 1 (pid .*) was killed by signal 11"
}
case_non_pmix_program() {
    run -np 2 sh -c 'echo plain'
    expect_rc 0; expect_count out '^plain$' 2
}

case_sigkill_rank() {
    start -np 2 "$PROBE" hang
    wait_for "$d/out" "ready rank" 2 || why="$why ranks never became ready;"
    victim=$(sed -n 's/.*ready rank 1 pid \([0-9]*\).*/\1/p' "$d/out")
    [ -n "$victim" ] && kill -KILL "$victim"
    { wait $bgpid; } 2>/dev/null; rc=$?
    expect_rc 137; expect_err "rank 1 (pid $victim on host .*) was killed by signal 9"
    for p in $(pids_of); do gone "$p" || why="$why rank pid $p still running;"; done
}

case_sigterm_weftrun() {
    start -np 4 --oversubscribe "$PROBE" hang
    wait_for "$d/out" "ready rank" 4 || why="$why ranks never became ready;"
    kill -TERM "$(cat "$d/pid")"
    { wait $bgpid; } 2>/dev/null; rc=$?
    expect_rc 143; expect_err "received signal 15"
    for p in $(pids_of); do gone "$p" || why="$why rank pid $p still running;"; done
}

case_sigint_weftrun() {
    start -np 2 "$PROBE" hang
    wait_for "$d/out" "ready rank" 2 || why="$why ranks never became ready;"
    kill -INT "$(cat "$d/pid")"
    { wait $bgpid; } 2>/dev/null; rc=$?
    expect_rc 130
    for p in $(pids_of); do gone "$p" || why="$why rank pid $p still running;"; done
}

case_sigusr1_forwarded() {
    # USR1 is passed on; the probe does not handle it, so the ranks die of it.
    start -np 2 "$PROBE" hang
    wait_for "$d/out" "ready rank" 2 || why="$why ranks never became ready;"
    kill -USR1 "$(cat "$d/pid")"
    { wait $bgpid; } 2>/dev/null; rc=$?
    expect_rc 138; expect_err "was killed by signal 10"
}

case_sigkill_weftrun_then_sweep() {
    # weftrun SIGKILLed: PDEATHSIG takes the ranks down; its session dir
    # stays, and the next weftrun sweeps it.
    start -np 2 "$PROBE" hang
    wait_for "$d/out" "ready rank" 2 || why="$why ranks never became ready;"
    kill -KILL "$(cat "$d/pid")"
    { wait $bgpid; } 2>/dev/null
    for p in $(pids_of); do gone "$p" || why="$why rank pid $p survived weftrun's SIGKILL;"; done
    ls -d "$d"/weftrun.* >/dev/null 2>&1 || why="$why expected the killed weftrun's session dir to remain;"
    run -np 1 "$PROBE" ok
    expect_rc 0
}

# Ranks that exit while weftrun is between its waitpid pass and its read of
# the signalfd (widened here by the test-only pause) are reaped at once.
# Their SIGCHLDs were read in that window, and weftrun used to sleep on with
# them as zombies until --timeout (or for good without it).
case_ranks_exit_while_reaping() {
    WEFTRUN_TEST_REAP_PAUSE_MS=1000 run --timeout 20 -np 3 --oversubscribe \
        sh -c 'sleep "0.$((5 + PMIX_RANK))"; echo gone'
    expect_rc 0; expect_count out '^gone$' 3
    grep -q "longer than --timeout" "$d/err" && why="$why weftrun waited for its --timeout;"
}

case_timeout() {
    run --timeout 2 -np 2 "$PROBE" hang
    expect_rc 124; expect_err "longer than --timeout 2 s"
    # What each rank still running was doing, as weftrun saw it.
    expect_err "^weftrun: fences completed through weftrun: 0 (a fence among the ranks of one host completes inside the PMIx server and is not counted); ranks still running:"
    expect_count err "^weftrun:   rank [01] (pid [0-9]*): connected to PMIx, not finalized" 2
    grep -q "stack traces of" "$d/err" && why="$why stacks without --get-stack-traces;"
}

case_timeout_stack_traces() {
    run --timeout 2 --get-stack-traces -np 2 "$PROBE" hang
    expect_rc 124
    expect_count err "^weftrun: stack traces of rank [01] (pid [0-9]*), by gdb:" 2
    if command -v gdb >/dev/null 2>&1; then
        # Every thread of both ranks: the probe's main thread in pause(), PMIx's in epoll_wait.
        expect_count err "^#0 .* in __libc_pause ()" 2
        expect_count err "^#0 .* in epoll_wait " 2
    else
        expect_err "gdb is not installed (apt-get install gdb)"
    fi
    run --get-stack-traces -np 1 "$PROBE" ok
    expect_rc 2; expect_err "give --timeout SECONDS too"
}

case_exports() {
    FROM_ENV=inherited run -np 2 -x FOO=bar -x FROM_ENV --mca btl self,tcp --mca btl_base_verbose 5 \
        sh -c 'echo "FOO=$FOO FROM_ENV=$FROM_ENV btl=$WEFT_MCA_btl verbose=$WEFT_MCA_btl_base_verbose launcher=$WEFT_LAUNCHER"'
    expect_rc 0
    expect_count out '^FOO=bar FROM_ENV=inherited btl=self,tcp verbose=5 launcher=weftrun$' 2
}

case_x_unset_warns() {
    run -np 1 -x WEFTRUN_TEST_SURELY_UNSET "$PROBE" ok
    expect_rc 0; expect_err "WEFTRUN_TEST_SURELY_UNSET is not set"
}

case_session_env() {
    run -np 1 sh -c 'echo "dir=$WEFT_SESSION_DIR"; case "$WEFT_TOPOLOGY_XML" in "$WEFT_SESSION_DIR"/*) ;; *) echo bad-xml-path;; esac; grep -c "<topology version=\"2.0\"" "$WEFT_TOPOLOGY_XML"'
    expect_rc 0; expect_out "^dir=$d/weftrun\.......\$"; expect_out '^1$'
    grep -q bad-xml-path "$d/out" && why="$why WEFT_TOPOLOGY_XML is not inside the session dir;"
}

case_pmix_env() {
    run -np 2 "$PROBE" env PMIX_RANK
    expect_rc 0; expect_out '^rank 0 PMIX_RANK=0$'; expect_out '^rank 1 PMIX_RANK=1$'
}

case_tag_output() {
    run -np 2 --tag-output sh -c 'echo out-$PMIX_RANK; echo err-$PMIX_RANK >&2; printf partial'
    expect_rc 0
    expect_out '^\[1,0\]<stdout>:out-0$'; expect_out '^\[1,1\]<stdout>:out-1$'
    expect_err '^\[1,0\]<stderr>:err-0$'; expect_err '^\[1,1\]<stderr>:err-1$'
    expect_count out '^\[1,[01]\]<stdout>:partial$' 2
    untagged=$(grep -vc '^\[1,[01]\]<stdout>:' "$d/out")
    [ "$untagged" = 0 ] || why="$why $untagged untagged stdout lines;"
}

case_tag_output_pty() {
    # weftrun's stdout a terminal (script(1) gives it one): tagged ranks get
    # a pseudo-terminal each, so their stdio line-buffers as on the terminal.
    command -v script >/dev/null 2>&1 || { echo "# tag_output_pty: script(1) missing; not checked"; return; }
    TMPDIR=$d timeout -k 5 $LIMIT script -qfec "'$WEFTRUN' -np 2 --tag-output sh -c '[ -t 1 ] && echo tty-yes || echo tty-no'" \
        /dev/null >"$d/out" 2>"$d/err"
    rc=$?
    expect_rc 0; expect_count out '^\[1,[01]\]<stdout>:tty-yes' 2
}

case_report_bindings() {
    run -np 2 --report-bindings --bind-to core "$PROBE" print-binding
    expect_rc 0
    expect_count err '^\[[^:]*:[0-9]*\] rank [01] bound to core [01] \[PU [0-9,-]*\]$' 2
    # What the rank sees equals what weftrun reported (single-PU cores).
    for r in 0 1; do
        pu=$(sed -n "s/.*\] rank $r bound to core [0-9]* \[PU \([0-9]*\)\]\$/\1/p" "$d/err")
        [ -n "$pu" ] && { grep -q "^rank $r cpus $pu\$" "$d/out" || why="$why rank $r not bound to PU $pu;"; }
    done
}

case_bind_none() {
    run -np 2 --report-bindings --bind-to none "$PROBE" ok
    expect_rc 0; expect_count err '^\[[^:]*:[0-9]*\] rank [01] not bound (--bind-to none)$' 2
}

case_bind_numa() {
    run -np 2 --report-bindings --bind-to numa --map-by numa "$PROBE" ok
    expect_rc 0; expect_count err '^\[[^:]*:[0-9]*\] rank [01] bound to NUMA [0-9]* \[PU [0-9,-]*\]$' 2
}

case_default_unbound_when_oversubscribed() {
    run -np $((cores + 1)) --oversubscribe --report-bindings "$PROBE" ok
    expect_rc 0
    # Says why, not "--bind-to none", which the user did not give.
    expect_count err "not bound (binding is off by default when oversubscribed: $((cores + 1)) ranks on $cores cores; --bind-to core binds anyway)\$" $((cores + 1))
    expect_count err 'bind-to none' 0
}

case_oversubscribe_error() {
    run -np $((cores + 1)) "$PROBE" ok
    expect_rc 1; expect_err "more ranks than this host has cores"; expect_err "--oversubscribe"
    [ -s "$d/out" ] && why="$why a rank ran;"
}

case_bad_option() {
    run --tag-outptu -np 1 "$PROBE" ok
    expect_rc 2; expect_err "unknown option '--tag-outptu'"; expect_err "did you mean --tag-output"
    run -np zero "$PROBE" ok
    expect_rc 2; expect_err "positive integer"
    run --bind-to socket "$PROBE" ok
    expect_rc 2; expect_err "accepted values are core, numa, none"
    # The option as typed, once: not "--np=abc abc: ...".
    run --np=abc "$PROBE" ok
    expect_rc 2; expect_err "^weftrun: --np=abc: the number of ranks must be a positive integer"
    run -np abc "$PROBE" ok
    expect_rc 2; expect_err "^weftrun: -np abc: the number of ranks must be a positive integer"
    run --timeout=soon "$PROBE" ok
    expect_rc 2; expect_err "^weftrun: --timeout=soon: "
}

# --mca NAME VALUE with VALUE forgotten: the program became the value.
case_mca_value_is_program() {
    run -np 2 --mca btl "$PROBE" 2000
    expect_rc 2
    expect_err "^weftrun: --mca btl: the value '$PROBE' is a program; --mca takes a name and a value"
    grep -q "cannot run '2000'" "$d/err" && why="$why blamed '2000';"
    run -np 1 --mca btl "$PROBE"
    expect_rc 2; expect_err "no program to run (--mca takes a name and a value: was '$PROBE' meant as the program?)"
    # A value that happens to be a program too (true) is fine when the
    # program after it runs.
    run -np 1 --mca mca_base_warn_unknown true "$PROBE" ok
    expect_rc 0; ranks_ok 1
}

# A local process that connects to weftrun's PMIx port and says nothing, or
# only the first byte of a header (any user can: PMIx listens on 127.0.0.1),
# once stopped all PMIx service of the job while it stayed: libpmix reads a
# new connection's header with a blocking recv on its only progress thread.
# The job must finish while the strangers still hold their connections.
case_silent_pmix_stranger() {
    probe_abs=$(cd "$(dirname "$PROBE")" && pwd)/$(basename "$PROBE")
    # The ranks report the server's URI, then wait for "go" before PMIx_Init.
    cat >"$d/rank.sh" <<EOF
#!/bin/sh
echo "\$PMIX_SERVER_URI41" >"$d/uri.\$PMIX_RANK"
i=0; while [ ! -e "$d/go" ] && [ \$i -lt 600 ]; do i=\$((i + 1)); sleep 0.05; done
exec "$probe_abs" ok
EOF
    chmod +x "$d/rank.sh"
    start -np 2 "$d/rank.sh"
    i=0; while [ ! -s "$d/uri.0" ] && [ $i -lt 600 ]; do i=$((i + 1)); sleep 0.05; done
    port=$(sed -n 's/.*:\([0-9][0-9]*\)$/\1/p' "$d/uri.0" 2>/dev/null)
    if [ -z "$port" ]; then
        why="$why no PMIx URI from rank 0;"
    else
        # Both append: one opened without O_APPEND would write its line at
        # offset 0, over the other's if that came first.
        : >"$d/stranger"
        "$PROBE" stranger "$port" "$d/release" 40 0 >>"$d/stranger" 2>&1 &
        silent=$!
        "$PROBE" stranger "$port" "$d/release" 3 1 >>"$d/stranger" 2>&1 &
        partial=$!
        wait_for "$d/stranger" "stranger connected" 2 || why="$why the strangers did not connect;"
        : >"$d/go"
        { wait $bgpid; } 2>/dev/null; rc=$?
        # Still there: the job did not wait for the strangers to leave.
        for s in $silent $partial; do
            kill -0 "$s" 2>/dev/null || why="$why the job ended only after a stranger left;"
        done
        : >"$d/release"
        wait "$silent" "$partial"
        expect_rc 0; ranks_ok 2
    fi
    rm -f "$d/rank.sh" "$d/uri.0" "$d/uri.1" "$d/go" "$d/release" "$d/stranger"
}

# The /dev/shm check looks only at names weft could create, so files of
# other jobs (Open MPI, UCX) appearing meanwhile do not fail a case, while a
# weft file left behind still would.
case_shm_check_ignores_other_jobs() {
    before=$(shm_snapshot)
    foreign="/dev/shm/vader_segment.check.$$ /dev/shm/ucx_shm_posix_check$$"
    ours=/dev/shm/weft-shm-check.$$
    # shellcheck disable=SC2086
    touch $foreign "$ours" || { why="$why cannot write /dev/shm;"; return; }
    after=$(shm_snapshot)
    # shellcheck disable=SC2086
    rm -f $foreign "$ours"
    new=$(printf '%s\n' "$after" | grep -vxF -- "$before" | grep -v '^$')
    [ "$new" = "${ours#/dev/shm/}" ] || why="$why the check saw '$new' instead of only ${ours#/dev/shm/};"
}

case_missing_program() {
    run -np 2 ./no/such/program
    expect_rc 127; expect_err "cannot run './no/such/program'"
    run -np 2 weftrun-no-such-program-in-path
    expect_rc 127; expect_err "weftrun-no-such-program-in-path': not found in PATH"
    : >"$d/notexec"
    run -np 2 "$d/notexec"
    expect_rc 126; expect_err "notexec"
    rm -f "$d/notexec"
}

case_np_over_nproc() {
    # 100000 ranks under a limit of 300 tasks: refused before anything
    # starts, naming the limit. Root is exempt from RLIMIT_NPROC, so as root
    # the job runs as nobody (setpriv), which needs a TMPDIR it can write.
    command -v prlimit >/dev/null 2>&1 || { echo "# np_over_nproc: prlimit(1) missing; not checked"; return; }
    as=
    if [ "$(id -u)" = 0 ]; then
        command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1 ||
            { echo "# np_over_nproc: root without setpriv(1) or user nobody; not checked"; return; }
        as="setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups"
        chmod 1777 "$d"
    fi
    # shellcheck disable=SC2086
    TMPDIR=$d timeout -k 5 $LIMIT $as prlimit --nproc=300 "$WEFTRUN" -np 100000 --oversubscribe "$PROBE" ok \
        >"$d/out" 2>"$d/err"
    rc=$?
    chmod 700 "$d"
    expect_rc 1; expect_err "at most 300 processes"; expect_err "ulimit -u"
    [ -s "$d/out" ] && why="$why a rank ran;"
}

case_np_over_nofile() {
    # weftrun holds a PMIx connection per rank (and two pipes with
    # --tag-output): 1000 ranks cannot fit in 300 descriptors.
    command -v prlimit >/dev/null 2>&1 || { echo "# np_over_nofile: prlimit(1) missing; not checked"; return; }
    TMPDIR=$d timeout -k 5 $LIMIT prlimit --nofile=300 "$WEFTRUN" -np 1000 --oversubscribe --tag-output "$PROBE" ok \
        >"$d/out" 2>"$d/err"
    rc=$?
    expect_rc 1; expect_err "needs 3000 open files"; expect_err "ulimit -n"
    [ -s "$d/out" ] && why="$why a rank ran;"
}

case_np_over_pid_max() {
    max=$(cat /proc/sys/kernel/pid_max)
    run -np "$max" --oversubscribe "$PROBE" ok
    expect_rc 1; expect_err "cannot start"
    [ -s "$d/out" ] && why="$why a rank ran;"
}

case_sigterm_during_spawn() {
    # Each rank sends weftrun SIGTERM as soon as it runs, while weftrun is
    # still starting the other ranks of 1000: it must stop starting them,
    # end those it started and exit 143.
    run -np 1000 --oversubscribe sh -c 'echo "started pid $$"; kill -TERM $PPID; exec sleep 600'
    expect_rc 143; expect_err "received signal 15"; expect_err "stopped starting ranks after [0-9]* of 1000"
    for p in $(sed -n 's/^started pid \([0-9]*\)$/\1/p' "$d/out"); do
        gone "$p" || why="$why rank pid $p still running;"
    done
}

case_no_io_discovery() {
    # weftrun places ranks on cores: every hwloc topology it loads (its
    # own, and PMIx's, which it hands its own) asks for no I/O objects.
    # Seen through hwloc_spy (LD_PRELOAD); a sanitizer runtime must come
    # first in the preload order, so those builds are not checked.
    spy=${HWLOC_SPY:-./tests/integration/.libs/hwloc_spy.so}
    [ -f "$spy" ] || { echo "# no_io_discovery: $spy is not built; not checked"; return; }
    ldd "$WEFTRUN" 2>/dev/null | grep -q -e libasan -e libtsan -e libubsan &&
        { echo "# no_io_discovery: sanitizer build; not checked"; return; }
    WEFT_HWLOC_SPY=$d/loads LD_PRELOAD=$spy run -np 1 /bin/true
    expect_rc 0
    [ -s "$d/loads" ] || why="$why the spy saw no topology load;"
    grep -v " pci none osdev none\$" "$d/loads" >/dev/null 2>&1 &&
        why="$why a topology was loaded with I/O objects: $(grep -v ' pci none osdev none$' "$d/loads" | head -3 | tr '\n' ';')"
    rm -f "$d/loads"
}

case_multi_host_refused() {
    # -H and --hostfile: one line naming srun --mpi=pmix and mpirun, each
    # with a command line for this job; the mpirun one runs as given.
    run -H localhost,localhost -np 2 --mca btl self,tcp "$PROBE" ok
    expect_rc 2
    expect_count err . 1
    expect_err "srun --mpi=pmix -w localhost,localhost -n 2 $PROBE ok"
    expect_err "mpirun --host localhost,localhost -np 2 -x WEFT_MCA_btl=self,tcp $PROBE ok"
    [ -s "$d/out" ] && why="$why a rank ran;"
    if command -v mpirun >/dev/null 2>&1; then
        cmd=$(sed -n "s/.*Open MPI's mpirun, '\(mpirun [^']*\)'.*/\1/p" "$d/err")
        # shellcheck disable=SC2086
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=$d timeout -k 5 $LIMIT $cmd \
            >"$d/out" 2>"$d/err.mpirun"
        mrc=$?
        [ $mrc = 0 ] || why="$why the suggested '$cmd' exited $mrc: $(tail -n 3 "$d/err.mpirun" | tr '\n' ' ');"
        expect_count out "^rank [01] of 2 " 2
        rm -rf "$d/err.mpirun" "$d"/ompi.* "$d"/openmpi-sessions-* 2>/dev/null
    fi
    run --hostfile /nonexistent/hosts -np 4 "$PROBE" ok
    expect_rc 2
    expect_err "srun --mpi=pmix -n 4 $PROBE ok"
    expect_err "mpirun --hostfile /nonexistent/hosts -np 4 $PROBE ok"
}

case_help_version() {
    run --help
    expect_rc 0
    for o in -np --mca -x --tag-output --bind-to --map-by --report-bindings --oversubscribe --timeout --version; do
        expect_out -- "$o"
    done
    run --version
    expect_rc 0; expect_out '^weftrun (weft) '; expect_out '^PMIx '
}

all_cases=$(sed -n 's/^\(case_[a-z0-9_]*\)().*/\1/p' "$0")
[ $# -gt 0 ] && all_cases=$(for c in "$@"; do echo "case_$c"; done)

for c in $all_cases; do
    d=$work/${c#case_}
    mkdir -p "$d"
    shm_before=$(shm_snapshot)
    why=
    $c
    # Kept aside to be shown if the case fails, not counted as left behind.
    for f in out err; do [ -f "$d/$f" ] && mv "$d/$f" "$work/last.$f"; done
    rm -f "$d/pid"
    left=$(ls -A "$d")
    [ -n "$left" ] && why="$why left in TMPDIR: $left;"
    shm_after=$(shm_snapshot)
    new_shm=$(printf '%s\n' "$shm_after" | grep -vxF -- "$shm_before" | grep -v '^$')
    [ -n "$new_shm" ] && why="$why new in /dev/shm: $new_shm;"
    if [ -z "$why" ]; then
        echo "PASS: ${c#case_}"
    else
        echo "FAIL: ${c#case_}:$why"
        for f in out err; do [ -f "$work/last.$f" ] && sed "s/^/  $f| /" "$work/last.$f"; done
        failures=$((failures + 1))
    fi
    rm -f "$work/last.out" "$work/last.err"
done
[ $failures -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
exit 0
