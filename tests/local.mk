# SPDX-License-Identifier: BSD-3-Clause
# tests/: GoogleTest units (one binary), test component DSOs, golden and
# integration scripts.
include $(srcdir)/tests/components/local.mk
include $(srcdir)/tests/runtime/local.mk
include $(srcdir)/tests/mpi/local.mk
# The btl conformance suite, run against every btl transport of this tree
# through the real repository (tests/unit/btl/btl_harness.hpp).
unit_test_sources += tests/unit/btl/btl_harness.hpp tests/unit/btl/btl_harness.cc \
	tests/unit/btl/btl_conformance_test.cc
# A btl built against a smaller btl.h (tests/components/old_abi_component.c).
unit_test_sources += tests/unit/btl/btl_abi_test.cc
# The C++ base every btl is written on (framework/include/weft/btl_base.hpp).
unit_test_sources += tests/unit/btl/btl_base_test.cc

if WEFT_HAVE_GTEST
check_PROGRAMS += tests/unit/weft_unit_tests
tests_unit_weft_unit_tests_SOURCES = tests/unit/test_util.hpp tests/unit/test_util.cc $(unit_test_sources)
tests_unit_weft_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) $(HWLOC_CFLAGS) $(GTEST_CFLAGS) \
	-DWEFT_TEST_DATADIR='"$(abs_top_srcdir)/tests/data"' \
	-DWEFT_TEST_COMPONENT_DIR='"$(abs_top_builddir)/tests/components/.libs"' \
	$(unit_test_cppflags)
tests_unit_weft_unit_tests_LDADD = libweft.la $(HWLOC_LIBS) $(GTEST_LIBS) -lpthread $(unit_test_ldadd)
TESTS += tests/unit/weft_unit_tests
else
TESTS += tests/no-gtest.sh
endif
EXTRA_DIST += tests/no-gtest.sh tests/golden
include $(srcdir)/tests/info/local.mk
include $(srcdir)/tests/bench/local.mk
# tests/integration: launcher tests under weftrun.
include $(srcdir)/tests/integration/local.mk
# Sanitizer builds: the ranks run libpmix's client; its leaks and its own
# thread's races are not ours, so only its frames are suppressed (the files
# of tests/integration).
# intercept_tls_get_addr=0: LeakSanitizer misreads glibc's dynamic TLS blocks
# (google/sanitizers#1322) and its tracer then crashes at exit ("Tracer
# caught signal 11", seen under mpirun.openmpi); without the interception
# only pointers held in dlopen'ed TLS stop being roots, which can add
# reports but never hides one.
AM_TESTS_ENVIRONMENT += \
	ASAN_OPTIONS="$${ASAN_OPTIONS:+$$ASAN_OPTIONS:}intercept_tls_get_addr=0"; export ASAN_OPTIONS; \
	LSAN_OPTIONS='suppressions=$(abs_top_srcdir)/tests/integration/lsan.supp'; export LSAN_OPTIONS; \
	TSAN_OPTIONS='suppressions=$(abs_top_srcdir)/tests/integration/tsan.supp'; export TSAN_OPTIONS;

# btl/tcp: its wire parsers and interface choice are tested directly (they
# are pure functions), and so is a link's reader over a socket pair; the
# rest through the conformance suite and btl_tcp_peer_test.cc.
unit_test_sources += tests/unit/btl/tcp/btl_tcp_wire_test.cc tests/unit/btl/tcp/btl_tcp_peer_test.cc \
	components/btl/tcp/btl_tcp_wire.cc components/btl/tcp/btl_tcp_iface.cc \
	components/btl/tcp/btl_tcp_link.cc
unit_test_cppflags += -I$(top_srcdir)/components/btl/tcp

# libFuzzer targets of the wire parsers (btl/tcp frames, the engine's
# frames, btl/scif's control messages, btl/openib's udcm messages): `make fuzz` builds them with clang (-fsanitize=fuzzer);
# `make fuzz-run` runs each briefly. Kept out of `make check` so gcc builds
# and distcheck never need clang.
FUZZ_CXX ?= clang++
FUZZ_FLAGS = -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined
EXTRA_DIST += tests/fuzz/tcp_frame_fuzz.cc tests/fuzz/engine_wire_fuzz.cc tests/fuzz/scif_ctrl_fuzz.cc \
	tests/fuzz/udcm_wire_fuzz.cc
fuzz: tests/fuzz/tcp_frame_fuzz tests/fuzz/engine_wire_fuzz tests/fuzz/scif_ctrl_fuzz tests/fuzz/udcm_wire_fuzz
tests/fuzz/tcp_frame_fuzz: $(srcdir)/tests/fuzz/tcp_frame_fuzz.cc $(srcdir)/components/btl/tcp/btl_tcp_wire.cc
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -I$(srcdir)/components/btl/tcp $(srcdir)/tests/fuzz/tcp_frame_fuzz.cc \
	  $(srcdir)/components/btl/tcp/btl_tcp_wire.cc -o $@
tests/fuzz/engine_wire_fuzz: $(srcdir)/tests/fuzz/engine_wire_fuzz.cc $(srcdir)/runtime/engine/wire.cc
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -I$(srcdir)/runtime $(srcdir)/tests/fuzz/engine_wire_fuzz.cc \
	  $(srcdir)/runtime/engine/wire.cc -o $@
