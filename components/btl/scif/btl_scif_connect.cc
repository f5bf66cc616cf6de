// SPDX-License-Identifier: BSD-3-Clause
// btl/scif's connection set-up: connecting to a peer's port, accepting,
// the hello and its checks (secret, job, rank, pid), refusals, and the
// simultaneous-connect tie-break.
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

void ScifModule::refuse(pid_t pid, const std::string &why)
{
    ++refused_;
    const auto *self = &c_.component->base;
    const std::string who = pid > 0 ? "pid " + std::to_string(pid) : "an unknown process";
    if (refused_ == 1) {
        // Once per process: what is refused and why; the rest at debug level.
        const char *args[] = {"who", who.c_str(), "why", why.c_str(), nullptr};
        host_->show_help(self, "refused", args);
    }
    if (host_->log_enabled(self, WEFT_LOG_DEBUG))
        host_->log(self, WEFT_LOG_DEBUG, "btl/scif: refused a connection from %s: %s (%lu refused)",
                   who.c_str(), why.c_str(), refused_);
}

void ScifModule::refuse_endpoint(ScifEndpoint &ep, const std::string &why)
{
    const sc::Endpoint *s = sc::lookup(ep.epd);
    refuse(s ? s->peer_pid : 0, why);
    ep.reported = true;   // never announced: closed quietly
    finish(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, "");
}

int ScifModule::connect(const weft_btl_peer_t *peer, weft_btl_endpoint_t **out)
{
    if (!reachable(peer, nullptr, 0))
        return WEFT_ERR_UNREACHABLE;
    // One endpoint per peer: the peer may have connected first.
    if (ScifEndpoint *existing = find_peer(peer->rank, nullptr)) {
        *out = &existing->c;
        return WEFT_SUCCESS;
    }
    Card card;
    parse_card(peer->card, peer->card_len, &card);
    auto ep = std::make_unique<ScifEndpoint>();
    ep->card = card;
    ep->c.size = sizeof ep->c;
    ep->c.module = &c_;
    ep->c.peer_rank = peer->rank;
    ep->c.state = WEFT_BTL_EP_CONNECTING;
    ep->epd = sc::open_endpoint();
    if (ep->epd < 0)
        return WEFT_ERR_IO;
    watch(ep->epd);
    sc::lookup(ep->epd)->rma_service = false;
    // Never blocks: the connect completes in progress() once the peer's
    // module accepts.
    int rc = sc::connect_to(*sc::lookup(ep->epd), card.port, false);
    if (rc < 0 && rc != -EINPROGRESS) {
        sc::close_endpoint(ep->epd);
        ep->epd = -1;
        ep->phase = EpPhase::dead;
        // Reported from progress(), like every state change.
        ep->c.state = WEFT_BTL_EP_FAILED;
    }
    *out = &ep->c;
    endpoints_.push_back(std::move(ep));
    return WEFT_SUCCESS;
}

ScifEndpoint *ScifModule::find_peer(uint32_t rank, const ScifEndpoint *except)
{
    if (rank == UINT32_MAX)
        return nullptr;   // no runtime: ranks say nothing
    for (auto &e : endpoints_)
        if (e.get() != except && e->c.peer_rank == rank && !e->closing &&
            e->phase != EpPhase::dead && e->phase != EpPhase::awaiting_hello)
            return e.get();
    return nullptr;
}

namespace {

// The acceptor's answer to a hello. The acceptor has sent nothing before it,
// so the ring has room; a peer already gone just never reads it.
void send_reply(sc::Endpoint &s, HelloAnswer answer, uint32_t rank)
{
    const uint8_t flags = s.single_copy ? kHelloReadsPeer : 0;
    const std::span<const std::byte> body[2] = {bytes(&rank, sizeof rank), bytes(&flags, sizeof flags)};
    if (sc::try_send_message(s, kHelloReply, answer, body) == 0 && s.tx.consumer_sleeps())
        sc::notify(s);
}

} // namespace

