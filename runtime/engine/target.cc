// SPDX-License-Identifier: BSD-3-Clause
// The receiving side off the fast path: frames from peers by type; a put
// matched against the posted receives (Matching) or a portal's match
// entries, its eager data landed in the memory descriptor (a rendezvous
// header goes on to the Rendezvous part), or kept in a lazy portal's
// unexpected queue; the initiator's answers (Ack, Fin, Cts), gets, and
// credits.
#include <algorithm>
#include <cstring>

#include <weft/component_util.hpp>

#include "engine/engine.hpp"
#include "log/log.hpp"

namespace weft::engine {

namespace {

// The fields Put and Rts headers share.
template <class H>
void copy_put_fields(const H &h, PutInfo *u)
{
    u->portal = h.portal;
    u->flags = h.flags;
    u->match_bits = h.match_bits;
    u->offset = h.offset;
    u->hdr_data = h.hdr_data;
    u->op = h.op;
    u->length = h.length;
}

} // namespace

void Engine::on_frame(weft_btl_endpoint_t *ep, const void *data, size_t len)
{
    wire::Frame f;
    std::string why;
    if (!wire::parse({static_cast<const std::byte *>(data), len}, &f, &why)) {
        // A peer of this job sent garbage: say so once per peer and drop it.
        peers_.reject(ep->peer_rank, why);
        return;
    }
    handle(ep, f);
}

void Engine::handle(weft_btl_endpoint_t *ep, const wire::Frame &f)
{
    switch (f.type) {
    case wire::Type::Eager:
    case wire::Type::Tagged:
    case wire::Type::Put:
    case wire::Type::Rts: handle_put_like(ep, f); return;
    case wire::Type::Ack: handle_ack(f, false); return;
    case wire::Type::Fin: handle_ack(f, true); return;
    case wire::Type::GetReq: handle_get(ep, f); return;
    case wire::Type::Reply: handle_reply(f); return;
    case wire::Type::Cts: handle_cts(ep, f); return;
    case wire::Type::Data: rendezvous_.on_data(f); return;
    case wire::Type::Credit: handle_credit(ep->peer_rank, f); return;
    case wire::Type::PutReq: rendezvous_.on_put_req(ep, f); return;
    case wire::Type::PutDone: rendezvous_.on_put_done(f); return;
    }
}

// ---------------------------------------------------------------- matching

// ---------------------------------------------------------------- puts

void Engine::handle_put_like(weft_btl_endpoint_t *ep, const wire::Frame &f)
{
    PutInfo u;   // described on the stack; stored only if nothing matches
    u.source = ep->peer_rank;
    u.type = f.type;
    u.ep = ep;
    std::span<const std::byte> data;
    if (f.type == wire::Type::Eager) {
        auto h = wire::read<wire::Eager>(f);
        u.portal = h.portal;
        u.match_bits = h.match_bits;
        u.length = h.length;
        data = f.payload;
    } else if (f.type == wire::Type::Tagged) {
        u.type = wire::Type::Eager;   // the same message, said shorter
        u.portal = WEFT_PT_TAGGED;
        u.match_bits = wire::read<wire::Tagged>(f).match_bits();
        u.length = f.payload.size();
        data = f.payload;
    } else if (f.type == wire::Type::Put) {
        copy_put_fields(wire::read<wire::Put>(f), &u);
        data = f.payload;
    } else {
        auto h = wire::read<wire::Rts>(f);
        copy_put_fields(h, &u);
        u.addr = h.addr;
        u.rkey_len = h.rkey_len;
        u.rkey = reinterpret_cast<const uint8_t *>(f.payload.data());
        u.first = h.first;
        data = f.payload.subspan(h.rkey_len);
    }
    if (u.portal == WEFT_PT_TAGGED) {
        if (Request *r = matching_.match_posted(u.source, u.match_bits)) {
            land_matched(r, u, data);
            return;
        }
    } else if (Me *me = portals_.match(u.portal, u.source, u.match_bits, WEFT_MD_OP_PUT, u.length, u.offset)) {
        deliver(me->md, u, data);
        return;
    }
    if (portals_.portal(u.portal).lazy) {
        portals_.store_unexpected(u, data);
        count_unexpected_in(counters_->process(), counters_->peer(u.source));
        return;
    }
    // Nothing wants it: dropped, and the initiator learns why if it asked.
    ++dropped_;
    counters_->process().dropped = dropped_;
    if (dropped_ == 1)
        log_.write("engine", "base", WEFT_LOG_WARN,
                   "dropped a put from rank " + std::to_string(u.source) + " to portal " +
                       std::to_string(u.portal) + ": no match entry accepted it");
    if (u.type == wire::Type::Rts)
        peers_.return_credit(u.source, data.size());
    else
        peers_.consume_credit(u.source, data.size());
    if (u.type == wire::Type::Rts)
        peers_.send_control_to(u.source, wire::bytes_of(make_ack(wire::Type::Fin, u.op, WEFT_ERR_NO_MATCH, 0, 0)));
    else if (u.flags & wire::kFlagAck)
        peers_.send_control_to(u.source, wire::bytes_of(make_ack(wire::Type::Ack, u.op, WEFT_ERR_NO_MATCH, 0, 0)));
}

void Engine::drain_unexpected_into(Me *me)
{
    while (me->md) {
        Md *md = me->md;
        Portal &pt = portals_.portal(me->portal);
        Unexpected *prev = nullptr, *u = pt.uq_head;
        for (; u; prev = u, u = u->next)
            if ((me->match_rank == WEFT_RANK_ANY || me->match_rank == u->info.source) &&
                ((me->match_bits ^ u->info.match_bits) & ~me->ignore_bits) == 0 &&
                portals_.md_accepts(*md, WEFT_MD_OP_PUT, u->info.length, u->info.offset))
                break;
        if (!u)
            return;
        (prev ? prev->next : pt.uq_head) = u->next;
        if (pt.uq_tail == u)
            pt.uq_tail = prev;
        count_unexpected_out(counters_->process());
        const bool last = md->threshold == 1;
        deliver(md, u->info, u->data());
        portals_.free_unexpected(u);
        if (last)
            return;   // md (and maybe me) may be gone
    }
}

void Engine::handle_credit(uint32_t src, const wire::Frame &f)
{
    peers_.on_credit(src, wire::read<wire::Credit>(f).bytes);
}

void Engine::deliver(Md *md, const PutInfo &u, std::span<const std::byte> data)
{
    const size_t off = (md->desc.options & WEFT_MD_MANAGE_REMOTE) ? u.offset : md->local_offset;
    const size_t space = md->desc.length > off ? md->desc.length - off : 0;
    size_t mlength = std::min(u.length, space);
    if (md->desc.options & WEFT_MD_MAX_SIZE)
        mlength = std::min(mlength, md->desc.max_size);
    if (!(md->desc.options & WEFT_MD_MANAGE_REMOTE))
        md->local_offset += mlength;
    if (md->threshold > 0)
        --md->threshold;
    const unsigned portal = md->me ? md->me->portal : u.portal;
    const bool want_ack = (u.flags & wire::kFlagAck) != 0;
    // ACK_DISABLE: the initiator still learns the put is over, without an ACK event.
    const bool ack_disabled = (md->desc.options & WEFT_MD_ACK_DISABLE) != 0;

    if (u.type != wire::Type::Rts) {
        if (mlength)
            weft::cutil::copy_bytes(static_cast<std::byte *>(md->desc.start) + off, data.data(), mlength);
        peers_.consume_credit(u.source, u.length);
        if (want_ack)
            peers_.send_control_to(u.source,
                                   wire::bytes_of(make_ack(wire::Type::Ack, u.op, WEFT_SUCCESS, mlength, off, ack_disabled)));
        if (Request *r = md->request) {
            r->done = true;
            r->status.source = u.source;
            r->status.tag = static_cast<int32_t>(u.match_bits & 0xffffffffu);
            r->status.count = mlength;
            r->status.error = mlength < u.length ? WEFT_ERR_TRUNCATED : WEFT_SUCCESS;
        }
        portals_.post_event(md, WEFT_EVENT_PUT, u.source, my_rank_, portal, u.match_bits, u.length, mlength, off,
                   u.hdr_data, WEFT_SUCCESS);
        portals_.md_used(md);
        return;
    }

    // Rendezvous: the data (but for the first bytes the Rts carried) is
    // still at the initiator.
    peers_.return_credit(u.source, data.size());
    rendezvous_.start(md, u, data, off, mlength, portal, want_ack && !ack_disabled);
}

// ---------------------------------------------------------------- initiator's answers

void Engine::handle_ack(const wire::Frame &f, bool fin)
{
    auto a = wire::read<wire::Ack>(f);
    Op *op = ops_.get(a.op);
    if (!op || (fin ? op->state != Op::State::WaitFin : op->state != Op::State::WaitAck)) {
        peers_.reject(WEFT_RANK_ANY, std::string(fin ? "fin" : "ack") + " for an unknown or finished operation");
        return;
    }
    op->ack_offset = a.offset;
    if (fin && a.status == WEFT_SUCCESS) {
        count_sent(&counters_->peer(op->target),
                   op->granted || op->first ? WEFT_PROTO_RNDV_CHUNKS : WEFT_PROTO_RNDV_RDMA,
                   op->length);
    }
    if (a.flags & wire::kAckNoEvent)
        op->ack = false;   // the target's MD disabled ACKs
    // For a rendezvous put the Fin ends it (and answers an ACK request).
    complete_op(op, a.status, a.mlength);
}

void Engine::handle_cts(weft_btl_endpoint_t *ep, const wire::Frame &f)
{
    Op *op = rendezvous_.on_cts(ep, f);
    if (!op)
        return;
    PeerTraffic &ps = *peers_.find(op->target);
    if (ps.queue_head || !start_op(ps, op))
        peers_.enqueue(ps, op);
}

// ---------------------------------------------------------------- gets

void Engine::handle_get(weft_btl_endpoint_t *ep, const wire::Frame &f)
{
    auto g = wire::read<wire::GetReq>(f);
    const uint32_t src = ep->peer_rank;
    Status err;
    PeerTraffic *ps = peers_.for_send(src, &err);
    if (!ps)
        return;
    uint64_t h;
    Op *op = ops_.alloc(&h);
    op->kind = Op::Kind::Reply;
    op->target = src;
    op->portal = g.portal;
    op->match_bits = g.match_bits;
    op->token = g.op;
    op->rlength = g.length;
    Me *me = portals_.match(g.portal, src, g.match_bits, WEFT_MD_OP_GET, g.length, g.offset);
    if (!me) {
        ++dropped_;
        op->reply_status = WEFT_ERR_NO_MATCH;
        op->length = 0;
    } else {
        Md *md = me->md;
        const size_t off = (md->desc.options & WEFT_MD_MANAGE_REMOTE) ? g.offset : md->local_offset;
        const size_t space = md->desc.length > off ? md->desc.length - off : 0;
        size_t mlength = std::min<size_t>(g.length, space);
        if (md->desc.options & WEFT_MD_MAX_SIZE)
            mlength = std::min(mlength, md->desc.max_size);
        if (!(md->desc.options & WEFT_MD_MANAGE_REMOTE))
            md->local_offset += mlength;
        if (md->threshold > 0)
            --md->threshold;
        ++md->pending;
        op->md = md;
        op->md_offset = off;
        op->data = static_cast<const std::byte *>(md->desc.start) + off;
        op->length = mlength;
        op->reply_status = WEFT_SUCCESS;
    }
    if (ps->queue_head || !peers_.connected(*ps) || !start_op(*ps, op))
        peers_.enqueue(*ps, op);
}

void Engine::handle_reply(const wire::Frame &f)
{
    auto r = wire::read<wire::Reply>(f);
    Op *op = ops_.get(r.op);
    if (!op || op->kind != Op::Kind::Get || op->state != Op::State::WaitReply) {
        peers_.reject(WEFT_RANK_ANY, "reply for an unknown or finished get");
        return;
    }
    if (r.mlength > op->length || r.chunk_offset > r.mlength ||
        f.payload.size() > r.mlength - r.chunk_offset) {
        peers_.reject(op->target, "reply chunk beyond the get's length");
        complete_op(op, WEFT_ERR_BAD_VALUE, 0);
        return;
    }
    weft::cutil::copy_bytes(op->sink + r.chunk_offset, f.payload.data(), f.payload.size());
    op->received += f.payload.size();
    if (r.last)
        complete_op(op, r.status, r.status == WEFT_SUCCESS ? r.mlength : 0);
}

} // namespace weft::engine
