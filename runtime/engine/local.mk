# runtime/engine: the messaging engine (portals, tagged messages, eager and
# rendezvous protocols), part of libweft.
libweft_la_SOURCES += \
	runtime/engine/api.cc \
	runtime/engine/engine.cc runtime/engine/engine.hpp \
	runtime/engine/objects.cc \
	runtime/engine/placement.cc \
	runtime/engine/pool.hpp \
	runtime/engine/tagged.cc \
	runtime/engine/target.cc \
	runtime/engine/wire.cc runtime/engine/wire.hpp
unit_test_sources += tests/unit/engine_test.cc
unit_test_sources += tests/unit/engine_wire_test.cc
