// SPDX-License-Identifier: BSD-3-Clause
// btl/scif's module: setup (listening port, epoll set), reachability, card
// and sizing, and progress (each endpoint's state, delivery, accepting,
// wake-ups). Connecting is btl_scif_connect.cc, the data path
// btl_scif_data.cc, the card and hello codec btl_scif_wire.cc.
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

#include "scif_endpoint.hpp"

namespace weft::btl_scif {

namespace sc = weft::scif;
using weft::btl::write_reason;

namespace {

// How often (progress rounds) a connected endpoint's control socket is read
// for a hang-up the shared flag cannot show (a peer killed by a signal).
constexpr unsigned long kSocketCheckRounds = 1024;
// How often a busy poller checks its listening port for new connections.
constexpr unsigned long kAcceptRounds = 1024;
// Chunks delivered per endpoint per progress() call, so one busy peer does
// not starve the others.
constexpr int kDeliverBudget = 64;

} // namespace

ScifModule::ScifModule(const weft_host_t *host, const weft_btl_component_t *component,
                       const ScifConfig &config)
    : ModuleBase(component), host_(host), config_(config)
{
    // Expected values; weft_bench measures the real ones.
    c_.caps.latency_us = 0.2;
    c_.caps.bandwidth_mbs = 12000.0;
    c_.caps.eager_limit = config.eager_limit;
    c_.caps.max_send = config.max_send;
    set_sendi_limits();
    c_.caps.exclusivity = WEFT_BTL_EXCLUSIVITY_SHM;
    c_.caps.flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_INLINE;
    c_.caps.priority = config.priority;
    std::snprintf(c_.name, sizeof c_.name, "scif");
    c_.module_ctx = this;
}

ScifModule::~ScifModule()
{
    if (refused_ > 0)
        host_->log(&c_.component->base, WEFT_LOG_INFO,
                   "btl/scif: refused %lu incoming connections of processes that were not "
                   "authenticated peers of this job",
                   refused_);
    for (auto &ep : endpoints_)
        if (ep->epd >= 0)
            sc::close_endpoint(ep->epd);
    if (listen_epd_ >= 0)
        sc::close_endpoint(listen_epd_);
    if (epoll_fd_ >= 0)
        ::close(epoll_fd_);
}

void ScifModule::log_error(const char *fmt, const std::string &arg) const
{
    host_->log(&c_.component->base, WEFT_LOG_ERROR, fmt, arg.c_str());
}

int ScifModule::start()
{
    // A connector must present this (read from our card in the modex).
    if (getrandom(secret_, sizeof secret_, 0) != static_cast<ssize_t>(sizeof secret_)) {
        log_error("btl/scif: getrandom failed (%s); cannot make the connection secret",
                  std::strerror(errno));
        return WEFT_ERR_IO;
    }
    sc::set_ring_cells(static_cast<uint32_t>(config_.ring_size / sc::kCell));
    listen_epd_ = sc::open_endpoint();
    if (listen_epd_ < 0) {
        log_error("btl/scif: cannot open the listening endpoint: %s; check the open-file limit",
                  std::strerror(-listen_epd_));
        return WEFT_ERR_IO;
    }
    sc::Endpoint *lis = sc::lookup(listen_epd_);
    lis->rma_service = false;   // no scif windows here: put/get use rkeys
    int port = sc::bind_port(*lis, 0);
    if (port < 0 || sc::listen_on(*lis, 1024) < 0) {
        log_error("btl/scif: cannot bind and listen on a scif port: %s",
                  std::strerror(port < 0 ? -port : errno));
        return WEFT_ERR_IO;
    }
    port_ = static_cast<uint16_t>(port);
    apply_accept_policy();
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ >= 0) {
        watch(listen_epd_);
        c_.caps.flags |= WEFT_BTL_FLAG_FD;
    } else {
        log_error("btl/scif: no epoll set for wait_fd (%s); blocking progress will yield instead",
                  std::strerror(errno));
    }
    // Single-copy put/get need process_vm_readv; a seccomp filter or an old
    // kernel can forbid it. Try it on ourselves: without it, no PUT/GET.
    uint64_t word = 42, got = 0;
    iovec l{&got, sizeof got}, r{&word, sizeof word};
    if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) == sizeof got && got == word) {
        c_.caps.flags |= WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET;
        if (config_.single_copy_call_us <= 0)
            config_.single_copy_call_us = time_single_copy_call();
    }
    return WEFT_SUCCESS;
}

