# tests/: GoogleTest units (one binary), test component DSOs, golden and
# integration scripts.
include $(srcdir)/tests/components/local.mk
include $(srcdir)/tests/runtime/local.mk
# The btl conformance suite, run against every btl transport of this tree
# through the real repository (tests/unit/btl_harness.hpp).
unit_test_sources += tests/unit/btl_harness.hpp tests/unit/btl_harness.cc \
	tests/unit/btl_conformance_test.cc

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
# btl/scif: its SCIF library directly, and its module in two processes.
if WEFT_BUILD_btl_scif
unit_test_sources += tests/unit/scif_api_test.cc tests/unit/btl_scif_test.cc
unit_test_cppflags += -I$(top_srcdir)/components/btl/scif
unit_test_ldadd += $(top_builddir)/components/btl/scif/libweft_scif.la
endif
