// SPDX-License-Identifier: BSD-3-Clause
// btl/tcp's data path: framing sends onto an endpoint's links, disconnect,
// failure reports, and reading links into the runtime's upcalls.
#include "btl_tcp_module.hpp"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <type_traits>

namespace weft::btl_tcp {

// ---- data path -------------------------------------------------------------------

int TcpModule::link_send(TcpEndpoint &ep, LinkSlot &slot, const FrameHeader &h, const struct iovec *iov,
                         int iovcnt)
{
    Link &link = *slot.link;
    const bool was_idle = !link.has_queue();
    if (int err = link.send(h, iov, iovcnt); err != 0)
        return send_failed(ep, err);
    if (was_idle && link.has_queue())
        watch_link(slot, true);
    return WEFT_SUCCESS;
}

int TcpModule::send_failed(TcpEndpoint &ep, int err)
{
    // Reported from progress(): no upcall from inside send().
    fail(ep, WEFT_ERR_IO, "sending to " + where(ep) + " failed: " + std::strerror(err) +
                              " (the peer process may have died)");
    return WEFT_ERR_UNREACHABLE;
}

int TcpModule::frame_send(TcpEndpoint &ep, const FrameHeader &h, const struct iovec *iov, int iovcnt,
                          bool unordered)
{
    if (ep.user_closed || ep.phase == EpPhase::closing || ep.phase == EpPhase::gone)
        return WEFT_ERR_UNREACHABLE;
    if (ep.phase != EpPhase::connected) {
        if (ep.early.size() >= config_.max_queued)
            return again();
        std::vector<std::byte> bytes(h.len);
        size_t at = 0;
        for (int i = 0; i < iovcnt; ++i)
            if (iov[i].iov_len > 0) {
                std::memcpy(bytes.data() + at, iov[i].iov_base, iov[i].iov_len);
                at += iov[i].iov_len;
            }
        ep.early.emplace_back(h, std::move(bytes));
        return WEFT_SUCCESS;
    }
    if (!unordered) {
        if (ep.primary().has_queue() && ep.primary().queued_frames() >= config_.max_queued)
            return again();
        return link_send(ep, *ep.slots[0], h, iov, iovcnt);
    }
    // An unordered frame takes the next link with nothing queued; when all
    // are busy the runtime retries after progress instead of a copy here.
    const auto n = static_cast<unsigned>(ep.slots.size());
    for (unsigned k = 0; k < n; ++k) {
        LinkSlot &slot = *ep.slots[(ep.next + k) % n];
        if (!slot.link->has_queue()) {
            ep.next = (slot.index + 1) % n;
            return link_send(ep, slot, h, iov, iovcnt);
        }
    }
    return again();
}

int TcpModule::sendx(TcpEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt, uint32_t flags)
{
    if (iovcnt < 0 || (iovcnt > 0 && !iov) || (flags & ~uint32_t{WEFT_BTL_SEND_UNORDERED}) != 0)
        return WEFT_ERR_BAD_PARAM;
    size_t total = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (!iov[i].iov_base && iov[i].iov_len > 0)
            return WEFT_ERR_BAD_PARAM;
        if (iov[i].iov_len > config_.max_send - total)
            return WEFT_ERR_BAD_PARAM;
        total += iov[i].iov_len;
    }
    FrameHeader h;
    h.len = h.total = static_cast<uint32_t>(total);
    h.am_id = am_id;
    return frame_send(ep, h, iov, iovcnt, (flags & WEFT_BTL_SEND_UNORDERED) != 0);
}

int TcpModule::sendi(TcpEndpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
                     size_t payload_len)
{
    if (hdr_len + payload_len > Link::kSmallMax || (hdr_len && !hdr) || (payload_len && !payload))
        return WEFT_ERR_BAD_PARAM;
    // Small enough for Link::send's flat buffer: one send() when nothing is queued.
    const struct iovec iov[2] = {{const_cast<void *>(hdr), hdr_len}, {const_cast<void *>(payload), payload_len}};
    FrameHeader h;
    h.len = h.total = static_cast<uint32_t>(hdr_len + payload_len);
    h.am_id = am_id;
    return frame_send(ep, h, iov, 2);
}

int TcpModule::disconnect(TcpEndpoint &ep)
{
    if (ep.user_closed)
        return WEFT_ERR_BAD_PARAM;
    if (ep.phase == EpPhase::connected) {
        // On every link, after whatever is queued there: the peer's CLOSED
        // comes after every frame, whichever link it took. Never refused
        // for room: disconnect() must not fail with AGAIN.
        FrameHeader h;
        h.kind = kFrameClose;
        for (auto &slot : ep.slots)
            if (link_send(ep, *slot, h, nullptr, 0) != WEFT_SUCCESS)
                break;   // reported as FAILED instead
    }
    ep.user_closed = true;
    close_pending_ = true;
    if (ep.phase == EpPhase::connecting) {
        ep.phase = EpPhase::closing;
        ep.early.clear();
        ep.ended = "disconnected before the connection was up";
        report(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, ep.ended);
    }
    return WEFT_SUCCESS;
}

void TcpModule::report(TcpEndpoint &ep, weft_btl_ep_state_t state, int status, const std::string &why)
{
    count_state(state, why.c_str());
    reports_.push_back({&ep, state, status, why});
}