// The fixed cost of one process_vm_readv on this host, in microseconds: the
// least of 16 64-byte reads of our own memory (the kernel's entry, page
// lookups and pinning, before the copy; a virtual machine's exits): 0.6-0.8
// us on the 16-core KVM host, 1.6-2.1 on the Firecracker VM.
double ScifModule::time_single_copy_call()
{
    alignas(64) std::byte from[64] = {}, to[64];
    iovec l{to, sizeof to}, r{from, sizeof from};
    auto best = std::chrono::steady_clock::duration::max();
    for (int i = 0; i < 16; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
        const auto t = std::chrono::steady_clock::now() - t0;
        if (got != static_cast<ssize_t>(sizeof to))
            return 1e6;   // it worked a moment ago; count it as dear
        best = std::min(best, t);
    }
    return std::chrono::duration<double, std::micro>(best).count();
}

void ScifModule::apply_accept_policy()
{
    sc::Endpoint *lis = sc::lookup(listen_epd_);
    if (!lis)
        return;
    sc::AcceptPolicy &p = lis->accept_policy;
    const size_t max_ring = config_.max_ring_size ? config_.max_ring_size : config_.ring_size;
    p.max_ring_cells = static_cast<uint32_t>(std::max<size_t>(max_ring / sc::kCell, 1));
    p.handshake_timeout = handshake_timeout();
    p.max_pending = config_.max_pending;
    p.commit_on_accept = false;   // committed once the hello is accepted
    p.on_refuse = [this](pid_t pid, const char *why) { refuse(pid, why); };
    // Like a connection closed before its hello (advance()): a rank whose
    // own connect lost a simultaneous one closes it, at times before this
    // side acked it; a 4-rank job on 2 cores warned of it as a refusal.
    p.on_gone = [this](pid_t pid, const char *why) {
        if (host_->log_enabled(&c_.component->base, WEFT_LOG_DEBUG))
            host_->log(&c_.component->base, WEFT_LOG_DEBUG, "btl/scif: a connection from pid %d closed (%s); dropped",
                       static_cast<int>(pid), why);
    };
}

int ScifModule::reachable(const weft_btl_peer_t *peer, char *why, size_t why_len) const
{
    if (!peer) {
        write_reason(why, why_len, "btl/scif: no peer description");
        return 0;
    }
    if (peer->peer_class == WEFT_PEER_SELF) {
        write_reason(why, why_len, "btl/scif: rank %u is this process; btl/self serves it", peer->rank);
        return 0;
    }
    if (peer->peer_class != WEFT_PEER_SAME_NODE) {
        write_reason(why, why_len, "btl/scif: rank %u is on another node; scif reaches only this node",
            peer->rank);
        return 0;
    }
    Card card;
    if (!parse_card(peer->card, peer->card_len, &card)) {
        write_reason(why, why_len, "btl/scif: rank %u published no scif card (btl/scif not running there)",
            peer->rank);
        return 0;
    }
    if (card.uid != static_cast<uint32_t>(geteuid())) {
        write_reason(why, why_len, "btl/scif: rank %u runs as uid %u; scif connects processes of one user",
            peer->rank, card.uid);
        return 0;
    }
    // Our own card under another rank is a description, not a peer (weft_info
    // --explain asks about a same-node peer with this process's card).
    const bool other_rank = c_.process && peer->rank != c_.process->rank;
    if (card.pid == static_cast<uint32_t>(getpid()) && card.port == port_ && !other_rank) {
        write_reason(why, why_len, "btl/scif: rank %u is this process; btl/self serves it", peer->rank);
        return 0;
    }
    return 1;
}

