#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Golden tests of weft_info: runs the built weft_info in a controlled
# environment (fresh HOME, no inherited WEFT_MCA_*, a component directory
# holding only components that build everywhere, the 2-socket XML topology),
# normalizes machine-specific text and compares with tests/golden/info-*.txt.
#
#   make check TESTS=tests/info/golden.sh                   run
#   WEFT_UPDATE_GOLDEN=1 make check TESTS=tests/info/golden.sh
#                                                           rewrite the goldens
#
# The Makefile passes WEFT_INFO, WEFT_ABS_SRCDIR, WEFT_ABS_BUILDDIR and
# WEFT_TEST_COMPONENT_DIR (tests/info/local.mk); run by hand from the build
# directory, the defaults below work too. Normalized: the temp HOME (@HOME@),
# the temp directory (@TMP@), build and source trees (@BUILDDIR@, @SRCDIR@),
# the weft version, configure arguments, sanitizers, the components this
# configure built and the sysconfdir. Temp files go under $TMPDIR, so the
# source tree may be read-only (make distcheck).
#
# Only a missing weft_info skips (77). With --disable-dlopen there is no
# component path to control, so the goldens that list components are not
# compared (the behavioural checks still run).
set -u

: "${srcdir:=.}"
WEFT_INFO=${WEFT_INFO:-./weft_info}
abs_srcdir=${WEFT_ABS_SRCDIR:-$(cd "$srcdir" && pwd)}
abs_builddir=${WEFT_ABS_BUILDDIR:-$(pwd)}
test_component_dir=${WEFT_TEST_COMPONENT_DIR:-$abs_builddir/tests/components/.libs}
golden_dir=$abs_srcdir/tests/golden
xml=$abs_srcdir/contrib/topologies/2socket-2nic-2hca.xml

if [ ! -x "$WEFT_INFO" ]; then
    echo "SKIP: $WEFT_INFO is not built"
    exit 77
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/weft-info-golden.XXXXXX") || {
    echo "ERROR: cannot create a temporary directory"
    exit 99
}
trap 'rm -rf "$root"' EXIT
trap 'exit 130' INT TERM
home=$root/home
mkdir -p "$home" "$root/out"

# No parameter or topology from the caller's environment.
for v in $(env | sed -n 's/^\(WEFT_MCA_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
unset HWLOC_XMLFILE
HOME=$home
export HOME

failures=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; failures=$((failures + 1)); }
note() { echo "# $*"; }

version=$("$WEFT_INFO" --version | sed 's/.* //')
static=no
if "$WEFT_INFO" --parsable | grep -q '^config:dlopen:no$'; then
    static=yes
    note "--disable-dlopen build: component goldens are not compared"
fi

# Component directories: the components every configure builds, and the
# same plus broken ones (from tests/components) for --show-failed.
comps=$root/components
broken=$root/components-broken
mkdir -p "$comps" "$broken"
if [ "$static" = no ]; then
    for c in self tcp; do
        f=$abs_builddir/components/.modules/weft_btl_$c.so
        if [ ! -f "$f" ]; then
            echo "ERROR: $f is missing: build the tree first"
            exit 99
        fi
        ln -s "$f" "$comps/"
        ln -s "$f" "$broken/"
    done
    # Loads with a note; ABI mismatch; missing library; open() fails;
    # name mismatch.
    for c in newminor badabi needlib openfail wrongname; do
        f=$test_component_dir/weft_btl_$c.so
        if [ ! -f "$f" ]; then
            echo "ERROR: test component $f is missing (built by make check)"
            exit 99
        fi
        ln -s "$f" "$broken/"
    done
    : > "$broken/weft_nosuch_thing.so"   # a framework this build does not know
fi

# wi [VAR=value...] ARGS...: weft_info in the controlled environment.
wi() {
    env WEFT_MCA_mca_base_component_path="$comps" WEFT_MCA_topology_base_xml_file="$xml" \
        "$@"
}

# run NAME CMD...: stdout, stderr and exit status into $root/out/NAME.*
run() {
    name=$1
    shift
    "$@" >"$root/out/$name.out" 2>"$root/out/$name.err"
    echo $? >"$root/out/$name.rc"
}
rc_of() { cat "$root/out/$1.rc"; }

