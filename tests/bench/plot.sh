#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# weft_bench --csv and contrib/plot-bench: a tiny weft_bench job writes the
# CSV (its rows are the lines it prints), plot-bench draws it and a small
# compare result (tests/bench/fixtures/compare-small.json) as PNG and SVG,
# and input it cannot draw is refused with exit 2 and a message naming the
# file and what is missing. Skips (77) without matplotlib.
#
#   make check TESTS=tests/bench/plot.sh
#   WEFTRUN=./weftrun WEFT_BENCH=tests/bench/weft_bench sh tests/bench/plot.sh
#
# PYTHON picks the interpreter; otherwise the first of python3 and
# /usr/bin/python3 that has matplotlib (Debian's python3-matplotlib is for
# the system Python).
set -u

: "${srcdir:=.}"
abs_srcdir=${WEFT_ABS_SRCDIR:-$(cd "$srcdir" && pwd)}
WEFTRUN=${WEFTRUN:-./weftrun}
BENCH=${WEFT_BENCH:-./tests/bench/weft_bench}
PLOT=$abs_srcdir/contrib/plot-bench
FIXTURE=$abs_srcdir/tests/bench/fixtures/compare-small.json
LIMIT=120   # seconds any single command may take before timeout kills it

for f in "$WEFTRUN" "$BENCH"; do
    [ -x "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
python=
for p in ${PYTHON:-python3 /usr/bin/python3}; do
    if "$p" -c 'import matplotlib' 2>/dev/null; then python=$p; break; fi
done
[ -n "$python" ] || { echo "SKIP: no Python with matplotlib (python3-matplotlib)"; exit 77; }
# Ranks must not inherit parameters from the caller's environment.
unset WEFT_BENCH_CSV WEFT_BENCH_SIZES WEFT_BENCH_LIMITS
# What is written is checked, not how fast: few iterations keep the jobs
# short on a loaded machine.
export WEFT_BENCH_ITERS=200

work=$(mktemp -d "${TMPDIR:-/tmp}/weft-plot-test.XXXXXX") || { echo "ERROR: mktemp"; exit 99; }
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

# The CSV has a header and one row per line printed, with the same values.
check_csv() {  # name csv stdout expected-rows
    if [ "$(head -1 "$2")" != "test,size,value,unit" ]; then
        fail "$1: CSV header is '$(head -1 "$2")'"; return
    fi
    rows=$(tail -n +2 "$2" | awk -F, '{ print $1, $2, $3 }')
    printed=$(grep -E '^[a-z]+ [0-9]+ ' "$3")
    if [ "$(echo "$rows" | awk '{ print $1, $2 }')" != "$4" ]; then
        fail "$1: CSV rows are not the tests and sizes asked for:"; cat "$2"; return
    fi
    if [ "$rows" != "$printed" ]; then
        fail "$1: CSV rows differ from what was printed:"; cat "$2" "$3"; return
    fi
    if tail -n +2 "$2" | awk -F, 'NF != 4 || $3 <= 0 || ($1 == "lat" && $4 != "us") || ($1 == "bw" && $4 != "MB/s") { bad = 1 } END { exit !bad }'; then
        fail "$1: a row has the wrong fields, a value <= 0 or the wrong unit:"; cat "$2"; return
    fi
    pass "$1"
}

# 1. --csv FILE on a tiny job; stdout keeps its lines.
timeout -k 5 $LIMIT "$WEFTRUN" -np 2 "$BENCH" --csv "$work/both.csv" both 8,1024 >"$work/both.out" 2>"$work/both.err"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$work/both.csv" ]; then
    fail "weft_bench --csv: rc $rc, no CSV"; cat "$work/both.err"
else
    check_csv "weft_bench --csv FILE" "$work/both.csv" "$work/both.out" "lat 8
bw 8
lat 1024
bw 1024"
fi

# 2. WEFT_BENCH_CSV, for launchers that pass the environment but not options.
WEFT_BENCH_CSV=$work/lat.csv timeout -k 5 $LIMIT "$WEFTRUN" -np 2 "$BENCH" lat 64 >"$work/lat.out" 2>"$work/lat.err"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$work/lat.csv" ]; then
    fail "WEFT_BENCH_CSV: rc $rc, no CSV"; cat "$work/lat.err"
else
    check_csv "WEFT_BENCH_CSV" "$work/lat.csv" "$work/lat.out" "lat 64"
fi

# A figure was written and is of the asked format.
check_figure() {  # name file rc log magic
    if [ "$3" -ne 0 ]; then
        fail "$1: plot-bench exited $3"; cat "$4"
    elif [ ! -s "$2" ]; then
        fail "$1: $2 is missing or empty"
    elif ! head -c 400 "$2" | grep -q "$5"; then
        fail "$1: $2 is not what it should be (no '$5' at its start)"
    else
        pass "$1"
    fi
}

# 3. The CSV as PNG, the compare fixture as SVG, both together on one figure.
if [ -s "$work/both.csv" ]; then
    timeout -k 5 $LIMIT "$python" "$PLOT" -o "$work/weft.png" "weft=$work/both.csv" >"$work/p1.log" 2>&1
    check_figure "plot-bench CSV -> PNG" "$work/weft.png" $? "$work/p1.log" PNG
    timeout -k 5 $LIMIT "$python" "$PLOT" -o "$work/both.svg" --class shm "$FIXTURE" "$work/both.csv" >"$work/p2.log" 2>&1
    check_figure "plot-bench compare JSON + CSV -> SVG" "$work/both.svg" $? "$work/p2.log" '<svg'
fi
timeout -k 5 $LIMIT "$python" "$PLOT" -o "$work/compare.svg" "$FIXTURE" >"$work/p3.log" 2>&1
check_figure "plot-bench compare JSON -> SVG" "$work/compare.svg" $? "$work/p3.log" '<svg'

# 4. What is drawn (--table): CSVs with one label are repetitions (median,
# min-max; a size some lack has fewer samples; 0 B has no place on a log
# axis); compare's cells keep their own median and range.
printf 'test,size,value,unit\nlat,0,9,us\nlat,8,1,us\nlat,64,2,us\nrate,8,5,msgs/s\n' >"$work/r1.csv"
printf 'test,size,value,unit\nlat,8,3,us\nlat,64,2.5,us\n' >"$work/r2.csv"
printf 'test,size,value,unit\nlat,8,2,us\n' >"$work/r3.csv"
timeout -k 5 $LIMIT "$python" "$PLOT" --table -o "$work/reps.svg" "w=$work/r1.csv" "w=$work/r2.csv" "w=$work/r3.csv" \
    >"$work/reps.out" 2>"$work/reps.err"
expected=$(printf 'w\tlat\t8\t2\t1\t3\nw\tlat\t64\t2.25\t2\t2.5')
if [ "$(grep -v '^plot-bench:' "$work/reps.out")" = "$expected" ]; then
    pass "repetitions: median and min-max per size"
else
    fail "repetitions: drew"; cat "$work/reps.out" "$work/reps.err"
fi
# weft_bench --limits' CSV: the limit column is a dashed series of its own,
# for lat and bw only; rows without a limit add no point to it.
printf 'test,size,value,unit,limit,fraction\nlat,8,2,us,0.5,0.250\nlat,1024,4,us,,\nbw,4096,1000,MB/s,20000,0.050\n' >"$work/lim.csv"
timeout -k 5 $LIMIT "$python" "$PLOT" --table -o "$work/lim.svg" "w=$work/lim.csv" >"$work/lim.out" 2>"$work/lim.err"
expected=$(printf 'w\tlat\t8\t2\t2\t2\nw\tlat\t1024\t4\t4\t4\nw limit\tlat\t8\t0.5\t0.5\t0.5\nw\tbw\t4096\t1000\t1000\t1000\nw limit\tbw\t4096\t20000\t20000\t20000')
if [ "$(grep -v '^plot-bench:' "$work/lim.out" | sort)" = "$(echo "$expected" | sort)" ]; then
    pass "CSV with --limits columns: the limit as its own series"
else
    fail "CSV with --limits columns: drew"; cat "$work/lim.out" "$work/lim.err"
fi
timeout -k 5 $LIMIT "$python" "$PLOT" --table --class tcp -o "$work/tcp.svg" "$FIXTURE" >"$work/tcp.out" 2>&1
want=$("$python" -c 'import json, sys
c = json.load(open(sys.argv[1]))["classes"]["tcp"]["systems"]["weft"]["lat"]["8"]
print("weft\tlat\t8\t%g\t%g\t%g" % (c["median"], c["min"], c["max"]))' "$FIXTURE")
if grep -qxF "$want" "$work/tcp.out" && ! grep -q "^shm\|ompi-vader" "$work/tcp.out"; then
    pass "compare JSON: the cell's median and range, --class tcp only"
else
    fail "compare JSON: want '$want' and no shm rows:"; cat "$work/tcp.out"
fi

# 5. Input it cannot draw: exit 2, the file and the missing part named, no figure.
refuses() {  # name input expected-message
    timeout -k 5 $LIMIT "$python" "$PLOT" -o "$work/bad.png" "$2" >"$work/bad.log" 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then
        fail "$1: exit $rc, not 2"; cat "$work/bad.log"
    elif ! grep -q "^plot-bench: $2.*$3" "$work/bad.log"; then
        fail "$1: the message does not name $2 and '$3':"; cat "$work/bad.log"
    elif [ -e "$work/bad.png" ]; then
        fail "$1: a figure was written anyway"
    else
        pass "$1"
    fi
}
printf 'test,size\nlat,8\n' >"$work/no-value.csv"
refuses "CSV without value and unit" "$work/no-value.csv" "missing column(s) value, unit"
printf 'test,size,value,unit\nlat,8,fast,us\n' >"$work/not-a-number.csv"
refuses "CSV value not a number" "$work/not-a-number.csv" ":2: value 'fast' is not a number"
printf '{"sizes": [8]}\n' >"$work/no-classes.json"
refuses "JSON without classes" "$work/no-classes.json" "no 'classes' object"

[ $failures -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
exit 0
