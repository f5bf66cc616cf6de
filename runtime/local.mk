# runtime/: process runtime and tools. The runtime itself (runtime/rte) is
# part of libweft; weft_info lives in runtime/info, weftrun (the launcher)
# in runtime/weftrun.
include $(srcdir)/runtime/progress/local.mk
include $(srcdir)/runtime/rte/local.mk
include $(srcdir)/runtime/engine/local.mk
include $(srcdir)/runtime/info/local.mk
include $(srcdir)/runtime/weftrun/local.mk
