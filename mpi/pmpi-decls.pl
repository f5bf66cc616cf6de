#!/usr/bin/perl
# SPDX-License-Identifier: BSD-3-Clause
# pmpi-decls.pl: write weft_pmpi.h, the PMPI_ twin of every function
# prototype in mpi.h, so that a tool library can call PMPI_Send while it
# defines MPI_Send itself (MPI-3.1 chapter 14, the profiling interface).
#
#   perl mpi/pmpi-decls.pl mpi/include/mpi.h > mpi/include/weft_pmpi.h
#   perl mpi/pmpi-decls.pl --check mpi/include/mpi.h mpi/include/weft_pmpi.h
#
# The header is generated rather than written by hand so that a function
# added to mpi.h cannot lack its PMPI_ declaration: make check runs --check.
# A prototype is a line starting with a return type and MPI_Name( and
# running to the first ';' (it may span lines).
use strict;
use warnings;

my $check = @ARGV && $ARGV[0] eq '--check' ? shift @ARGV : undef;
my $mpi_h = shift @ARGV or die "usage: $0 [--check] mpi.h [weft_pmpi.h]\n";

open my $in, '<', $mpi_h or die "$0: cannot read $mpi_h: $!\n";
my @protos;
my $current;
while (my $line = <$in>) {
    if (!defined $current && $line =~ /^[A-Za-z_][\w ]*?\**\s*MPI_\w+\(/ && $line !~ /^(typedef|#)/) {
        $current = '';
    }
    next unless defined $current;
    $current .= $line;
    if ($line =~ /;/) {
        push @protos, $current;
        undef $current;
    }
}
close $in;
die "$0: an unterminated prototype at the end of $mpi_h\n" if defined $current;

my $out = <<'HEAD';
/* SPDX-License-Identifier: BSD-3-Clause */
/* weft_pmpi.h: the profiling interface (PMPI_) of every function mpi.h
 * declares. Generated from mpi.h by mpi/pmpi-decls.pl: do not edit; run
 *   perl mpi/pmpi-decls.pl mpi/include/mpi.h > mpi/include/weft_pmpi.h
 * In libweft_mpi every MPI_X is a weak alias of PMPI_X, so a tool that
 * defines MPI_X and calls PMPI_X intercepts the call. Included by mpi.h. */
#ifndef WEFT_PMPI_H
#define WEFT_PMPI_H

#include "mpi.h"   /* the types; mpi.h includes this file at its end */

#ifdef __cplusplus
extern "C" {
#endif

HEAD
for my $p (@protos) {
    (my $q = $p) =~ s/\bMPI_(\w+)\(/PMPI_$1(/;
    # Continuation lines keep their alignment under the longer name.
    $q =~ s/\n(?=\s)/\n /g;
    $out .= $q;
}
$out .= <<'TAIL';

#ifdef __cplusplus
}
#endif
#endif
TAIL

if ($check) {
    my $have_file = shift @ARGV or die "usage: $0 --check mpi.h weft_pmpi.h\n";
    open my $h, '<', $have_file or die "$0: cannot read $have_file: $!\n";
    local $/;
    my $have = <$h>;
    close $h;
    if ($have ne $out) {
        print STDERR "$have_file is out of date with $mpi_h: regenerate it with\n"
            . "  perl mpi/pmpi-decls.pl mpi/include/mpi.h > mpi/include/weft_pmpi.h\n";
        exit 1;
    }
    exit 0;
}
print $out;
