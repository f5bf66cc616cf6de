#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Compiles every installed public header alone: a .h as C (C11 and C99,
# -Wpedantic) and as C++ (C++20), a .hpp as C++ only; each included twice
# (its include guard). A header that needs another header it does not
# include, uses C++ in a C header, or warns, fails here.
#   check-headers.sh INCLUDEDIR CC CXX [EXTRA_FLAGS]
set -eu
incdir=$1 cc=$2 cxx=$3 extra=${4:-}
warn="-Wall -Wextra -Wpedantic -Werror"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft-check-headers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
headers=$(cd "$incdir" && find . -name '*.h' -o -name '*.hpp' | sed 's|^\./||' | sort)
[ -n "$headers" ] || { echo "check-headers: no headers under $incdir"; exit 1; }
n=0 failed=0
compile() {   # LANG-NAME COMPILER FLAGS... (source on stdin is $tmp/t.*)
  what=$1; shift
  if ! "$@" -I"$incdir" $extra -c "$src" -o "$tmp/t.o" > "$tmp/err" 2>&1; then
    echo "FAIL: $h alone in $what"; sed 's/^/  /' "$tmp/err" | head -n 20; failed=$((failed + 1))
  fi
}
for h in $headers; do
  n=$((n + 1))
  src=$tmp/t.cc
  printf '#include <%s>\n#include <%s>\nint check_headers_unit;\n' "$h" "$h" > "$src"
  compile "C++20" $cxx -std=c++20 $warn
  case $h in
    *.h)
      src=$tmp/t.c
      cp "$tmp/t.cc" "$src"
      compile "C11" $cc -std=c11 $warn
      compile "C99" $cc -std=c99 $warn ;;
  esac
done
if [ "$failed" -ne 0 ]; then
  echo "check-headers: $failed of the compiles of $n headers under $incdir failed"; exit 1
fi
echo "check-headers: $n public headers under $incdir compile alone (.h: C11, C99, C++20; .hpp: C++20)"
