// SPDX-License-Identifier: BSD-3-Clause
// The udcm cpc: connects openib's RC queue pairs with the InfiniBand CM
// handshake run in user space over a UD queue pair per module (port). The
// handshake itself is udcm_fsm.hpp, its messages udcm_wire.hpp; this table
// and cpc_udcm.cc bind them to verbs and to openib (CpcHost).
//
// Parameters (registered by open): btl_openib_cpc_udcm_timeout (ms, the
// first wait for an answer; doubled per retry up to 4x) and
// btl_openib_cpc_udcm_retries (resends before a connection fails).
// btl_openib_cpc_udcm_priority belongs to openib's cpc selection.
#pragma once

#include "cpc.hpp"

namespace weft::openib {

extern const CpcComponent kCpcUdcm;

} // namespace weft::openib
