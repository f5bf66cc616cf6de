# runtime/weftrun: the job launcher (a PMIx server) and its man page.
bin_PROGRAMS += weftrun
weftrun_SOURCES = \
	runtime/weftrun/main.cc \
	runtime/weftrun/options.hpp runtime/weftrun/options.cc \
	runtime/weftrun/session_dir.hpp runtime/weftrun/session_dir.cc \
	runtime/weftrun/placement.hpp runtime/weftrun/placement.cc \
	runtime/weftrun/events.hpp runtime/weftrun/events.cc \
	runtime/weftrun/pmix_glue.hpp runtime/weftrun/pmix_glue.cc \
	runtime/weftrun/rank_env.hpp runtime/weftrun/rank_env.cc \
	runtime/weftrun/spawn.hpp runtime/weftrun/spawn.cc \
	runtime/weftrun/limits.hpp runtime/weftrun/limits.cc \
	runtime/weftrun/output.hpp runtime/weftrun/output.cc \
	runtime/weftrun/signals.hpp runtime/weftrun/signals.cc \
	runtime/weftrun/judge.hpp runtime/weftrun/judge.cc \
	runtime/weftrun/launcher.hpp runtime/weftrun/launcher.cc \
	runtime/weftrun/launcher_loop.cc
weftrun_CPPFLAGS = $(AM_CPPFLAGS) $(HWLOC_CFLAGS) $(PMIX_CFLAGS)
weftrun_LDADD = $(HWLOC_LIBS) $(PMIX_LIBS) -lpthread
dist_man_MANS += contrib/man/weftrun.1
