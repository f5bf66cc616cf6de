# SPDX-License-Identifier: BSD-3-Clause
# runtime/progress: the progress loop every source of work registers with
# (btl modules, the runtime's PMIx events, the engine), part of libweft.
# The lowest layer of runtime/: it includes neither rte nor engine.
libweft_la_SOURCES += runtime/progress/progress.cc runtime/progress/progress.hpp
unit_test_sources += tests/unit/progress_test.cc
