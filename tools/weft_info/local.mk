# runtime/info: weft_info, the ompi_info of weft, and its man page.
bin_PROGRAMS += weft_info
weft_info_SOURCES = \
	runtime/info/weft_info.cc \
	runtime/info/info.hpp \
	runtime/info/collect.cc \
	runtime/info/render_pretty.cc \
	runtime/info/render_parsable.cc \
	runtime/info/render_json.cc \
	runtime/info/render_explain.cc \
	runtime/info/json.hpp runtime/info/json.cc
weft_info_CPPFLAGS = $(AM_CPPFLAGS) $(HWLOC_CFLAGS)
weft_info_LDADD = libweft.la $(HWLOC_LIBS)
dist_man_MANS += contrib/man/weft_info.1
