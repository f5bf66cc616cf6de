# SPDX-License-Identifier: BSD-3-Clause
dnl btl/openib: builds only where libibverbs (and librdmacm) are found by
dnl pkg-config; the top-level configure has already looked for both.
AC_DEFUN([WEFT_CONFIG_btl_openib], [
  AS_IF([test "$weft_have_verbs" = yes && test "$weft_have_rdmacm" = yes],
    [$1],
    [AC_MSG_NOTICE([btl/openib will not be built: libibverbs/librdmacm not found (install libibverbs-dev librdmacm-dev)])
     $2])
])
