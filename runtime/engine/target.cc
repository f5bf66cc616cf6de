// SPDX-License-Identifier: BSD-3-Clause
// The receiving side: frames from peers, matching against the portals'
// match entries, landing data in memory descriptors, the unexpected queue
// of lazy portals, rendezvous by RDMA get or by chunks, gets, and credits.
#include <algorithm>
#include <cstring>

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

wire::Ack make_ack(wire::Type type, uint64_t op, int status, uint64_t mlength, uint64_t offset,
                   bool no_event = false)
{
    wire::Ack a{};
    a.type = static_cast<uint8_t>(type);
    a.flags = no_event ? wire::kAckNoEvent : 0;
    a.status = status;
    a.op = op;
    a.mlength = mlength;
    a.offset = offset;
    return a;
}
} // namespace

void Engine::on_frame(weft_btl_endpoint_t *ep, const void *data, size_t len)
{
    wire::Frame f;
    std::string why;
    if (!wire::parse({static_cast<const std::byte *>(data), len}, &f, &why)) {
        // A peer of this job sent garbage: say so once per peer and drop it.
        reject(ep->peer_rank, why);
        return;
    }
    handle(ep, f);
}

void Engine::reject(uint32_t src, const std::string &why)
{
    ++rejected_;
    counters_->process().rejected = rejected_;
    if (rejected_ <= 8 || log_.enabled("engine", WEFT_LOG_DEBUG))
        log_.write("engine", "base", WEFT_LOG_WARN,
                   "dropped a malformed frame from rank " + std::to_string(src) + ": " + why);
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
    case wire::Type::Data: handle_data(f); return;
    case wire::Type::Credit: handle_credit(ep->peer_rank, f); return;
    case wire::Type::PutReq: handle_put_req(ep, f); return;
    case wire::Type::PutDone: handle_put_done(f); return;
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
        u.rkey_len = f.payload.size();
        u.rkey = reinterpret_cast<const uint8_t *>(f.payload.data());
    }
    if (u.portal == WEFT_PT_TAGGED) {
        if (Request *r = match_posted(u.source, u.match_bits)) {
            if (u.type == wire::Type::Eager)
                land_eager(r, u.source, u.match_bits, data);
            else
                land_by_md(r, u, data);
            return;
        }
    } else if (Me *me = portals_.match(u.portal, u.source, u.match_bits, WEFT_MD_OP_PUT, u.length, u.offset)) {
        deliver(me->md, u, data);
        return;
    }
    if (portals_.portal(u.portal).lazy) {
        uint64_t h;
        Unexpected *q = unexpected_.alloc(&h);
        q->info = u;
        if (u.rkey_len) {
            std::memcpy(q->rkey.data(), u.rkey, u.rkey_len);
            q->info.rkey = q->rkey.data();
        }
        if (u.type != wire::Type::Rts) {
            if (u.length <= kInlineUnexpected)
                std::memcpy(q->inline_data.data(), data.data(), u.length);
            else
                q->heap_data.assign(data.begin(), data.end());
        }
        Portal &pt = portals_.portal(u.portal);
        (pt.uq_tail ? pt.uq_tail->next : pt.uq_head) = q;
        pt.uq_tail = q;
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
    if (u.type != wire::Type::Rts)
        peers_.consume_credit(u.source, u.length);
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
        unexpected_.free(u);
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
            std::memcpy(static_cast<std::byte *>(md->desc.start) + off, data.data(), mlength);
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

    // Rendezvous: the data is still at the initiator.
    uint64_t h;
    Incoming *in = incoming_.alloc(&h);
    in->md = md;
    in->source = u.source;
    in->op = u.op;
    in->match_bits = u.match_bits;
    in->hdr_data = u.hdr_data;
    in->offset = off;
    in->rlength = u.length;
    in->mlength = mlength;
    in->ack = want_ack && !ack_disabled;
    in->portal = portal;
    in->matched_ns = counter_clock_ns();
    ++md->pending;
    weft_btl_endpoint_t *ep = u.ep;
    if (mlength == 0) {
        finish_incoming(in, WEFT_SUCCESS);
        return;
    }
    if (u.rkey_len > 0 && ep && WEFT_BTL_HAS_OP(ep->module, get)) {
        in->ep = ep;
        in->peer_addr = u.addr;
        in->peer_rkey_len = std::min(u.rkey_len, in->peer_rkey.size());
        std::memcpy(in->peer_rkey.data(), u.rkey, in->peer_rkey_len);
        in->split = mlength;
        if (Status st = split_rendezvous(in, h); st.ok()) {
            in->parts = 1;   // the initiator writes [split, mlength)
            in->put_pending = true;
        }
        ++in->parts;         // we read [0, split)
        const int rc = start_part_get(in, 0, in->split);
        if (rc == WEFT_SUCCESS)
            return;
        if (in->reg_module) {
            part_done(in, rc);   // the initiator's part is on its way; this one failed
            return;
        }
        in->parts = 0;
        in->ep = nullptr;   // no get of ours is left: the data comes in chunks
        ++counters_->peer(in->source).rdma_fallbacks;
        // The RDMA read could not start: ask for the data in chunks instead.
    }
    wire::Cts c{};
    c.type = static_cast<uint8_t>(wire::Type::Cts);
    c.op = u.op;
    c.token = h;
    c.mlength = mlength;
    peers_.send_control_to(u.source, wire::bytes_of(c));
}

