# SPDX-License-Identifier: BSD-3-Clause
# tools/: the programs, built at the top of the build tree (./weftrun,
# ./weft_info): weftrun, the launcher and PMIx server (it links no libweft),
# and weft_info, which shows what the framework knows (it links libweft).
include $(srcdir)/tools/weftrun/local.mk
include $(srcdir)/tools/weft_info/local.mk
include $(srcdir)/tools/weft_top/local.mk