void TcpModule::abandon_placements(TcpEndpoint &ep)
{
    for (auto &slot : ep.slots)
        if (slot->link)
            if (auto u = slot->link->abandon_placement())
                ep.unlanded.push_back(*u);
}

void TcpModule::fail(TcpEndpoint &ep, int status, const std::string &why)
{
    if (ep.phase == EpPhase::closing || ep.phase == EpPhase::gone)
        return;
    // The links stay until the endpoint is reaped: this may run under a
    // handler called from one of them.
    ep.phase = EpPhase::closing;
    ep.early.clear();
    abandon_placements(ep);
    ep.ended = "failed: " + why;
    host_->log(&c_.component->base, WEFT_LOG_ERROR, "%s: %s; closing the connection", c_.name, why.c_str());
    report(ep, WEFT_BTL_EP_FAILED, status, why);
}

// After reading or writing: a locally closed endpoint whose close frames
// are out is done; its sockets linger until the peer closes its ends.
void TcpModule::after_io(TcpEndpoint &ep)
{
    if (ep.phase != EpPhase::connected || !ep.user_closed)
        return;
    for (auto &slot : ep.slots)
        if (slot->link->has_queue())
            return;
    ep.phase = EpPhase::closing;
    abandon_placements(ep);
    debug([&] {
        return "disconnected from " + where(ep) + ": close frames sent, the " + std::to_string(ep.slots.size()) +
               " links are shut down for writing and wait for the peer to close its ends";
    });
    for (auto &slot : ep.slots) {
        unwatch_link(*slot);
        UniqueFd fd = slot->link->release();
        slot->link.reset();
        ::shutdown(fd.get(), SHUT_WR);
        lingering_.push_back({std::move(fd), Clock::now() + kLinger,
                              where(ep) + ", link " + std::to_string(slot->index)});
    }
    ep.ended = "disconnected";
    report(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, "");
}

void EndpointSink::message(uint8_t am_id, std::span<const std::byte> data) { module_.deliver(ep_, am_id, data); }

bool EndpointSink::stop() const { return ep_.user_closed || ep_.phase != EpPhase::connected; }

bool EndpointSink::place(uint8_t am_id, std::span<const std::byte> head, size_t len, weft_btl_placement_t *p)
{
    const weft_btl_upcalls_t &up = module_.upcalls();
    if (!WEFT_HAS_MEMBER(&up, weft_btl_upcalls_t, placed) || !up.place || !up.placed || ep_.user_closed)
        return false;
    return up.place(up.ctx, &ep_.c, am_id, head.data(), head.size(), len, p) == 1;
}

void EndpointSink::placed(uint8_t am_id, uint64_t token, int status)
{
    const weft_btl_upcalls_t &up = module_.upcalls();
    up.placed(up.ctx, &ep_.c, am_id, token, status);   // only after place() said yes
}

void TcpModule::on_link(LinkSlot &slot, uint32_t events)
{
    TcpEndpoint &ep = *slot.ep;
    if (ep.phase != EpPhase::connected) {
        // Not read before every link is up; a link that breaks meanwhile fails the endpoint.
        if (ep.phase == EpPhase::connecting && (events & (EPOLLHUP | EPOLLERR)))
            fail(ep, WEFT_ERR_UNREACHABLE, "connection to " + where(ep) + " lost while its links were set up");
        return;
    }
    if (slot.closed)
        return;
    if (events & EPOLLOUT) {
        bool drained = false;
        if (int err = slot.link->flush(&drained); err != 0)
            return fail(ep, WEFT_ERR_IO, "sending to " + where(ep) + " failed: " + std::strerror(err) +
                                             " (the peer process may have died)");
        if (drained)
            watch_link(slot, false);
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        return read_link(slot);
    after_io(ep);
}

void TcpModule::read_link(LinkSlot &slot)
{
    TcpEndpoint &ep = *slot.ep;
    if (!ep.sink)
        ep.sink = std::make_unique<EndpointSink>(*this, ep);
    std::string error;
    const int rc = slot.link->receive(*ep.sink, &error);
    if (rc != 0 && rc != Link::kStopped && ep.phase == EpPhase::connected)
        return link_ended(slot, rc, error);
    if (ep.user_closed)
        after_io(ep);
}

void TcpModule::link_ended(LinkSlot &slot, int rc, const std::string &error)
{
    TcpEndpoint &ep = *slot.ep;
    if (rc == Link::kClosed) {
        // The peer's orderly close of this link: everything it sent
        // before is delivered. The endpoint is closed once every link is.
        slot.closed = true;
        unwatch_link(slot);
        debug([&] { return where(ep) + " closed link " + std::to_string(slot.index); });
        if (++ep.closed < ep.slots.size())
            return;
        ep.phase = EpPhase::closing;
        ep.ended = "the peer disconnected (a close frame on every link)";
        report(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, where(ep) + " disconnected");
    } else if (rc == Link::kBadFrame) {
        fail(ep, WEFT_ERR_IO, "invalid frame from " + where(ep) + ": " + error + "; connection dropped");
    } else if (rc == Link::kEof) {
        fail(ep, WEFT_ERR_UNREACHABLE,
             "connection to " + where(ep) + " ended without a close (the peer process died?)");
    } else {
        fail(ep, WEFT_ERR_UNREACHABLE, "connection to " + where(ep) + " lost: " + std::strerror(rc) +
                                           " (the peer process died or its host is unreachable)");
    }
}

} // namespace weft::btl_tcp
