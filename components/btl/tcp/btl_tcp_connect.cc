// SPDX-License-Identifier: BSD-3-Clause
// btl/tcp's connection set-up: outgoing connects, the listener, the hello
// handshake (secret, job, rank) and the simultaneous-connect tie-break, and
// adopting a connected socket as an endpoint's link.
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

namespace {

std::string peer_text(const sockaddr_storage &ss)
{
    char text[INET6_ADDRSTRLEN] = "?";
    uint8_t bytes[16];
    const auto *sa = reinterpret_cast<const sockaddr *>(&ss);
    if (address_bytes(sa, bytes) > 0)
        inet_ntop(sa->sa_family, bytes, text, sizeof text);
    uint16_t port = sa->sa_family == AF_INET ? ntohs(reinterpret_cast<const sockaddr_in *>(sa)->sin_port)
                                             : ntohs(reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_port);
    return std::string(text) + ":" + std::to_string(port);
}

} // namespace

// ---- connecting ----------------------------------------------------------------

void TcpModule::tune(int fd) const
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &config_.keepalive_time, sizeof(int));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &config_.keepalive_intvl, sizeof(int));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &config_.keepalive_probes, sizeof(int));
    // A fixed size turns the kernel's autotuning off: worth it only when
    // the kernel grants the whole size (else the socket would end smaller).
    auto fixed = [fd](int opt, size_t want, size_t kernel_max) {
        if (want > 0 && want <= kernel_max) {
            int v = static_cast<int>(std::min<size_t>(want, INT32_MAX));
            setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
        }
    };
    fixed(SO_SNDBUF, config_.sndbuf, wmem_max_);
    fixed(SO_RCVBUF, config_.rcvbuf, rmem_max_);
}

TcpEndpoint *TcpModule::find_peer(uint32_t rank)
{
    for (auto &ep : endpoints_)
        if (ep->c.peer_rank == rank && ep->phase != EpPhase::gone && !ep->user_closed)
            return ep.get();
    return nullptr;
}

TcpEndpoint &TcpModule::new_endpoint(uint32_t rank)
{
    auto ep = std::make_unique<TcpEndpoint>();
    ep->c.size = sizeof ep->c;
    ep->c.module = &c_;
    ep->c.peer_rank = rank;
    ep->c.state = WEFT_BTL_EP_CONNECTING;
    ep->deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(config_.handshake_timeout * 1000));
    for (unsigned i = 0; i < config_.links; ++i) {
        auto slot = std::make_unique<LinkSlot>();
        slot->ep = ep.get();
        slot->index = i;
        ep->slots.push_back(std::move(slot));
    }
    endpoints_.push_back(std::move(ep));
    return *endpoints_.back();
}

int TcpModule::connect(const weft_btl_peer_t *peer, weft_btl_endpoint_t **out)
{
    *out = nullptr;
    char why[WEFT_REASON_MAX];
    if (!peer || !reachable(peer, why, sizeof why)) {
        if (peer && host_->log_enabled(&c_.component->base, WEFT_LOG_DEBUG))
            host_->log(&c_.component->base, WEFT_LOG_DEBUG, "start_connect refused: %s", why);
        return peer ? WEFT_ERR_UNREACHABLE : WEFT_ERR_BAD_PARAM;
    }
    // One endpoint per peer and module: the peer may have connected first.
    if (TcpEndpoint *existing = find_peer(peer->rank)) {
        *out = &existing->c;
        return WEFT_SUCCESS;
    }
    Card card;
    decode_card(std::span(static_cast<const std::byte *>(peer->card), peer->card_len), &card);
    std::string reason;
    const CardEntry *target = match(peer, card, &reason);
    socklen_t len;
    sockaddr_storage ss = to_sockaddr(*target, &len);

    TcpEndpoint &ep = new_endpoint(peer->rank);
    ep.host = peer->hostname ? peer->hostname : "?";
    ep.addr = peer_text(ss);
    *out = &ep.c;

    Hello hello;
    hello.kind = HelloKind::hello;
    hello.rank = my_rank();
    hello.links = config_.links;
    std::memcpy(hello.secret, card.secret, kSecretBytes);
    std::string job = job_id();
    std::memcpy(hello.job_id, job.data(), job.size());
    // Every link connects by itself; the endpoint is up when all are.
    for (unsigned i = 0; i < config_.links; ++i) {
        auto hs = std::make_unique<Handshake>();
        hs->outgoing = true;
        hs->ep = &ep;
        hs->link = i;
        hs->from = ep.addr;
        hs->deadline = ep.deadline;
        hello.link = i;
        encode_hello(hello, hs->buf);
        hs->fd = UniqueFd(::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        const int rc = hs->fd ? ::connect(hs->fd.get(), reinterpret_cast<sockaddr *>(&ss), len) : -1;
        if (rc != 0 && errno != EINPROGRESS) {
            // Reported from progress(), like every state change.
            fail(ep, WEFT_ERR_UNREACHABLE, "connect to " + where(ep) + " failed: " + std::strerror(errno));
            return WEFT_SUCCESS;
        }
        tune(hs->fd.get());
        hs->connected = rc == 0;
        ep.slots[i]->outgoing = true;
        watch(hs->fd.get(), reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(hs.get()) | kTagHandshake),
              EPOLLIN | EPOLLOUT, false);
        handshakes_.push_back(std::move(hs));
    }
    return WEFT_SUCCESS;
}

