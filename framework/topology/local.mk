# SPDX-License-Identifier: BSD-3-Clause
libweft_la_SOURCES += \
	framework/topology/topology.cc framework/topology/topology.hpp
unit_test_sources += tests/unit/topology_test.cc