esc() { printf '%s\n' "$1" | sed 's/[][\.*^$]/\\&/g'; }
sysconfdir=$("$WEFT_INFO" --parsable | sed -n 's|^path:param_file:system:[a-z]*:\(.*\)/weft-mca-params.conf$|\1|p')
norm() {
    sed -e "s|$(esc "$home")|@HOME@|g" \
        -e "s|$(esc "$root")|@TMP@|g" \
        -e "s|$(esc "$abs_srcdir/contrib/topologies")|@SRCDIR@/contrib/topologies|g" \
        -e "s|$(esc "$abs_builddir")|@BUILDDIR@|g" \
        -e "s|$(esc "$abs_srcdir")|@SRCDIR@|g" \
        -e "s|$(esc "$sysconfdir")/weft-mca-params.conf|@SYSCONFDIR@/weft-mca-params.conf|g" \
        -e "s|^version:weft:$(esc "$version")\$|version:weft:@VERSION@|" \
        -e 's|^config:configure_args:.*|config:configure_args:@CONFIGURE_ARGS@|' \
        -e 's|^config:sanitizers:.*|config:sanitizers:@SANITIZERS@|' \
        -e 's|^config:component_built:.*|config:component_built:@COMPONENTS_BUILT@|' \
        "$1" |
        awk '!($0 == "config:component_built:@COMPONENTS_BUILT@" && prev == $0) { print } { prev = $0 }'
}

# golden NAME FILE: compare the normalized FILE with tests/golden/NAME.
golden() {
    norm "$2" >"$root/out/$1.norm"
    if [ -n "${WEFT_UPDATE_GOLDEN:-}" ]; then
        if cp "$root/out/$1.norm" "$golden_dir/$1"; then
            pass "$1 (golden updated)"
        else
            fail "$1: cannot write $golden_dir/$1"
        fi
    elif [ ! -f "$golden_dir/$1" ]; then
        fail "$1: no golden file $golden_dir/$1 (create it with WEFT_UPDATE_GOLDEN=1)"
    elif diff -u "$golden_dir/$1" "$root/out/$1.norm"; then
        pass "$1"
    else
        fail "$1 differs from the golden (diff above; WEFT_UPDATE_GOLDEN=1 rewrites it)"
    fi
}

# expect_rc NAME RC
expect_rc() {
    if [ "$(rc_of "$1")" = "$2" ]; then
        pass "$1 exits $2"
    else
        fail "$1 exits $(rc_of "$1"), expected $2; stderr:"
        sed 's/^/#   /' "$root/out/$1.err"
    fi
}

# expect_grep NAME out|err FIXED-STRING
expect_grep() {
    if grep -F -q -- "$3" "$root/out/$1.$2"; then
        pass "$1: $2 has '$3'"
    else
        fail "$1: $2 lacks '$3'; it was:"
        sed 's/^/#   /' "$root/out/$1.$2"
    fi
}

# Golden unless this is a static build.
component_golden() {
    if [ "$static" = yes ]; then
        note "$1: not compared in a --disable-dlopen build"
    else
        golden "$@"
    fi
}

# --- everything, parsable ----------------------------------------------------
run all-parsable wi "$WEFT_INFO" --all --parsable
expect_rc all-parsable 0
component_golden info-all-parsable.txt "$root/out/all-parsable.out"
if [ -s "$root/out/all-parsable.err" ]; then
    fail "all-parsable: unexpected stderr:"
    sed 's/^/#   /' "$root/out/all-parsable.err"
fi

# --- btl parameters at level 9, pretty -----------------------------------------
run param-btl wi "$WEFT_INFO" --param btl all --level 9
expect_rc param-btl 0
component_golden info-param-btl-all-level9.txt "$root/out/param-btl.out"

