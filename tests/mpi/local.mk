# SPDX-License-Identifier: BSD-3-Clause
# tests/mpi: MPI programs (each prints "No Errors" when every check held),
# built against libweft_mpi like any user program, and run by
# run-suite.sh under weftrun at 1-4 ranks over self+scif and self+tcp
# (suite.sh). wrapper.sh tests weftcc/weftcxx themselves. osu_pt2pt is the
# MPI-only benchmark bench.sh builds with weftcc, mpicc.openmpi and
# mpicc.mpich.
mpi_test_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include
mpi_test_ldflags = $(AM_LDFLAGS) -no-install

check_PROGRAMS += tests/mpi/p2p_basic
tests_mpi_p2p_basic_SOURCES = tests/mpi/p2p_basic.c tests/mpi/mtest.h
tests_mpi_p2p_basic_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_p2p_basic_LDADD = libweft_mpi.la libweft.la
tests_mpi_p2p_basic_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/p2p_order
tests_mpi_p2p_order_SOURCES = tests/mpi/p2p_order.c tests/mpi/mtest.h
tests_mpi_p2p_order_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_p2p_order_LDADD = libweft_mpi.la libweft.la
tests_mpi_p2p_order_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/p2p_truncate
tests_mpi_p2p_truncate_SOURCES = tests/mpi/p2p_truncate.c tests/mpi/mtest.h
tests_mpi_p2p_truncate_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_p2p_truncate_LDADD = libweft_mpi.la libweft.la
tests_mpi_p2p_truncate_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/p2p_probe_cancel
tests_mpi_p2p_probe_cancel_SOURCES = tests/mpi/p2p_probe_cancel.c tests/mpi/mtest.h
tests_mpi_p2p_probe_cancel_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_p2p_probe_cancel_LDADD = libweft_mpi.la libweft.la
tests_mpi_p2p_probe_cancel_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/datatypes
tests_mpi_datatypes_SOURCES = tests/mpi/datatypes.c tests/mpi/mtest.h
tests_mpi_datatypes_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_datatypes_LDADD = libweft_mpi.la libweft.la
tests_mpi_datatypes_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/comm
tests_mpi_comm_SOURCES = tests/mpi/comm.c tests/mpi/mtest.h
tests_mpi_comm_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_comm_LDADD = libweft_mpi.la libweft.la
tests_mpi_comm_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/coll
tests_mpi_coll_SOURCES = tests/mpi/coll.c tests/mpi/mtest.h
tests_mpi_coll_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_coll_LDADD = libweft_mpi.la libweft.la
tests_mpi_coll_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/onesided
tests_mpi_onesided_SOURCES = tests/mpi/onesided.c tests/mpi/mtest.h
tests_mpi_onesided_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_onesided_LDADD = libweft_mpi.la libweft.la
tests_mpi_onesided_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/win_basic
tests_mpi_win_basic_SOURCES = tests/mpi/win_basic.c tests/mpi/mtest.h
tests_mpi_win_basic_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_win_basic_LDADD = libweft_mpi.la libweft.la
tests_mpi_win_basic_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/errhandler
tests_mpi_errhandler_SOURCES = tests/mpi/errhandler.c tests/mpi/mtest.h
tests_mpi_errhandler_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_errhandler_LDADD = libweft_mpi.la libweft.la
tests_mpi_errhandler_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/init_thread
tests_mpi_init_thread_SOURCES = tests/mpi/init_thread.c tests/mpi/mtest.h
tests_mpi_init_thread_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_init_thread_LDADD = libweft_mpi.la libweft.la
tests_mpi_init_thread_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/errors_fatal
tests_mpi_errors_fatal_SOURCES = tests/mpi/errors_fatal.c tests/mpi/mtest.h
tests_mpi_errors_fatal_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_errors_fatal_LDADD = libweft_mpi.la libweft.la
tests_mpi_errors_fatal_LDFLAGS = $(mpi_test_ldflags)

check_PROGRAMS += tests/mpi/osu_pt2pt
tests_mpi_osu_pt2pt_SOURCES = tests/mpi/osu_pt2pt.c
tests_mpi_osu_pt2pt_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_osu_pt2pt_LDADD = libweft_mpi.la libweft.la
tests_mpi_osu_pt2pt_LDFLAGS = $(mpi_test_ldflags)

