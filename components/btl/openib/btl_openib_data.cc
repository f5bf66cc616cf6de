// SPDX-License-Identifier: BSD-3-Clause
// btl/openib data path: frames out (inline or through a send buffer),
// frames in (receive completions, credits), RDMA read/write, and the
// completion loop that drives them. See btl_openib_module.hpp for the
// credit scheme.
#include <algorithm>
#include <cstring>
#include <utility>

#include <weft/status.h>

#include "btl_openib_module.hpp"

namespace weft::openib {

// Receive buffers go back to the QP in batches (one ibv_post_recv and one
// lock of the provider's queue per batch), and are credited to the peer as
// they go back. A batch is at most a quarter of the depth, so a sender out
// of credits always finds the receiver owing half its depth (see
// maybe_return_credits).
int Module::repost(Endpoint &ep)
{
    const unsigned n = ep.unposted;
    if (n == 0 || !ep.qp)
        return 0;
    // The buffers' work requests, chained in the order they were consumed.
    ibv_recv_wr *chain = nullptr;
    for (unsigned i = n; i-- > 0;) {
        ibv_recv_wr &wr = ep.recv_wr[ep.unposted_slot[i]];
        wr.next = chain;
        chain = &wr;
    }
    ibv_recv_wr *bad = nullptr;
    if (int rc = ibv_post_recv(ep.qp.get(), chain, &bad); rc != 0)
        return rc;
    ep.unposted = 0;
    ep.owed_data += ep.unposted_data;
    ep.owed_control += ep.unposted_control;
    ep.unposted_data = ep.unposted_control = 0;
    return 0;
}

void Module::verbs_failed(Endpoint &ep, const char *call, int rc)
{
    fail(ep, WEFT_ERR_IO, std::string(call) + " failed: " + std::strerror(rc));
}

// Posts one frame with the credits owed to the peer. The caller checked
// the credit (data frames) and a send-queue slot.
int Module::post_frame(Endpoint &ep, uint8_t am_id, FrameKind kind, const struct iovec *iov, int iovcnt,
                       size_t total)
{
    if (total == 0 || (total <= ep.inline_max && iovcnt <= static_cast<int>(ep.max_sge))) {
        // Inline: the device copies the bytes at post time, no buffer needed.
        ibv_send_wr &wr = ep.inline_wr;
        int n = 0;
        for (int i = 0; i < iovcnt; ++i) {
            if (iov[i].iov_len == 0)
                continue;
            ep.inline_sge[n].addr = reinterpret_cast<uintptr_t>(iov[i].iov_base);
            ep.inline_sge[n].length = static_cast<uint32_t>(iov[i].iov_len);
            ++n;
        }
        wr.num_sge = n;
        wr.send_flags = n ? IBV_SEND_INLINE : 0;
        // Slot 1 marks the close frame: its completion means every frame is out.
        return post_wr(ep, wr, am_id, kind, kind == FrameKind::close ? 1 : 0, UINT32_MAX);
    }
    if (free_sbufs_.empty())
        return WEFT_ERR_AGAIN;
    const uint32_t sbuf = free_sbufs_.back();
    std::byte *dst = sbufs_.get() + size_t{sbuf} * config_.buf_size;
    size_t at = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (iov[i].iov_len)
            std::memcpy(dst + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    ibv_sge sge{reinterpret_cast<uintptr_t>(dst), static_cast<uint32_t>(total), sreg_->mr->lkey};
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return post_wr(ep, wr, am_id, kind, sbuf, sbuf);
}

namespace {

// The pieces of iov covering bytes [off, off + len).
void slice(const struct iovec *iov, int iovcnt, size_t off, size_t len, std::vector<struct iovec> *out)
{
    out->clear();
    for (int i = 0; i < iovcnt && len > 0; ++i) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        const size_t n = std::min(iov[i].iov_len - off, len);
        out->push_back({static_cast<std::byte *>(iov[i].iov_base) + off, n});
        len -= n;
        off = 0;
    }
}

} // namespace

// A message longer than one buffer goes as several frames: every one but
// the last is FrameKind::more, and the receiver joins them (RC keeps their
// order, and the frames of one message are posted or queued back to back).
int Module::send(Endpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt)
{
    size_t total = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (iov[i].iov_len && !iov[i].iov_base)
            return WEFT_ERR_BAD_PARAM;
        total += iov[i].iov_len;
    }
    if (total > c_.caps.max_send)
        return WEFT_ERR_BAD_PARAM;
    if (ep.user_closed || ep.phase == EpPhase::gone || ep.phase == EpPhase::closing || ep.peer_closed)
        return WEFT_ERR_UNREACHABLE;
    const size_t frames = total <= config_.buf_size ? 1 : (total + config_.buf_size - 1) / config_.buf_size;
    auto can_post = [&](size_t len) {
        return ep.phase == EpPhase::connected && ep.pending.empty() && ep.send_credits > 0 && ep.sq_free > 0 &&
               (len <= ep.inline_max || !free_sbufs_.empty());
    };
    if (frames == 1 && can_post(total))
        return post_frame(ep, am_id, FrameKind::data, iov, iovcnt, total);
    // Queue what cannot go now, unless the endpoint is connected and would
    // have to queue the whole message: then the runtime retries (AGAIN).
    if (ep.phase == EpPhase::connected && !can_post(std::min(total, config_.buf_size)))
        return WEFT_ERR_AGAIN;
    if (ep.phase != EpPhase::connected && ep.pending.size() + frames > config_.max_early + frames / 2)
        return WEFT_ERR_AGAIN;
    std::vector<struct iovec> piece;
    for (size_t f = 0, off = 0; f < frames; ++f, off += config_.buf_size) {
        const size_t len = std::min(config_.buf_size, total - std::min(total, off));
        const FrameKind kind = f + 1 < frames ? FrameKind::more : FrameKind::data;
        slice(iov, iovcnt, off, len, &piece);
        if (can_post(len)) {
            if (int rc = post_frame(ep, am_id, kind, piece.data(), static_cast<int>(piece.size()), len);
                rc != WEFT_SUCCESS)
                return rc;
            continue;
        }
        Endpoint::Frame fr{am_id, kind, std::vector<std::byte>(len)};
        size_t at = 0;
        for (const struct iovec &p : piece) {
            std::memcpy(fr.bytes.data() + at, p.iov_base, p.iov_len);
            at += p.iov_len;
        }
        ep.pending.push_back(std::move(fr));
    }
    if (!ep.pending.empty()) {
        settle(ep);   // what follows queues behind it
        want_attention(ep);
    }
    return WEFT_SUCCESS;
}