# --- parameter groups without a loaded component (the MPI layer's "mpi coll") ---
run param-mpi-coll wi "$WEFT_INFO" --param mpi coll --level 9
expect_rc param-mpi-coll 0
expect_grep param-mpi-coll out 'MCA mpi coll: parameter "mpi_coll_allreduce_algorithm"'
run param-mpi-coll-typo wi "$WEFT_INFO" --param mpi colll
expect_rc param-mpi-coll-typo 1
expect_grep param-mpi-coll-typo err "no component named 'colll' (did you mean coll?); known: all, base, coll"
# Nothing at the default level: say so, and how to see them.
run param-mpi-level1 wi "$WEFT_INFO" --param mpi coll
expect_rc param-mpi-level1 0
expect_grep param-mpi-level1 err "parameter(s) of this selection are above level 1; add --level 9"
run param-btl-level1 wi "$WEFT_INFO" --param btl tcp
expect_grep param-btl-level1 out 'MCA btl tcp: parameter'
if [ -s "$root/out/param-btl-level1.err" ]; then
    fail "param-btl-level1: a hint on stderr although parameters were shown:"
    sed 's/^/#   /' "$root/out/param-btl-level1.err"
else
    pass "param-btl-level1: no hint when parameters are shown"
fi

# --- JSON ----------------------------------------------------------------------
run json-all wi "$WEFT_INFO" --all --json
expect_rc json-all 0
run json-failed env WEFT_MCA_mca_base_component_path="$broken" "$WEFT_INFO" --json --show-failed
expect_rc json-failed 0
run json-default wi "$WEFT_INFO" --json
expect_rc json-default 0
if command -v python3 >/dev/null 2>&1; then
    for j in json-all json-failed json-default; do
        if python3 -m json.tool "$root/out/$j.out" >/dev/null; then
            pass "$j is valid JSON"
        else
            fail "$j is not valid JSON"
        fi
    done
    # Key facts, then a normalized golden (build-specific fields replaced).
    if python3 - "$root/out/json-all.out" "$root/out/json-failed.out" "$version" "$static" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
f = json.load(open(sys.argv[2]))
version, static = sys.argv[3], sys.argv[4] == "yes"
assert a["version"] == version, a["version"]
fws = {x["name"]: x for x in a["frameworks"]}
assert set(["mca", "topology", "btl"]) <= set(fws), list(fws)
comps = {c["name"]: c for c in fws["btl"]["components"]}
assert comps["self"]["status"] == "loaded", comps["self"]
params = {p["name"]: p for p in a["params"]}
p = params["btl_self_priority"]
assert (p["value"], p["source"], p["type"], p["level"]) == ("100", "default", "int", 5), p
v = params["btl_base_verbose"]
assert {"name": "warn", "value": 20} in v["enumerators"], v
assert params["mca_base_component_path"]["source"] == "environment"
assert a["level"] == 9
if not static:
    failed = {c["name"]: c for c in f["failed"]}
    assert set(failed) == {"badabi", "needlib", "openfail", "wrongname", "thing"}, sorted(failed)
    assert "ABI" in failed["badabi"]["reason"], failed["badabi"]
    assert failed["badabi"]["path"].endswith("weft_btl_badabi.so")
EOF
    then
        pass "json: key facts"
    else
        fail "json: key facts"
    fi
    norm "$root/out/json-all.out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["version"] = "@VERSION@"
d["config"]["configure_args"] = "@CONFIGURE_ARGS@"
d["config"]["sanitizers"] = "@SANITIZERS@"
d["config"]["components_built"] = ["@COMPONENTS_BUILT@"]
print(json.dumps(d, indent=2))
' >"$root/out/json-all.normjson" || fail "json-all: cannot normalize"
    component_golden info-all.json "$root/out/json-all.normjson"
else
    note "python3 not found: JSON is not validated"
fi

# --- topology from the XML fixture ---------------------------------------------
if [ -f "$xml" ]; then
    run topology wi "$WEFT_INFO" --topology --parsable
    expect_rc topology 0
    golden info-topology-parsable.txt "$root/out/topology.out"
    # Bound to the first 4 CPUs (package 0, NUMA node 0): the devices of
    # socket 0 are numa-local, those of socket 1 remote.
    run topology-bound wi WEFT_MCA_topology_base_binding=0-3 "$WEFT_INFO" --topology --parsable
    expect_rc topology-bound 0
    golden info-topology-bound-parsable.txt "$root/out/topology-bound.out"
    run topology-pretty wi "$WEFT_INFO" --topology
    expect_rc topology-pretty 0
    expect_grep topology-pretty out "Topology source: XML file"
    expect_grep topology-pretty out "Device mlx5_1: openfabrics"
    run topology-json wi "$WEFT_INFO" --topology --json
    expect_rc topology-json 0
    if command -v python3 >/dev/null 2>&1; then
        if python3 -m json.tool "$root/out/topology-json.out" >/dev/null; then
            pass "topology-json is valid JSON"
        else
            fail "topology-json is not valid JSON"
        fi
    fi
