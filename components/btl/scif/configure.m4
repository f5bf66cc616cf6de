# SPDX-License-Identifier: BSD-3-Clause
dnl btl/scif: the SCIF-like on-node transport. Needs Linux: memfd_create for
dnl the ring segments (nothing in /dev/shm), abstract UNIX sockets for ports,
dnl process_vm_readv for single-copy RMA (whether the kernel allows it is
dnl found at run time, per connection).
AC_DEFUN([WEFT_CONFIG_btl_scif], [
  weft_scif_ok=yes
  AC_CHECK_FUNCS([memfd_create process_vm_readv], [], [weft_scif_ok=no])
  AS_IF([test "$weft_scif_ok" = yes], [$1], [$2])
])
