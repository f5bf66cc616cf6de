// SPDX-License-Identifier: BSD-3-Clause
// The cpcs built into btl/openib, most preferred first (btl_openib_cpc
// reorders or narrows them).
#include "cpc.hpp"
#include "cpc_oob.hpp"
#include "cpc_rdmacm.hpp"
#include "cpc_udcm.hpp"

namespace weft::openib {

std::span<const CpcComponent *const> all_cpcs()
{
    static const CpcComponent *const kAll[] = {&kCpcUdcm, &kCpcRdmacm, &kCpcOob};
    return kAll;
}

} // namespace weft::openib
