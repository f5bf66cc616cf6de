# SPDX-License-Identifier: BSD-3-Clause
# tests/runtime: weft programs run as real jobs (weftrun, Open MPI's mpirun,
# the netns hosts) by the scripts here.
check_PROGRAMS += tests/runtime/weft_probe
tests_runtime_weft_probe_SOURCES = tests/runtime/weft_probe.c
tests_runtime_weft_probe_LDADD = libweft.la
# A real executable in the build tree, not a libtool wrapper script (which
# costs ~30 ms a start).
tests_runtime_weft_probe_LDFLAGS = $(AM_LDFLAGS) -no-install
TESTS += tests/runtime/jobs.sh tests/runtime/netns.sh tests/runtime/shared_core.sh
EXTRA_DIST += tests/runtime/jobs.sh tests/runtime/netns.sh tests/runtime/shared_core.sh
check_PROGRAMS += tests/runtime/weft_stress
tests_runtime_weft_stress_SOURCES = tests/runtime/weft_stress.c
tests_runtime_weft_stress_LDADD = libweft.la
tests_runtime_weft_stress_LDFLAGS = $(AM_LDFLAGS) -no-install
check_PROGRAMS += tests/runtime/mpi_faults
tests_runtime_mpi_faults_SOURCES = tests/runtime/mpi_faults.c
tests_runtime_mpi_faults_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include
tests_runtime_mpi_faults_LDADD = libweft_mpi.la libweft.la
tests_runtime_mpi_faults_LDFLAGS = $(AM_LDFLAGS) -no-install
# btl/scif against a hostile local process (scif_hostile.sh): the job and
# the stranger, which speaks the scif wire through the library's own
# control-message and ring code.
if WEFT_BUILD_btl_scif
check_PROGRAMS += tests/runtime/scif_target tests/runtime/scif_stranger
tests_runtime_scif_target_SOURCES = tests/runtime/scif_target.c
tests_runtime_scif_target_LDADD = libweft.la
tests_runtime_scif_target_LDFLAGS = $(AM_LDFLAGS) -no-install
tests_runtime_scif_stranger_SOURCES = tests/runtime/scif_stranger.cc tests/runtime/scif_raw.hpp \
	components/btl/scif/lib/scif_ctrl.cc components/btl/scif/lib/scif_ring.cc
tests_runtime_scif_stranger_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/components/btl/scif/lib
TESTS += tests/runtime/scif_hostile.sh
endif
EXTRA_DIST += tests/runtime/scif_hostile.sh
# Includes that would make runtime/ layers depend both ways (layers.sh).
TESTS += tests/runtime/layers.sh
EXTRA_DIST += tests/runtime/layers.sh
# The counter page (weft/counters.h): exact counts of a scripted exchange
# over each transport, read-only mapping from another process, nothing left
# after SIGKILL (counters.sh).
check_PROGRAMS += tests/runtime/weft_counters
tests_runtime_weft_counters_SOURCES = tests/runtime/weft_counters.c
tests_runtime_weft_counters_LDADD = libweft.la
tests_runtime_weft_counters_LDFLAGS = $(AM_LDFLAGS) -no-install
TESTS += tests/runtime/counters.sh
EXTRA_DIST += tests/runtime/counters.sh
# weftrun --report: a golden of a deterministic job (report.sh).
TESTS += tests/runtime/report.sh
EXTRA_DIST += tests/runtime/report.sh
