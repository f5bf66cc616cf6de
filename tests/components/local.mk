# SPDX-License-Identifier: BSD-3-Clause
# Test components: real DSOs built with libtool that the repository tests
# load (tests/unit/repository_test.cc), one per way a component can be good
# or broken. They are check_LTLIBRARIES, so they are built by `make check`
# only and never installed; `-rpath /nowhere` is what makes libtool build a
# shared object for a library that is not installed (without -rpath a noinst
# library becomes a convenience archive). The tests find them in
# tests/components/.libs (WEFT_TEST_COMPONENT_DIR, tests/local.mk).
#
# One source, test_component.c, built per variant with -DTEST_NAME and
# -DTEST_<VARIANT>; automake gives each target its own object files.
#
# With --disable-dlopen there is no loader to test, so nothing is built here
# and the tests that need DSOs skip.

EXTRA_DIST += tests/components/test_component.c tests/components/absent_helper.c

if WEFT_BUILD_DSO
tests_components_cflags = $(AM_CFLAGS) -fvisibility=hidden
tests_components_ldflags = $(AM_LDFLAGS) -module -avoid-version -shared -rpath /nowhere

# The dependency of weft_btl_needlib, which must not be findable when needlib
# is loaded. Linked as a libtool library, libtool would hardcode the build
# directory into needlib's RUNPATH (so that it runs uninstalled) and the
# dependency would be found after all; given as a plain .so path, libtool
# silently drops it from a -module link. So the .so is handed to the linker
# directly (-Wl,<path>): needlib records only DT_NEEDED
# libweft_test_absent.so.0 and no search path, and dlopen fails with
# "libweft_test_absent.so.0: cannot open shared object file".
check_LTLIBRARIES += tests/components/libweft_test_absent.la
tests_components_libweft_test_absent_la_SOURCES = tests/components/absent_helper.c
tests_components_libweft_test_absent_la_CFLAGS = $(AM_CFLAGS)
tests_components_libweft_test_absent_la_LDFLAGS = $(AM_LDFLAGS) -shared -rpath /nonexistent


# good: a valid component: open() registers btl_good_priority, query() says available
check_LTLIBRARIES += tests/components/weft_btl_good.la
tests_components_weft_btl_good_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_good_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=good
tests_components_weft_btl_good_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_good_la_LDFLAGS = $(tests_components_ldflags)

# badmagic: wrong magic number
check_LTLIBRARIES += tests/components/weft_btl_badmagic.la
tests_components_weft_btl_badmagic_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_badmagic_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=badmagic -DTEST_BADMAGIC
tests_components_weft_btl_badmagic_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_badmagic_la_LDFLAGS = $(tests_components_ldflags)

# badabi: abi_major 99
check_LTLIBRARIES += tests/components/weft_btl_badabi.la
tests_components_weft_btl_badabi_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_badabi_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=badabi -DTEST_BADABI
tests_components_weft_btl_badabi_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_badabi_la_LDFLAGS = $(tests_components_ldflags)

# newminor: a newer ABI minor: loads, with a note
check_LTLIBRARIES += tests/components/weft_btl_newminor.la
tests_components_weft_btl_newminor_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_newminor_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=newminor -DTEST_NEWMINOR
tests_components_weft_btl_newminor_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_newminor_la_LDFLAGS = $(tests_components_ldflags)

# badsize: struct_size smaller than weft_btl_component_t
check_LTLIBRARIES += tests/components/weft_btl_badsize.la
tests_components_weft_btl_badsize_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_badsize_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=badsize -DTEST_BADSIZE
tests_components_weft_btl_badsize_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_badsize_la_LDFLAGS = $(tests_components_ldflags)

# wrongname: file weft_btl_wrongname, struct name "other"
check_LTLIBRARIES += tests/components/weft_btl_wrongname.la
tests_components_weft_btl_wrongname_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_wrongname_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=wrongname -DTEST_WRONGNAME
tests_components_weft_btl_wrongname_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_wrongname_la_LDFLAGS = $(tests_components_ldflags)

# wrongfw: file says btl, struct framework "pml"
check_LTLIBRARIES += tests/components/weft_btl_wrongfw.la
tests_components_weft_btl_wrongfw_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_wrongfw_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=wrongfw -DTEST_WRONGFW
tests_components_weft_btl_wrongfw_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_wrongfw_la_LDFLAGS = $(tests_components_ldflags)

# nosym: weft_btl_nosym_component not exported (hidden visibility)
check_LTLIBRARIES += tests/components/weft_btl_nosym.la
tests_components_weft_btl_nosym_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_nosym_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=nosym -DTEST_NOSYM
tests_components_weft_btl_nosym_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_nosym_la_LDFLAGS = $(tests_components_ldflags)

# undefdata: references an undefined data symbol: dlopen fails
check_LTLIBRARIES += tests/components/weft_btl_undefdata.la
tests_components_weft_btl_undefdata_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_undefdata_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=undefdata -DTEST_UNDEFDATA
tests_components_weft_btl_undefdata_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_undefdata_la_LDFLAGS = $(tests_components_ldflags)

# undeffunc: calls an undefined function: fails under eager binding
check_LTLIBRARIES += tests/components/weft_btl_undeffunc.la
tests_components_weft_btl_undeffunc_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_undeffunc_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=undeffunc -DTEST_UNDEFFUNC
tests_components_weft_btl_undeffunc_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_undeffunc_la_LDFLAGS = $(tests_components_ldflags)

# needlib: needs libweft_test_absent.so, which is not findable at load time
check_LTLIBRARIES += tests/components/weft_btl_needlib.la
tests_components_weft_btl_needlib_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_needlib_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=needlib -DTEST_NEEDLIB
tests_components_weft_btl_needlib_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_needlib_la_LDFLAGS = $(tests_components_ldflags) \
	-Wl,$(abs_top_builddir)/tests/components/.libs/libweft_test_absent.so
EXTRA_tests_components_weft_btl_needlib_la_DEPENDENCIES = tests/components/libweft_test_absent.la

# openfail: loads; open() returns WEFT_ERR_NOT_AVAILABLE
check_LTLIBRARIES += tests/components/weft_btl_openfail.la
tests_components_weft_btl_openfail_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_openfail_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=openfail -DTEST_OPENFAIL
tests_components_weft_btl_openfail_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_openfail_la_LDFLAGS = $(tests_components_ldflags)

# unavail: loads and opens; query() says not available, with a reason
check_LTLIBRARIES += tests/components/weft_btl_unavail.la
tests_components_weft_btl_unavail_la_SOURCES = tests/components/test_component.c
tests_components_weft_btl_unavail_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_NAME=unavail -DTEST_UNAVAIL
tests_components_weft_btl_unavail_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_unavail_la_LDFLAGS = $(tests_components_ldflags)

# oldabi: a working loopback btl as if built against an older, smaller
# btl.h (its own source): tests/unit/btl_abi_test.cc
check_LTLIBRARIES += tests/components/weft_btl_oldabi.la
tests_components_weft_btl_oldabi_la_SOURCES = tests/components/old_abi_component.c \
	tests/components/old_abi_component.h
tests_components_weft_btl_oldabi_la_CFLAGS = $(tests_components_cflags)
tests_components_weft_btl_oldabi_la_LDFLAGS = $(tests_components_ldflags)
endif
