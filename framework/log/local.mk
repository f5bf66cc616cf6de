# SPDX-License-Identifier: BSD-3-Clause
libweft_la_SOURCES += \
	framework/log/log.cc framework/log/log.hpp \
	framework/log/help.cc framework/log/help.hpp
dist_pkgdata_DATA += framework/log/help-mca-base.txt
unit_test_sources += tests/unit/log_test.cc tests/unit/help_test.cc