void Engine::on_rdma_done(weft_btl_endpoint_t *, void *ctx, int status)
{
    Engine *e = current_;
    if (!e)
        return;
    if (Incoming *in = e->incoming_.get(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ctx))))
        e->part_done(in, status);
}

// Both cores copy: when the module can write into our memory too, the
// initiator is asked to write the second half while we read the first.
Status Engine::split_rendezvous(Incoming *in, uint64_t handle)
{
    weft_btl_module_t *m = in->ep->module;
    const size_t half = (in->mlength / 2) & ~size_t{4095};   // page-aligned parts
    if (!rndv_split_ || in->mlength < rndv_split_ || half == 0 || !(m->caps.flags & WEFT_BTL_FLAG_PUT) ||
        !WEFT_BTL_HAS_OP(m, put))
        return Status(WEFT_ERR_NOT_SUPPORTED, "no split");
    std::byte *dst = static_cast<std::byte *>(in->md->desc.start) + in->offset;
    in->reg.size = sizeof in->reg;
    if (weft_btl_mem_register(m, dst, in->mlength, &in->reg) != WEFT_SUCCESS || in->reg.rkey_len > 64)
        return Status(WEFT_ERR_NOT_SUPPORTED, "no registration");
    in->reg_module = m;
    in->split = half;
    wire::PutReq q{};
    q.type = static_cast<uint8_t>(wire::Type::PutReq);
    q.rkey_len = static_cast<uint8_t>(in->reg.rkey_len);
    q.op = in->op;
    q.token = handle;
    q.offset = half;
    q.length = in->mlength - half;
    q.addr = reinterpret_cast<uintptr_t>(dst + half);
    std::array<std::byte, sizeof q + 64> frame;
    std::memcpy(frame.data(), &q, sizeof q);
    std::memcpy(frame.data() + sizeof q, in->reg.rkey, in->reg.rkey_len);
    peers_.send_control_to(in->source, std::span(frame.data(), sizeof q + in->reg.rkey_len));
    return Status::success();
}

int Engine::issue_part_get(Incoming *in, size_t from, size_t len)
{
    std::byte *dst = static_cast<std::byte *>(in->md->desc.start) + in->offset + from;
    return weft_btl_get(in->ep, dst, len, in->peer_addr + from, in->peer_rkey.data(), in->peer_rkey_len, on_rdma_done,
                        reinterpret_cast<void *>(static_cast<uintptr_t>(in->handle)));
}

int Engine::start_part_get(Incoming *in, size_t from, size_t len)
{
    const int rc = issue_part_get(in, from, len);
    if (rc != WEFT_ERR_AGAIN || in->source >= job_size_)
        return rc;
    // The module's queues are full: the read starts from progress() later.
    DeferredRdma d;
    d.handle = in->handle;
    d.from = from;
    d.len = len;
    defer_rdma(in->source, d);
    return WEFT_SUCCESS;
}

void Engine::part_done(Incoming *in, int status)
{
    if (status != WEFT_SUCCESS && in->error == WEFT_SUCCESS)
        in->error = status;
    if (--in->parts <= 0)
        finish_incoming(in, in->error);
}

void Engine::handle_put_done(const wire::Frame &f)
{
    auto d = wire::read<wire::PutDone>(f);
    Incoming *in = incoming_.get(d.token);
    if (!in || !in->put_pending) {
        reject(WEFT_RANK_ANY, "putdone for an unknown or finished receive, or a second one");
        return;
    }
    in->put_pending = false;
    if (d.status == WEFT_SUCCESS) {
        part_done(in, WEFT_SUCCESS);
        return;
    }
    // The initiator could not write its part: read it ourselves.
    const int rc = start_part_get(in, in->split, in->mlength - in->split);
    if (rc != WEFT_SUCCESS)
        part_done(in, rc);
}

