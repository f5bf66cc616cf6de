# SPDX-License-Identifier: BSD-3-Clause
dnl btl/self: loopback to the calling process. Always buildable.
AC_DEFUN([WEFT_CONFIG_btl_self], [$1])
