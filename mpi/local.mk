# SPDX-License-Identifier: BSD-3-Clause
# mpi/: the MPI subset (libweft_mpi) on weft's public API, its header, the
# weftcc / weftcxx compiler wrappers and their pkg-config file.
lib_LTLIBRARIES += libweft_mpi.la
libweft_mpi_la_SOURCES = \
	mpi/internal.hpp \
	mpi/coll.cc \
	mpi/comm.cc \
	mpi/datatype.cc \
	mpi/env.cc \
	mpi/errors.cc \
	mpi/op.cc \
	mpi/p2p.cc \
	mpi/request.cc \
	mpi/win.hpp \
	mpi/win.cc \
	mpi/win_sync.cc
# The MPI-3.1 surface grows by area, each in its own files (issue 22).
# Point-to-point, requests, threads and the environment:
libweft_mpi_la_SOURCES += \
	mpi/persistent.cc \
	mpi/mprobe.cc \
	mpi/grequest.cc \
	mpi/info.cc \
	mpi/compat.cc \
	mpi/f2c.cc \
	mpi/threads.cc

# The tool information interface (MPI_T: parameters and counters):
libweft_mpi_la_SOURCES += mpi/tool.cc

# Collectives (blocking, nonblocking, persistent) and operations:
libweft_mpi_la_SOURCES += mpi/coll.hpp mpi/coll_sched.hpp mpi/coll_sched.cc mpi/coll_build.cc mpi/coll_nb.cc mpi/coll_inter.hpp mpi/coll_inter.cc \
	mpi/coll_choose.hpp mpi/coll_choose.cc mpi/coll_algos.hpp mpi/coll_reduce_tree.cc mpi/coll_halving.cc \
	mpi/coll_allgather.cc mpi/coll_alltoall.cc

# Communicators, groups, topologies, neighbourhood collectives, attributes:
libweft_mpi_la_SOURCES += mpi/attr.cc mpi/comm_more.cc mpi/comm_inter.cc \
	mpi/topo.hpp mpi/topo.cc mpi/neighbor.cc

# One-sided communication:
libweft_mpi_la_SOURCES += mpi/win_info.cc mpi/win_atomic.cc mpi/win_pscw.cc mpi/win_shared.cc

libweft_mpi_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include -I$(top_srcdir)
libweft_mpi_la_LIBADD = libweft.la
libweft_mpi_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0

# Installed apart from weft.h so that it never shadows another MPI's mpi.h.
mpiincludedir = $(includedir)/weft/mpi
mpiinclude_HEADERS = mpi/include/mpi.h mpi/include/weft_pmpi.h
EXTRA_DIST += mpi/pmpi-decls.pl

bin_SCRIPTS = weftcc weftcxx
CLEANFILES += weftcc weftcxx
EXTRA_DIST += mpi/weftcc.in
pkgconfig_DATA += weft-mpi.pc

# One script, configured twice: the compiler it runs is the only difference.
weftcc weftcxx: $(srcdir)/mpi/weftcc.in Makefile
	$(AM_V_GEN)lang=`case $@ in weftcxx) echo cxx;; *) echo c;; esac`; \
	compiler=`case $@ in weftcxx) echo '$(CXX)';; *) echo '$(CC)';; esac`; \
	sed -e 's|@WRAPPER_LANG[@]|'"$$lang"'|g' \
	    -e 's|@WRAPPER_COMPILER[@]|'"$$compiler"'|g' \
	    -e 's|@prefix[@]|$(prefix)|g' -e 's|@exec_prefix[@]|$(exec_prefix)|g' \
	    -e 's|@includedir[@]|$(includedir)|g' -e 's|@libdir[@]|$(libdir)|g' \
	    -e 's|@abs_top_srcdir[@]|$(abs_top_srcdir)|g' -e 's|@abs_top_builddir[@]|$(abs_top_builddir)|g' \
	    -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	    -e 's|@WEFT_SAN_FLAGS[@]|$(WEFT_SAN_FLAGS)|g' \
	    $(srcdir)/mpi/weftcc.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@
