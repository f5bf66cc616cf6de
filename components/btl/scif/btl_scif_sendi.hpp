// SPDX-License-Identifier: BSD-3-Clause
// btl/scif's sendi, the small-message send, inline: the generated ops
// entry (weft::btl::Ops<ScifModule>::sendi) calls it, and as a call into
// another translation unit it cost a send about 15 instructions of call,
// register saves and returns (callgrind, weft_send at 8 B).
#ifndef WEFT_BTL_SCIF_SENDI_HPP
#define WEFT_BTL_SCIF_SENDI_HPP

#include <cerrno>

#include "btl_scif_module.hpp"
#include "scif_endpoint.hpp"

namespace weft::btl_scif {

inline int ScifModule::sendi(ScifEndpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len,
                             const void *payload, size_t payload_len)
{
    // One test for what is rare: bad arguments, and a message past
    // stream_reply_from, which may stream (an answer); sendi_rare() sorts
    // them out, so the small message's path stays as it was.
    const size_t total = hdr_len + payload_len;
    if (total > sendi_plain_max_ || (hdr_len && !hdr) || (payload_len && !payload)) [[unlikely]]
        return sendi_rare(ep, SendiArgs{hdr, hdr_len, payload, payload_len, am_id});
    if (const int rc = sendi_refusal(ep); rc != WEFT_SUCCESS) [[unlikely]]
        return rc;
    return send_whole(*weft::scif::lookup(ep.epd), am_id, hdr, hdr_len, payload, payload_len);
}

inline int ScifModule::send_whole(weft::scif::Endpoint &s, uint8_t am_id, const void *hdr, size_t hdr_len,
                                  const void *payload, size_t payload_len)
{
    int rc = weft::scif::try_send_message(s, kAm, am_id, bytes(hdr, hdr_len), bytes(payload, payload_len));
    if (rc == 0) {
        if (s.tx.consumer_sleeps())
            weft::scif::notify(s);
        return WEFT_SUCCESS;
    }
    // A full ring's AGAIN is not counted here: counting needs this module
    // after the ring call, which costs every send a saved register (2
    // instructions, callgrind); the engine counts the AGAIN it gets per peer.
    return rc == -EAGAIN ? WEFT_ERR_AGAIN : WEFT_ERR_UNREACHABLE;
}

} // namespace weft::btl_scif

#endif
