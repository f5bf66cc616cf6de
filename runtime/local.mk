# runtime/: process runtime and tools. weft_info lives in runtime/info.
include $(srcdir)/runtime/info/local.mk
