// SPDX-License-Identifier: BSD-3-Clause
// Rendezvous Data frames (rendezvous.hpp) and the btl's optional extensions
// for them (btl.h: "Ordering", sendx, upcalls.place/placed). Kept in this
// one file so the rest of the engine does not depend on them.
//  - Sending: a Data frame names its receive (token) and where its bytes go
//    (chunk_offset), and the receiver counts bytes before it sends the Fin,
//    so the frame may arrive in any order: it goes out unordered where the
//    module allows, which lets a module stripe it over several connections.
//    Every other frame stays ordered (matching, Rts before Data, Cts, Fin).
//  - Receiving: a module that offers placement asks, after a Data frame's
//    header, where its payload goes, receives it straight into the MD (no
//    copy through the module's buffer) and says when it has landed; those
//    bytes count then. The Fin goes out when all bytes counted, whatever
//    order the frames came in.
#include <algorithm>
#include <cstring>

#include <weft/component_util.hpp>

#include "engine/rendezvous.hpp"

namespace weft::engine {

// Cts mode: the target asked for the data in chunks.
int Rendezvous::send_granted(PeerTraffic &ps, Op *op)
{
    while (op->sent < op->granted) {
        // A chunk goes on the rail that would finish it first; one that is
        // full (AGAIN) is passed over for this chunk.
        uint32_t tried = 0;
        int rc = WEFT_ERR_AGAIN;
        size_t n = 0;
        const auto eps = host_.connected_endpoints(ps.rank);
        while (rc == WEFT_ERR_AGAIN) {
            const size_t k = peers_.pick_rail(ps, eps, tried);
            if (k == SIZE_MAX)
                return WEFT_ERR_AGAIN;
            weft_btl_endpoint_t *ep = k == 0 ? ps.ep : eps[k];
            n = std::min({chunk_, ep->module->caps.max_send - sizeof(wire::Data), op->granted - op->sent});
            wire::Data d{};
            d.type = static_cast<uint8_t>(wire::Type::Data);
            d.length = static_cast<uint32_t>(n);
            d.token = op->token;
            d.chunk_offset = op->sent;
            rc = send_data(ep, d, std::span(op->data + op->sent, n));
            if (rc == WEFT_ERR_AGAIN)
                tried |= 1u << k;
            else if (rc == WEFT_SUCCESS && ps.rail_bytes.size() > k) {
                ps.rail_bytes[k] += n;
                if (k < WEFT_COUNTERS_RAILS)
                    ps.counters->rail_bytes[k] += n;
            }
        }
        if (rc != WEFT_SUCCESS)
            return rc;
        op->sent += n;
    }
    op->state = Op::State::WaitFin;
    return WEFT_SUCCESS;
}

int Rendezvous::send_data(weft_btl_endpoint_t *ep, const wire::Data &d, std::span<const std::byte> payload)
{
    const weft_btl_module_t *m = ep->module;
    const auto *hdr = reinterpret_cast<const std::byte *>(&d);
    iovec iov[2] = {{const_cast<std::byte *>(hdr), sizeof d},
                    {const_cast<std::byte *>(payload.data()), payload.size()}};
    const int iovcnt = payload.empty() ? 1 : 2;
    if (!(m->caps.flags & WEFT_BTL_FLAG_UNORDERED) || !WEFT_BTL_HAS_OP(m, sendx))
        return weft_btl_send(ep, wire::kAmEngine, iov, iovcnt);
    return weft_btl_sendx(ep, wire::kAmEngine, iov, iovcnt, WEFT_BTL_SEND_UNORDERED);
}

void Rendezvous::on_data(const wire::Frame &f)
{
    auto d = wire::read<wire::Data>(f);
    Incoming *in = data_target(d, f.payload.size(), false);
    if (!in)
        return;
    weft::cutil::copy_bytes(static_cast<std::byte *>(in->md->desc.start) + in->offset + d.chunk_offset,
                            f.payload.data(), f.payload.size());
    data_landed(in, f.payload.size());
}

Incoming *Rendezvous::data_target(const wire::Data &d, size_t bytes, bool quiet)
{
    Incoming *in = incoming_.get(d.token);
    if (!in || !in->md) {
        if (!quiet)
            peers_.reject(WEFT_RANK_ANY, "data chunk for an unknown or finished receive");
        return nullptr;
    }
    if (d.chunk_offset > in->mlength || bytes > in->mlength - d.chunk_offset) {
        if (!quiet)
            peers_.reject(in->source, "data chunk beyond the receive's length");
        return nullptr;
    }
    return in;
}

void Rendezvous::data_landed(Incoming *in, size_t bytes)
{
    in->received += bytes;
    if (in->received >= in->mlength)
        finish(in, WEFT_SUCCESS);
}

int Rendezvous::place(weft_btl_endpoint_t *ep, std::span<const std::byte> head, size_t len,
                      weft_btl_placement_t *out)
{
    wire::Data d;
    if (head.size() < sizeof d || len < sizeof d || static_cast<wire::Type>(head[0]) != wire::Type::Data)
        return 0;
    std::memcpy(&d, head.data(), sizeof d);
    // Anything doubtful is declined: the ordinary path rejects it with a reason.
    Incoming *in = d.length == len - sizeof d ? data_target(d, d.length, true) : nullptr;
    if (!in || in->source != ep->peer_rank || d.length == 0)
        return 0;
    uint64_t token;
    Landing *l = landings_.alloc(&token);
    l->incoming = in->handle;
    l->bytes = d.length;
    out->skip = sizeof d;
    out->iov[0] = {static_cast<std::byte *>(in->md->desc.start) + in->offset + d.chunk_offset, d.length};
    out->iovcnt = 1;
    out->token = token;
    return 1;
}

void Rendezvous::placed(uint64_t token, int status)
{
    Landing *l = landings_.get(token);
    if (!l)
        return;
    Incoming *in = incoming_.get(l->incoming);
    const size_t bytes = l->bytes;
    landings_.free(l);
    if (!in)
        return;   // finished already (its peer failed)
    if (status != WEFT_SUCCESS)
        finish(in, status);
    else
        data_landed(in, bytes);
}

} // namespace weft::engine