else
    note "topology fixture $xml is absent: topology goldens skipped"
fi

# --- an unknown name gets a did-you-mean on stderr --------------------------------
run typo-env wi WEFT_MCA_btl_base_verbos=100 "$WEFT_INFO"
expect_rc typo-env 0
expect_grep typo-env err "did you mean btl_base_verbose"
run typo-cli wi "$WEFT_INFO" --mca btl_base_verbos 1
expect_rc typo-cli 0
expect_grep typo-cli err "did you mean btl_base_verbose"

# --- a bad value is an error that says what is accepted ---------------------------
run bad-value wi WEFT_MCA_btl_base_verbose=loud "$WEFT_INFO"
expect_rc bad-value 1
golden info-bad-value.stderr.txt "$root/out/bad-value.err"
expect_grep bad-value err "none, error, warn, info, debug, trace, max or an integer"
if [ -s "$root/out/bad-value.out" ]; then
    fail "bad-value: printed on stdout"
fi
run bad-value-cli wi "$WEFT_INFO" --mca btl_self_priority high
expect_rc bad-value-cli 1
expect_grep bad-value-cli err "btl_self_priority"

# --- the user parameter file ---------------------------------------------------
mkdir -p "$home/.weft"
printf 'btl_self_priority = 7\n' >"$home/.weft/mca-params.conf"
run user-file wi "$WEFT_INFO" --param btl self --level 9 --parsable
expect_rc user-file 0
norm "$root/out/user-file.out" >"$root/out/user-file.norm"
expect_grep user-file norm "mca:btl:self:param:btl_self_priority:value:7"
expect_grep user-file norm "mca:btl:self:param:btl_self_priority:source:file (@HOME@/.weft/mca-params.conf:1)"
# The command line beats the file.
run user-file-cli wi "$WEFT_INFO" --param btl self --level 9 --parsable --mca btl_self_priority 9
expect_grep user-file-cli out "mca:btl:self:param:btl_self_priority:source:command line"
rm -f "$home/.weft/mca-params.conf"

# --- hostile or mistaken parameter files -------------------------------------------
# A 10 MiB line (once: minutes and gigabytes in the did-you-mean) is a syntax
# error quoting 80 characters; a 60000-character unknown name is warned about
# cut short, with no suggestion. timeout bounds a regression.
awk 'BEGIN { s = "x"; for (i = 0; i < 20; i++) s = s s; for (i = 0; i < 10; i++) printf "%s", s; print " = 1" }' \
    >"$home/.weft/mca-params.conf"
run long-line wi timeout 60 "$WEFT_INFO" --parsable
expect_rc long-line 1
expect_grep long-line err "mca-params.conf:1: the line is longer than 65536 bytes and was skipped"
if [ "$(wc -c <"$root/out/long-line.err")" -lt 1000 ]; then pass "long-line: short stderr"; else
    fail "long-line: $(wc -c <"$root/out/long-line.err") bytes of stderr"; fi
awk 'BEGIN { s = "btl_"; for (i = 0; i < 60000; i++) s = s "q"; print s " = 1" }' >"$home/.weft/mca-params.conf"
run long-name wi timeout 60 "$WEFT_INFO" --parsable
expect_rc long-name 0
expect_grep long-name err "... (60004 characters) (file ($home/.weft/mca-params.conf:1))"
if [ "$(wc -c <"$root/out/long-name.err")" -lt 1000 ]; then pass "long-name: short stderr"; else
    fail "long-name: $(wc -c <"$root/out/long-name.err") bytes of stderr"; fi