// Rings are as large as a shared-memory budget per process allows: 2 MiB
// (eager 64 KiB) up to 16 local peers, halving as peers grow, 64 KiB (eager
// 4 KiB) at least. Each connected peer costs two rings (one per direction).
// Messages past 16 KiB up to that limit stream through the ring in
// fragments (ScifConfig::stream_from); toward a peer process_vm_readv
// reaches, the rendezvous takes over past 32 KiB (choose_eager_limit, per
// endpoint; docs/transports.md has the numbers).
void ScifModule::size_for_job()
{
    if (sized_ || !c_.process)
        return;
    sized_ = true;
    // On an oversubscribed node the peer an answer goes to may be waiting
    // off its core: each fragment was then one more handoff for nothing
    // (4 ranks on 2 vCPUs, osu collectives of 4 KiB, 8 alternated jobs:
    // 3-20% slower streamed).
    const weft_btl_process_t *p = c_.process;
    const bool oversubscribed = WEFT_HAS_MEMBER(p, weft_btl_process_t, node_cores) && p->node_cores > 0 &&
                                p->local_size > p->node_cores;
    if (oversubscribed)
        config_.stream_reply_from = config_.stream_from;
    constexpr size_t kRingMax = size_t{2} << 20, kRingMin = 64 * 1024, kBudget = size_t{32} << 20;
    const size_t peers = c_.process->local_size > 1 ? c_.process->local_size - 1 : 1;
    if (config_.auto_ring) {
        size_t ring = kRingMax;
        while (ring > kRingMin && ring * peers > kBudget)
            ring /= 2;
        // An eager limit the user set must fit a ring chunk (half the ring).
        while (!config_.auto_eager && ring / 2 - 128 < config_.eager_limit)
            ring *= 2;
        config_.ring_size = ring;
        sc::set_ring_cells(static_cast<uint32_t>(ring / sc::kCell));
        apply_accept_policy();
    }
    if (config_.auto_eager) {
        config_.eager_limit = std::clamp<size_t>(config_.ring_size / 32, 4096, 64 * 1024);
        config_.eager_limit = std::min(config_.eager_limit, config_.max_send);
        c_.caps.eager_limit = config_.eager_limit;
    }
    set_sendi_limits();
}

int ScifModule::card(void *buf, size_t *len)
{
    size_for_job();   // the runtime asks for the card once the job is known
    if (!len)
        return WEFT_ERR_BAD_PARAM;
    if (!buf || *len < sizeof(Card)) {
        *len = sizeof(Card);
        return WEFT_ERR_TRUNCATED;
    }
    Card c{kCardMagic, kCardVersion, port_, static_cast<uint32_t>(geteuid()),
           static_cast<uint32_t>(getpid()), {}};
    std::memcpy(c.secret, secret_, sizeof c.secret);
    std::memcpy(buf, &c, sizeof c);
    *len = sizeof c;
    return WEFT_SUCCESS;
}

uint32_t ScifModule::my_rank() const { return c_.process ? c_.process->rank : UINT32_MAX; }

inline sc::Endpoint *ScifModule::plain(const ScifEndpoint &ep) const
{
    // A connected endpoint with nothing to send or acknowledge (the socket
    // check has rounds of its own; a closing peer is noticed by advance()).
    if (ep.phase != EpPhase::connected || ep.closing || !ep.pending.empty() || !ep.acks_owed.empty() ||
        rounds_ % kSocketCheckRounds == 0)
        return nullptr;
    sc::Endpoint *s = sc::lookup(ep.epd);
    return s && !s->peer_closed() ? s : nullptr;
}

inline int ScifModule::receive(ScifEndpoint &ep, sc::Endpoint &s)
{
    const uint64_t head = s.rx.position();
    const int delivered = deliver_connected(ep, s, kDeliverBudget);
    // The peer may sleep until we free ring room (one fence per batch that
    // freed some: messages from the duplex line free none, and the fence
    // would sit between a ping-pong's message and its answer).
    if (s.rx.position() != head && s.rx.producer_sleeps())
        sc::notify(s);
    return delivered;
}

