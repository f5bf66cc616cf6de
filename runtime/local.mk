# SPDX-License-Identifier: BSD-3-Clause
# runtime/: the progress loop (runtime/progress), the messaging engine
# (runtime/engine) and the process runtime (runtime/rte), all part of
# libweft; each layer uses only those before it. The programs weftrun and
# weft_info live in tools/.
include $(srcdir)/runtime/progress/local.mk
include $(srcdir)/runtime/rte/local.mk
include $(srcdir)/runtime/engine/local.mk
