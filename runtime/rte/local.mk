# SPDX-License-Identifier: BSD-3-Clause
# runtime/rte: the process runtime (weft_init, PMIx client, modex, endpoints
# and transport selection), part of libweft. It builds the messaging engine
# (runtime/engine) and gives it its services (engine/host.hpp).
libweft_la_SOURCES += \
	runtime/rte/abort_note.hpp \
	runtime/rte/observe_api.cc \
	runtime/rte/report.cc runtime/rte/report.hpp \
	runtime/rte/process_api.cc \
	runtime/rte/btl_layer.cc runtime/rte/btl_layer.hpp \
	runtime/rte/endpoints.cc runtime/rte/endpoints.hpp \
	runtime/rte/explain.cc runtime/rte/explain.hpp \
	runtime/rte/params.cc \
	runtime/rte/peer_select.cc runtime/rte/peer_select.hpp \
	runtime/rte/pmix_client.cc runtime/rte/pmix_client.hpp \
	runtime/rte/runtime.cc runtime/rte/runtime.hpp
include_HEADERS = runtime/include/weft.h
unit_test_sources += tests/unit/peer_select_test.cc \
	tests/unit/abort_note_test.cc