void ScifModule::advance(ScifEndpoint &ep, int *events)
{
    if (ep.phase == EpPhase::dead) {
        if (ep.close_requested && ep.reported && ep.c.state == WEFT_BTL_EP_FAILED) {
            // A failed endpoint stays valid until the runtime disconnects it.
            ep.c.state = WEFT_BTL_EP_CLOSED;
            if (c_.upcalls.state)
                c_.upcalls.state(c_.upcalls.ctx, &ep.c, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS,
                                 "disconnected");
            ++*events;
            return;
        }
        if (!ep.reported && ep.c.state == WEFT_BTL_EP_FAILED) {
            ep.reported = true;
            count_failure("btl/scif: the peer's scif port refused the connection");
            if (c_.upcalls.state)
                c_.upcalls.state(c_.upcalls.ctx, &ep.c, WEFT_BTL_EP_FAILED, WEFT_ERR_UNREACHABLE,
                                 "btl/scif: the peer's scif port refused the connection");
            ++*events;
        }
        return;
    }
    if (ep.closing && ep.pending.empty() && ep.phase != EpPhase::connected) {
        // Disconnected before the connection was up, with nothing to send.
        finish(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, "disconnected");
        ++*events;
        return;
    }
    if (ep.phase == EpPhase::waiting_peer)
        return;
    sc::Endpoint *s = sc::lookup(ep.epd);
    if (ep.phase == EpPhase::connecting) {
        int rc = sc::finish_connect(*s, false);
        if (rc == -EINPROGRESS)
            return;
        ++*events;
        if (rc < 0) {
            finish(ep, WEFT_BTL_EP_FAILED, WEFT_ERR_UNREACHABLE,
                   "btl/scif: the peer closed before accepting the connection");
            return;
        }
        if (static_cast<uint32_t>(s->peer_pid) != ep.card.pid) {
            // Someone else bound the port of the peer's card (it went away).
            finish(ep, WEFT_BTL_EP_FAILED, WEFT_ERR_UNREACHABLE,
                   ("btl/scif: the process listening on the peer's scif port is pid " +
                    std::to_string(s->peer_pid) + ", not the pid " + std::to_string(ep.card.pid) +
                    " of the peer's card; refusing to talk to it")
                       .c_str());
            return;
        }
        // Hello first: the acceptor learns who we are before anything else,
        // and answers before we send anything else.
        HelloHead head{my_rank(), {}};   // rank unknown without a runtime
        std::memcpy(head.secret, ep.card.secret, sizeof head.secret);
        std::string job = c_.process && c_.process->job_id ? c_.process->job_id : "";
        if (job.size() > kMaxJobId)
            job.resize(kMaxJobId);
        const std::span<const std::byte> hello[2] = {bytes(&head, sizeof head),
                                                     bytes(job.data(), job.size())};
        if (sc::try_send_message(*s, kHello, s->single_copy ? kHelloReadsPeer : 0, hello) != 0) {
            finish(ep, WEFT_BTL_EP_FAILED, WEFT_ERR_IO, "btl/scif: cannot send the hello");
            return;
        }
        if (s->tx.consumer_sleeps())
            sc::notify(*s);
        ep.phase = EpPhase::awaiting_reply;
    }
    if (ep.phase == EpPhase::connected && !ep.pending.empty())
        flush_pending(ep);
    const int delivered = deliver(ep, kDeliverBudget);
    *events += delivered;
    if (ep.phase == EpPhase::dead || ep.phase == EpPhase::waiting_peer)
        return;
    // Only after reading: a hello that came in time counts even when this
    // rank reads it late (it computed, or shared its CPU, past the deadline).
    if (ep.phase == EpPhase::awaiting_hello && std::chrono::steady_clock::now() >= ep.hello_deadline) {
        refuse_endpoint(ep, "no hello within btl_scif_handshake_timeout");
        ++*events;
        return;
    }
    // The peer may sleep until we free ring room (one fence per batch).
    if (delivered > 0) {
        if (sc::Endpoint *rs = sc::lookup(ep.epd); rs && rs->rx.producer_sleeps())
            sc::notify(*rs);
    }
    if (ep.phase == EpPhase::connected && !ep.pending.empty())
        flush_pending(ep);
    if (ep.phase == EpPhase::connected)
        flush_acks(ep);
    if (ep.closing && ep.phase == EpPhase::connected && ep.pending.empty() &&
        ep.inflight.empty() && ep.acks_owed.empty()) {
        // Everything accepted is in the ring, and the peer has read the
        // rendezvous copies; it reads the ring before it sees the close.
        finish(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, "disconnected");
        ++*events;
        return;
    }
    s = sc::lookup(ep.epd);
    if (!s)
        return;
    if (rounds_ % kSocketCheckRounds == 0)
        sc::drain_control(*s);
    if (s->peer_closed()) {
        sc::Chunk c;
        bool from_duplex;
        if (sc::peek_message(*s, &c, &from_duplex))
            return;   // deliver what the peer sent before it went
        ++*events;
        const bool orderly = s->rx.producer_closed();
        if (ep.phase == EpPhase::awaiting_hello) {
            // Not a refusal: it cost nothing (its ring was never committed)
            // and a rank of this job does it when its own connection loses
            // a simultaneous connect (handle_hello closes it before its hello).
            if (host_->log_enabled(&c_.component->base, WEFT_LOG_DEBUG))
                host_->log(&c_.component->base, WEFT_LOG_DEBUG,
                           "btl/scif: a connection from pid %d closed before its hello; dropped",
                           static_cast<int>(s->peer_pid));
            ep.reported = true;   // never announced: closed quietly
            finish(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, "");
        } else if (ep.phase == EpPhase::awaiting_reply) {
            finish(ep, WEFT_BTL_EP_FAILED, WEFT_ERR_UNREACHABLE,
                   "btl/scif: the peer closed the connection before answering its hello");
        } else if (orderly) {
            finish(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, "btl/scif: the peer disconnected");
        } else {
            finish(ep, WEFT_BTL_EP_FAILED, WEFT_ERR_UNREACHABLE,
                   "btl/scif: the peer process exited or was killed (its scif socket hung up)");
        }
    }
}

