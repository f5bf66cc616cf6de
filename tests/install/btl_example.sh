#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# installcheck: contrib/examples/btl-example, an out-of-tree btl, builds
# against the installed weft alone (pkg-config weft, installed headers),
# is found through mca_base_component_path, and carries a checked 2-rank
# ping-pong under the installed weftrun.
#   btl_example.sh EXAMPLE_SRC_DIR INSTALLED_LIBDIR [EXTRA_CFLAGS]
# PKG_CONFIG may name another pkg-config command (for a staged install:
# PKG_CONFIG='pkg-config --define-prefix').
set -eu
src=$1 libdir=$2 extra=${3:-}
PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
export PKG_CONFIG_PATH PKG_CONFIG
bindir=$($PKG_CONFIG --variable=exec_prefix weft)/bin
pkglibdir=$($PKG_CONFIG --variable=pkglibdir weft)
say() { echo "installcheck: btl/example: $*"; }

# A private copy: the source tree may be read-only (distcheck).
work=$(mktemp -d "${TMPDIR:-/tmp}/weft-btl-example.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$src"/Makefile "$src"/*.c "$work"/

if ! make -s -C "$work" CFLAGS="-O2 -g $extra" LDFLAGS="$extra" > "$work/build.log" 2>&1; then
  cat "$work/build.log"; say "did not build against the installed headers"; exit 1
fi
say "built against the installed weft (pkg-config: $($PKG_CONFIG --cflags weft))"

out=$("$bindir/weft_info" --parsable --mca mca_base_component_path "$pkglibdir:$work" 2>&1) || {
  echo "$out"; say "weft_info failed with the example on the component path"; exit 1; }
echo "$out" | grep -q '^mca:btl:example:status:loaded' || {
  echo "$out" | grep 'btl:example' || true; say "weft_info did not load weft_btl_example.so from $work"; exit 1; }
say "weft_info loads it from mca_base_component_path"

if ! make -s -C "$work" check WEFTRUN="$bindir/weftrun" > "$work/check.log" 2>&1; then
  cat "$work/check.log"; say "the ping-pong over btl/example failed"; exit 1
fi
grep -q '^pingpong: rank 1 reached through example$' "$work/check.log" || {
  cat "$work/check.log"; say "the ping-pong ran, but not over btl/example"; exit 1; }
grep -q '^pingpong: ok' "$work/check.log" || {
  cat "$work/check.log"; say "the ping-pong did not report its result"; exit 1; }
result=$(sed -n 's/^pingpong: ok //p' "$work/check.log")
say "ok $result, 2 ranks under the installed weftrun over --mca btl self,example"