int Module::sendi_slow(Endpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
                       size_t payload_len)
{
    if (hdr_len + payload_len > c_.caps.inline_max)
        return WEFT_ERR_BAD_PARAM;   // btl.h: sendi takes up to caps.inline_max
    struct iovec iov[2] = {{const_cast<void *>(hdr), hdr_len}, {const_cast<void *>(payload), payload_len}};
    return send(ep, am_id, iov, payload_len ? 2 : 1);
}

void Module::flush_pending(Endpoint &ep)
{
    while (!ep.pending.empty() && ep.phase == EpPhase::connected && ep.send_credits > 0 && ep.sq_free > 0) {
        Endpoint::Frame &f = ep.pending.front();
        struct iovec iov = {f.bytes.data(), f.bytes.size()};
        if (f.bytes.size() > ep.inline_max && free_sbufs_.empty())
            break;
        if (post_frame(ep, f.am_id, f.kind, &iov, 1, f.bytes.size()) != WEFT_SUCCESS)
            break;
        ep.pending.pop_front();
    }
    settle(ep);
}

// A receiver with nothing to send back returns credits in a frame of their own
// once it owes half its depth (the sender may be waiting for them).
void Module::maybe_return_credits(Endpoint &ep)
{
    if (ep.unposted && ep.owed_data + ep.unposted_data >= half_depth_)
        repost(ep);
    if (ep.phase != EpPhase::connected || ep.owed_data < half_depth_ ||
        ep.control_credits == 0 || ep.sq_free == 0)
        return;
    post_frame(ep, 0, FrameKind::credit, nullptr, 0, 0);
}

