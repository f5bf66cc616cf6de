# SPDX-License-Identifier: BSD-3-Clause
# tools/weft_top: the live view of a running job (reads the ranks' counter
# pages, weft/counters.h; links no libweft).
bin_PROGRAMS += weft_top
weft_top_SOURCES = tools/weft_top/weft_top.cc
weft_top_CPPFLAGS = $(AM_CPPFLAGS)
