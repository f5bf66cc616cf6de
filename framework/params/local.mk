# SPDX-License-Identifier: BSD-3-Clause
libweft_la_SOURCES += \
	framework/params/list.cc framework/params/list.hpp \
	framework/params/parse.cc \
	framework/params/registry.cc framework/params/registry.hpp
unit_test_sources += tests/unit/params_parse_test.cc tests/unit/params_list_test.cc \
	tests/unit/params_registry_test.cc
