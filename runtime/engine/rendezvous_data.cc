// SPDX-License-Identifier: BSD-3-Clause
// Rendezvous Data frames and the btl's optional extensions for them (btl.h:
// "Ordering", sendx, upcalls.place/placed). Kept in this one file so the
// rest of the engine does not depend on them.
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
#include <cstring>

#include "engine/engine.hpp"

namespace weft::engine {

void Engine::enable_placement()
{
    host_.set_place_handler(wire::kAmEngine, on_place, on_placed, this);
}

int Engine::send_data(weft_btl_endpoint_t *ep, const wire::Data &d, std::span<const std::byte> payload)
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

Incoming *Engine::data_target(const wire::Data &d, size_t bytes, bool quiet)
{
    Incoming *in = incoming_.get(d.token);
    if (!in || !in->md) {
        if (!quiet)
            reject(WEFT_RANK_ANY, "data chunk for an unknown or finished receive");
        return nullptr;
    }
    if (d.chunk_offset > in->mlength || bytes > in->mlength - d.chunk_offset) {
        if (!quiet)
            reject(in->source, "data chunk beyond the receive's length");
        return nullptr;
    }
    return in;
}

void Engine::data_landed(Incoming *in, size_t bytes)
{
    in->received += bytes;
    if (in->received >= in->mlength)
        finish_incoming(in, WEFT_SUCCESS);
}

int Engine::on_place(void *ctx, weft_btl_endpoint_t *ep, std::span<const std::byte> head, size_t len,
                     weft_btl_placement_t *place)
{
    auto *e = static_cast<Engine *>(ctx);
    wire::Data d;
    if (head.size() < sizeof d || len < sizeof d ||
        static_cast<wire::Type>(head[0]) != wire::Type::Data)
        return 0;
    std::memcpy(&d, head.data(), sizeof d);
    // Anything doubtful is declined: the ordinary path rejects it with a reason.
    Incoming *in = d.length == len - sizeof d ? e->data_target(d, d.length, true) : nullptr;
    if (!in || in->source != ep->peer_rank || d.length == 0)
        return 0;
    uint64_t token;
    Landing *l = e->landings_.alloc(&token);
    l->incoming = in->handle;
    l->bytes = d.length;
    place->skip = sizeof d;
    place->iov[0] = {static_cast<std::byte *>(in->md->desc.start) + in->offset + d.chunk_offset, d.length};
    place->iovcnt = 1;
    place->token = token;
    return 1;
}

void Engine::on_placed(void *ctx, weft_btl_endpoint_t *, uint64_t token, int status)
{
    auto *e = static_cast<Engine *>(ctx);
    Landing *l = e->landings_.get(token);
    if (!l)
        return;
    Incoming *in = e->incoming_.get(l->incoming);
    const size_t bytes = l->bytes;
    e->landings_.free(l);
    if (!in)
        return;   // finished already (its peer failed)
    if (status != WEFT_SUCCESS)
        e->finish_incoming(in, status);
    else
        e->data_landed(in, bytes);
}

} // namespace weft::engine
