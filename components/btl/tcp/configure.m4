# SPDX-License-Identifier: BSD-3-Clause
dnl btl/tcp: needs only POSIX sockets and getifaddrs.
AC_DEFUN([WEFT_CONFIG_btl_tcp], [
  AC_CHECK_FUNC([getifaddrs], [$1], [$2])
])
