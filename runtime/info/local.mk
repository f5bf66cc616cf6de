bin_PROGRAMS += weft_info
weft_info_SOURCES = runtime/info/weft_info.cc
weft_info_CPPFLAGS = $(AM_CPPFLAGS) $(HWLOC_CFLAGS)
weft_info_LDADD = libweft.la $(HWLOC_LIBS)