tests/fuzz/scif_ctrl_fuzz: $(srcdir)/tests/fuzz/scif_ctrl_fuzz.cc $(srcdir)/components/btl/scif/lib/scif_ctrl.cc \
	  $(srcdir)/components/btl/scif/btl_scif_wire.cc
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -I$(srcdir)/components/btl/scif -I$(srcdir)/components/btl/scif/lib $(srcdir)/tests/fuzz/scif_ctrl_fuzz.cc \
	  $(srcdir)/components/btl/scif/lib/scif_ctrl.cc $(srcdir)/components/btl/scif/btl_scif_wire.cc -o $@
tests/fuzz/udcm_wire_fuzz: $(srcdir)/tests/fuzz/udcm_wire_fuzz.cc $(srcdir)/components/btl/openib/cpc/udcm_wire.cc
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -I$(srcdir)/components/btl/openib/cpc $(srcdir)/tests/fuzz/udcm_wire_fuzz.cc \
	  $(srcdir)/components/btl/openib/cpc/udcm_wire.cc -o $@
fuzz-run: fuzz
	tests/fuzz/tcp_frame_fuzz -max_total_time=20 -max_len=256
	tests/fuzz/engine_wire_fuzz -max_total_time=20 -max_len=256
	tests/fuzz/scif_ctrl_fuzz -max_total_time=20 -max_len=320
	tests/fuzz/udcm_wire_fuzz -max_total_time=20 -max_len=160
CLEANFILES += tests/fuzz/tcp_frame_fuzz tests/fuzz/engine_wire_fuzz tests/fuzz/scif_ctrl_fuzz \
	tests/fuzz/udcm_wire_fuzz
.PHONY: fuzz fuzz-run

# btl/scif: its SCIF library directly, and its module in two processes.
if WEFT_BUILD_btl_scif
unit_test_sources += tests/unit/btl/scif/scif_api_test.cc tests/unit/btl/scif/scif_errors_test.cc tests/unit/btl/scif/btl_scif_test.cc \
	tests/unit/btl/scif/scif_ctrl_test.cc components/btl/scif/lib/scif_ctrl.cc tests/unit/btl/scif/no_process_vm.hpp \
	tests/unit/btl/scif/scif_ring_test.cc components/btl/scif/lib/scif_ring.cc
unit_test_cppflags += -I$(top_srcdir)/components/btl/scif -I$(top_srcdir)/components/btl/scif/lib
unit_test_ldadd += $(top_builddir)/components/btl/scif/libweft_scif.la
endif

# btl/openib's udcm cpc: its wire format and connection state machine are
# pure C++ (no verbs headers), so they are tested on every host, RDMA or not.
unit_test_sources += tests/unit/btl/openib/udcm_wire_test.cc tests/unit/btl/openib/udcm_fsm_test.cc \
	components/btl/openib/cpc/udcm_wire.cc components/btl/openib/cpc/udcm_fsm.cc
unit_test_cppflags += -I$(top_srcdir)/components/btl/openib/cpc

# btl/openib's immediate and card formats are pure C++ too: every host.
unit_test_sources += tests/unit/btl/openib/openib_wire_test.cc components/btl/openib/btl_openib_wire.cc

# btl/openib's oob cpc: its card section (queue pair per rank) is pure C++.
unit_test_sources += tests/unit/btl/openib/oob_wire_test.cc components/btl/openib/cpc/oob_wire.cc
unit_test_cppflags += -I$(top_srcdir)/components/btl/openib

# btl/openib pieces that need the verbs headers and libraries: the rdmacm
# connection data, port choice and parameter checks (no device needed), and
# the module on a real device (they skip where openib's query finds none).
if WEFT_BUILD_btl_openib
unit_test_sources += tests/unit/btl/openib/openib_host_test.cc tests/unit/btl/openib/openib_peer_test.cc \
	components/btl/openib/btl_openib_device.cc components/btl/openib/btl_openib_rcache.cc \
	components/btl/openib/cpc/cpc_rdmacm.cc
unit_test_cppflags += $(IBVERBS_CFLAGS) $(RDMACM_CFLAGS)
unit_test_ldadd += $(IBVERBS_LIBS) $(RDMACM_LIBS)
endif

# btl/openib on a real RDMA device. Run it where one is, e.g. in the
# Soft-RoCE VM: ../shared/rdma-vm/run-in-rxe-vm --workdir "$PWD" -- make check-rdma
# It depends on nothing, so make never rebuilds inside the VM (build first).
# tests/rdma/bench.sh puts weft beside perftest on the same device.
EXTRA_DIST += tests/rdma/check.sh tests/rdma/bench.sh
check-rdma:
	$(SHELL) $(srcdir)/tests/rdma/check.sh $(abs_top_builddir)
.PHONY: check-rdma

# weft under a real Slurm (srun --mpi=pmix) on two fake hosts, from the kit
# beside the project (../shared/slurm, or WEFT_SLURM_KIT); 77 where it
# cannot run (tests/slurm/check.sh says what it checks). make itself exits 2
# on any failure, so the rule prints the script's status for .ci/run. It
# builds only the programs it launches.
slurm_check_programs = $(filter tests/mpi/% tests/runtime/weft_stress$(EXEEXT) \
	tests/runtime/weft_probe$(EXEEXT),$(check_PROGRAMS))
EXTRA_DIST += tests/slurm/check.sh
check-slurm: all $(slurm_check_programs)
	@rc=0; bash $(srcdir)/tests/slurm/check.sh $(abs_top_builddir) || rc=$$?; \
	if [ $$rc != 0 ]; then echo "check-slurm: exit status $$rc"; fi; exit $$rc
.PHONY: check-slurm
