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

using Clock = std::chrono::steady_clock;

// epoll tags: the low bits of an (8-aligned) object pointer say what it is.
constexpr uintptr_t kTagListener = 0, kTagHandshake = 1, kTagEndpoint = 2, kTagMask = 7;
// Events per epoll_wait in one progress().
constexpr int kMaxEvents = 64;
// Direct reads (see progress()): a connection's first link (every ordered
// frame) is read on every pass, epoll (the listener, and the other links,
// which carry only large unordered frames) runs every kEpollEvery passes;
// with more endpoints than kDirectMaxEndpoints, epoll alone.
constexpr unsigned kEpollEvery = 4, kEpollEveryBusy = 64, kDirectMaxEndpoints = 8;
// How long a closed link waits for the peer's end before it is dropped.
constexpr auto kLinger = std::chrono::seconds(5);

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

std::string entry_text(const CardEntry &e)
{
    socklen_t len;
    sockaddr_storage ss = to_sockaddr(e, &len);
    return describe(reinterpret_cast<const sockaddr *>(&ss), e.prefix);
}

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

// Callers pass a callable that builds the text: nothing is built unless
// debug output is on.
template <class Text>
void TcpModule::debug(Text &&text) const
{
    const auto *self = &c_.component->base;
    if (host_->log_enabled(self, WEFT_LOG_DEBUG))
        host_->log(self, WEFT_LOG_DEBUG, "%s: %s", c_.name, std::string(text()).c_str());
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
            return WEFT_ERR_AGAIN;
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
            return WEFT_ERR_AGAIN;
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
    return WEFT_ERR_AGAIN;
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