void ScifModule::reap()
{
    // FAILED endpoints stay (operations on them fail) until disconnect();
    // refused ones were never announced.
    std::erase_if(endpoints_, [](const std::unique_ptr<ScifEndpoint> &e) {
        return e->phase == EpPhase::dead && e->reported && e->c.state != WEFT_BTL_EP_FAILED;
    });
}

int ScifModule::progress()
{
    if (in_progress_)
        return 0;   // called from an upcall: deliver nothing, never re-enter
    in_progress_ = true;
    ++rounds_;
    int events = 0;
    const bool woken = armed_;
    if (armed_)
        disarm(&events);
    // New connections: a failed accept is a system call, so a busy poller
    // looks only every kAcceptRounds rounds; one that slept looks each time
    // it wakes (a connecting peer may be what woke it).
    if (rounds_ % kAcceptRounds == 1 || endpoints_.empty() || woken)
        accept_new(&events);
    // Index loop: upcalls may start new connections (push_back).
    // A plain endpoint (see plain()) is polled here, inline: the common poll
    // finds its ring empty and never pays advance()'s call (its frame saves
    // six registers), and messages go from here straight to
    // deliver_connected. Those deliveries alone never end an endpoint, so
    // they do not count toward the reap() below.
    int delivered = 0;
    for (size_t i = 0; i < endpoints_.size(); ++i) {
        ScifEndpoint &ep = *endpoints_[i];
        if (sc::Endpoint *s = plain(ep)) {
            if (!s->rx.ready() && !s->duplex.ready()) {
                s->duplex.flush_ack();
                continue;
            }
            if (ep.connected_round != rounds_) {
                delivered += receive(ep, *s);
                // An upcall may have queued a send, owe an ack or disconnect.
                if (plain(ep) == s)
                    continue;
            }
        }
        advance(ep, &events);
    }
    if (!completions_.empty()) {
        // Swapped with a list kept for the purpose: a callback may queue
        // more (they run next round), and neither list gives its capacity
        // back, so a rendezvous's get costs no allocation.
        completions_running_.swap(completions_);
        for (const Completion &c : completions_running_) {
            c.cb(c.ep, c.ctx, c.status);
            ++events;
        }
        completions_running_.clear();
    }
    // An endpoint dies in a round that reports something; the periodic
    // sweep is the safety net. An idle poll then costs no scan.
    if (events > 0 || rounds_ % 64 == 0)
        reap();
    if (populating_ && events == 0 && delivered == 0) [[unlikely]]
        populate_some();
    in_progress_ = false;
    return events + delivered;
}

