# tests/runtime: weft programs run as real jobs (weftrun, Open MPI's mpirun,
# the netns hosts) by the scripts here.
check_PROGRAMS += tests/runtime/weft_probe
tests_runtime_weft_probe_SOURCES = tests/runtime/weft_probe.c
tests_runtime_weft_probe_LDADD = libweft.la
# A real executable in the build tree, not a libtool wrapper script (which
# costs ~30 ms a start).
tests_runtime_weft_probe_LDFLAGS = $(AM_LDFLAGS) -no-install
TESTS += tests/runtime/jobs.sh tests/runtime/netns.sh
EXTRA_DIST += tests/runtime/jobs.sh tests/runtime/netns.sh
check_PROGRAMS += tests/runtime/weft_stress
tests_runtime_weft_stress_SOURCES = tests/runtime/weft_stress.c
tests_runtime_weft_stress_LDADD = libweft.la
tests_runtime_weft_stress_LDFLAGS = $(AM_LDFLAGS) -no-install
check_PROGRAMS += tests/runtime/mpi_faults
tests_runtime_mpi_faults_SOURCES = tests/runtime/mpi_faults.c
tests_runtime_mpi_faults_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include
tests_runtime_mpi_faults_LDADD = libweft_mpi.la libweft.la
tests_runtime_mpi_faults_LDFLAGS = $(AM_LDFLAGS) -no-install
