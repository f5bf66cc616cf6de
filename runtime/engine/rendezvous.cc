// SPDX-License-Identifier: BSD-3-Clause
// The rendezvous protocol (rendezvous.hpp): the initiator's Rts, Cts and
// PutReq answers; the target's receive by RDMA get (split with the
// initiator's put when both can), by chunks otherwise, and its Fin;
// deferred RDMA operations and a peer's failure.
#include "engine/rendezvous.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <weft/component_util.hpp>

namespace weft::engine {

Rendezvous *Rendezvous::current_ = nullptr;

namespace {

void *handle_ctx(uint64_t handle) { return reinterpret_cast<void *>(static_cast<uintptr_t>(handle)); }
uint64_t ctx_handle(void *ctx) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ctx)); }

} // namespace

Rendezvous::Rendezvous(Host &host, Portals &portals, Peers &peers, Pool<Op, 5> &ops, CounterPage &counters,
                       const Config &config)
    : host_(host), portals_(portals), peers_(peers), ops_(ops), counters_(counters), my_rank_(config.my_rank),
      job_size_(config.job_size), chunk_(config.chunk), first_max_(config.rndv_first),
      eager_window_(config.eager_window), rdma_(config.rndv_rdma), split_min_(config.rndv_split)
{
}

Rendezvous::~Rendezvous()
{
    if (current_ == this)
        current_ = nullptr;
}

void Rendezvous::init()
{
    current_ = this;
}

// ---------------------------------------------------------------- initiator

int Rendezvous::send_rts(PeerTraffic &ps, Op *op)
{
    wire::Rts r{};
    r.type = static_cast<uint8_t>(wire::Type::Rts);
    r.portal = static_cast<uint8_t>(op->portal);
    r.flags = op->ack ? wire::kFlagAck : 0;
    r.length = op->length;
    r.match_bits = op->match_bits;
    r.offset = op->offset;
    r.hdr_data = op->hdr_data;
    r.op = op->handle;
    weft_btl_module_t *m = ps.ep->module;
    // RDMA: the target reads the data itself (single copy), when the
    // module can and the buffer registers.
    if (rdma_ && !op->reg_module && (m->caps.flags & WEFT_BTL_FLAG_GET) && WEFT_BTL_HAS_OP(m, get) &&
        op->length > 0) {
        op->reg.size = sizeof op->reg;
        void *data = const_cast<std::byte *>(op->data);
        if (weft_btl_mem_register(m, data, op->length, &op->reg) == WEFT_SUCCESS &&
            op->reg.rkey_len <= sizeof op->reg.rkey && op->reg.rkey_len <= 64)
            op->reg_module = m;
    }
    std::span<const std::byte> payload;   // the rkey, or the first bytes of the data
    if (op->reg_module) {
        r.rkey_len = static_cast<uint8_t>(op->reg.rkey_len);
        r.addr = reinterpret_cast<uint64_t>(op->data);
        payload = std::span(reinterpret_cast<const std::byte *>(op->reg.rkey), op->reg.rkey_len);
    } else {
        // By chunks: the first bytes travel with the header, so data moves
        // while the Cts for the rest makes its round trip. They count
        // against the eager window: until matched they may sit in the
        // target's unexpected queue.
        const size_t room = m->caps.max_send > sizeof r ? m->caps.max_send - sizeof r : 0;
        const size_t first = std::min({first_max_, op->length, room});
        if (ps.eager_outstanding + first <= eager_window_) {
            r.first = static_cast<uint32_t>(first);
            payload = std::span(op->data, first);
        }
    }
    const int rc = peers_.send_frame(ps, wire::bytes_of(r), payload);
    if (rc == WEFT_SUCCESS) {
        if (!op->rendezvous)   // an Rts sent again counts once
            ++ps.rndv_in_flight;
        op->rendezvous = true;
        op->state = Op::State::WaitFin;
        op->first = r.first;
        ps.eager_outstanding += r.first;
    }
    return rc;
}