void Module::post_close(Endpoint &ep)
{
    if (ep.close_posted || ep.phase == EpPhase::gone)
        return;
    if (!ep.pending.empty() || ep.sq_free == 0) {
        want_attention(ep);            // progress() tries again once the queue drains
        return;
    }
    // The close frame has a receive buffer of its own at the peer: no credit.
    if (post_frame(ep, 0, FrameKind::close, nullptr, 0, 0) == WEFT_SUCCESS) {
        ep.close_posted = true;
        ep.phase = EpPhase::closing;
        settle(ep);
    }
}

int Module::rdma(Endpoint &ep, bool write, void *local, size_t len, uint64_t remote_addr, const void *rkey,
                 size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx)
{
    if (rkey_len != sizeof(uint32_t) || !rkey)
        return WEFT_ERR_BAD_PARAM;
    if (ep.user_closed || ep.phase == EpPhase::gone || ep.peer_closed)
        return WEFT_ERR_UNREACHABLE;
    const size_t max_msg = std::max<size_t>(port_.info.attr.max_msg_sz, 4096);
    const unsigned wrs = static_cast<unsigned>(len == 0 ? 1 : (len + max_msg - 1) / max_msg);
    if (ep.phase != EpPhase::connected || ep.sq_free < wrs)
        return WEFT_ERR_AGAIN;
    std::string why;
    RegCache::Region *reg = rcache_->acquire(local, len, &why);
    if (!reg) {
        host_->log(owner(), WEFT_LOG_ERROR, "%s", why.c_str());
        return WEFT_ERR_NO_MEMORY;
    }
    uint32_t slot;
    if (free_rdma_.empty()) {
        if (rdma_ops_.size() >= kSlotMask)
            return WEFT_ERR_AGAIN;     // the slot must fit its 16 bits of wr_id
        slot = static_cast<uint32_t>(rdma_ops_.size());
        rdma_ops_.emplace_back();
    } else {
        slot = free_rdma_.back();
        free_rdma_.pop_back();
    }
    RdmaOp &op = rdma_ops_[slot];
    op = RdmaOp{cb, cb_ctx, ep.id, reg, wrs, WEFT_SUCCESS, true};
    uint32_t key;
    std::memcpy(&key, rkey, sizeof key);
    auto *base = static_cast<std::byte *>(local);
    for (unsigned i = 0; i < wrs; ++i) {
        const size_t off = size_t{i} * max_msg;
        const size_t n = std::min(max_msg, len - std::min(len, off));
        ibv_sge sge{reinterpret_cast<uintptr_t>(base + off), static_cast<uint32_t>(n), reg->mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = wr_id(Wr::rdma, ep.id, slot | ep.unsignaled << 16);
        ep.unsignaled = 0;
        wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.sg_list = &sge;
        wr.num_sge = n ? 1 : 0;
        wr.wr.rdma.remote_addr = remote_addr + off;
        wr.wr.rdma.rkey = key;
        ibv_send_wr *bad = nullptr;
        if (int rc = ibv_post_send(ep.qp.get(), &wr, &bad); rc != 0) {
            // Work requests already out complete (flushed) with the failure.
            op.wrs = i;
            op.status = WEFT_ERR_IO;
            fail(ep, WEFT_ERR_IO, "ibv_post_send (RDMA) failed: " + std::string(std::strerror(rc)));
            if (i == 0) {
                rcache_->release(reg);
                op.live = false;
                free_rdma_.push_back(slot);
                return WEFT_ERR_IO;
            }
            return WEFT_SUCCESS;
        }
        --ep.sq_free;
    }
    return WEFT_SUCCESS;
}

void Module::finish_rdma(uint32_t slot, int status)
{
    if (slot >= rdma_ops_.size() || !rdma_ops_[slot].live)
        return;
    RdmaOp &op = rdma_ops_[slot];
    if (status != WEFT_SUCCESS && op.status == WEFT_SUCCESS)
        op.status = status;
    if (--op.wrs > 0)
        return;
    op.live = false;
    rcache_->release(op.local);
    weft_btl_rdma_cb_t cb = op.cb;
    void *ctx = op.cb_ctx;
    const int st = op.status;
    Endpoint *ep = find_ep(op.ep);
    free_rdma_.push_back(slot);
    if (cb)
        cb(ep ? &ep->c : nullptr, ctx, st);
}

int Module::mem_register(void *addr, size_t len, weft_btl_reg_t *reg)
{
    std::string why;
    RegCache::Region *r = rcache_->acquire(addr, len, &why);
    if (!r) {
        host_->log(owner(), WEFT_LOG_ERROR, "%s", why.c_str());
        return WEFT_ERR_NO_MEMORY;
    }
    reg->addr = addr;
    reg->length = len;
    std::memcpy(reg->rkey, &r->mr->rkey, sizeof(uint32_t));
    reg->rkey_len = sizeof(uint32_t);
    reg->module_ctx = r;
    return WEFT_SUCCESS;
}

int Module::mem_deregister(weft_btl_reg_t *reg)
{
    if (!reg || !reg->module_ctx)
        return WEFT_ERR_BAD_PARAM;
    rcache_->release(static_cast<RegCache::Region *>(reg->module_ctx));
    reg->module_ctx = nullptr;
    return WEFT_SUCCESS;
}

void Module::bad_frame(Endpoint &ep, const char *what) { fail(ep, WEFT_ERR_IO, what); }

bool Module::join_more(Endpoint &ep, const std::byte *data, size_t len)
{
    if (ep.joined.size() + len > c_.caps.max_send) {
        fail(ep, WEFT_ERR_IO, "the peer sent a message longer than btl_openib_max_send (" +
                                  std::to_string(c_.caps.max_send) + " bytes): do both sides set the same value?");
        return false;
    }
    ep.joined.insert(ep.joined.end(), data, data + len);
    return true;
}

inline void Module::on_recv(Endpoint &ep, const ibv_wc &wc, unsigned slot)
{
    Imm imm;
    if (!(wc.wc_flags & IBV_WC_WITH_IMM))
        return bad_frame(ep, "a frame without a header arrived (a peer of another weft version?)");
    decode_imm(be32toh(wc.imm_data), &imm);
    // Most frames of a ping-pong carry no credits (they come back every
    // kRepostWithFrame buffers): both fields are zero then.
    if (imm.data_credits | imm.control_credits) {
        if (uint64_t{ep.send_credits} + imm.data_credits > ep.peer_depth ||
            ep.control_credits + imm.control_credits > kControlRecvs)
            return bad_frame(ep, "the peer returned more credits than it was given (a corrupt frame)");
        ep.send_credits += imm.data_credits;
        ep.control_credits += imm.control_credits;
    }
    const std::byte *data = ep.rbufs.get() + size_t{slot} * config_.buf_size;
    switch (imm.kind) {
    case FrameKind::more:
        if (!join_more(ep, data, wc.byte_len))
            return;
        ++ep.unposted_data;
        break;
    case FrameKind::data:
        if (!ep.joined.empty()) {
            ep.joined.insert(ep.joined.end(), data, data + wc.byte_len);
            if (!ep.user_closed && c_.upcalls.recv)
                c_.upcalls.recv(c_.upcalls.ctx, &ep.c, imm.am_id, ep.joined.data(), ep.joined.size());
            ep.joined.clear();
        } else if (!ep.user_closed && c_.upcalls.recv) {
            c_.upcalls.recv(c_.upcalls.ctx, &ep.c, imm.am_id, data, wc.byte_len);
        }
        ++ep.unposted_data;
        break;
    case FrameKind::credit:
        ++ep.unposted_control;
        break;
    case FrameKind::close:
        // Its buffer is the close frame's own (kCloseRecvs): no credit back.
        ep.peer_closed = true;
        ep.pending.clear();
        if (!ep.user_closed) {
            ep.user_closed = true;     // the close is answered: nothing more goes out
            post_close(ep);
        }
        settle(ep);
        break;
    }
    if (ep.phase == EpPhase::gone || !ep.qp)
        return;
    ep.unposted_slot[ep.unposted++] = static_cast<uint16_t>(slot);
    if (ep.unposted >= ep.repost_batch || imm.kind != FrameKind::data) {
        if (int rc = repost(ep); rc != 0)
            return verbs_failed(ep, "ibv_post_recv", rc);
    }
    if (ep.owed_data + ep.unposted_data >= half_depth_)
        want_attention(ep);
    if (imm.kind == FrameKind::close)
        maybe_closed(ep);
}

void Module::completion_failed(Endpoint &ep, const ibv_wc &wc)
{
    // A flush of the endpoint's own QP while the endpoint lives means the
    // QP went to the error state without an error completion here: a
    // responder-side error (the peer's RDMA read or write with a bad key
    // or range) shows on this side as flushes only. A flush after fail()
    // or close finds the endpoint gone; one of a QP already replaced by
    // a reconnect has another qp_num.
    const bool flushed = wc.status == IBV_WC_WR_FLUSH_ERR;
    if (ep.phase != EpPhase::gone && (!flushed || (ep.qp && wc.qp_num == ep.qp->qp_num)))
        fail(ep, WEFT_ERR_IO,
             std::string("the connection broke: ") + ibv_wc_status_str(wc.status) +
                 (wc.status == IBV_WC_RETRY_EXC_ERR
                      ? " (the peer stopped answering: it died, or btl_openib_timeout is too short for "
                        "this fabric)"
                  : flushed ? " (the queue pair went to the error state: the peer's last RDMA access here "
                              "was refused, or the device reset the connection)"
                            : ""));
}

inline bool Module::on_completion(const ibv_wc &wc)
{
    const auto kind = static_cast<Wr>(wc.wr_id >> 62);
    const auto id = static_cast<uint32_t>((wc.wr_id >> 32) & 0x3fffffff);
    const auto slot = static_cast<uint32_t>(wc.wr_id) & kSlotMask;
    const auto retired = static_cast<uint32_t>(wc.wr_id) >> 16;   // unsignaled work requests before it
    Endpoint *ep = find_ep(id);
    // Receives first: most completions are frames in (sends are signaled
    // only now and then).
    if (kind == Wr::recv) [[likely]] {
        if (!ep)
            return true;
        if (wc.status != IBV_WC_SUCCESS) {
            completion_failed(*ep, wc);
            return true;
        }
        if (ep->phase == EpPhase::connecting && ep->qp_ready) {
            // The peer sends only once it is connected, so its frame is as
            // good as the handshake's last message (which may still be on
            // its way, or lost): the endpoint is connected. CONNECTED goes
            // up now, the frame in the next progress call, so the runtime
            // sees the state change in a call of its own.
            if (ep->cpc)
                ep->cpc->established(*ep);
            connected(*ep);
            drain_reports();
            return false;
        }
        if (ep->phase != EpPhase::gone)
            on_recv(*ep, wc, slot);
        return true;
    }
    if (kind == Wr::send_buf)
        free_sbufs_.push_back(slot);
    if (kind == Wr::rdma)
        finish_rdma(slot, wc.status == IBV_WC_SUCCESS ? WEFT_SUCCESS : WEFT_ERR_IO);
    if (!ep)
        return true;
    ep->sq_free += 1 + retired;
    if (wc.status != IBV_WC_SUCCESS) {
        completion_failed(*ep, wc);
        return true;
    }
    if (kind == Wr::send_inline && slot == 1) {
        ep->close_done = true;
        maybe_closed(*ep);
    }
    return true;
}

// Handles completions in order; when one asks to wait for the next
// progress call, it and those after it are kept for then. false if so.
inline bool Module::handle(const ibv_wc *wcs, int n, int *handled)
{
    for (int i = 0; i < n; ++i) {
        if (!on_completion(wcs[i])) {
            stash_.insert(stash_.end(), wcs + i, wcs + n);
            *handled += i + 1;
            return false;
        }
    }
    *handled += n;
    return true;
}

bool Module::needs_attention(const Endpoint &ep) const
{
    return !ep.pending.empty() || (ep.user_closed && !ep.close_posted) ||
           ep.owed_data + ep.unposted_data >= half_depth_;
}

void Module::want_attention(Endpoint &ep)
{
    if (!ep.attention) {
        ep.attention = true;
        attention_.push_back(ep.id);
    }
}

// Most passes of a busy poll find nothing: with nothing held back, queued
// or due, such a pass polls the CQ and returns, without the frame of the
// full pass (its saved registers; 25 instructions instead of about 50).
int Module::progress()
{
    if (in_progress_)
        return 0;
    if (!armed_ && stash_.empty() && attention_.empty() && reports_.empty() && cpc_look_in_ > 1) [[likely]] {
        const int n = ibv_poll_cq(cq_, static_cast<int>(polled_.size()), polled_.data());
        if (n <= 0) {
            --cpc_look_in_;
            return 0;
        }
        return full_pass(n);
    }
    return full_pass(0);
}

int Module::full_pass(int polled)
{
    in_progress_ = true;
    if (armed_)
        drain_channel();
    int handled = 0;
    bool more = true;
    if (!stash_.empty()) {
        stashed_.swap(stash_);         // both keep their capacity: no allocation here
        more = handle(stashed_.data(), static_cast<int>(stashed_.size()), &handled);
        stashed_.clear();
    }
    // Completions progress() polled (it does only with nothing stashed), then more.
    const int batch = static_cast<int>(polled_.size());
    if (polled > 0)
        more = handle(polled_.data(), polled, &handled) && polled == batch;
    for (int round = polled > 0 ? 1 : 0; more && round < 4; ++round) {
        int n = ibv_poll_cq(cq_, batch, polled_.data());
        if (n <= 0)
            break;
        more = handle(polled_.data(), n, &handled) && n == batch;
    }
    // A cpc's events cost a system call or two to look for: look on every
    // pass only while a connection is being made, else on every 16384th (a
    // peer's first request then waits a few milliseconds more at most; the
    // cpcs' timeouts are seconds). Every 1024th made the average 64-byte
    // latency 2% longer in the Soft-RoCE VM than every 65536th (8
    // interleaved rounds), where a system call costs microseconds.
    // After a blocking wait the wake-up may have been a cpc's descriptor.
    if (--cpc_look_in_ == 0) [[unlikely]] {
        for (auto &cpc : cpcs_)
            if (int rc = cpc->progress(); rc > 0)
                handled += rc;
        cpc_look_in_ = connecting_ > 0 ? 1 : kCpcLookEvery;   // after: a cpc may have connected one
    }
    // Endpoints with queued frames, credits to return or a close to send.
    for (size_t i = 0; i < attention_.size();) {
        Endpoint *e = find_ep(attention_[i]);
        if (e && (e->phase == EpPhase::connected || e->phase == EpPhase::closing)) {
            flush_pending(*e);
            maybe_return_credits(*e);
            if (e->user_closed && !e->close_posted)
                post_close(*e);
        }
        if (e && e->phase != EpPhase::gone && needs_attention(*e)) {
            ++i;
            continue;
        }
        if (e)
            e->attention = false;
        attention_[i] = attention_.back();
        attention_.pop_back();
    }
    if (!reports_.empty()) {
        handled += static_cast<int>(reports_.size());
        drain_reports();
    }
    in_progress_ = false;
    return handled;
}

} // namespace weft::openib
