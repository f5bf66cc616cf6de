# tests/bench: benchmarks (not tests: they measure and print, they do not
# judge). tests/bench/startup.sh times init + barrier + finalize jobs of
# weft beside Open MPI and MPICH.
noinst_PROGRAMS = tests/bench/weft_startup
tests_bench_weft_startup_SOURCES = tests/bench/weft_startup.c
tests_bench_weft_startup_LDADD = libweft.la
EXTRA_DIST += tests/bench/startup.sh tests/bench/mpi_startup.c
tests_bench_weft_startup_LDFLAGS = $(AM_LDFLAGS) -no-install
