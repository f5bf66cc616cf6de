# runtime/: process runtime and tools. weft_info lives in runtime/info,
# weftrun (the launcher) in runtime/weftrun.
include $(srcdir)/runtime/info/local.mk
include $(srcdir)/runtime/weftrun/local.mk
