# SPDX-License-Identifier: BSD-3-Clause
# framework/: parameters, repository, topology, logging, the core context.
include $(srcdir)/framework/core/local.mk
include $(srcdir)/framework/params/local.mk
include $(srcdir)/framework/log/local.mk
include $(srcdir)/framework/topology/local.mk
include $(srcdir)/framework/repository/local.mk
