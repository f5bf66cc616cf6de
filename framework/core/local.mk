# SPDX-License-Identifier: BSD-3-Clause
libweft_la_SOURCES += \
	framework/core/status.cc framework/core/status.hpp \
	framework/core/framework.cc framework/core/framework.hpp \
	framework/core/host.cc framework/core/paths.cc framework/core/strings.hpp
unit_test_sources += tests/unit/framework_test.cc
