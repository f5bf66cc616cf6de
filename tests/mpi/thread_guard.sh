#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# thread_guard.sh: every MPI function of libweft_mpi starts with
# MPI_THREAD_GUARD (mpi/internal.hpp), the lock that makes
# MPI_THREAD_MULTIPLE safe; a function without it would let two threads
# into the MPI layer and the engine at once. The few that touch no shared
# state are listed below. Prints each function that lacks it.
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
unguarded=$(awk '
    BEGIN {
        split("Init Init_thread Initialized Finalized Wtime Wtick Query_thread Is_thread_main Get_version " \
              "Get_library_version Get_processor_name Pcontrol Aint_add Aint_diff Address", s, " ")
        for (i in s) skip[s[i]] = 1
    }
    /^(int|double|MPI_Aint) PMPI_[A-Za-z_]+\(/ {
        name = $0; sub(/^[A-Za-z_]+ PMPI_/, "", name); sub(/\(.*/, "", name)
        if (name in skip) next
        if ($0 ~ /\}[ \t]*$/) { print FILENAME ": MPI_" name " (defined on one line)"; next }
        want = name; where = FILENAME; next_is_body = 0
    }
    want != "" && /^\{$/ { next_is_body = 1; next }
    want != "" && next_is_body {
        if ($0 !~ /^    MPI_THREAD_GUARD;$/) print where ": MPI_" want
        want = ""; next_is_body = 0
    }
' "$srcdir"/mpi/*.cc)
if [ -n "$unguarded" ]; then
    echo "FAIL: these MPI functions do not start with MPI_THREAD_GUARD;:"
    echo "$unguarded" | sed 's/^/    /'
    exit 1
fi
echo "PASS: every MPI function starts with MPI_THREAD_GUARD"