rm -f "$home/.weft/mca-params.conf"

# A param file list naming a missing file and a directory: one warning each,
# naming the path and the reason. The default user file's absence is normal
# (the runs above without one print nothing on stderr).
run param-files wi WEFT_MCA_mca_base_param_files="$root/no-such.conf:$home:$root/no-such.conf" "$WEFT_INFO"
expect_rc param-files 0
expect_grep param-files err "parameter file $root/no-such.conf: No such file or directory; nothing was read from it (it is named in mca_base_param_files)"
expect_grep param-files err "parameter file $home: Is a directory; nothing was read from it"
if [ "$(wc -l <"$root/out/param-files.err")" -eq 2 ]; then pass "param-files: two warnings"; else
    fail "param-files: $(wc -l <"$root/out/param-files.err") lines of stderr"; fi

# btl_tcp_if_include naming an interface this host lacks: btl/tcp's query
# says so, once, even where tcp is not selected (--explain queries as a job
# does; the plain listing queries nothing).
run if-include wi WEFT_MCA_btl=self WEFT_MCA_btl_tcp_if_include=lo,nosuchif0 "$WEFT_INFO" --explain
expect_rc if-include 0
expect_grep if-include err "btl_tcp_if_include=lo,nosuchif0: no interface on this host is named 'nosuchif0'"
if [ "$(wc -l <"$root/out/if-include.err")" -eq 1 ]; then pass "if-include: one warning"; else
    fail "if-include: $(wc -l <"$root/out/if-include.err") lines of stderr"; fi

# --- failed components -----------------------------------------------------------
run show-failed env WEFT_MCA_mca_base_component_path="$broken" \
    WEFT_MCA_topology_base_xml_file="$xml" "$WEFT_INFO" --show-failed --parsable
expect_rc show-failed 0
component_golden info-show-failed-parsable.txt "$root/out/show-failed.out"
run show-failed-pretty env WEFT_MCA_mca_base_component_path="$broken" "$WEFT_INFO" --show-failed
expect_rc show-failed-pretty 0
if [ "$static" = no ]; then
    expect_grep show-failed-pretty out "MCA btl: badabi: failed:"
    if grep -q 'newminor\|MCA btl: self' "$root/out/show-failed-pretty.out"; then
        fail "show-failed lists a component that loaded"
    else
        pass "show-failed lists only failed components"
    fi
fi
run show-failed-none wi "$WEFT_INFO" --show-failed
expect_rc show-failed-none 0
if [ "$static" = no ]; then
    expect_grep show-failed-none out "Failed components: none"
fi

# --- the default component path: the build tree's components ---------------------
run default env WEFT_MCA_topology_base_xml_file="$xml" "$WEFT_INFO" --parsable
expect_rc default 0
expect_grep default out "mca:btl:self:status:loaded"
if [ "$static" = no ]; then
    norm "$root/out/default.out" >"$root/out/default.norm"
    expect_grep default norm "path:component:present:@BUILDDIR@/components/.modules"
    expect_grep default norm "mca:btl:self:path:@BUILDDIR@/components/.modules/weft_btl_self.so"
fi
run default-pretty wi "$WEFT_INFO"
expect_rc default-pretty 0
expect_grep default-pretty out "Package: weft $version"

# --- usage -----------------------------------------------------------------------
run help "$WEFT_INFO" --help
expect_rc help 0
expect_grep help out "--param GROUP COMPONENT"
run bad-option "$WEFT_INFO" --bogus
expect_rc bad-option 2
expect_grep bad-option err "unknown option '--bogus'"
run bad-level "$WEFT_INFO" --param btl all --level 10
expect_rc bad-level 2
run missing-arg "$WEFT_INFO" --param btl
expect_rc missing-arg 2
run both-formats "$WEFT_INFO" --json --parsable
expect_rc both-formats 2
run bad-group wi "$WEFT_INFO" --param btll all
expect_rc bad-group 1
expect_grep bad-group err "did you mean btl?"
run bad-component wi "$WEFT_INFO" --param btl slef
expect_rc bad-component 1
if [ "$static" = no ]; then
    expect_grep bad-component err "did you mean self?"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
exit 0