void TcpModule::on_listener()
{
    for (int i = 0; i < 16; ++i) {
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr *>(&ss), &len,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        auto hs = std::make_unique<Handshake>();
        hs->fd = UniqueFd(fd);
        hs->from = peer_text(ss);
        hs->deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(config_.handshake_timeout * 1000));
        tune(fd);
        watch(fd, reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(hs.get()) | kTagHandshake), EPOLLIN, false);
        handshakes_.push_back(std::move(hs));
    }
}

void TcpModule::refuse(Handshake &hs, const std::string &why)
{
    ++refused_;
    hs.dead = true;
    hs.fd.reset();
    const auto *self = &c_.component->base;
    if (!warned_refused_) {
        warned_refused_ = true;
        host_->log(self, WEFT_LOG_WARN,
                   "%s refused a connection from %s: %s (further refusals are logged at debug level)",
                   c_.name, hs.from.c_str(), why.c_str());
    } else if (host_->log_enabled(self, WEFT_LOG_DEBUG)) {
        host_->log(self, WEFT_LOG_DEBUG, "%s refused a connection from %s: %s", c_.name, hs.from.c_str(),
                   why.c_str());
    }
    if (host_->log_enabled(self, WEFT_LOG_DEBUG))
        host_->log(self, WEFT_LOG_DEBUG, "%s refused connections: %lu", c_.name, refused_);
}

void TcpModule::watch_link(LinkSlot &slot, bool out)
{
    // A link is read only once the whole endpoint is up (error and hang-up
    // events come regardless), so nothing reaches the runtime before CONNECTED.
    const uint32_t events = slot.ep->phase == EpPhase::connected ? EPOLLIN | (out ? EPOLLOUT : 0u) : 0u;
    watch(slot.link->fd(), reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(&slot) | kTagEndpoint), events,
          slot.watched);
    set_watched(slot, true);
}

// The one place that keeps watched_first_links_ in step with the slots.
void TcpModule::set_watched(LinkSlot &slot, bool watched)
{
    if (slot.watched == watched)
        return;
    slot.watched = watched;
    if (slot.index == 0)
        watched ? ++watched_first_links_ : --watched_first_links_;
}

void TcpModule::unwatch_link(LinkSlot &slot)
{
    if (!slot.watched)
        return;
    epoll_ctl(epfd_.get(), EPOLL_CTL_DEL, slot.link->fd(), nullptr);
    set_watched(slot, false);
}

void TcpModule::watch_all_links()
{
    for (auto &ep : endpoints_)
        if (ep->phase == EpPhase::connected)
            for (auto &slot : ep->slots)
                if (slot->link && !slot->closed && !slot->watched)
                    watch_link(*slot, slot->link->has_queue());
}

void TcpModule::unwatch_first_links()
{
    for (auto &ep : endpoints_)
        if (ep->slots[0]->link)
            unwatch_link(*ep->slots[0]);
}