// One chunk of one new connection's rings, in a round with nothing else to
// do: 32 KiB (8 pages) is a few microseconds, so a message that lands
// meanwhile waits little, and the two 2 MiB rings take 128 idle rounds.
void ScifModule::populate_some()
{
    constexpr size_t kChunk = 32 * 1024;
    for (auto &e : endpoints_) {
        sc::Endpoint *s = e->epd >= 0 ? sc::lookup(e->epd) : nullptr;
        if (s && s->state == sc::State::connected && s->populate_pending()) {
            sc::populate_rings_step(*s, kChunk);
            return;
        }
    }
    populating_ = false;
}

void ScifModule::watch(int epd)
{
    if (epoll_fd_ < 0 || epd < 0)
        return;
    // Closing the socket removes it from the set (nothing else holds it).
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = epd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, epd, &ev);
}

void ScifModule::set_waiting(bool on)
{
    for (auto &e : endpoints_) {
        sc::Endpoint *s = e->epd >= 0 ? sc::lookup(e->epd) : nullptr;
        if (!s || s->state != sc::State::connected)
            continue;
        s->rx.set_waiting(on);
        // Sends that wait for ring room need a wake-up when the peer frees it.
        s->tx.set_waiting(on && (!e->pending.empty() || !e->acks_owed.empty()));
    }
}

// Work progress() would do now, without doing it (no upcall). Conservative:
// a false "yes" costs one more poll, a false "no" a lost wake-up.
bool ScifModule::has_work()
{
    if (!completions_.empty())
        return true;
    for (auto &e : endpoints_) {
        if (e->phase == EpPhase::dead) {
            if (!e->reported || (e->close_requested && e->c.state == WEFT_BTL_EP_FAILED))
                return true;
            continue;
        }
        if (e->closing)
            return true;
        sc::Endpoint *s = e->epd >= 0 ? sc::lookup(e->epd) : nullptr;
        if (!s || s->state != sc::State::connected)
            continue;   // a connect in flight: its ack arrives on the socket
        sc::Chunk c;
        bool from_duplex;
        if (sc::peek_message(*s, &c, &from_duplex) || s->peer_closed())
            return true;
        if ((!e->pending.empty() || !e->acks_owed.empty()) && s->tx.has_room(sc::kCell))
            return true;
    }
    return false;
}

int ScifModule::prepare_wait()
{
    if (epoll_fd_ < 0)
        return WEFT_ERR_NOT_SUPPORTED;
    if (in_progress_)
        return 1;
    set_waiting(true);   // each store is followed by a seq_cst fence
    armed_ = true;
    if (has_work()) {
        int events = 0;
        disarm(&events);
        return 1;
    }
    return 0;
}

void ScifModule::disarm(int *events)
{
    armed_ = false;
    set_waiting(false);
    // Eat the wake-ups that made the set readable (and notice hang-ups),
    // so the next wait does not return at once.
    for (auto &e : endpoints_)
        if (sc::Endpoint *s = e->epd >= 0 ? sc::lookup(e->epd) : nullptr;
            s && s->state == sc::State::connected)
            sc::drain_control(*s);
    accept_new(events);
}

} // namespace weft::btl_scif