void Engine::finish_incoming(Incoming *in, int status)
{
    if (in->reg_module) {
        weft_btl_mem_deregister(in->reg_module, &in->reg);
        in->reg_module = nullptr;
    }
    Md *md = in->md;
    const size_t mlength = status == WEFT_SUCCESS ? in->mlength : 0;
    if (status == WEFT_SUCCESS) {
        weft_peer_counters_t &c = counters_->peer(in->source);
        count_received(&c, in->ep ? WEFT_PROTO_RNDV_RDMA : WEFT_PROTO_RNDV_CHUNKS, in->rlength);
        c.rndv_ns += counter_clock_ns() - in->matched_ns;
    }
    // Fin also carries the ACK the initiator may have asked for.
    peers_.send_control_to(in->source,
                    wire::bytes_of(make_ack(wire::Type::Fin, in->op, status, mlength, in->offset, !in->ack)));
    if (md) {
        if (Request *r = md->request) {
            r->done = true;
            r->status.source = in->source;
            r->status.tag = static_cast<int32_t>(in->match_bits & 0xffffffffu);
            r->status.count = mlength;
            r->status.error = status != WEFT_SUCCESS ? status
                              : mlength < in->rlength ? WEFT_ERR_TRUNCATED
                                                      : WEFT_SUCCESS;
        }
        portals_.post_event(md, WEFT_EVENT_PUT, in->source, my_rank_, in->portal, in->match_bits, in->rlength,
                   mlength, in->offset, in->hdr_data, status);
        --md->pending;
        portals_.md_used(md);
    }
    incoming_.free(in);
}

void Engine::handle_data(const wire::Frame &f)
{
    auto d = wire::read<wire::Data>(f);
    Incoming *in = data_target(d, f.payload.size(), false);
    if (!in)
        return;
    std::memcpy(static_cast<std::byte *>(in->md->desc.start) + in->offset + d.chunk_offset,
                f.payload.data(), f.payload.size());
    data_landed(in, f.payload.size());
}

// ---------------------------------------------------------------- initiator's answers

void Engine::handle_ack(const wire::Frame &f, bool fin)
{
    auto a = wire::read<wire::Ack>(f);
    Op *op = ops_.get(a.op);
    if (!op || (fin ? op->state != Op::State::WaitFin : op->state != Op::State::WaitAck)) {
        reject(WEFT_RANK_ANY, std::string(fin ? "fin" : "ack") + " for an unknown or finished operation");
        return;
    }
    op->ack_offset = a.offset;
    if (fin && a.status == WEFT_SUCCESS) {
        count_sent(&counters_->peer(op->target), op->granted ? WEFT_PROTO_RNDV_CHUNKS : WEFT_PROTO_RNDV_RDMA,
                   op->length);
    }
    if (a.flags & wire::kAckNoEvent)
        op->ack = false;   // the target's MD disabled ACKs
    // For a rendezvous put the Fin ends it (and answers an ACK request).
    complete_op(op, a.status, a.mlength);
}

void Engine::handle_cts(weft_btl_endpoint_t *ep, const wire::Frame &f)
{
    auto c = wire::read<wire::Cts>(f);
    Op *op = ops_.get(c.op);
    if (!op || op->state != Op::State::WaitFin || op->target != ep->peer_rank || c.mlength > op->length) {
        reject(ep->peer_rank, "cts for an unknown operation or a larger length than it has");
        return;
    }
    op->token = c.token;
    op->granted = c.mlength;
    op->sent = 0;
    op->state = Op::State::Sending;
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
        reject(WEFT_RANK_ANY, "reply for an unknown or finished get");
        return;
    }
    if (r.mlength > op->length || r.chunk_offset > r.mlength ||
        f.payload.size() > r.mlength - r.chunk_offset) {
        reject(op->target, "reply chunk beyond the get's length");
        complete_op(op, WEFT_ERR_BAD_VALUE, 0);
        return;
    }
    std::memcpy(op->sink + r.chunk_offset, f.payload.data(), f.payload.size());
    op->received += f.payload.size();
    if (r.last)
        complete_op(op, r.status, r.status == WEFT_SUCCESS ? r.mlength : 0);
}

} // namespace weft::engine
