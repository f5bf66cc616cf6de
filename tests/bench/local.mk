# SPDX-License-Identifier: BSD-3-Clause
# tests/bench: benchmarks (not tests: they measure and print, they do not
# judge). tests/bench/startup.sh times init + barrier + finalize jobs of
# weft beside Open MPI and MPICH.
noinst_PROGRAMS = tests/bench/weft_startup
tests_bench_weft_startup_SOURCES = tests/bench/weft_startup.c
tests_bench_weft_startup_LDADD = libweft.la
EXTRA_DIST += tests/bench/startup.sh tests/bench/mpi_startup.c tests/bench/scale.sh tests/bench/peers.sh
tests_bench_weft_startup_LDFLAGS = $(AM_LDFLAGS) -no-install
# weft_bench: latency / bandwidth / message rate / multi-pair of the engine,
# and the raw transport for comparison; ../shared/bench/compare runs it.
noinst_PROGRAMS += tests/bench/weft_bench
tests_bench_weft_bench_SOURCES = tests/bench/weft_bench.cc tests/bench/limits.cc tests/bench/limits.hpp
tests_bench_weft_bench_CPPFLAGS = $(AM_CPPFLAGS) $(HWLOC_CFLAGS)
tests_bench_weft_bench_LDADD = libweft.la
tests_bench_weft_bench_LDFLAGS = $(AM_LDFLAGS) -no-install
# plot.sh: weft_bench --csv and contrib/plot-bench (skips without matplotlib).
TESTS += tests/bench/plot.sh
EXTRA_DIST += tests/bench/plot.sh tests/bench/fixtures
# limits.sh: weft_bench --limits (the machine's limit beside each row).
TESTS += tests/bench/limits.sh
EXTRA_DIST += tests/bench/limits.sh
AM_TESTS_ENVIRONMENT += \
	WEFT_BENCH='$(abs_top_builddir)/tests/bench/weft_bench'; export WEFT_BENCH;
