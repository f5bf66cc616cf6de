// SPDX-License-Identifier: BSD-3-Clause
// btl/tcp's module: setup (listener, epoll set), reachability and card,
// progress (direct reads, epoll, reports, reaping). Connecting is
// btl_tcp_connect.cc, the data path btl_tcp_data.cc.
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

using weft::btl::write_reason;

namespace {

// Events per epoll_wait in one progress().
constexpr int kMaxEvents = 64;
// Direct reads (see progress()): a connection's first link (every ordered
// frame) is read on every pass, epoll (the listener, and the other links,
// which carry only large unordered frames) runs every kEpollEvery passes;
// with more endpoints than kDirectMaxEndpoints, epoll alone.
constexpr unsigned kEpollEvery = 4, kEpollEveryBusy = 64, kDirectMaxEndpoints = 8;
std::string entry_text(const CardEntry &e)
{
    socklen_t len;
    sockaddr_storage ss = to_sockaddr(e, &len);
    return describe(reinterpret_cast<const sockaddr *>(&ss), e.prefix);
}

// A numeric sysctl, or "no limit known" when it cannot be read.
size_t sysctl_size(const char *path)
{
    unsigned long long v = 0;
    std::FILE *f = std::fopen(path, "re");
    const bool ok = f && std::fscanf(f, "%llu", &v) == 1;
    if (f)
        std::fclose(f);
    return ok ? static_cast<size_t>(v) : SIZE_MAX;
}

} // namespace

sockaddr_storage to_sockaddr(const CardEntry &e, socklen_t *len)
{
    sockaddr_storage ss{};
    if (e.family == 4) {
        auto *sin = reinterpret_cast<sockaddr_in *>(&ss);
        sin->sin_family = AF_INET;
        sin->sin_port = htons(e.port);
        std::memcpy(&sin->sin_addr, e.addr, 4);
        *len = sizeof *sin;
    } else {
        auto *sin6 = reinterpret_cast<sockaddr_in6 *>(&ss);
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(e.port);
        std::memcpy(&sin6->sin6_addr, e.addr, 16);
        *len = sizeof *sin6;
    }
    return ss;
}

TcpModule::TcpModule(const weft_host_t *host, const weft_btl_component_t *component,
                     const TcpConfig &config, const Chosen &iface, Identity *identity)
    : ModuleBase(component), host_(host), config_(config), iface_(iface), identity_(identity)
{
    // Loopback: a kernel copy each way; a NIC: what a 10G-class link gives.
    c_.caps.latency_us = iface.loopback ? 8.0 : 20.0;
    c_.caps.bandwidth_mbs = iface.loopback ? 4000.0 : 1250.0;
    c_.caps.eager_limit = std::min(config.eager_limit, config.max_send);
    c_.caps.max_send = config.max_send;
    c_.caps.inline_max = Link::kSmallMax;
    c_.caps.exclusivity = WEFT_BTL_EXCLUSIVITY_LOW;
    c_.caps.flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_INLINE | WEFT_BTL_FLAG_FD | WEFT_BTL_FLAG_UNORDERED;
    // Among equals the NIC nearest to the binding wins (WEFT_DISTANCE_*).
    c_.caps.priority = config.priority + (WEFT_DISTANCE_UNKNOWN - iface.distance);
    std::snprintf(c_.name, sizeof c_.name, "tcp/%s", iface.addr.name.c_str());
    c_.module_ctx = this;
    rmem_max_ = sysctl_size("/proc/sys/net/core/rmem_max");
    wmem_max_ = sysctl_size("/proc/sys/net/core/wmem_max");
}

TcpModule::~TcpModule()
{
    size_t links = 0, pending = 0;
    for (const auto &ep : endpoints_)
        for (const auto &slot : ep->slots)
            links += slot->link ? 1 : 0;
    for (const auto &hs : handshakes_)
        pending += hs->fd ? 1 : 0;
    if (links + pending + lingering_.size() > 0)
        debug([&] {
            return "finalized: closing " + std::to_string(links) + " links, " + std::to_string(pending) +
                   " handshakes and " + std::to_string(lingering_.size()) + " closed links that lingered";
        });
}

void TcpModule::close_handshake(Handshake &hs, const std::string &why)
{
    hs.dead = true;
    if (!hs.fd)
        return;
    debug([&] {
        const std::string who = hs.outgoing ? where(*hs.ep) + ", link " + std::to_string(hs.link)
                                            : "a connection from " + hs.from;
        return "closing the handshake with " + who + ": " + why;
    });
    hs.fd.reset();
}