// With single copy both ways (we reach the peer, and its hello or reply said
// it reaches us), a message past single_copy_eager goes as a rendezvous the
// runtime completes with put/get. Streamed through the ring (two copies that
// overlap) 16-32 KiB is faster than the single copy; 64 KiB is faster one
// way too on the 2-vCPU VM (except in its slow periods), but both ranks
// sending windows of 64 KiB at once (osu_bibw) fill the rings, and the
// queued copies halved that bandwidth (docs/transports.md). Without single
// copy the rendezvous data would cross the ring anyway, so the ring-sized
// limit of the module's caps stays. Where process_vm_readv is cheap
// (ScifConfig::cheap_single_copy_us) the single copy wins past 16 KiB
// (measured on a 16-core host), so the limit is 16 KiB and nothing past it
// streams; past 8 KiB a message on its own goes by single copy too
// (single_copy_from), one in a window eagerly. A limit the user set
// (btl_scif_eager_limit) is the module's for every connection.
void ScifModule::choose_eager_limit(ScifEndpoint &ep) const
{
    const sc::Endpoint *s = sc::lookup(ep.epd);
    // Both ways: the runtime's rendezvous has the receiver get (it reads
    // us) and, for some operations, this side put or get (we reach it).
    const bool rdma = (c_.caps.flags & WEFT_BTL_FLAG_GET) && s && s->single_copy && ep.peer_reads_us;
    const bool cheap = config_.single_copy_call_us < config_.cheap_single_copy_us;
    const size_t limit = cheap ? config_.cheap_single_copy_eager : config_.single_copy_eager;
    ep.c.eager_limit = config_.auto_eager && rdma ? std::min(limit, c_.caps.eager_limit) : 0;
    ep.c.eager_if_room = ep.c.eager_limit && config_.eager_if_room && !cheap ? c_.caps.eager_limit : 0;
    ep.c.single_copy_from = ep.c.eager_limit && cheap ? config_.cheap_single_copy_from : 0;
}

void ScifModule::connected(ScifEndpoint &ep, int *events, bool announce)
{
    populating_ = true;   // its rings may have pages to fault in
    ep.phase = EpPhase::connected;
    ep.c.state = WEFT_BTL_EP_CONNECTED;
    choose_eager_limit(ep);
    ++*events;
    // Which path large data takes to this peer, said once per connection.
    if (const sc::Endpoint *s = sc::lookup(ep.epd)) {
        const char *how =
            s->single_copy && ep.peer_reads_us
                ? "large messages and put/get by single copy (process_vm_readv/writev)"
            : s->single_copy
                ? "put/get by single copy, but the kernel refuses that process process_vm_readv "
                  "toward this one (its seccomp profile or ptrace rules), so large messages to it go "
                  "in fragments through the shared ring"
                : "the kernel refused process_vm_readv toward it (seccomp profile or ptrace rules; a "
                  "real attempt failed): large messages go in fragments through the shared ring, "
                  "put/get fail with not-supported";
        const size_t eager = ep.c.eager_limit ? ep.c.eager_limit : c_.caps.eager_limit;
        host_->log(&c_.component->base, WEFT_LOG_INFO,
                   "btl/scif: rank %u (pid %d): %s; eager up to %zu bytes%s%s (one process_vm_readv costs "
                   "%.2f us here)",
                   ep.c.peer_rank, static_cast<int>(s->peer_pid), how, eager,
                   ep.c.eager_if_room
                       ? (", and up to " + std::to_string(ep.c.eager_if_room) + " while the ring has room").c_str()
                       : "",
                   ep.c.single_copy_from
                       ? (", past " + std::to_string(ep.c.single_copy_from) + " only behind another rendezvous").c_str()
                       : "",
                   config_.single_copy_call_us);
    }
    if (announce) {
        // The peer may have sent right after its accept: that data waits for
        // the next progress() call, so the runtime sees CONNECTED first.
        ep.connected_round = rounds_;
        if (c_.upcalls.state)
            c_.upcalls.state(c_.upcalls.ctx, &ep.c, WEFT_BTL_EP_CONNECTED, WEFT_SUCCESS, "");
    }
    ++counters().connects;   // either side: an accepted endpoint gets here too
    // What was sent while connecting goes first, in order.
    if (ep.phase == EpPhase::connected && !ep.pending.empty())
        flush_pending(ep);
}

std::string ScifModule::check_hello(const ScifEndpoint &ep, const std::byte *p, size_t len) const
{
    HelloHead head;
    const char *job;
    size_t job_len;
    if (!parse_hello(p, len, &head, &job, &job_len))
        return "malformed hello (" + std::to_string(len) + " bytes)";
    if (std::memcmp(head.secret, secret_, sizeof secret_) != 0)
        return "wrong secret (not a process of this job, or a stale card)";
    const weft_btl_process_t *proc = c_.process;
    if (!proc || !proc->job_id || !WEFT_HAS_MEMBER(proc, weft_btl_process_t, peer_card) ||
        !proc->peer_card)
        return "no runtime here to check the peer's rank against";
    if (std::string_view(job, job_len) != proc->job_id)
        return "job id '" + std::string(job, job_len) + "' is not this job's";
    if (head.rank == proc->rank)
        return "it claims this process's own rank " + std::to_string(head.rank);
    if (head.rank >= proc->job_size)
        return "rank " + std::to_string(head.rank) + " is outside the job";
    Card card;
    std::byte buf[sizeof(Card)];
    size_t buf_len = sizeof buf;
    if (proc->peer_card(proc->card_ctx, const_cast<weft_btl_module_t *>(&c_), head.rank, buf,
                        &buf_len) != WEFT_SUCCESS ||
        !parse_card(buf, buf_len, &card))
        return "rank " + std::to_string(head.rank) + " published no scif card";
    const sc::Endpoint *s = sc::lookup(ep.epd);
    if (!s || static_cast<uint32_t>(s->peer_pid) != card.pid)
        return "it claims rank " + std::to_string(head.rank) + ", whose card says pid " +
               std::to_string(card.pid);
    return {};
}