Op *Rendezvous::on_cts(weft_btl_endpoint_t *ep, const wire::Frame &f)
{
    auto c = wire::read<wire::Cts>(f);
    Op *op = ops_.get(c.op);
    if (!op || op->state != Op::State::WaitFin || op->target != ep->peer_rank || c.mlength > op->length) {
        peers_.reject(ep->peer_rank, "cts for an unknown operation or a larger length than it has");
        return nullptr;
    }
    op->token = c.token;
    op->granted = c.mlength;
    op->sent = std::min(op->first, op->granted);   // the Rts carried those
    op->state = Op::State::Sending;
    return op;
}

// The target asks us to write part of a rendezvous put into its memory.
void Rendezvous::on_put_req(weft_btl_endpoint_t *ep, const wire::Frame &f)
{
    auto q = wire::read<wire::PutReq>(f);
    Op *op = ops_.get(q.op);
    int status;
    if (!op || op->state != Op::State::WaitFin || op->target != ep->peer_rank || !op->reg_module ||
        q.offset > op->length || q.length > op->length - q.offset) {
        peers_.reject(ep->peer_rank, "putreq for an unknown operation or outside its data");
        status = WEFT_ERR_BAD_PARAM;
    } else if (!WEFT_BTL_HAS_OP(ep->module, put)) {
        status = WEFT_ERR_NOT_SUPPORTED;
    } else {
        op->put_token = q.token;
        status = weft_btl_put(ep, op->data + q.offset, q.length, q.addr, f.payload.data(), f.payload.size(),
                              on_put_written, handle_ctx(op->handle));
        if (status == WEFT_SUCCESS)
            return;
        if (status == WEFT_ERR_AGAIN && ep->peer_rank < job_size_ &&
            f.payload.size() <= sizeof(DeferredRdma::rkey)) {
            // The module's queues are full: the write starts from progress() later.
            DeferredRdma d;
            d.is_put = true;
            d.ep = ep;
            d.handle = op->handle;
            d.from = q.offset;
            d.len = q.length;
            d.addr = q.addr;
            d.token = q.token;
            d.rkey_len = f.payload.size();
            std::memcpy(d.rkey.data(), f.payload.data(), d.rkey_len);
            defer(ep->peer_rank, d);
            return;
        }
    }
    send_put_done(ep->peer_rank, q.token, status);   // the target then reads that part itself
}

void Rendezvous::send_put_done(uint32_t target, uint64_t token, int status)
{
    wire::PutDone d{};
    d.type = static_cast<uint8_t>(wire::Type::PutDone);
    d.status = status;
    d.token = token;
    peers_.send_control_to(target, wire::bytes_of(d));
}

void Rendezvous::on_put_written(weft_btl_endpoint_t *, void *ctx, int status)
{
    Rendezvous *self = current_;
    if (Op *op = self ? self->ops_.get(ctx_handle(ctx)) : nullptr)
        self->send_put_done(op->target, op->put_token, status);
}

// ---------------------------------------------------------------- target

