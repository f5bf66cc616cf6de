# runtime/: the process runtime (runtime/rte) and the messaging engine
# (runtime/engine), both part of libweft. The programs weftrun and
# weft_info live in tools/.
include $(srcdir)/runtime/rte/local.mk
include $(srcdir)/runtime/engine/local.mk
