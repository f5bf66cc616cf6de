# SPDX-License-Identifier: BSD-3-Clause
# tests/integration: real jobs under the built weftrun. pmix_probe is a raw
# PMIx client; it is built without the sanitizers so the checks judge
# weftrun, not libpmix's client side (whose leaks would fail every rank
# under LSan).
check_PROGRAMS += tests/integration/pmix_probe
tests_integration_pmix_probe_SOURCES = tests/integration/pmix_probe.c
tests_integration_pmix_probe_CFLAGS = $(WEFT_WARN_FLAGS) $(PMIX_CFLAGS)
tests_integration_pmix_probe_LDFLAGS =
tests_integration_pmix_probe_LDADD = $(PMIX_LIBS)
# hwloc_spy: an LD_PRELOAD library that records the I/O filters of every
# hwloc topology a process loads (weftrun must ask for no I/O discovery).
check_LTLIBRARIES += tests/integration/hwloc_spy.la
tests_integration_hwloc_spy_la_SOURCES = tests/integration/hwloc_spy.c
tests_integration_hwloc_spy_la_CFLAGS = $(WEFT_WARN_FLAGS) $(HWLOC_CFLAGS)
tests_integration_hwloc_spy_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_integration_hwloc_spy_la_LIBADD = $(HWLOC_LIBS) -ldl
TESTS += tests/integration/weftrun.sh
EXTRA_DIST += tests/integration/weftrun.sh tests/integration/lsan.supp tests/integration/tsan.supp
AM_TESTS_ENVIRONMENT += \
	WEFTRUN='$(abs_top_builddir)/weftrun'; export WEFTRUN; \
	PMIX_PROBE='$(abs_top_builddir)/tests/integration/pmix_probe'; export PMIX_PROBE; \
	HWLOC_SPY='$(abs_top_builddir)/tests/integration/.libs/hwloc_spy.so'; export HWLOC_SPY;
