# SPDX-License-Identifier: BSD-3-Clause
libweft_la_SOURCES += \
	framework/repository/repository.cc framework/repository/repository.hpp \
	framework/repository/selection.cc
nodist_libweft_la_SOURCES = framework/repository/static_components.h
unit_test_sources += tests/unit/repository_test.cc tests/unit/selection_test.cc
