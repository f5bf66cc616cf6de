# SPDX-License-Identifier: BSD-3-Clause
# tests/info: golden tests of weft_info (tests/golden/info-*.txt).
# AM_TESTS_ENVIRONMENT is defined here first; later fragments must add to it
# with +=.
TESTS += tests/info/golden.sh
EXTRA_DIST += tests/info/golden.sh
AM_TESTS_ENVIRONMENT = \
	WEFT_INFO='$(abs_top_builddir)/weft_info'; export WEFT_INFO; \
	WEFT_ABS_SRCDIR='$(abs_top_srcdir)'; export WEFT_ABS_SRCDIR; \
	WEFT_ABS_BUILDDIR='$(abs_top_builddir)'; export WEFT_ABS_BUILDDIR; \
	WEFT_TEST_COMPONENT_DIR='$(abs_top_builddir)/tests/components/.libs'; \
	export WEFT_TEST_COMPONENT_DIR;
