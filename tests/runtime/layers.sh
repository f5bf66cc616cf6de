#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The layers of libweft depend one way (docs: DESIGN.md "Layers"):
#   framework  <-  runtime/progress  <-  runtime/engine  <-  runtime/rte
# A layer includes only headers of the layers to its left: the engine sees
# the runtime only through engine/host.hpp, which rte implements. Fails with
# every include that points the wrong way.
srcdir=${srcdir:-.}
status=0
# check DIR PATTERN WHY: no "#include" in DIR's sources may match PATTERN.
check() {
    dir=$1 pattern=$2 why=$3
    [ -d "$srcdir/$dir" ] || { echo "layers.sh: $srcdir/$dir is missing"; status=1; return; }
    hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($pattern)/" "$srcdir/$dir" \
        --include='*.cc' --include='*.hpp' --include='*.h' --include='*.c')
    if [ -n "$hits" ]; then
        echo "$hits" | sed "s|^$srcdir/||; s|\$|   <- $why|"
        status=1
    fi
}
check runtime/engine 'rte' 'the engine reaches the runtime only through engine/host.hpp'
check runtime/progress 'rte|engine' 'the progress loop is below both the engine and the runtime'
check framework 'rte|engine|progress' 'the framework knows no runtime'
[ $status -eq 0 ] && echo "layers.sh: every include points down (framework <- progress <- engine <- rte)"
exit $status
