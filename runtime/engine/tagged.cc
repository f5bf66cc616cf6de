// Tagged messages in MPI style, on portal WEFT_PT_TAGGED: match bits hold
// the context (high 32 bits) and the tag (low 32); a receive is a match
// entry with a one-shot MD and a request instead of an event queue.
// weft_barrier is a dissemination barrier over them (its own context).
#include <cstring>

#include "engine/engine.hpp"
#include "rte/runtime.hpp"

namespace weft::engine {

namespace {

uint64_t tag_bits(uint32_t context, int32_t tag)
{
    return (uint64_t{context} << 32) | static_cast<uint32_t>(tag);
}

Status bad(const std::string &msg) { return Status(WEFT_ERR_BAD_PARAM, msg); }

} // namespace

Request *Engine::request(weft_request_t r)
{
    return requests_.get(reinterpret_cast<uint64_t>(r));
}

void Engine::free_request(Request *r)
{
    // An unfinished receive: its entry goes too (after data still moving).
    if (Md *md = r->md) {
        md->request = nullptr;
        if (md->pending > 0)
            md->unlink_when_idle = true;
        else
            md_release(md, false);
    }
    requests_.free(r);
}

Status Engine::isend(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context,
                     weft_request_t *out)
{
    if (!out)
        return bad("weft_isend: req is NULL");
    if (tag < 0)
        return bad("weft_isend: tag " + std::to_string(tag) + " (tags are >= 0)");
    if (!buf && len)
        return bad("weft_isend: buf is NULL with len " + std::to_string(len));
    Status err;
    PeerState *ps = peer_for_send(dest, &err);
    if (!ps)
        return err;
    uint64_t rh;
    Request *r = requests_.alloc(&rh);
    r->status.source = dest;
    r->status.tag = tag;
    *out = reinterpret_cast<weft_request_t>(rh);
    // Fast path: an eager message that goes out now needs no operation.
    if (int rc = try_eager(*ps, tag_bits(context, tag), buf, len); rc != WEFT_ERR_AGAIN) {
        r->done = true;
        r->status.error = rc;
        r->status.count = rc == WEFT_SUCCESS ? len : 0;
        return Status::success();
    }
    uint64_t h;
    Op *op = ops_.alloc(&h);
    op->kind = Op::Kind::TaggedSend;
    op->request = r;
    op->target = dest;
    op->portal = WEFT_PT_TAGGED;
    op->match_bits = tag_bits(context, tag);
    op->data = static_cast<const std::byte *>(buf);
    op->length = len;
    if (ps->queue_head || !connected(*ps) || !start_op(*ps, op))
        enqueue(*ps, op);
    return Status::success();
}

int Engine::try_eager(PeerState &ps, uint64_t bits, const void *buf, size_t len)
{
    if (ps.queue_head || !ps.control.empty() || !connected(ps) || len > ps.eager_limit ||
        ps.eager_outstanding + len > eager_window_)
        return WEFT_ERR_AGAIN;
    wire::Eager e;
    e.type = static_cast<uint8_t>(wire::Type::Eager);
    e.portal = WEFT_PT_TAGGED;
    e.reserved = 0;
    e.length = static_cast<uint32_t>(len);
    e.match_bits = bits;
    int rc = send_frame(ps, {reinterpret_cast<const std::byte *>(&e), sizeof e},
                        {static_cast<const std::byte *>(buf), len});
    if (rc == WEFT_SUCCESS)
        ps.eager_outstanding += len;
    return rc;
}

Status Engine::send(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context)
{
    // Fast path: connected, nothing queued, eager: straight to the module.
    if (tag >= 0 && dest < job_size_ && peers_[dest] && !peers_[dest]->failed) {
        int rc = try_eager(*peers_[dest], tag_bits(context, tag), buf, len);
        if (rc == WEFT_SUCCESS)
            return Status::success();
        if (rc != WEFT_ERR_AGAIN)
            return Status(rc, "weft_send to rank " + std::to_string(dest) + ": " + weft_status_string(rc));
    }
    weft_request_t req;
    if (Status st = isend(buf, len, dest, tag, context, &req); !st.ok())
        return st;
    Request *r = request(req);
    if (!r->done)
        rt_.progress().wait_until([&] { return r->done; }, std::chrono::hours(24 * 365));
    const int error = r->status.error;
    free_request(r);
    if (error != WEFT_SUCCESS)
        return Status(error, "weft_send to rank " + std::to_string(dest) + ": " +
                                 (peers_[dest] && peers_[dest]->failed ? peers_[dest]->failure
                                                                       : weft_status_string(error)));
    return Status::success();
}

Status Engine::irecv(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context,
                     weft_request_t *out)
{
    if (!out)
        return bad("weft_irecv: req is NULL");
    if (tag < 0 && tag != WEFT_ANY_TAG)
        return bad("weft_irecv: tag " + std::to_string(tag) + " (tags are >= 0, or WEFT_ANY_TAG)");
    if (!buf && len)
        return bad("weft_irecv: buf is NULL with len " + std::to_string(len));
    if (source != WEFT_ANY_SOURCE && source >= job_size_)
        return bad("weft_irecv: source " + std::to_string(source) + " is not in the job (size " +
                   std::to_string(job_size_) + ")");
    if (source != WEFT_ANY_SOURCE && peers_[source] && peers_[source]->failed)
        return Status(WEFT_ERR_UNREACHABLE, "weft_irecv from rank " + std::to_string(source) + ": " +
                                                peers_[source]->failure);
    const uint64_t bits = tag_bits(context, tag == WEFT_ANY_TAG ? 0 : tag);
    const uint64_t ignore = tag == WEFT_ANY_TAG ? 0xffffffffull : 0;
    uint64_t rh;
    Request *r = requests_.alloc(&rh);
    r->is_recv = true;
    *out = reinterpret_cast<weft_request_t>(rh);

    weft_md_desc_t d{};
    d.start = buf;
    d.length = len;
    d.threshold = 1;
    d.options = WEFT_MD_OP_PUT | WEFT_MD_TRUNCATE;
    uint64_t mh;
    Md *md = mds_.alloc(&mh);
    md->desc = d;
    md->unlink = WEFT_UNLINK;
    md->threshold = 1;
    md->request = r;
    r->md = md;
    // A message that already arrived matches first (MPI order).
    if (Unexpected *u = take_unexpected(WEFT_PT_TAGGED, source, bits, ignore)) {
        deliver(md, u->info, u->data());   // releases md when it completes
        unexpected_.free(u);
        return Status::success();
    }
    weft_me_t meh;
    if (Status st = me_attach(WEFT_PT_TAGGED, source, bits, ignore, WEFT_UNLINK, WEFT_INS_AFTER, nullptr, &meh);
        !st.ok()) {
        md_release(md, false);
        requests_.free(r);
        *out = WEFT_REQUEST_NULL;
        return st;
    }
    Me *me = mes_.get(meh.cookie);
    me->md = md;
    md->me = me;
    return Status::success();
}

Status Engine::barrier()
{
    if (job_size_ == 1)
        return Status::success();
    // Rounds k = 0, 1, ...: send to rank + 2^k, receive from rank - 2^k.
    // Tags carry the barrier's number so a fast peer's next barrier never
    // satisfies this one.
    const uint32_t epoch = barrier_epoch_++ & 0xffffff;
    int round = 0;
    for (uint32_t dist = 1; dist < job_size_; dist <<= 1, ++round) {
        const uint32_t to = (my_rank_ + dist) % job_size_;
        const uint32_t from = (my_rank_ + job_size_ - dist) % job_size_;
        const int32_t tag = static_cast<int32_t>((epoch << 6) | static_cast<uint32_t>(round));
        weft_request_t rreq;
        if (Status st = irecv(nullptr, 0, from, tag, kTaggedContextBarrier, &rreq); !st.ok())
            return st;
        if (Status st = send(nullptr, 0, to, tag, kTaggedContextBarrier); !st.ok()) {
            free_request(request(rreq));
            return Status(st.code(), "weft_barrier: " + st.message());
        }
        Request *r = request(rreq);
        if (!r->done)
            rt_.progress().wait_until([&] { return r->done; }, std::chrono::hours(24 * 365));
        const int error = r->status.error;
        free_request(r);
        if (error != WEFT_SUCCESS)
            return Status(error, "weft_barrier: waiting for rank " + std::to_string(from) + ": " +
                                     (peers_[from] && peers_[from]->failed ? peers_[from]->failure
                                                                           : weft_status_string(error)));
    }
    return Status::success();
}

} // namespace weft::engine
