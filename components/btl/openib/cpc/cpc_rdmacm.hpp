// SPDX-License-Identifier: BSD-3-Clause
// The rdmacm cpc: connections through librdmacm (IP addressing; what RoCE
// fabrics and routed IB use). See cpc_rdmacm.cc.
#pragma once

#include "cpc.hpp"

namespace weft::openib {

extern const CpcComponent kCpcRdmacm;

// The private data of a connect request or accept (at most 56 bytes, the
// RC connect limit of rdma_cm). Exposed for the unit tests.
struct RdmacmPrivate {
    static constexpr uint8_t kConnect = 1, kAccept = 2, kLowerRankWins = 3;
    uint8_t kind = 0;
    uint64_t job = 0;                  // hash of the job id
    uint32_t rank = 0;                 // the sender's
    QpAddress qp;
};
inline constexpr size_t kRdmacmPrivateBytes = 51;
void encode_private(const RdmacmPrivate &p, uint8_t out[kRdmacmPrivateBytes]);
bool decode_private(const void *data, size_t len, RdmacmPrivate *p, std::string *why);
uint64_t job_hash(const std::string &job_id);

} // namespace weft::openib
