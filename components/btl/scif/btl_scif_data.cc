// SPDX-License-Identifier: BSD-3-Clause
// btl/scif's data path: sends through the rings (whole, fragments,
// rendezvous), delivery to the runtime, disconnect and final reports,
// registration and put/get.
#include "btl_scif_module.hpp"
#include "btl_scif_sendi.hpp"

#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string_view>

#include <weft/component_util.hpp>

#include "scif_endpoint.hpp"

namespace weft::btl_scif {

namespace sc = weft::scif;

namespace {

// Queued large-send bytes per endpoint before send() says WEFT_ERR_AGAIN.
constexpr size_t kMaxPendingBytes = size_t{256} << 20;
// Pieces of a send() that streams straight from the caller's buffers (the
// runtime's are a header and a payload); more go through the queue's copy.
constexpr int kMaxStreamPieces = 8;

} // namespace

void ScifModule::finish(ScifEndpoint &ep, weft_btl_ep_state_t state, int status,
                        const char *reason)
{
    if (ep.epd >= 0)
        sc::close_endpoint(ep.epd);
    ep.epd = -1;
    ep.phase = EpPhase::dead;
    ep.c.state = state;
    ep.pending.clear();
    ep.inflight.clear();
    ep.acks_owed.clear();
    ep.pending_bytes = 0;
    // A placement the endpoint will never finish is told first (btl.h).
    if (ep.landing.active)
        end_landing(ep, status != WEFT_SUCCESS ? status : WEFT_ERR_UNREACHABLE);
    if (!ep.reported) {
        ep.reported = true;
        if (state == WEFT_BTL_EP_FAILED)
            count_failure(reason);
        if (c_.upcalls.state)
            c_.upcalls.state(c_.upcalls.ctx, &ep.c, state, status, reason);
    }
}

int ScifModule::send(ScifEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt)
{
    if (ep.closing || ep.phase == EpPhase::dead)
        return WEFT_ERR_UNREACHABLE;
    if (iovcnt < 0 || (iovcnt > 0 && !iov))
        return WEFT_ERR_BAD_PARAM;
    size_t total = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (iov[i].iov_len && !iov[i].iov_base)
            return WEFT_ERR_BAD_PARAM;
        total += iov[i].iov_len;
        if (total > config_.max_send)
            return WEFT_ERR_BAD_PARAM;
    }
    if (ep.phase == EpPhase::connected && ep.pending.empty()) {
        sc::Endpoint *s = sc::lookup(ep.epd);
        const bool streamed = streams(ep, *s, total);
        if (total > config_.stream_reply_from)
            ep.answer_mark = sc::received_mark(*s);
        if (streamed && iovcnt <= kMaxStreamPieces) {
            const int rc = stream(ep, *s, am_id, iov, iovcnt, total);
            if (rc != WEFT_ERR_AGAIN)
                return rc;
        } else if (total <= sc::max_message(*s)) {
            std::span<const std::byte> small[8];
            if (iovcnt <= 8) {
                for (int i = 0; i < iovcnt; ++i)
                    small[i] = bytes(iov[i].iov_base, iov[i].iov_len);
                int rc = sc::try_send_message(*s, kAm, am_id, std::span(small, iovcnt));
                if (rc == 0) {
                    if (s->tx.consumer_sleeps())
                        sc::notify(*s);
                    return WEFT_SUCCESS;
                }
                if (rc == -ECONNRESET)
                    return WEFT_ERR_UNREACHABLE;
            }
        }
    }
    // Queue a copy: copy semantics, sent in order from progress().
    if (ep.pending_bytes + total > kMaxPendingBytes)
        return again();
    ScifEndpoint::Pending p;
    p.am_id = am_id;
    p.data.resize(total);
    size_t at = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (iov[i].iov_len)
            weft::cutil::copy_bytes(p.data.data() + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    ep.pending_bytes += total;
    ep.pending.push_back(std::move(p));
    if (ep.phase == EpPhase::connected)
        flush_pending(ep);
    return WEFT_SUCCESS;
}

int ScifModule::sendx(ScifEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt, uint32_t flags)
{
    if (flags & ~(WEFT_BTL_SEND_NOW | WEFT_BTL_SEND_UNORDERED))
        return WEFT_ERR_BAD_PARAM;
    if (!(flags & WEFT_BTL_SEND_NOW))
        return send(ep, am_id, iov, iovcnt);
    if (ep.closing || ep.phase == EpPhase::dead)
        return WEFT_ERR_UNREACHABLE;
    // send() writes at once only from a few pieces, to a connected endpoint
    // with nothing queued before it.
    if (ep.phase != EpPhase::connected || !ep.pending.empty() || iovcnt > kMaxStreamPieces)
        return again();
    size_t total = 0;
    for (int i = 0; i < iovcnt; ++i)
        total += iov[i].iov_len;
    if (total > config_.max_send)
        return WEFT_ERR_BAD_PARAM;
    sc::Endpoint *s = sc::lookup(ep.epd);
    // As send() will cut it: one chunk, or stream()'s fragments (the first
    // also carries the 8-byte total).
    size_t count = 1, len = total;
    if (streams(ep, *s, total)) {
        len = stream_fragment(*s, total);
        count = (total + len - 1) / len;
        len += sizeof(uint64_t);
    } else if (total > sc::max_message(*s)) {
        return WEFT_ERR_AGAIN;
    }
    if (!s->tx.has_room_for(count, len))
        return s->peer_closed() ? WEFT_ERR_UNREACHABLE : again();
    return send(ep, am_id, iov, iovcnt);
}

size_t ScifModule::stream_fragment(const sc::Endpoint &s, size_t total) const
{
    constexpr size_t kSmall = ScifConfig::kStreamSmallFragment;
    size_t want = total > config_.stream_fragment ? config_.stream_fragment : kSmall;
    // Up to two small fragments and a little: two halves of whole cache
    // lines. Cut by kSmall, a 4 KiB message and the runtime's header left a
    // last fragment of 8 bytes, a handoff that carried nothing.
    if (total <= 2 * kSmall + kSmall / 8)
        want = ((total + 1) / 2 + sc::kCell - 1) / sc::kCell * sc::kCell;
    return std::min(want, sc::max_message(s) - sizeof(uint64_t));
}

int ScifModule::sendi_rare(ScifEndpoint &ep, const SendiArgs &a)
{
    const size_t total = a.hdr_len + a.payload_len;
    if (total > c_.caps.inline_max || (a.hdr_len && !a.hdr) || (a.payload_len && !a.payload))
        return WEFT_ERR_BAD_PARAM;
    if (const int rc = sendi_refusal(ep); rc != WEFT_SUCCESS)
        return rc;
    sc::Endpoint &s = *sc::lookup(ep.epd);
    if (!streams(ep, s, total))
        return send_whole(s, a.am_id, a.hdr, a.hdr_len, a.payload, a.payload_len);
    const iovec iov[2] = {{const_cast<void *>(a.hdr), a.hdr_len},
                          {const_cast<void *>(a.payload), a.payload_len}};
    return send(ep, a.am_id, a.hdr_len ? iov : iov + 1, a.hdr_len ? 2 : 1);
}

bool ScifModule::streams(const ScifEndpoint &ep, const sc::Endpoint &s, size_t total) const
{
    return total > config_.stream_from ||
           (total > config_.stream_reply_from && ep.answer_mark != sc::received_mark(s));
}

// Writes a message as fragments straight from the caller's buffers, each
// published as it is written: the receiver copies one out of the ring while
// the next goes in. A full ring stops it; what is left is queued (copy
// semantics) and follows from progress(). WEFT_ERR_AGAIN: not even the
// first fragment fit, nothing was sent (the caller queues the whole).
int ScifModule::stream(ScifEndpoint &ep, sc::Endpoint &s, uint8_t am_id, const struct iovec *iov, int iovcnt,
                       size_t total)
{
    const uint64_t total64 = total;
    const size_t frag = stream_fragment(s, total);
    // The ring looks for its hot region where a message of small fragments
    // starts, not at its later ones (RingProducer::reserve's continues).
    // Messages of 16 KiB fragments keep a look at every fragment: at 16
    // ranks on the 16-core host a 64 KiB osu_bcast took 36.0 us with the
    // look at their starts only, 29.4 with it at every fragment.
    const bool small_fragments = total <= config_.stream_fragment;
    int piece = 0;          // iov[piece] holds the next byte, at offset at
    size_t at = 0, sent = 0;
    while (sent < total) {
        std::span<const std::byte> parts[kMaxStreamPieces + 1];
        int n = 0;
        if (sent == 0)
            parts[n++] = bytes(&total64, sizeof total64);
        const size_t want = std::min(frag, total - sent);
        int p = piece;
        size_t off = at, got = 0;
        while (got < want) {
            const size_t take = std::min(iov[p].iov_len - off, want - got);
            if (take > 0)
                parts[n++] = bytes(static_cast<const std::byte *>(iov[p].iov_base) + off, take);
            got += take;
            off += take;
            if (off == iov[p].iov_len) {
                ++p;
                off = 0;
            }
        }
        const int rc =
            sc::try_send_message(s, sent == 0 ? kFragFirst : kFrag, am_id, std::span(parts, n),
                                 small_fragments && sent != 0);
        if (rc == -ECONNRESET)
            return WEFT_ERR_UNREACHABLE;
        if (rc != 0)
            break;
        // Wake a sleeping receiver at the first fragment, so that it copies
        // while the rest goes in.
        if (sent == 0 && s.tx.consumer_sleeps())
            sc::notify(s);
        sent += want;
        piece = p;
        at = off;
    }
    if (sent == 0)
        return WEFT_ERR_AGAIN;
    if (sent < total) {
        ScifEndpoint::Pending rest;
        rest.am_id = am_id;
        rest.started = true;
        rest.data.resize(total - sent);
        size_t to = 0;
        for (int p = piece; p < iovcnt; ++p, at = 0) {
            const size_t len = iov[p].iov_len - at;
            if (len > 0)
                weft::cutil::copy_bytes(rest.data.data() + to,
                                        static_cast<const std::byte *>(iov[p].iov_base) + at, len);
            to += len;
        }
        ep.pending_bytes += rest.data.size();
        ep.pending.push_back(std::move(rest));
    }
    if (s.tx.consumer_sleeps())
        sc::notify(s);
    return WEFT_SUCCESS;
}

void ScifModule::flush_pending(ScifEndpoint &ep)
{
    sc::Endpoint *s = sc::lookup(ep.epd);
    if (!s)
        return;
    const size_t frag = sc::max_message(*s) - sizeof(uint64_t);
    bool sent_any = false;
    while (!ep.pending.empty()) {
        auto &p = ep.pending.front();
        if (!p.started && p.data.size() <= sc::max_message(*s)) {
            const std::span<const std::byte> one[1] = {p.data};
            if (sc::try_send_message(*s, kAm, p.am_id, one) != 0)
                break;
        } else if (!p.started && ep.peer_reads_us) {
            // Rendezvous: the peer reads our copy in one process_vm_readv
            // (it said in its hello or reply that it can).
            const RdvDesc d{reinterpret_cast<uintptr_t>(p.data.data()), p.data.size(),
                            ep.next_cookie};
            const std::span<const std::byte> desc[1] = {bytes(&d, sizeof d)};
            if (sc::try_send_message(*s, kRdv, p.am_id, desc) != 0)
                break;
            ++ep.next_cookie;
            ep.inflight.emplace_back(d.cookie, std::move(p.data));   // the buffer stays put
            ep.pending.pop_front();
            sent_any = true;
            continue;
        } else if (!p.started) {
            const uint64_t total = p.data.size();
            const std::span<const std::byte> first[2] = {bytes(&total, sizeof total),
                                                         std::span(p.data).first(frag)};
            if (sc::try_send_message(*s, kFragFirst, p.am_id, first) != 0)
                break;
            p.started = true;
            p.sent = frag;
            sent_any = true;
            continue;
        } else {
            const size_t n = std::min(frag + sizeof(uint64_t), p.data.size() - p.sent);
            const std::span<const std::byte> next[1] = {std::span(p.data).subspan(p.sent, n)};
            if (sc::try_send_message(*s, kFrag, p.am_id, next) != 0)
                break;
            p.sent += n;
            sent_any = true;
            if (p.sent < p.data.size())
                continue;
        }
        sent_any = true;
        ep.pending_bytes -= p.data.size();
        ep.pending.pop_front();
    }
    if (sent_any && s->tx.consumer_sleeps())
        sc::notify(*s);
}

void ScifModule::flush_acks(ScifEndpoint &ep)
{
    if (ep.acks_owed.empty())
        return;
    sc::Endpoint *s = sc::lookup(ep.epd);
    if (!s)
        return;
    size_t n = 0;
    for (; n < ep.acks_owed.size(); ++n) {
        const std::span<const std::byte> body[1] = {bytes(&ep.acks_owed[n], sizeof(uint64_t))};
        if (sc::try_send_message(*s, kRdvDone, 0, body) != 0)
            break;
    }
    ep.acks_owed.erase(ep.acks_owed.begin(), ep.acks_owed.begin() + static_cast<long>(n));
    if (n > 0 && s->tx.consumer_sleeps())
        sc::notify(*s);
}

void ScifModule::read_rdv(ScifEndpoint &ep, uint8_t am_id, std::span<const std::byte> payload)
{
    sc::Endpoint *s = sc::lookup(ep.epd);
    RdvDesc d;
    if (payload.size() != sizeof d)
        return;   // a broken peer: dropped
    std::memcpy(&d, payload.data(), sizeof d);
    // Answered whatever happens, so the sender never holds the copy forever.
    ep.acks_owed.push_back(d.cookie);
    if (d.len > config_.max_send)
        return;
    std::vector<std::byte> buf(d.len);
    if (sc::copy_with_peer(*s, true, buf.data(), d.addr, d.len) != 0)
        return;   // gone (the endpoint fails next) or a bad address (dropped)
    if (c_.upcalls.recv)
        c_.upcalls.recv(c_.upcalls.ctx, &ep.c, am_id, buf.data(), buf.size());
}

void ScifModule::rdv_done(ScifEndpoint &ep, std::span<const std::byte> payload)
{
    uint64_t cookie;
    if (payload.size() != sizeof cookie)
        return;
    std::memcpy(&cookie, payload.data(), sizeof cookie);
    for (auto it = ep.inflight.begin(); it != ep.inflight.end(); ++it)
        if (it->first == cookie) {
            ep.pending_bytes -= it->second.size();
            ep.inflight.erase(it);
            return;
        }
}

int ScifModule::deliver(ScifEndpoint &ep, int budget)
{
    sc::Endpoint *s = sc::lookup(ep.epd);
    // Not in the round that announced CONNECTED (see connected_round).
    if (!s || ep.phase == EpPhase::dead || ep.connected_round == rounds_)
        return 0;
    if (ep.phase == EpPhase::connected) [[likely]]
        return deliver_connected(ep, *s, budget);
    return deliver_handshake(ep, *s, budget);
}

// The message path: whole messages go straight to the recv upcall from the
// ring; the cells of the batch are freed as it goes and their credit
// returned to the sender once, at the end.
int ScifModule::deliver_connected(ScifEndpoint &ep, sc::Endpoint &s, int budget)
{
    auto *const recv = c_.upcalls.recv;
    void *const ctx = c_.upcalls.ctx;
    int events = 0;
    sc::Chunk c;
    // An upcall may disconnect the endpoint (closing; it stays connected
    // until progress() ends it) but never ends it, so s stays valid.
    bool from_duplex = false;
    int ring_events = 0;
    while (events < budget && sc::peek_message(s, &c, &from_duplex)) {
        if (c.type == static_cast<sc::ChunkType>(kAm)) [[likely]] {
            if (recv)
                recv(ctx, &ep.c, c.tag, c.payload.data(), c.payload.size());
        } else if (c.type != sc::ChunkType::pad) {
            deliver_other(ep, c);
        }
        if (from_duplex) {
            s.duplex.consume();
        } else {
            s.rx.consume();
            ++ring_events;
        }
        ++events;
    }
    if (ring_events > 0)
        s.rx.publish_head();
    return events;
}

void ScifModule::deliver_other(ScifEndpoint &ep, const sc::Chunk &c)
{
    switch (static_cast<uint8_t>(c.type)) {
    case kRdv:
        read_rdv(ep, c.tag, c.payload);
        break;
    case kRdvDone:
        rdv_done(ep, c.payload);
        break;
    case kFragFirst: {
        uint64_t total = 0;
        if (c.payload.size() >= sizeof total)
            std::memcpy(&total, c.payload.data(), sizeof total);
        if (c.payload.size() < sizeof total || total > config_.max_send ||
            c.payload.size() - sizeof total > total) {
            ep.reasm_active = false;   // a broken peer: drop the message
            break;
        }
        if (ep.landing.active)   // a new message before the last one ended: a broken peer
            end_landing(ep, WEFT_ERR_BAD_VALUE);
        const auto first = c.payload.subspan(sizeof total);
        if (first.size() == total) {   // the whole message in its first fragment
            if (c_.upcalls.recv)
                c_.upcalls.recv(c_.upcalls.ctx, &ep.c, c.tag, first.data(), first.size());
            break;
        }
        if (start_landing(ep, c.tag, first, total))
            break;
        ep.reasm.assign(c.payload.begin() + sizeof total, c.payload.end());
        ep.reasm.reserve(total);
        ep.reasm_total = total;
        ep.reasm_am = c.tag;
        ep.reasm_active = true;
        break;
    }
    case kFrag:
        if (ep.landing.active) {
            land(ep, c.payload);
            break;
        }
        if (!ep.reasm_active || ep.reasm.size() + c.payload.size() > ep.reasm_total)
            break;
        ep.reasm.insert(ep.reasm.end(), c.payload.begin(), c.payload.end());
        if (ep.reasm.size() == ep.reasm_total) {
            ep.reasm_active = false;
            if (c_.upcalls.recv)
                c_.upcalls.recv(c_.upcalls.ctx, &ep.c, ep.reasm_am, ep.reasm.data(), ep.reasm.size());
            std::vector<std::byte>().swap(ep.reasm);
        }
        break;
    default:
        break;   // unknown types from a newer peer (or a hello again) are skipped
    }
}

// Asks the runtime where a fragmented message should land (its first
// fragment's data in head); true when it took it: the fragments then go
// straight into its buffers, with no reassembly copy.
bool ScifModule::start_landing(ScifEndpoint &ep, uint8_t am_id, std::span<const std::byte> head, size_t total)
{
    const weft_btl_upcalls_t &up = c_.upcalls;
    if (!(WEFT_HAS_MEMBER(&up, weft_btl_upcalls_t, placed) && up.place && up.placed) || head.size() >= total)
        return false;
    weft_btl_placement_t p{};
    p.size = sizeof p;
    if (!up.place(up.ctx, &ep.c, am_id, head.data(), head.size(), total, &p))
        return false;
    if (!weft::btl::placement_fits(p, head.size(), total)) {
        // The runtime broke the placement rules: it gets the message back.
        up.placed(up.ctx, &ep.c, am_id, p.token, WEFT_ERR_BAD_VALUE);
        return false;
    }
    ep.landing = ScifEndpoint::Landing{p, 0, 0, total - p.skip, am_id, true};
    land(ep, head.subspan(p.skip));
    return true;
}

// The next bytes of the message landing on ep, in order.
void ScifModule::land(ScifEndpoint &ep, std::span<const std::byte> data)
{
    auto &l = ep.landing;
    if (data.size() > l.left) {
        // More than the first fragment announced: a broken peer.
        end_landing(ep, WEFT_ERR_BAD_VALUE);
        return;
    }
    l.left -= data.size();
    while (!data.empty()) {
        const iovec &to = l.place.iov[l.iov];
        const size_t n = std::min(to.iov_len - l.at, data.size());
        if (n > 0)
            weft::cutil::copy_bytes(static_cast<std::byte *>(to.iov_base) + l.at, data.data(), n);
        data = data.subspan(n);
        l.at += n;
        if (l.at == to.iov_len) {
            ++l.iov;
            l.at = 0;
        }
    }
    if (l.left == 0)
        end_landing(ep, WEFT_SUCCESS);
}

void ScifModule::end_landing(ScifEndpoint &ep, int status)
{
    ep.landing.active = false;
    const weft_btl_upcalls_t &up = c_.upcalls;
    up.placed(up.ctx, &ep.c, ep.landing.am_id, ep.landing.place.token, status);
}

// Before the connection is up: the hello (acceptor) or its answer
// (connector), then, once connected, the messages that followed it.
int ScifModule::deliver_handshake(ScifEndpoint &ep, sc::Endpoint &s, int budget)
{
    int events = 0;
    sc::Chunk c;
    while (events < budget && s.rx.peek(&c)) {
        const auto type = static_cast<uint8_t>(c.type);
        if (ep.phase == EpPhase::awaiting_hello) {
            // Copied out and freed first: handle_hello may hand the
            // connection to another endpoint or close it.
            // One byte more than the largest hello, so a longer one is refused.
            std::byte hello[sizeof(HelloHead) + kMaxJobId + 1];
            const size_t len = type == kHello ? std::min(c.payload.size(), sizeof hello) : 0;
            if (len)
                std::memcpy(hello, c.payload.data(), len);
            ep.peer_reads_us = (c.tag & kHelloReadsPeer) != 0;
            s.rx.pop();
            ++events;
            if (type != kHello) {
                refuse_endpoint(ep, "its first message is not a hello");
                return events;
            }
            if (!handle_hello(ep, hello, len)) {
                if (ep.phase != EpPhase::dead) {
                    ep.reported = true;   // never announced: close quietly
                    finish(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, "");
                }
                return events;
            }
        } else if (ep.phase == EpPhase::awaiting_reply) {
            const uint8_t answer = type == kHelloReply ? c.tag : uint8_t{kRefuse};
            // The flags byte after the rank; a shorter reply says nothing.
            ep.peer_reads_us = type == kHelloReply && c.payload.size() > sizeof(uint32_t) &&
                               (static_cast<uint8_t>(c.payload[sizeof(uint32_t)]) & kHelloReadsPeer) != 0;
            s.rx.pop();
            ++events;
            handle_reply(ep, answer);
        } else {
            return events;   // connecting or waiting for the peer: nothing is read
        }
        if (ep.phase != EpPhase::connected)
            return events;   // adopted by the endpoint of our own connect, or closed
        if (ep.connected_round == rounds_)
            return events;   // the runtime learns of the connection first
        return events + deliver_connected(ep, s, budget - events);
    }
    return events;
}

int ScifModule::disconnect(ScifEndpoint &ep)
{
    if (ep.phase == EpPhase::dead && ep.c.state == WEFT_BTL_EP_FAILED && !ep.close_requested) {
        ep.close_requested = true;
        return WEFT_SUCCESS;
    }
    if (ep.closing || ep.phase == EpPhase::dead)
        return WEFT_ERR_BAD_PARAM;
    // CLOSED comes from progress() once everything accepted is in the ring
    // (the peer reads the ring before it reports CLOSED itself).
    ep.closing = true;
    return WEFT_SUCCESS;
}

int ScifModule::mem_register(void *addr, size_t len, weft_btl_reg_t *reg)
{
    if (!reg || (!addr && len))
        return WEFT_ERR_BAD_PARAM;
    Rkey k{kRkeyMagic, pid_, reinterpret_cast<uintptr_t>(addr), len};
    reg->addr = addr;
    reg->length = len;
    std::memcpy(reg->rkey, &k, sizeof k);
    reg->rkey_len = sizeof k;
    reg->module_ctx = nullptr;
    ++counters().registrations;
    return WEFT_SUCCESS;
}

int ScifModule::mem_deregister(weft_btl_reg_t *reg) { return reg ? WEFT_SUCCESS : WEFT_ERR_BAD_PARAM; }

int ScifModule::rdma(ScifEndpoint &ep, bool is_put, void *local_ptr, size_t len,
                     uint64_t remote_addr, const void *rkey, size_t rkey_len,
                     weft_btl_rdma_cb_t cb, void *cb_ctx)
{
    auto *local = static_cast<std::byte *>(local_ptr);
    if (ep.closing || ep.phase == EpPhase::dead)
        return WEFT_ERR_UNREACHABLE;
    if (ep.phase != EpPhase::connected)
        return WEFT_ERR_AGAIN;
    if (!(c_.caps.flags & WEFT_BTL_FLAG_PUT))
        return WEFT_ERR_NOT_SUPPORTED;
    sc::Endpoint *s = sc::lookup(ep.epd);
    Rkey k;
    if (!parse_rkey(rkey, rkey_len, &k) || k.pid != static_cast<uint32_t>(s->peer_pid) ||
        remote_addr < k.base || remote_addr + len < remote_addr ||
        remote_addr + len > k.base + k.length || (!local && len))
        return WEFT_ERR_BAD_PARAM;
    if (!s->single_copy)
        return WEFT_ERR_NOT_SUPPORTED;   // the kernel refused process_vm_* toward this peer
    int rc = len ? sc::copy_with_peer(*s, !is_put, local, remote_addr, len) : 0;
    const int status = rc == 0 ? WEFT_SUCCESS : rc == -ECONNRESET ? WEFT_ERR_UNREACHABLE : WEFT_ERR_IO;
    if (status == WEFT_ERR_UNREACHABLE)
        return status;
    completions_.push_back({&ep.c, cb, cb_ctx, status});
    return WEFT_SUCCESS;
}

} // namespace weft::btl_scif
