// SPDX-License-Identifier: BSD-3-Clause
// The oob cpc: "queue pair data through the PMIx modex". Unlike udcm and
// rdmacm it connects nothing on demand: it wires every pair of the job
// inside weft_init.
//
//   card (job_known)  one RC queue pair per other rank, RESET -> INIT; the
//                     card section (oob_wire.hpp) lists, per rank, the QP
//                     number and first PSN reserved for it
//   modex_ready       after the modex fence, per peer whose card has an oob
//                     section: the endpoint (CpcHost::incoming), the
//                     reserved QP adopted, receives posted, RTR against the
//                     peer's entry for this rank, RTS, connected
//   start_connect     finds the pair wired already (openib returns the live
//                     endpoint before asking a cpc); otherwise oob declines
//                     with the reason (a pair is wired once per job, so a
//                     closed or failed one is not remade by oob) and openib
//                     asks the next cpc both sides run, if any
//
// Every rank moves its QPs to RTR inside weft_init, before that call
// returns; a rank that is through may send to one still in modex_ready,
// whose QP then drops the packets until its RTR, and RC retransmission
// (btl_openib_timeout, btl_openib_retry_count) covers that window.
//
// The cost is N-1 queue pairs, each with its receive buffers
// (btl_openib_recv_depth + 3 frames, about 1 MiB by default), per process,
// whether or not the pair ever talks; btl_openib_cpc_oob_max_procs (256)
// bounds it: in a larger job oob declines and names udcm and rdmacm.
// Peers without an oob section (oob declined there, or btl_openib_cpc
// leaves it out) connect by the other cpcs both sides run.
#pragma once

#include "cpc.hpp"

namespace weft::openib {

extern const CpcComponent kCpcOob;

} // namespace weft::openib
