# SPDX-License-Identifier: BSD-3-Clause
dnl WEFT_DO_COMPONENT(framework, name)
dnl Runs the component's own WEFT_CONFIG_<fw>_<name>([can-build], [cannot-build]),
dnl records the decision for the Makefiles and for the static component table.
AC_DEFUN([WEFT_DO_COMPONENT], [
  AC_MSG_CHECKING([whether component $1/$2 can be built])
  AC_MSG_RESULT([asking its configure.m4])
  weft_can_build_$1_$2=no
  weft_why_not_$1_$2="its configure.m4 said no"
  WEFT_CONFIG_$1_$2([weft_can_build_$1_$2=yes], [weft_can_build_$1_$2=no])
  AS_IF([test "$weft_can_build_$1_$2" = yes], [
      WEFT_COMPONENT_SUBDIRS="$WEFT_COMPONENT_SUBDIRS components/$1/$2"
      weft_components_built="$weft_components_built $1/$2"
      AS_IF([test "$weft_enable_dlopen" = no], [
          WEFT_STATIC_COMPONENT_LIBS="$WEFT_STATIC_COMPONENT_LIBS \$(top_builddir)/components/$1/$2/libweft_$1_$2.la"
          weft_static_table="$weft_static_table WEFT_STATIC_COMPONENT($1,$2)"
        ])
    ], [
      weft_components_skipped="$weft_components_skipped $1/$2"
    ])
  WEFT_ALL_COMPONENT_SUBDIRS="$WEFT_ALL_COMPONENT_SUBDIRS components/$1/$2"
  AM_CONDITIONAL([WEFT_BUILD_$1_$2], [test "$weft_can_build_$1_$2" = yes])
])

dnl WEFT_CONFIGURE_COMPONENTS: run WEFT_DO_COMPONENT for each component autogen found.
AC_DEFUN([WEFT_CONFIGURE_COMPONENTS], [
  WEFT_COMPONENT_SUBDIRS=
  WEFT_ALL_COMPONENT_SUBDIRS=
  WEFT_STATIC_COMPONENT_LIBS=
  weft_static_table=
  weft_components_built=
  weft_components_skipped=
  m4_foreach_w([weft_fc], WEFT_ALL_COMPONENTS, [
    WEFT_DO_COMPONENT(m4_bpatsubst(weft_fc, [:.*], []), m4_bpatsubst(weft_fc, [.*:], []))
  ])
  AC_SUBST([WEFT_COMPONENT_SUBDIRS])
  AC_SUBST([WEFT_ALL_COMPONENT_SUBDIRS])
  AC_SUBST([WEFT_STATIC_COMPONENT_LIBS])
  WEFT_COMPONENT_MAKEFILES
])