bool ScifModule::handle_hello(ScifEndpoint &ep, const std::byte *p, size_t len)
{
    sc::Endpoint *s = sc::lookup(ep.epd);
    const uint32_t me = my_rank();
    if (std::string why = check_hello(ep, p, len); !why.empty()) {
        send_reply(*s, kRefuse, me);
        refuse_endpoint(ep, why);
        return false;
    }
    uint32_t rank;
    std::memcpy(&rank, p, sizeof rank);
    int events = 0;
    if (ScifEndpoint *mine = find_peer(rank, &ep)) {
        // Both sides connected at once: the lower rank's connection wins.
        const bool ours_loses =
            mine->phase == EpPhase::waiting_peer ||
            ((mine->phase == EpPhase::connecting || mine->phase == EpPhase::awaiting_reply) &&
             me > rank);
        if (!ours_loses) {
            send_reply(*s, kDuplicate, me);   // ours wins, or one is already up
            return false;
        }
        // The peer's connection replaces ours in the endpoint the runtime holds.
        sc::commit_receive_ring(*s);
        send_reply(*s, kAccept, me);
        if (mine->epd >= 0)
            sc::close_endpoint(mine->epd);
        mine->epd = ep.epd;
        mine->peer_reads_us = ep.peer_reads_us;
        ep.epd = -1;
        ep.reported = true;   // never announced
        ep.phase = EpPhase::dead;
        connected(*mine, &events, true);
        return true;
    }
    ep.c.peer_rank = rank;
    // An accepted endpoint is connected when the runtime learns of it and
    // gets no CONNECTED upcall (the runtime counts on that). Sends from
    // inside the accepted upcall queue (the phase is not connected yet), so
    // the reply is the first thing in the ring.
    ep.c.state = WEFT_BTL_EP_CONNECTED;
    choose_eager_limit(ep);
    void *ctx = c_.upcalls.accepted ? c_.upcalls.accepted(c_.upcalls.ctx, &ep.c) : nullptr;
    if (!ctx) {
        send_reply(*s, kRefuse, me);
        return false;
    }
    ep.c.runtime_ctx = ctx;
    sc::commit_receive_ring(*s);
    send_reply(*s, kAccept, me);
    connected(ep, &events, false);
    return true;
}

void ScifModule::handle_reply(ScifEndpoint &ep, uint8_t answer)
{
    int events = 0;
    switch (answer) {
    case kAccept:
        connected(ep, &events, true);
        break;
    case kDuplicate:
        // The peer's own connection wins; it arrives through accept_new and
        // handle_hello adopts it into this endpoint.
        sc::close_endpoint(ep.epd);
        ep.epd = -1;
        ep.phase = EpPhase::waiting_peer;
        break;
    default:
        finish(ep, WEFT_BTL_EP_FAILED, WEFT_ERR_UNREACHABLE,
               "btl/scif: the peer refused the connection (not a process of this job, or its "
               "runtime does not know this rank)");
        break;
    }
}

void ScifModule::accept_new(int *events)
{
    sc::Endpoint *lis = sc::lookup(listen_epd_);
    if (!lis)
        return;
    // Half-open sockets join the wait set, so a sleeper wakes for their
    // connect request (the socket's close takes it out again).
    const std::function<void(int)> watch_half_open = [this](int fd) { watch(fd); };
    for (;;) {
        std::unique_ptr<sc::Endpoint> conn;
        if (sc::accept_one(*lis, false, &conn, watch_half_open) != 0)
            return;
        int epd = sc::adopt(std::move(conn));
        if (epd < 0)
            return;
        watch(epd);
        // At most max_pending wait for their hello: the oldest goes first.
        size_t waiting = 0;
        ScifEndpoint *oldest = nullptr;
        for (auto &e : endpoints_) {
            if (e->phase != EpPhase::awaiting_hello)
                continue;
            ++waiting;
            if (!oldest)
                oldest = e.get();
        }
        if (oldest && waiting >= config_.max_pending)
            refuse_endpoint(*oldest, "too many connections without a hello (evicted)");
        auto ep = std::make_unique<ScifEndpoint>();
        ep->c.size = sizeof ep->c;
        ep->c.module = &c_;
        ep->c.peer_rank = UINT32_MAX;   // until the hello says
        ep->c.state = WEFT_BTL_EP_CONNECTING;
        ep->epd = epd;
        ep->phase = EpPhase::awaiting_hello;
        ep->hello_deadline = std::chrono::steady_clock::now() + handshake_timeout();
        endpoints_.push_back(std::move(ep));
        ++*events;
    }
}

} // namespace weft::btl_scif