std::string TcpModule::open(uint16_t *port)
{
    const auto *sa = reinterpret_cast<const sockaddr *>(&iface_.addr.addr);
    epfd_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    if (!epfd_)
        return std::string("epoll_create1 failed: ") + std::strerror(errno);
    listener_ = UniqueFd(::socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!listener_)
        return std::string("socket failed: ") + std::strerror(errno);
    sockaddr_storage bind_to = iface_.addr.addr;
    socklen_t len = sa->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    reinterpret_cast<sockaddr_in *>(&bind_to)->sin_port = 0;   // same offset in sin6
    if (::bind(listener_.get(), reinterpret_cast<sockaddr *>(&bind_to), len) != 0 ||
        ::listen(listener_.get(), 128) != 0)
        return "cannot listen on " + describe(sa, iface_.addr.prefix) + ": " + std::strerror(errno);
    sockaddr_storage bound{};
    len = sizeof bound;
    getsockname(listener_.get(), reinterpret_cast<sockaddr *>(&bound), &len);
    *port = ntohs(reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
    watch(listener_.get(), reinterpret_cast<void *>(kTagListener), EPOLLIN, false);
    return "";
}

void TcpModule::watch(int fd, void *tag, uint32_t events, bool modify)
{
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = reinterpret_cast<uintptr_t>(tag);
    epoll_ctl(epfd_.get(), modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
}

uint32_t TcpModule::my_rank() const
{
    return c_.process && WEFT_HAS_MEMBER(c_.process, weft_btl_process_t, rank) ? c_.process->rank : 0;
}

std::string TcpModule::job_id() const
{
    if (c_.process && WEFT_HAS_MEMBER(c_.process, weft_btl_process_t, job_id) && c_.process->job_id)
        return std::string(c_.process->job_id).substr(0, kJobIdBytes - 1);
    return "";
}

std::string TcpModule::where(const TcpEndpoint &ep) const
{
    return "rank " + std::to_string(ep.c.peer_rank) + " on host " + ep.host + " (" + ep.addr +
           " via " + c_.name + ")";
}

// ---- reachability and card ----------------------------------------------------

const CardEntry *TcpModule::match(const weft_btl_peer_t *peer, const Card &card,
                                  std::string *why) const
{
    const int fam = iface_.addr.family == AF_INET ? 4 : 6;
    const bool peer_has_lo = std::any_of(card.entries.begin(), card.entries.end(),
                                         [](const CardEntry &e) { return e.loopback; });
    if (iface_.loopback) {
        if (peer->peer_class != WEFT_PEER_SAME_NODE && peer->peer_class != WEFT_PEER_SELF) {
            *why = std::string(c_.name) + ": loopback reaches only processes on this node";
            return nullptr;
        }
        for (const CardEntry &e : card.entries)
            if (e.loopback && e.family == fam)
                return &e;
        *why = std::string(c_.name) + ": the peer publishes no IPv" + std::to_string(fam) +
               " loopback address (its btl_tcp_if_include/if_exclude left lo out)";
        return nullptr;
    }
    if (peer->peer_class == WEFT_PEER_SAME_NODE && identity_->has_loopback && peer_has_lo) {
        *why = std::string(c_.name) + ": peers on this node are reached through loopback";
        return nullptr;
    }
    uint8_t mine[16];
    size_t n = address_bytes(reinterpret_cast<const sockaddr *>(&iface_.addr.addr), mine);
    std::string seen;
    for (const CardEntry &e : card.entries) {
        if (e.loopback)
            continue;
        seen += (seen.empty() ? "" : ", ") + entry_text(e);
        if (e.family == fam && same_subnet(mine, e.addr, n, iface_.addr.prefix))
            return &e;
    }
    *why = std::string(c_.name) + " (" +
           describe(reinterpret_cast<const sockaddr *>(&iface_.addr.addr), iface_.addr.prefix) +
           "): no address of the peer in this subnet; the peer publishes " +
           (seen.empty() ? std::string("none besides loopback") : seen);
    return nullptr;
}

int TcpModule::reachable(const weft_btl_peer_t *peer, char *why, size_t why_len) const
{
    if (!WEFT_HAS_MEMBER(peer, weft_btl_peer_t, card_len)) {
        write_reason(why, why_len, "%s: no usable peer description", c_.name);
        return 0;
    }
    const std::string who = "rank " + std::to_string(peer->rank) + " on " +
                            (peer->hostname ? peer->hostname : "?");
    if (!peer->card || peer->card_len == 0) {
        write_reason(why, why_len, "%s: %s published no btl/tcp card", c_.name, who.c_str());
        return 0;
    }
    Card card;
    if (std::string bad = decode_card(std::span(static_cast<const std::byte *>(peer->card), peer->card_len), &card);
        !bad.empty()) {
        write_reason(why, why_len, "%s: card of %s: %s", c_.name, who.c_str(), bad.c_str());
        return 0;
    }
    std::string reason;
    if (!match(peer, card, &reason)) {
        write_reason(why, why_len, "%s (%s)", reason.c_str(), who.c_str());
        return 0;
    }
    return 1;
}

int TcpModule::card(void *buf, size_t *len) const
{
    if (!len)
        return WEFT_ERR_BAD_PARAM;
    Card card;
    std::memcpy(card.secret, identity_->secret, kSecretBytes);
    card.entries = identity_->entries;
    std::vector<std::byte> bytes = encode_card(card);
    const size_t room = *len;
    *len = bytes.size();
    if (!buf || room < bytes.size())
        return WEFT_ERR_TRUNCATED;
    std::memcpy(buf, bytes.data(), bytes.size());
    return WEFT_SUCCESS;
}

bool TcpModule::direct_reads_ok() const
{
    if (!handshakes_.empty() || close_pending_ || endpoints_.empty() || endpoints_.size() > kDirectMaxEndpoints)
        return false;
    for (const auto &ep : endpoints_) {
        if (ep->phase != EpPhase::connected)
            return false;   // set-up and teardown go through epoll
        for (const auto &slot : ep->slots)
            if (slot->link && slot->link->has_queue())
                return false;   // output waits for EPOLLOUT
    }
    return true;
}

void TcpModule::read_links_directly()
{
    // Index loop: an upcall may connect to a new peer (endpoints_ grows).
    for (size_t e = 0; e < endpoints_.size(); ++e) {
        TcpEndpoint &ep = *endpoints_[e];
        LinkSlot &slot = *ep.slots[0];
        if (ep.phase == EpPhase::connected && !slot.closed && slot.link)
            read_link(slot);
    }
}

int TcpModule::drain_reports()
{
    const weft_btl_upcalls_t &up = c_.upcalls;
    int delivered = 0;
    for (; !reports_.empty(); ++delivered) {
        Report r = std::move(reports_.front());
        reports_.pop_front();
        TcpEndpoint &ep = *r.ep;
        if (ep.phase == EpPhase::gone)
            continue;
        // Placements the endpoint will never finish are told first (btl.h).
        for (const Unlanded &u : std::exchange(ep.unlanded, {}))
            if (WEFT_HAS_MEMBER(&up, weft_btl_upcalls_t, placed) && up.placed)
                up.placed(up.ctx, &ep.c, u.am_id, u.token,
                          r.status != WEFT_SUCCESS ? r.status : WEFT_ERR_UNREACHABLE);
        ep.c.state = r.state;
        if (WEFT_HAS_MEMBER(&up, weft_btl_upcalls_t, state) && up.state)
            up.state(up.ctx, &ep.c, r.state, r.status, r.reason.empty() ? nullptr : r.reason.c_str());
        // The module frees a closed or failed endpoint after its upcall (reap()).
        if (r.state == WEFT_BTL_EP_CLOSED || r.state == WEFT_BTL_EP_FAILED)
            ep.phase = EpPhase::gone;
    }
    return delivered;
}

void TcpModule::reap()
{
    for (auto &hs : handshakes_)
        if (hs->ep && hs->ep->phase == EpPhase::gone && !hs->dead)
            close_handshake(*hs, "its endpoint closed or failed");
    std::erase_if(handshakes_, [](const auto &hs) { return hs->dead; });
    for (auto &ep : endpoints_) {
        if (ep->phase != EpPhase::gone)
            continue;
        unsigned links = 0;
        for (auto &slot : ep->slots)
            if (slot->link) {
                unwatch_link(*slot);
                ++links;
            }
        if (links > 0)
            debug([&] {
                return "closing " + std::to_string(links) + " links to " + where(*ep) + ": " +
                       (ep->ended.empty() ? std::string("(no reason recorded)") : ep->ended);
            });
    }
    std::erase_if(endpoints_, [](const auto &ep) { return ep->phase == EpPhase::gone; });
    if (!lingering_.empty()) {
        const auto now = Clock::now();
        std::erase_if(lingering_, [&](Lingering &l) {
            std::byte sink[4096];
            ssize_t r = ::recv(l.fd.get(), sink, sizeof sink, MSG_DONTWAIT);
            const int err = r < 0 ? errno : 0;
            const bool peer_done = r == 0 || (r < 0 && err != EAGAIN && err != EINTR);
            if (!peer_done && now <= l.deadline)
                return false;
            debug([&] {
                return "closing " + l.who + " (disconnected): " +
                       (r == 0   ? std::string("the peer closed its end")
                        : r < 0 && err != EAGAIN && err != EINTR ? std::string(std::strerror(err))
                                                                 : "the peer did not close its end within " +
                                                                       std::to_string(kLinger.count()) + " s");
            });
            return true;
        });
    }
}

int TcpModule::prepare_wait()
{
    if (in_progress_)
        return 1;
    // Level-triggered: a link with unread bytes makes the set readable at once.
    watch_all_links();
    return reports_.empty() ? 0 : 1;
}

int TcpModule::progress()
{
    // An upcall that calls progress() gets nothing: upcalls are never re-entered.
    if (in_progress_)
        return 0;
    in_progress_ = true;
    int handled = reports_.empty() ? 0 : drain_reports();
    // A busy-polled peer's message costs epoll_wait and then recv: two
    // system calls where a bare socket loop needs one. With few endpoints
    // and nothing but reads to wait for, each one's first link is read
    // directly, and leaves the epoll set: each segment that arrives for a
    // socket in an epoll set runs epoll's wake-up callback, which made an
    // 8-byte loopback ping-pong 4% slower (a bare socket loop, with and
    // without its descriptor in an epoll set it never waits on). epoll
    // (the listener, the other links) runs every kEpollEvery passes; an
    // epoll_wait that finds nothing costs less than half an idle recv. The
    // first links go back into the set before the runtime sleeps
    // (prepare_wait) and whenever epoll must see them (set-up, teardown,
    // queued output).
    const bool direct = direct_reads_ok();
    if (direct) {
        if (watched_first_links_ > 0)
            unwatch_first_links();
        const size_t before = messages_in_;
        read_links_directly();
        handled += static_cast<int>(messages_in_ - before);
        if (!reports_.empty())
            handled += drain_reports();
        // A pass that delivered goes back to the application at once: its
        // reply is waited for by the next passes, which look at epoll
        // instead (a streaming peer's passes still do, every
        // kEpollEveryBusy).
        ++passes_;
        if (passes_ % kEpollEvery != 0 || (handled > 0 && passes_ % kEpollEveryBusy != 0)) {
            in_progress_ = false;
            return handled;
        }
    } else {
        watch_all_links();
    }
    epoll_event events[kMaxEvents];
    int n = epoll_wait(epfd_.get(), events, kMaxEvents, 0);
    for (int i = 0; i < n; ++i) {
        const uintptr_t tag = events[i].data.u64 & kTagMask;
        void *obj = reinterpret_cast<void *>(events[i].data.u64 & ~kTagMask);
        if (tag == kTagListener)
            on_listener();
        else if (tag == kTagHandshake)
            on_handshake(*static_cast<Handshake *>(obj), events[i].events);
        else if (tag == kTagEndpoint)
            on_link(*static_cast<LinkSlot *>(obj), events[i].events);
        handled += 1 + drain_reports();
    }
    // Handshakes that take too long: a slow stranger, or a peer that hangs.
    // Direct passes had neither handshakes nor endpoints connecting (any
    // begun by an upcall since has its deadline ahead): no clock read.
    const auto now = direct ? Clock::time_point{} : Clock::now();
    for (auto &hs : handshakes_) {
        if (hs->dead || now < hs->deadline)
            continue;
        if (hs->outgoing) {
            close_handshake(*hs, "no reply within btl_tcp_handshake_timeout");
            if (hs->ep->phase == EpPhase::connecting)
                fail(*hs->ep, WEFT_ERR_UNREACHABLE, "connect to " + where(*hs->ep) + " timed out");
        } else {
            refuse(*hs, "handshake not completed within btl_tcp_handshake_timeout");
        }
    }
    // Endpoints whose links are not all up in time (the peer's side of a
    // simultaneous connect failed, or it died half way).
    for (auto &ep : endpoints_)
        if (ep->phase == EpPhase::connecting && now > ep->deadline)
            fail(*ep, WEFT_ERR_UNREACHABLE,
                 "connection to " + where(*ep) + " not established within btl_tcp_handshake_timeout (" +
                     std::to_string(ep->up) + " of " + std::to_string(ep->slots.size()) + " links up)");
    if (close_pending_) {
        close_pending_ = false;
        for (auto &ep : endpoints_)
            if (ep->user_closed && ep->phase == EpPhase::connected) {
                after_io(*ep);
                close_pending_ = close_pending_ || ep->phase == EpPhase::connected;
            }
    }
    drain_reports();
    reap();
    in_progress_ = false;
    return handled;
}

} // namespace weft::btl_tcp