# The profiling interface: a counting tool (pmpi_tool.c) linked in before
# libweft_mpi (pmpi_linked) and preloaded (libpmpi_tool.so onto pmpi_count).
check_PROGRAMS += tests/mpi/pmpi_count tests/mpi/pmpi_linked
tests_mpi_pmpi_count_SOURCES = tests/mpi/pmpi_count.c tests/mpi/mtest.h
tests_mpi_pmpi_count_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_pmpi_count_LDADD = libweft_mpi.la libweft.la -ldl
tests_mpi_pmpi_count_LDFLAGS = $(mpi_test_ldflags)
tests_mpi_pmpi_linked_SOURCES = tests/mpi/pmpi_count.c tests/mpi/pmpi_tool.c tests/mpi/mtest.h
tests_mpi_pmpi_linked_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_pmpi_linked_LDADD = libweft_mpi.la libweft.la -ldl
tests_mpi_pmpi_linked_LDFLAGS = $(mpi_test_ldflags) -export-dynamic
check_LTLIBRARIES += tests/mpi/libpmpi_tool.la
tests_mpi_libpmpi_tool_la_SOURCES = tests/mpi/pmpi_tool.c
tests_mpi_libpmpi_tool_la_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_libpmpi_tool_la_LIBADD = libweft_mpi.la
tests_mpi_libpmpi_tool_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -rpath /nowhere

TESTS += tests/mpi/suite.sh tests/mpi/wrapper.sh tests/mpi/pmpi.sh
EXTRA_DIST += tests/mpi/suite.sh tests/mpi/wrapper.sh tests/mpi/pmpi.sh tests/mpi/run-suite.sh tests/mpi/bench.sh \
	tests/mpi/third-party.sh

# ---- the MPI-3.1 surface by area (issue 22): each area's programs ----
# Point-to-point, requests, threads, environment:
check_PROGRAMS += tests/mpi/p2p_persistent
tests_mpi_p2p_persistent_SOURCES = tests/mpi/p2p_persistent.c tests/mpi/mtest.h
tests_mpi_p2p_persistent_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_p2p_persistent_LDADD = libweft_mpi.la libweft.la
tests_mpi_p2p_persistent_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/p2p_mprobe
tests_mpi_p2p_mprobe_SOURCES = tests/mpi/p2p_mprobe.c tests/mpi/mtest.h
tests_mpi_p2p_mprobe_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_p2p_mprobe_LDADD = libweft_mpi.la libweft.la
tests_mpi_p2p_mprobe_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/env_info
tests_mpi_env_info_SOURCES = tests/mpi/env_info.c tests/mpi/mtest.h
tests_mpi_env_info_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_env_info_LDADD = libweft_mpi.la libweft.la
tests_mpi_env_info_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/thread_multiple
tests_mpi_thread_multiple_SOURCES = tests/mpi/thread_multiple.c tests/mpi/mtest.h
tests_mpi_thread_multiple_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_thread_multiple_CFLAGS = $(AM_CFLAGS) -pthread
tests_mpi_thread_multiple_LDADD = libweft_mpi.la libweft.la -lpthread
tests_mpi_thread_multiple_LDFLAGS = $(mpi_test_ldflags)
TESTS += tests/mpi/thread_guard.sh
EXTRA_DIST += tests/mpi/thread_guard.sh

# Collectives:
check_PROGRAMS += tests/mpi/coll_ops tests/mpi/coll_nb
tests_mpi_coll_ops_SOURCES = tests/mpi/coll_ops.c tests/mpi/mtest.h
tests_mpi_coll_ops_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_coll_ops_LDADD = libweft_mpi.la libweft.la
tests_mpi_coll_ops_LDFLAGS = $(mpi_test_ldflags)
tests_mpi_coll_nb_SOURCES = tests/mpi/coll_nb.c tests/mpi/mtest.h
tests_mpi_coll_nb_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_coll_nb_LDADD = libweft_mpi.la libweft.la
tests_mpi_coll_nb_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/coll_scratch
tests_mpi_coll_scratch_SOURCES = tests/mpi/coll_scratch.c tests/mpi/mtest.h
tests_mpi_coll_scratch_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_coll_scratch_LDADD = libweft_mpi.la libweft.la
tests_mpi_coll_scratch_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/coll_algos
tests_mpi_coll_algos_SOURCES = tests/mpi/coll_algos.c tests/mpi/mtest.h
tests_mpi_coll_algos_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_coll_algos_LDADD = libweft_mpi.la libweft.la
tests_mpi_coll_algos_LDFLAGS = $(mpi_test_ldflags)
TESTS += tests/mpi/coll_algos.sh
EXTRA_DIST += tests/mpi/coll_algos.sh
check_PROGRAMS += tests/mpi/coll_protocol
tests_mpi_coll_protocol_SOURCES = tests/mpi/coll_protocol.c tests/mpi/mtest.h
tests_mpi_coll_protocol_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_coll_protocol_LDADD = libweft_mpi.la libweft.la
tests_mpi_coll_protocol_LDFLAGS = $(mpi_test_ldflags)
TESTS += tests/mpi/coll_protocol.sh
EXTRA_DIST += tests/mpi/coll_protocol.sh
# A measurement, not a test: how much of MPI_Iallreduce / MPI_Ialltoall
# hides behind computation (as OSU's overlap column).
check_PROGRAMS += tests/mpi/nbc_overlap
tests_mpi_nbc_overlap_SOURCES = tests/mpi/nbc_overlap.c
tests_mpi_nbc_overlap_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_nbc_overlap_LDADD = libweft_mpi.la libweft.la
tests_mpi_nbc_overlap_LDFLAGS = $(mpi_test_ldflags)

