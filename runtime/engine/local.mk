# SPDX-License-Identifier: BSD-3-Clause
# runtime/engine: the messaging engine (portals, tagged messages, eager and
# rendezvous protocols) and the C API for messaging, part of libweft. It
# sees the process runtime only through host.hpp; runtime/rte builds it.
libweft_la_SOURCES += \
	runtime/engine/api_error.hpp \
	runtime/engine/counters.cc runtime/engine/counters.hpp runtime/engine/counter_view.hpp \
	runtime/engine/engine.cc runtime/engine/engine.hpp \
	runtime/engine/host.hpp \
	runtime/engine/interval_clock.cc runtime/engine/interval_clock.hpp \
	runtime/engine/matching.cc runtime/engine/matching.hpp \
	runtime/engine/messaging_api.cc \
	runtime/engine/objects.hpp \
	runtime/engine/portals.cc runtime/engine/portals.hpp \
	runtime/engine/params.cc runtime/engine/params.hpp \
	runtime/engine/peers.cc runtime/engine/peers.hpp \
	runtime/engine/pool.hpp \
	runtime/engine/rendezvous.cc runtime/engine/rendezvous.hpp \
	runtime/engine/rendezvous_data.cc \
	runtime/engine/tagged.cc \
	runtime/engine/target.cc \
	runtime/engine/wire.cc runtime/engine/wire.hpp
unit_test_sources += tests/unit/engine_test.cc
unit_test_sources += tests/unit/engine_wire_test.cc
unit_test_sources += tests/unit/engine_host_test.cc tests/unit/engine_fake_host.hpp
unit_test_sources += tests/unit/engine_matching_test.cc
unit_test_sources += tests/unit/engine_rendezvous_test.cc
unit_test_sources += tests/unit/counters_test.cc
unit_test_sources += tests/unit/interval_clock_test.cc
