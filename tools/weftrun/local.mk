# SPDX-License-Identifier: BSD-3-Clause
# tools/weftrun: the job launcher (a PMIx server) and its man page.
bin_PROGRAMS += weftrun
weftrun_SOURCES = \
	tools/weftrun/main.cc \
	tools/weftrun/options.hpp tools/weftrun/options.cc \
	tools/weftrun/session_dir.hpp tools/weftrun/session_dir.cc \
	tools/weftrun/placement.hpp tools/weftrun/placement.cc \
	tools/weftrun/events.hpp tools/weftrun/events.cc \
	tools/weftrun/pmix_glue.hpp tools/weftrun/pmix_glue.cc \
	tools/weftrun/rank_env.hpp tools/weftrun/rank_env.cc \
	tools/weftrun/spawn.hpp tools/weftrun/spawn.cc \
	tools/weftrun/limits.hpp tools/weftrun/limits.cc \
	tools/weftrun/output.hpp tools/weftrun/output.cc \
	tools/weftrun/signals.hpp tools/weftrun/signals.cc \
	tools/weftrun/judge.hpp tools/weftrun/judge.cc \
	tools/weftrun/stack_traces.hpp tools/weftrun/stack_traces.cc \
	tools/weftrun/launcher.hpp tools/weftrun/launcher.cc \
	tools/weftrun/launcher_loop.cc
weftrun_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools $(HWLOC_CFLAGS) $(PMIX_CFLAGS)
weftrun_LDADD = $(HWLOC_LIBS) $(PMIX_LIBS) -lpthread
dist_man_MANS += contrib/man/weftrun.1