# Communicators, topologies, attributes:
check_PROGRAMS += tests/mpi/attr
tests_mpi_attr_SOURCES = tests/mpi/attr.c tests/mpi/mtest.h
tests_mpi_attr_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_attr_LDADD = libweft_mpi.la libweft.la
tests_mpi_attr_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/topo
tests_mpi_topo_SOURCES = tests/mpi/topo.c tests/mpi/mtest.h
tests_mpi_topo_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_topo_LDADD = libweft_mpi.la libweft.la
tests_mpi_topo_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/neighbor
tests_mpi_neighbor_SOURCES = tests/mpi/neighbor.c tests/mpi/mtest.h
tests_mpi_neighbor_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_neighbor_LDADD = libweft_mpi.la libweft.la
tests_mpi_neighbor_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/comm_more
tests_mpi_comm_more_SOURCES = tests/mpi/comm_more.c tests/mpi/mtest.h
tests_mpi_comm_more_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_comm_more_LDADD = libweft_mpi.la libweft.la
tests_mpi_comm_more_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/intercomm
tests_mpi_intercomm_SOURCES = tests/mpi/intercomm.c tests/mpi/mtest.h
tests_mpi_intercomm_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_intercomm_LDADD = libweft_mpi.la libweft.la
tests_mpi_intercomm_LDFLAGS = $(mpi_test_ldflags)

# One-sided:
check_PROGRAMS += tests/mpi/win_atomic
tests_mpi_win_atomic_SOURCES = tests/mpi/win_atomic.c tests/mpi/mtest.h
tests_mpi_win_atomic_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_win_atomic_LDADD = libweft_mpi.la libweft.la
tests_mpi_win_atomic_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/win_epochs
tests_mpi_win_epochs_SOURCES = tests/mpi/win_epochs.c tests/mpi/mtest.h
tests_mpi_win_epochs_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_win_epochs_LDADD = libweft_mpi.la libweft.la
tests_mpi_win_epochs_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/win_osu
tests_mpi_win_osu_SOURCES = tests/mpi/win_osu.c tests/mpi/mtest.h
tests_mpi_win_osu_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_win_osu_LDADD = libweft_mpi.la libweft.la
tests_mpi_win_osu_LDFLAGS = $(mpi_test_ldflags)


# The tool information interface (MPI_T): cvars = parameters, pvars = counters.
check_PROGRAMS += tests/mpi/mpit
tests_mpi_mpit_SOURCES = tests/mpi/mpit.c tests/mpi/mtest.h
tests_mpi_mpit_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_mpit_LDADD = libweft_mpi.la libweft.la
tests_mpi_mpit_LDFLAGS = $(mpi_test_ldflags)

# mpi4py's cases (datatypes it found missing, intercommunicator collectives):
check_PROGRAMS += tests/mpi/datatypes_dist
tests_mpi_datatypes_dist_SOURCES = tests/mpi/datatypes_dist.c tests/mpi/mtest.h
tests_mpi_datatypes_dist_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_datatypes_dist_LDADD = libweft_mpi.la libweft.la
tests_mpi_datatypes_dist_LDFLAGS = $(mpi_test_ldflags)
check_PROGRAMS += tests/mpi/intercomm_coll
tests_mpi_intercomm_coll_SOURCES = tests/mpi/intercomm_coll.c tests/mpi/mtest.h
tests_mpi_intercomm_coll_CPPFLAGS = $(mpi_test_cppflags)
tests_mpi_intercomm_coll_LDADD = libweft_mpi.la libweft.la
tests_mpi_intercomm_coll_LDFLAGS = $(mpi_test_ldflags)