void Rendezvous::start(Md *md, const PutInfo &u, std::span<const std::byte> first, size_t off, size_t mlength,
                       unsigned portal, bool ack)
{
    const size_t landed = std::min(first.size(), mlength);
    if (landed > 0)
        weft::cutil::copy_bytes(static_cast<std::byte *>(md->desc.start) + off, first.data(), landed);
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
    in->ack = ack;
    in->portal = portal;
    in->matched_ns = clock_.now_ns();
    in->received = landed;
    ++md->pending;
    weft_btl_endpoint_t *ep = u.ep;
    if (landed == mlength) {   // nothing to move (an empty or short buffer, or the Rts held it all)
        finish(in, WEFT_SUCCESS);
        return;
    }
    if (u.rkey_len > 0 && landed == 0 && ep && WEFT_BTL_HAS_OP(ep->module, get)) {
        in->ep = ep;
        in->peer_addr = u.addr;
        in->peer_rkey_len = std::min(u.rkey_len, in->peer_rkey.size());
        std::memcpy(in->peer_rkey.data(), u.rkey, in->peer_rkey_len);
        in->split = mlength;
        if (split(in)) {
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
        ++counters_.peer(in->source).rdma_fallbacks;
        // The RDMA read could not start: ask for the data in chunks instead.
    }
    wire::Cts c{};
    c.type = static_cast<uint8_t>(wire::Type::Cts);
    c.op = u.op;
    c.token = h;
    c.mlength = mlength;
    peers_.send_control_to(u.source, wire::bytes_of(c));
}

// Both cores copy: when the module can write into our memory too, the
// initiator is asked to write the second half while we read the first
// (not for a receive that reads its data at once: see below).
// Not while this rank has a rendezvous of its own to the initiator in
// flight: that is an exchange (MPI_Sendrecv, a 2-rank allgather or
// alltoall), where the initiator's core is already reading our message.
// Split there, each core copied half of both messages plus a PutReq round:
// a 128 KiB exchange at 2 ranks took 16.6-26.7 us against 14.4-15.1
// unsplit (UCX 12.8-14.7).
bool Rendezvous::split(Incoming *in)
{
    weft_btl_module_t *m = in->ep->module;
    const size_t half = (in->mlength / 2) & ~size_t{4095};   // page-aligned parts
    if (!split_min_ || in->mlength < split_min_ || half == 0 || !(m->caps.flags & WEFT_BTL_FLAG_PUT) ||
        !WEFT_BTL_HAS_OP(m, put))
        return false;
    if (const PeerTraffic *ps = peers_.find(in->source); ps && ps->rndv_in_flight > 0)
        return false;
    // The receiver reads the data as soon as it is in (a reduction): the
    // part the sender wrote would sit in the sender's core's cache and be
    // pulled across line by line (2 ranks on the VM, osu_reduce of 64 KiB:
    // 8.2-8.5 us split, 4.3-4.4 whole; 256 KiB 24.6 against 13.6-13.9).
    if (in->md->request && in->md->request->reads_at_once)
        return false;
    // Ranks that share cores (progress mode yield or block): the sender's
    // core is not idle but another rank's, and writing our half takes it
    // from that rank. 4 ranks on 2 vCPUs, osu_bcast from the root to each
    // rank: 64 KiB 12.6-13.1 us split, 8.4 whole (Open MPI vader 6.8-7.0).
    if (host_.progress().effective_mode() != rt::ProgressMode::Busy)
        return false;
    std::byte *dst = static_cast<std::byte *>(in->md->desc.start) + in->offset;
    in->reg.size = sizeof in->reg;
    if (weft_btl_mem_register(m, dst, in->mlength, &in->reg) != WEFT_SUCCESS || in->reg.rkey_len > 64)
        return false;
    in->reg_module = m;
    in->split = half;
    wire::PutReq q{};
    q.type = static_cast<uint8_t>(wire::Type::PutReq);
    q.rkey_len = static_cast<uint8_t>(in->reg.rkey_len);
    q.op = in->op;
    q.token = in->handle;
    q.offset = half;
    q.length = in->mlength - half;
    q.addr = reinterpret_cast<uintptr_t>(dst + half);
    std::array<std::byte, sizeof q + 64> frame;
    std::memcpy(frame.data(), &q, sizeof q);
    std::memcpy(frame.data() + sizeof q, in->reg.rkey, in->reg.rkey_len);
    peers_.send_control_to(in->source, std::span(frame.data(), sizeof q + in->reg.rkey_len));
    return true;
}

int Rendezvous::issue_part_get(Incoming *in, size_t from, size_t len)
{
    std::byte *dst = static_cast<std::byte *>(in->md->desc.start) + in->offset + from;
    return weft_btl_get(in->ep, dst, len, in->peer_addr + from, in->peer_rkey.data(), in->peer_rkey_len,
                        on_get_done, handle_ctx(in->handle));
}

int Rendezvous::start_part_get(Incoming *in, size_t from, size_t len)
{
    const int rc = issue_part_get(in, from, len);
    if (rc != WEFT_ERR_AGAIN || in->source >= job_size_)
        return rc;
    // The module's queues are full: the read starts from progress() later.
    DeferredRdma d;
    d.handle = in->handle;
    d.from = from;
    d.len = len;
    defer(in->source, d);
    return WEFT_SUCCESS;
}

void Rendezvous::on_get_done(weft_btl_endpoint_t *, void *ctx, int status)
{
    Rendezvous *self = current_;
    if (!self)
        return;
    if (Incoming *in = self->incoming_.get(ctx_handle(ctx)))
        self->part_done(in, status);
}

void Rendezvous::part_done(Incoming *in, int status)
{
    if (status != WEFT_SUCCESS && in->error == WEFT_SUCCESS)
        in->error = status;
    if (--in->parts <= 0)
        finish(in, in->error);
}

void Rendezvous::on_put_done(const wire::Frame &f)
{
    auto d = wire::read<wire::PutDone>(f);
    Incoming *in = incoming_.get(d.token);
    if (!in || !in->put_pending) {
        peers_.reject(WEFT_RANK_ANY, "putdone for an unknown or finished receive, or a second one");
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

void Rendezvous::finish(Incoming *in, int status)
{
    if (in->reg_module) {
        weft_btl_mem_deregister(in->reg_module, &in->reg);
        in->reg_module = nullptr;
    }
    Md *md = in->md;
    const size_t mlength = status == WEFT_SUCCESS ? in->mlength : 0;
    if (status == WEFT_SUCCESS) {
        weft_peer_counters_t &c = counters_.peer(in->source);
        count_received(&c, in->ep ? WEFT_PROTO_RNDV_RDMA : WEFT_PROTO_RNDV_CHUNKS, in->rlength);
        c.rndv_ns += IntervalClock::interval(in->matched_ns, clock_.now_ns());
    }
    // Fin also carries the ACK the initiator may have asked for.
    peers_.send_control_to(in->source, wire::bytes_of(make_ack(wire::Type::Fin, in->op, status, mlength,
                                                                     in->offset, !in->ack)));
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

// ---------------------------------------------------------------- deferred RDMA, failures

void Rendezvous::defer(uint32_t rank, const DeferredRdma &d)
{
    PeerTraffic &ps = peers_.slot(rank);
    ps.rdma_retry.push_back(d);
    peers_.mark_busy(ps);
}

int Rendezvous::retry(const DeferredRdma &d)
{
    if (!d.is_put) {
        Incoming *in = incoming_.get(d.handle);
        if (!in || !in->ep)
            return WEFT_SUCCESS;           // the receive ended meanwhile
        const int rc = issue_part_get(in, d.from, d.len);
        if (rc != WEFT_SUCCESS && rc != WEFT_ERR_AGAIN)
            part_done(in, rc);
        return rc;
    }
    Op *op = ops_.get(d.handle);
    weft_btl_endpoint_t *ep = d.ep;
    if (!op || !ep || !WEFT_BTL_HAS_OP(ep->module, put))
        return WEFT_SUCCESS;               // the send ended meanwhile
    const int rc = weft_btl_put(ep, op->data + d.from, d.len, d.addr, d.rkey.data(), d.rkey_len,
                                on_put_written, handle_ctx(op->handle));
    if (rc != WEFT_SUCCESS && rc != WEFT_ERR_AGAIN)
        send_put_done(ep->peer_rank, d.token, rc);   // the target reads that part itself
    return rc;
}

void Rendezvous::fail_peer(uint32_t rank, int error)
{
    std::vector<Incoming *> broken;
    incoming_.for_each([&](Incoming *in) {
        if (in->source == rank)
            broken.push_back(in);
    });
    for (Incoming *in : broken)
        finish(in, error);
}

} // namespace weft::engine
