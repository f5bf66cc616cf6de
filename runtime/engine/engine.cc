// SPDX-License-Identifier: BSD-3-Clause
// The engine's set-up with its host, and the initiator side: starting
// puts, gets and tagged sends (a large one's Rts is the Rendezvous part's),
// queueing them on their peer (Peers) until it is connected or its
// transport has room, and finishing them (complete_op); progress over the
// peers' queues, a failed peer across all parts, and drain at finalize.
#include "engine/engine.hpp"

#include <algorithm>

#include "log/log.hpp"

namespace weft::engine {

Engine *Engine::current_ = nullptr;

Engine::Engine(Host &host, const Config &config)
    : host_(host), progress_(host.progress()), log_(host.logger()), portals_(config.my_rank, config.job_size),
      counters_(std::make_shared<CounterPage>(config.my_rank, config.job_size, config.counter_modules,
                                              config.job_id)),
      peers_(host, host.logger(), config, *counters_), matching_(portals_), my_rank_(config.my_rank),
      job_size_(config.job_size), eager_window_(config.eager_window), chunk_(config.chunk),
      finalize_timeout_(config.finalize_timeout), rendezvous_(host, portals_, peers_, ops_, *counters_, config)
{
}

Engine::~Engine()
{
    if (current_ == this)
        current_ = nullptr;
    host_.set_handler(wire::kAmEngine, nullptr, nullptr);
    if (placing_)
        host_.set_place_handler(wire::kAmEngine, nullptr, nullptr, nullptr);
    host_.set_peer_failed_handler(nullptr, nullptr);
    progress_.remove(poll, this);
    // Registrations of unfinished rendezvous sends go back to their modules.
    ops_.for_each([](Op *op) {
        if (op->reg_module)
            weft_btl_mem_deregister(op->reg_module, &op->reg);
    });
}

Status Engine::init()
{
    portals_.portal(WEFT_PT_TAGGED).lazy = true;
    if (Status st = host_.set_handler(wire::kAmEngine, on_am, this); !st.ok())
        return st;
    rendezvous_.init();
    host_.set_place_handler(wire::kAmEngine, on_place, on_placed, this);
    placing_ = true;
    host_.set_peer_failed_handler(on_peer_failed, this);
    // Its queued work moves when a transport connects, answers or makes
    // room. The first two wake a blocked wait through the transport's
    // descriptor; room freed in a full ring may not, and then the retry
    // waits for the blocking wait's bound (10 ms). Only an oversubscribed
    // rank blocks, so that is the trade against spinning.
    progress_.add(poll, this, rt::ProgressEngine::kNoWake);
    current_ = this;
    return Status::success();
}

// ---------------------------------------------------------------- initiator

bool Engine::start_op(PeerTraffic &ps, Op *op)
{
    switch (op->kind) {
    case Op::Kind::Put:
    case Op::Kind::TaggedSend:
        if (op->state == Op::State::Sending) {
            const int rc = rendezvous_.send_granted(ps, op);
            if (rc == WEFT_ERR_AGAIN)
                return false;
            if (rc != WEFT_SUCCESS)
                complete_op(op, rc, op->sent);
            return true;
        }
        return start_put(ps, op);
    case Op::Kind::Get: {
        wire::GetReq g{};
        g.type = static_cast<uint8_t>(wire::Type::GetReq);
        g.portal = static_cast<uint8_t>(op->portal);
        g.length = op->length;
        g.match_bits = op->match_bits;
        g.offset = op->offset;
        g.op = op->handle;
        int rc = peers_.send_frame(ps, wire::bytes_of(g), {});
        if (rc == WEFT_ERR_AGAIN)
            return false;
        if (rc != WEFT_SUCCESS) {
            complete_op(op, rc, 0);
            return true;
        }
        op->state = Op::State::WaitReply;
        return true;
    }
    case Op::Kind::Reply:
        return continue_reply(ps, op);
    }
    return true;
}

bool Engine::start_put(PeerTraffic &ps, Op *op)
{
    // A synchronous send goes by rendezvous: its Fin says the receiver matched it.
    const bool in_window = !op->sync && ps.eager_outstanding + op->length <= eager_window_;
    // Past single_copy_from, a message on its own goes by the single copy;
    // one that follows a rendezvous still in flight goes eagerly (a window:
    // a handshake per message would stall it).
    // A forwarded send (WEFT_SEND_FORWARD) never counts as alone.
    const bool alone = ps.single_copy_from && op->length > ps.single_copy_from && ps.rndv_in_flight == 0 &&
                       !op->forward;
    const bool eager = in_window && op->length <= ps.eager_limit && !alone;
    int rc = eager ? send_put_frame<false>(ps, op) : WEFT_ERR_AGAIN;
    if (!eager) {
        // Past the eager limit but within the connection's eager-if-room
        // range (for a forwarded send, the module's): eager if the module
        // takes it whole now, else rendezvous.
        const size_t if_room = op->forward ? ps.forward_if_room : ps.eager_if_room;
        if (in_window && op->length <= if_room)
            rc = send_put_frame<true>(ps, op);
        if (rc == WEFT_ERR_AGAIN) {
            rc = rendezvous_.send_rts(ps, op);
            if (rc == WEFT_SUCCESS) {
                if (!op->sync && !in_window && op->length <= std::max(ps.eager_limit, ps.eager_if_room))
                    ++ps.counters->credit_stalls;   // eager but for the window
                return true;   // the Fin completes it
            }
        }
    }
    if (rc == WEFT_ERR_AGAIN) {
        ++ps.counters->again;
        return false;
    }
    if (rc != WEFT_SUCCESS) {
        complete_op(op, rc, 0);
        return true;
    }
    ps.eager_outstanding += op->length;
    count_sent(ps.counters, WEFT_PROTO_EAGER, op->length);
    if (op->ack) {
        // The data is out: the source may be reused; the ACK comes later.
        if (op->md)
            portals_.post_event(op->md, WEFT_EVENT_SEND, my_rank_, op->target, op->portal, op->match_bits,
                       op->length, op->length, 0, op->hdr_data, WEFT_SUCCESS);
        op->state = Op::State::WaitAck;
        return true;
    }
    complete_op(op, WEFT_SUCCESS, op->length);
    return true;
}

// op's data as one eager frame: Tagged/Eager when it needs no more, else Put.
template <bool Now>
int Engine::send_put_frame(PeerTraffic &ps, Op *op)
{
    const std::span<const std::byte> data(op->data, op->length);
    if (!op->ack && op->offset == 0 && op->hdr_data == 0)
        return peers_.send_eager<Now>(ps, op->portal, op->match_bits, data);
    wire::Put p{};
    p.type = static_cast<uint8_t>(wire::Type::Put);
    p.portal = static_cast<uint8_t>(op->portal);
    p.flags = op->ack ? wire::kFlagAck : 0;
    p.length = static_cast<uint32_t>(op->length);
    p.match_bits = op->match_bits;
    p.offset = op->offset;
    p.hdr_data = op->hdr_data;
    p.op = op->handle;
    return peers_.send_frame<Now>(ps, wire::bytes_of(p), data);
}

// Target side of a get: the reply chunks.
bool Engine::continue_reply(PeerTraffic &ps, Op *op)
{
    const size_t max_chunk = std::min(chunk_, ps.ep->module->caps.max_send - sizeof(wire::Reply));
    do {
        const size_t n = std::min(max_chunk, op->length - op->sent);
        wire::Reply r{};
        r.type = static_cast<uint8_t>(wire::Type::Reply);
        r.last = op->sent + n == op->length;
        r.status = op->reply_status;
        r.op = op->token;
        r.chunk_offset = op->sent;
        r.mlength = op->length;
        r.length = static_cast<uint32_t>(n);
        int rc = peers_.send_frame(ps, wire::bytes_of(r), std::span(op->data + op->sent, n));
        if (rc == WEFT_ERR_AGAIN)
            return false;
        if (rc != WEFT_SUCCESS) {
            complete_op(op, rc, op->sent);
            return true;
        }
        op->sent += n;
    } while (op->sent < op->length);
    complete_op(op, WEFT_SUCCESS, op->length);
    return true;
}

void Engine::complete_op(Op *op, int status, size_t mlength)
{
    if (op->reg_module) {
        weft_btl_mem_deregister(op->reg_module, &op->reg);
        op->reg_module = nullptr;
    }
    switch (op->kind) {
    case Op::Kind::TaggedSend:
        if (Request *r = op->request) {
            r->done = true;
            r->status.error = status;
            r->status.count = status == WEFT_SUCCESS ? op->length : 0;
            if (r->orphaned)
                free_request(r);
        }
        break;
    case Op::Kind::Put:
        if (op->md) {
            // SEND was already posted for an eager put with an ACK request.
            if (op->state != Op::State::WaitAck)
                portals_.post_event(op->md, WEFT_EVENT_SEND, my_rank_, op->target, op->portal, op->match_bits,
                           op->length, status == WEFT_SUCCESS ? op->length : 0, 0, op->hdr_data, status);
            if (op->ack)
                portals_.post_event(op->md, WEFT_EVENT_ACK, my_rank_, op->target, op->portal, op->match_bits,
                           op->length, mlength, op->ack_offset, op->hdr_data, status);
        }
        break;
    case Op::Kind::Get:
        if (op->md)
            portals_.post_event(op->md, WEFT_EVENT_REPLY, my_rank_, op->target, op->portal, op->match_bits,
                       op->length, mlength, 0, 0, status);
        break;
    case Op::Kind::Reply:
        if (op->md)
            portals_.post_event(op->md, WEFT_EVENT_GET, op->target, my_rank_, op->portal, op->match_bits,
                       op->rlength, op->length, op->md_offset, 0, status);
        break;
    }
    if (Md *md = op->md) {
        --md->pending;
        portals_.md_used(md);
    }
    if (op->rendezvous)
        if (PeerTraffic *ps = peers_.find(op->target); ps && ps->rndv_in_flight)
            --ps->rndv_in_flight;
    ops_.free(op);
}

// ---------------------------------------------------------------- portals: waiting, delivery, put/get

Status Engine::eq_poll(std::span<const weft_eq_t> handles, int timeout_ms, weft_event_t *ev, int *which)
{
    if (handles.empty() || !ev)
        return Status(WEFT_ERR_BAD_PARAM, "weft_eq_poll: needs at least one event queue and an event to fill");
    if (Status st = portals_.eq_check(handles); !st.ok())
        return st;
    int found = portals_.eq_ready(handles);
    auto ready = [&] { return (found = portals_.eq_ready(handles)) >= 0; };
    if (found < 0) {
        progress_.progress();
        if (!ready() && timeout_ms != 0) {
            auto limit = timeout_ms < 0 ? rt::ProgressEngine::kForever : std::chrono::milliseconds(timeout_ms);
            progress_.wait_until(ready, limit);
        }
    }
    if (found < 0)
        return Status(WEFT_ERR_TIMEOUT, "weft_eq_poll: no event within " + std::to_string(timeout_ms) + " ms");
    if (which)
        *which = found;
    return portals_.eq_take(handles[found], ev);
}

Status Engine::md_attach(weft_me_t me_handle, const weft_md_desc_t &desc, weft_unlink_t unlink, weft_md_t *out)
{
    Me *me;
    if (Status st = portals_.md_attach(me_handle, desc, unlink, out, &me); !st.ok())
        return st;
    // On a lazy portal, messages that arrived before this ME now match it,
    // oldest first.
    if (portals_.portal(me->portal).lazy)
        drain_unexpected_into(me);
    return Status::success();
}

// The checks put and get share: a live, bound, not used-up MD, a portal, a
// reachable target. On success the operation holds the MD (pending).
Status Engine::new_op(const char *fn, weft_md_t handle, uint32_t target, unsigned portal, Op **out,
                      PeerTraffic **peer)
{
    Md *md = portals_.md(handle.cookie);
    if (!md)
        return Status(WEFT_ERR_BAD_PARAM,
                      std::string(fn) + ": not a memory descriptor (stale or invalid handle)");
    if (md->me)
        return Status(WEFT_ERR_BAD_PARAM,
                      std::string(fn) + ": the MD is attached to a match entry; give an MD from weft_md_bind");
    if (md->threshold == 0)
        return Status(WEFT_ERR_BAD_PARAM, std::string(fn) + ": the MD is used up (threshold 0)");
    if (Status st = check_portal(fn, portal); !st.ok())
        return st;
    Status err;
    PeerTraffic *ps = peers_.for_send(target, &err);
    if (!ps)
        return err;
    uint64_t h;
    Op *op = ops_.alloc(&h);
    op->md = md;
    op->target = target;
    op->portal = portal;
    op->length = md->desc.length;
    ++md->pending;
    if (md->threshold > 0)
        --md->threshold;
    *out = op;
    *peer = ps;
    return Status::success();
}

Status Engine::put(weft_md_t handle, weft_ack_req_t ack, uint32_t target, unsigned portal, uint64_t bits,
                   size_t offset, uint64_t hdr_data)
{
    Op *op;
    PeerTraffic *ps;
    if (Status st = new_op("weft_put", handle, target, portal, &op, &ps); !st.ok())
        return st;
    op->kind = Op::Kind::Put;
    op->match_bits = bits;
    op->hdr_data = hdr_data;
    op->offset = offset;
    op->data = static_cast<const std::byte *>(op->md->desc.start);
    op->ack = ack == WEFT_ACK_REQ;
    if (ps->queue_head || !peers_.connected(*ps) || !start_op(*ps, op))
        peers_.enqueue(*ps, op);
    return Status::success();
}

Status Engine::get(weft_md_t handle, uint32_t target, unsigned portal, uint64_t bits, size_t offset)
{
    Op *op;
    PeerTraffic *ps;
    if (Status st = new_op("weft_get", handle, target, portal, &op, &ps); !st.ok())
        return st;
    op->kind = Op::Kind::Get;
    op->match_bits = bits;
    op->offset = offset;
    op->sink = static_cast<std::byte *>(op->md->desc.start);
    if (ps->queue_head || !peers_.connected(*ps) || !start_op(*ps, op))
        peers_.enqueue(*ps, op);
    return Status::success();
}

// ---------------------------------------------------------------- progress

int Engine::poll(void *ctx)
{
    auto *e = static_cast<Engine *>(ctx);
    return e->peers_.idle() ? 0 : e->progress();
}

int Engine::progress()
{
    int events = 0;
    // Peers may be marked busy again while we work; handle the current set.
    std::vector<PeerTraffic *> work;
    peers_.take_busy(work);
    for (PeerTraffic *ps : work) {
        ps->busy = false;
        // Deferred RDMA carries its own endpoint: it needs no connection check.
        while (!ps->failed && !ps->rdma_retry.empty()) {
            if (rendezvous_.retry(ps->rdma_retry.front()) == WEFT_ERR_AGAIN)
                break;
            ps->rdma_retry.pop_front();
            ++events;
        }
        if (ps->failed || !peers_.connected(*ps)) {
            if (!ps->failed && (ps->queue_head || !ps->control.empty() || !ps->rdma_retry.empty()))
                peers_.mark_busy(*ps);
            continue;
        }
        while (!ps->control.empty()) {
            int rc = peers_.send_frame(*ps, ps->control.front(), {});
            if (rc == WEFT_ERR_AGAIN)
                break;
            ps->control.pop_front();
            ++events;
        }
        while (ps->control.empty() && ps->queue_head) {
            Op *op = ps->queue_head;
            Op *next = op->next_queued;   // start_op may finish (free) op
            if (!start_op(*ps, op))
                break;
            ps->queue_head = next;
            if (!next)
                ps->queue_tail = nullptr;
            ++events;
        }
        if (!ps->control.empty() || ps->queue_head || !ps->rdma_retry.empty())
            peers_.mark_busy(*ps);
    }
    peers_.recycle(work);
    return events;
}

// ---------------------------------------------------------------- failures

void Engine::on_peer_failed(void *ctx, uint32_t rank, const std::string &why)
{
    static_cast<Engine *>(ctx)->fail_peer_ops(rank, why);
}

void Engine::fail_peer_ops(uint32_t rank, const std::string &why)
{
    if (rank >= job_size_)
        return;
    PeerTraffic &ps = peers_.slot(rank);
    ps.failed = true;
    ps.failure = why;
    ps.queue_head = ps.queue_tail = nullptr;
    ps.control.clear();
    ps.rdma_retry.clear();
    std::vector<Op *> dead;
    ops_.for_each([&](Op *op) {
        if (op->target == rank)
            dead.push_back(op);
    });
    for (Op *op : dead)
        complete_op(op, WEFT_ERR_UNREACHABLE, 0);
    rendezvous_.fail_peer(rank, WEFT_ERR_UNREACHABLE);
    // Receives that only this peer could satisfy fail too.
    matching_.fail_source(rank, WEFT_ERR_UNREACHABLE);
    log_.write("engine", "base", WEFT_LOG_INFO, "rank " + std::to_string(rank) + " failed: " + why);
}

// ---------------------------------------------------------------- finalize

Status Engine::drain()
{
    const auto timeout = finalize_timeout_;
    const bool done = progress_.wait_until(
        [&] {
            bool pending = false;
            ops_.for_each([&](Op *op) {
                if (!peers_.failed(op->target))
                    pending = true;
            });
            return !pending && peers_.idle();
        },
        timeout);
    peers_.log_striping();
    if (!done)
        return Status(WEFT_ERR_TIMEOUT, "weft_finalize: " + std::to_string(ops_.live()) +
                                            " operations did not finish within " +
                                            std::to_string(timeout.count()) +
                                            " ms (a peer that never receives?)");
    return Status::success();
}

} // namespace weft::engine
