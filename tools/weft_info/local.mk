# SPDX-License-Identifier: BSD-3-Clause
# tools/weft_info: weft_info, the ompi_info of weft, and its man page.
bin_PROGRAMS += weft_info
weft_info_SOURCES = \
	tools/weft_info/weft_info.cc \
	tools/weft_info/info.hpp \
	tools/weft_info/collect.cc \
	tools/weft_info/render_pretty.cc \
	tools/weft_info/render_parsable.cc \
	tools/weft_info/render_json.cc \
	tools/weft_info/render_explain.cc \
	tools/weft_info/json.hpp tools/weft_info/json.cc
weft_info_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools $(HWLOC_CFLAGS)
weft_info_LDADD = libweft.la $(HWLOC_LIBS)
dist_man_MANS += contrib/man/weft_info.1
