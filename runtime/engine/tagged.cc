// SPDX-License-Identifier: BSD-3-Clause
// Tagged messages in MPI style, on portal WEFT_PT_TAGGED: requests, sends
// (the blocking send's fast path, send_now), receives and probes over the
// matching part (matching.hpp), and on_am, the handler of every engine
// frame, whose fast path (a tagged eager frame that finds its receive) is
// here, in one translation unit with the receive path. weft_barrier is a
// dissemination barrier over them (its own context).
#include "engine/api_error.hpp"
#include "engine/engine.hpp"

namespace weft::engine {

namespace {

Status bad(const std::string &msg) { return Status(WEFT_ERR_BAD_PARAM, msg); }

} // namespace

void Engine::detach_request(Request *r)
{
    if (r->posted)
        matching_.unpost(r);
    // A receive whose data is still moving: its MD goes when it is idle.
    if (Md *md = r->md) {
        md->request = nullptr;
        if (md->pending > 0)
            md->unlink_when_idle = true;
        else
            portals_.md_release(md, false);
        r->md = nullptr;
    }
}

void Engine::cancel(Request *r)
{
    matching_.cancel(r);   // false when matched already, or a send: it completes as usual
}

void Engine::release_request(Request *r)
{
    // A send on its way keeps its request until the operation completes,
    // and so does a receive a module is placing data into.
    if (!r->done && (!r->is_recv || r->landing))
        r->orphaned = true;
    else
        free_request(r);
}

Status Engine::iprobe(uint32_t source, int32_t tag, uint32_t context, int *flag, weft_msg_status_t *status)
{
    if (tag < 0 && tag != WEFT_ANY_TAG)
        return bad("weft_iprobe: tag " + std::to_string(tag) + " (tags are >= 0, or WEFT_ANY_TAG)");
    if (source != WEFT_ANY_SOURCE && source >= job_size_)
        return bad("weft_iprobe: source " + std::to_string(source) + " is not in the job (size " +
                   std::to_string(job_size_) + ")");
    const Unexpected *u = matching_.probe(source, tag, context);
    *flag = u != nullptr;
    if (u && status) {
        status->source = u->info.source;
        status->tag = static_cast<int32_t>(u->info.match_bits & 0xffffffffu);
        status->count = u->info.length;
        status->error = WEFT_SUCCESS;
    }
    return Status::success();
}

int Engine::isend(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context, unsigned flags,
                  weft_request_t *out, Status *error)
{
    // Good arguments to a peer this process started to connect and that
    // has not failed, in one test; the rest (and the first send to a peer)
    // apart.
    PeerTraffic *ps = peers_.find(dest);
    if (!out || tag < 0 || (!buf && len) || !ps || !ps->started || ps->failed) [[unlikely]] {
        int rc;
        ps = isend_peer(buf, len, dest, tag, out, error, &rc);
        if (!ps)
            return rc;
    }
    const bool sync = flags & WEFT_SEND_SYNC;
    // Fast path: an eager message that goes out now needs no operation, and
    // with WEFT_SEND_DONE_NULL no request either (the caller's wait on it is
    // then a null test: a window of MPI_Isend saved the request and the
    // weft_wait on it, about 45 instructions a message, callgrind).
    const bool forward = flags & WEFT_SEND_FORWARD;
    const int eager = sync ? WEFT_ERR_AGAIN
                           : peers_.try_eager(*ps, tag_bits(context, tag), buf, len,
                                              forward ? ps->eager_limit : ps->direct_max);
    if (eager == WEFT_SUCCESS && (flags & WEFT_SEND_DONE_NULL)) [[likely]] {
        *out = WEFT_REQUEST_NULL;
        return WEFT_SUCCESS;
    }
    uint64_t rh;
    Request *r = requests_.alloc(&rh);
    r->status.source = dest;
    r->status.tag = tag;
    *out = reinterpret_cast<weft_request_t>(rh);
    if (eager != WEFT_ERR_AGAIN) {
        r->done = true;
        r->status.error = eager;
        r->status.count = eager == WEFT_SUCCESS ? len : 0;
        return WEFT_SUCCESS;
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
    op->sync = sync;
    op->forward = forward;
    if (ps->queue_head || !peers_.connected(*ps) || !start_op(*ps, op))
        peers_.enqueue(*ps, op);
    return WEFT_SUCCESS;
}

namespace {

// The message of a refused isend or irecv to the caller's Status, or to
// api_fail when it passed none (the C API); the code.
int report(Status st, Status *error)
{
    if (!error)
        return api_fail(st);
    *error = std::move(st);
    return error->code();
}

} // namespace

PeerTraffic *Engine::isend_peer(const void *buf, size_t len, uint32_t dest, int32_t tag, weft_request_t *out,
                                Status *error, int *rc)
{
    Status st;
    PeerTraffic *ps = nullptr;
    if (!out)
        st = bad("weft_isend: req is NULL");
    else if (tag < 0)
        st = bad("weft_isend: tag " + std::to_string(tag) + " (tags are >= 0)");
    else if (!buf && len)
        st = bad("weft_isend: buf is NULL with len " + std::to_string(len));
    else
        ps = peers_.for_send(dest, &st);
    if (!ps)
        *rc = report(std::move(st), error);
    return ps;
}

int Engine::irecv_refused(const void *buf, size_t len, uint32_t source, int32_t tag, weft_request_t *out,
                          Status *error) const
{
    return report(out ? check_recv("weft_irecv", buf, len, source, tag) : bad("weft_irecv: req is NULL"), error);
}

int Engine::send_api(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context)
{
    return current_->send(buf, len, dest, tag, context, api_fail);
}

int Engine::send_slow(int rc, const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context,
                      Status *error)
{
    if (rc != WEFT_ERR_AGAIN) {
        *error = Status(rc, "weft_send to rank " + std::to_string(dest) + ": " + weft_status_string(rc));
        return rc;
    }
    weft_request_t req;
    if (int rc_isend = isend(buf, len, dest, tag, context, 0, &req, error); rc_isend != WEFT_SUCCESS)
        return rc_isend;
    Request *r = request(req);
    if (!r->done)
        progress_.wait_until([&] { return r->done; }, rt::ProgressEngine::kForever);
    rc = r->status.error;
    free_request(r);
    if (rc != WEFT_SUCCESS)
        *error = Status(rc, "weft_send to rank " + std::to_string(dest) + ": " + failure_of(dest, rc));
    return rc;
}

Status Engine::check_recv(const char *fn, const void *buf, size_t len, uint32_t source, int32_t tag) const
{
    if (tag < 0 && tag != WEFT_ANY_TAG)
        return bad(std::string(fn) + ": tag " + std::to_string(tag) + " (tags are >= 0, or WEFT_ANY_TAG)");
    if (!buf && len)
        return bad(std::string(fn) + ": buf is NULL with len " + std::to_string(len));
    if (source != WEFT_ANY_SOURCE && source >= job_size_)
        return bad(std::string(fn) + ": source " + std::to_string(source) + " is not in the job (size " +
                   std::to_string(job_size_) + ")");
    if (source != WEFT_ANY_SOURCE && peers_.failed(source))
        return Status(WEFT_ERR_UNREACHABLE,
                      std::string(fn) + " from rank " + std::to_string(source) + ": " + peers_.find(source)->failure);
    return Status::success();
}

void Engine::start_recv(Request *r, void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context)
{
    r->is_recv = true;
    r->buf = buf;
    r->len = len;
    Matching::set_key(r, source, tag, context);
    // A message that already arrived matches first (MPI order).
    if (!portals_.has_unexpected(WEFT_PT_TAGGED) || !take_arrived(r))
        matching_.post(r);
}

bool Engine::take_arrived(Request *r)
{
    Unexpected *u = matching_.take_arrived(*r);
    if (!u)
        return false;
    count_unexpected_out(counters_->process());
    land_matched(r, u->info, u->data());
    portals_.free_unexpected(u);
    return true;
}

int Engine::irecv(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, weft_request_t *out,
                  Status *error, unsigned flags)
{
    if (!out || !recv_args_ok(buf, len, source, tag)) [[unlikely]]
        return irecv_refused(buf, len, source, tag, out, error);
    uint64_t rh;
    Request *r = requests_.alloc(&rh);
    *out = reinterpret_cast<weft_request_t>(rh);
    r->reads_at_once = (flags & WEFT_RECV_READ_AT_ONCE) != 0;   // before a match can start a rendezvous
    start_recv(r, buf, len, source, tag, context);
    return WEFT_SUCCESS;
}

[[gnu::always_inline]] inline int Engine::recv_now(void *buf, size_t len, uint32_t source, int32_t tag,
                                                  uint32_t context, weft_msg_status_t *out)
{
    Request r;
    start_recv(&r, buf, len, source, tag, context);
    if (!r.done)
        progress_.wait_until([&r] { return r.done; }, rt::ProgressEngine::kForever);
    // A receive still posted (the wait ran out) or whose MD still moves data.
    if (r.posted || r.md) [[unlikely]]
        detach_request(&r);
    *out = r.status;
    return r.done ? r.status.error : WEFT_ERR_TIMEOUT;
}

int Engine::recv_api(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context,
                     weft_msg_status_t *status)
{
    return current_->recv(buf, len, source, tag, context, status, api_fail);
}

int Engine::recv(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, weft_msg_status_t *status,
                 Status *error)
{
    return recv(buf, len, source, tag, context, status, [error](const Status &st) {
        *error = st;
        return st.code();
    });
}

Status Engine::recv_failure(int rc, const weft_msg_status_t &st) const
{
    if (rc == WEFT_ERR_TRUNCATED)
        return Status(rc, "weft_recv: the message is longer than the buffer (" + std::to_string(st.count) +
                              " bytes kept)");
    return Status(rc, "weft_recv from rank " + std::to_string(st.source) + ": " + failure_of(st.source, rc));
}

void Engine::land_matched(Request *r, const PutInfo &u, std::span<const std::byte> data)
{
    if (u.type != wire::Type::Eager) {
        land_by_md(r, u, data);
        return;
    }
    Matching::land_eager(r, u.source, u.match_bits, data);
    peers_.consume_credit(u.source, data.size());
}

void Engine::land_by_md(Request *r, const PutInfo &u, std::span<const std::byte> data)
{
    weft_md_desc_t d{};
    d.start = r->buf;
    d.length = r->len;
    d.threshold = 1;
    d.options = WEFT_MD_OP_PUT | WEFT_MD_TRUNCATE;
    Md *md;
    if (Status st = portals_.new_md("weft_irecv", d, WEFT_UNLINK, &md); !st.ok()) {
        r->done = true;   // irecv checked buf and len, so this is not expected
        r->status.error = st.code();
        return;
    }
    md->request = r;
    r->md = md;
    deliver(md, u, data);   // releases md when the data is in
}

int Engine::on_place(void *ctx, weft_btl_endpoint_t *ep, std::span<const std::byte> head, size_t len,
                     weft_btl_placement_t *place)
{
    auto *e = static_cast<Engine *>(ctx);
    if (!head.empty() && static_cast<wire::Type>(head[0]) == wire::Type::Tagged)
        return e->place_tagged(ep, head, len, place);
    return e->rendezvous_.place(ep, head, len, place);
}

// A large eager message (the module has its first bytes, not the rest)
// that matches a posted receive is matched now, in arrival order like
// any frame of its link, and its payload goes from the socket straight
// into the receive's buffer: no copy through the module's buffers. The
// receive is off the posted list but not done until placed().
int Engine::place_tagged(weft_btl_endpoint_t *ep, std::span<const std::byte> head, size_t len,
                         weft_btl_placement_t *place)
{
    wire::Tagged h;
    if (head.size() < sizeof h || len <= sizeof h)
        return 0;
    std::memcpy(&h, head.data(), sizeof h);
    const uint32_t src = ep->peer_rank;
    const uint64_t bits = h.match_bits();
    const size_t payload = len - sizeof h;
    Request *r = matching_.find_posted(src, bits);
    // Too long for the receive: on_am's path truncates it (and says so).
    if (!r || payload > r->len)
        return 0;
    matching_.unpost(r);
    r->landing = true;
    r->status.source = src;
    r->status.tag = static_cast<int32_t>(bits & 0xffffffffu);
    r->status.count = payload;
    place->skip = sizeof h;
    place->iov[0] = {r->buf, payload};
    place->iovcnt = 1;
    // The request itself: it stays (release_request orphans it, a blocking
    // recv waits for it) until placed() says the data is in. Its address
    // cannot look like a Rendezvous landing's handle, whose top byte is
    // that pool's kind.
    place->token = reinterpret_cast<uintptr_t>(r);
    return 1;
}

void Engine::on_placed(void *ctx, weft_btl_endpoint_t *ep, uint64_t token, int status)
{
    auto *e = static_cast<Engine *>(ctx);
    if (Rendezvous::is_landing(token))
        e->rendezvous_.placed(token, status);
    else
        e->tagged_placed(ep->peer_rank, reinterpret_cast<Request *>(static_cast<uintptr_t>(token)), status);
}

void Engine::tagged_placed(uint32_t src, Request *r, int status)
{
    r->landing = false;
    r->done = true;
    if (status == WEFT_SUCCESS) {
        peers_.consume_credit(src, r->status.count);
    } else {
        r->status.count = 0;
        r->status.error = status;
    }
    if (r->orphaned)
        free_request(r);
}

// Flattened, so that the whole match of a tagged eager message
// (Matching::land_tagged_frame: match_posted, land_eager; then
// consume_credit) is one function: under emulation each call and return
// is a measurable part of a small message.
[[gnu::flatten]] void Engine::on_am(void *ctx, weft_btl_endpoint_t *ep, const void *data, size_t len)
{
    auto *e = static_cast<Engine *>(ctx);
    // Read once: the copy into the user's buffer might, for all the
    // compiler knows, write ep, and reading it again costs an instruction.
    const uint32_t src = ep->peer_rank;
    if (e->matching_.land_tagged_frame(src, data, len))
        e->peers_.consume_credit(src, len - sizeof(wire::Tagged));
    else
        e->on_frame(ep, data, len);
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
        Status sent;
        if (send(nullptr, 0, to, tag, kTaggedContextBarrier, [&](const Status &st) {
                sent = st;
                return st.code();
            }) != WEFT_SUCCESS) {
            free_request(request(rreq));
            return Status(sent.code(), "weft_barrier: " + sent.message());
        }
        Request *r = request(rreq);
        if (!r->done)
            progress_.wait_until([&] { return r->done; }, rt::ProgressEngine::kForever);
        const int error = r->status.error;
        free_request(r);
        if (error != WEFT_SUCCESS)
            return Status(error, "weft_barrier: waiting for rank " + std::to_string(from) + ": " +
                                     failure_of(from, error));
    }
    return Status::success();
}

} // namespace weft::engine