void TcpModule::adopt(TcpEndpoint &ep, unsigned link, UniqueFd fd)
{
    LinkSlot &slot = *ep.slots[link];
    slot.link = std::make_unique<Link>(std::move(fd), config_.max_send);
    // The descriptor is in the epoll set already, as the handshake's.
    set_watched(slot, true);
    watch_link(slot, false);
    if (++ep.up < ep.slots.size())
        return;
    ep.phase = EpPhase::connected;
    for (auto &sl : ep.slots)
        watch_link(*sl, false);
    // What was sent while connecting goes first, in order.
    for (auto &[h, bytes] : ep.early) {
        iovec iov{bytes.data(), bytes.size()};
        if (link_send(ep, *ep.slots[0], h, &iov, 1) != WEFT_SUCCESS)
            return;
    }
    ep.early.clear();
    report(ep, WEFT_BTL_EP_CONNECTED, WEFT_SUCCESS, "");
    after_io(ep);
}

void TcpModule::incoming_hello(Handshake &hs)
{
    Hello h;
    if (std::string bad = decode_hello(std::span(hs.buf, kHelloBytes), &h); !bad.empty())
        return refuse(hs, bad);
    if (h.kind != HelloKind::hello)
        return refuse(hs, "handshake does not start with a hello");
    if (std::memcmp(h.secret, identity_->secret, kSecretBytes) != 0)
        return refuse(hs, "wrong secret (not a process of this job, or a stale card)");
    if (std::string(h.job_id) != job_id())
        return refuse(hs, "job id '" + std::string(h.job_id) + "' is not this job's");
    if (c_.process && WEFT_HAS_MEMBER(c_.process, weft_btl_process_t, job_size) &&
        c_.process->job_size > 0 && h.rank >= c_.process->job_size)
        return refuse(hs, "rank " + std::to_string(h.rank) + " is outside the job");

    Hello reply;
    reply.rank = my_rank();
    reply.links = config_.links;
    std::byte out[kHelloBytes];
    if (h.links != config_.links) {
        // Say why to the connector too (the reply carries our count).
        reply.kind = HelloKind::refuse;
        encode_hello(reply, out);
        (void)::send(hs.fd.get(), out, kHelloBytes, MSG_NOSIGNAL | MSG_DONTWAIT);
        return refuse(hs, "rank " + std::to_string(h.rank) + " opens " + std::to_string(h.links) +
                              " links per peer, this process " + std::to_string(config_.links) +
                              "; set btl_tcp_links to the same value for every process");
    }
    TcpEndpoint *ep = find_peer(h.rank);
    if (ep) {
        const LinkSlot &slot = *ep->slots[h.link];
        // The lower rank's connection wins; one already up wins too.
        const bool ours_wins = slot.link || (slot.outgoing && my_rank() < h.rank) ||
                               ep->phase != EpPhase::connecting;
        reply.kind = ours_wins ? HelloKind::duplicate : HelloKind::accept;
    } else {
        TcpEndpoint &owned = new_endpoint(h.rank);
        owned.host = "(rank " + std::to_string(h.rank) + "'s host)";
        owned.addr = hs.from;
        const weft_btl_upcalls_t &up = c_.upcalls;
        void *ctx = WEFT_HAS_MEMBER(&up, weft_btl_upcalls_t, accepted) && up.accepted
                        ? up.accepted(up.ctx, &owned.c)
                        : nullptr;
        if (!ctx) {
            reply.kind = HelloKind::refuse;
            owned.phase = EpPhase::gone;   // never reported: reaped unseen
        } else {
            owned.c.runtime_ctx = ctx;
            reply.kind = HelloKind::accept;
            ep = &owned;
        }
    }
    encode_hello(reply, out);
    // A fresh socket's send buffer always takes a handshake at once.
    ssize_t w = ::send(hs.fd.get(), out, kHelloBytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    const int send_errno = errno;
    const std::string rank_link = "rank " + std::to_string(h.rank) + "'s link " + std::to_string(h.link);
    if (w != static_cast<ssize_t>(kHelloBytes)) {
        const std::string why = "the handshake reply to " + rank_link + " failed: " +
                                (w < 0 ? std::strerror(send_errno) : "short send");
        if (reply.kind == HelloKind::accept)
            fail(*ep, WEFT_ERR_IO, why + " (" + where(*ep) + ")");
        return close_handshake(hs, why);
    }
    if (reply.kind == HelloKind::accept) {
        hs.dead = true;
        ep->addr = hs.from;
        adopt(*ep, h.link, std::move(hs.fd));
    } else if (reply.kind == HelloKind::duplicate) {
        close_handshake(hs, rank_link + " duplicates a connection already up or " +
                                "a simultaneous one of ours, which wins (the lower rank's does)");
    } else {
        close_handshake(hs, "refused " + rank_link + ": the runtime does not accept that rank");
    }
}

void TcpModule::outgoing_reply(Handshake &hs)
{
    TcpEndpoint &ep = *hs.ep;
    LinkSlot &slot = *ep.slots[hs.link];
    slot.outgoing = false;
    hs.dead = true;
    Hello h;
    std::string bad = decode_hello(std::span(hs.buf, kHelloBytes), &h);
    if (bad.empty() && h.rank != ep.c.peer_rank)
        bad = "answered as rank " + std::to_string(h.rank);
    if (!bad.empty()) {
        close_handshake(hs, "bad reply: " + bad);
        return fail(ep, WEFT_ERR_UNREACHABLE, "handshake with " + where(ep) + " failed: " + bad);
    }
    if (slot.link)
        return close_handshake(hs, "the link is up already, through the peer's own connection");
    if (ep.phase != EpPhase::connecting)
        return close_handshake(hs, "the endpoint is no longer connecting (it failed or was disconnected)");
    switch (h.kind) {
    case HelloKind::accept:
        adopt(ep, hs.link, std::move(hs.fd));
        break;
    case HelloKind::duplicate:
        // Both connected at once and the peer's connection wins: wait for it
        // (until the endpoint's deadline).
        close_handshake(hs, "the peer answered 'duplicate': its own connection for this link wins");
        break;
    default:
        close_handshake(hs, "the peer refused the connection");
        if (h.links != config_.links)
            return fail(ep, WEFT_ERR_UNREACHABLE,
                        where(ep) + " refused the connection: it uses btl_tcp_links=" + std::to_string(h.links) +
                            ", this process " + std::to_string(config_.links) +
                            "; set the same value for every process of the job");
        fail(ep, WEFT_ERR_UNREACHABLE, where(ep) + " refused the connection (its runtime does not know this rank)");
    }
}

void TcpModule::on_handshake(Handshake &hs, uint32_t events)
{
    if (hs.dead)
        return;
    const int fd = hs.fd.get();
    if (hs.outgoing && !hs.connected) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) {
            const std::string why = std::strerror(err ? err : ECONNREFUSED);
            close_handshake(hs, "connect failed: " + why);
            if (hs.ep->phase == EpPhase::connecting)
                fail(*hs.ep, WEFT_ERR_UNREACHABLE, "connect to " + where(*hs.ep) + " failed: " + why);
            return;
        }
        if (!(events & EPOLLOUT))
            return;
        hs.connected = true;
    }
    if (hs.outgoing && hs.sent < kHelloBytes) {
        ssize_t w = ::send(fd, hs.buf + hs.sent, kHelloBytes - hs.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0)
            hs.sent += static_cast<size_t>(w);
        if (hs.sent == kHelloBytes) {
            hs.have = 0;
            watch(fd, reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(&hs) | kTagHandshake), EPOLLIN, true);
        }
        return;
    }
    // Exactly one handshake's bytes: what follows belongs to the link.
    ssize_t r = ::recv(fd, hs.buf + hs.have, kHelloBytes - hs.have, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (r <= 0) {
        const std::string why = r == 0 ? "closed during the handshake" : std::strerror(errno);
        if (hs.outgoing) {
            close_handshake(hs, "reading the reply: " + why);
            if (hs.ep->phase == EpPhase::connecting)
                fail(*hs.ep, WEFT_ERR_UNREACHABLE, "handshake with " + where(*hs.ep) + " failed: " + why);
        } else {
            refuse(hs, "short handshake (" + std::to_string(hs.have) + " bytes): " + why);
        }
        return;
    }
    hs.have += static_cast<size_t>(r);
    if (hs.have < kHelloBytes)
        return;
    if (hs.outgoing)
        outgoing_reply(hs);
    else
        incoming_hello(hs);
}

} // namespace weft::btl_tcp
