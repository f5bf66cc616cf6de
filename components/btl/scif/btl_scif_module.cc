#include "btl_scif_module.hpp"

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
// Queued large-send bytes per endpoint before send() says WEFT_ERR_AGAIN.
constexpr size_t kMaxPendingBytes = size_t{256} << 20;

std::span<const std::byte> bytes(const void *p, size_t n)
{
    return {static_cast<const std::byte *>(p), n};
}

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
    c_.caps.inline_max = config.eager_limit;
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
    if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) == sizeof got && got == word)
        c_.caps.flags |= WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET;
    return WEFT_SUCCESS;
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
}

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

// Mid-size messages move fastest through the rings (two in-cache copies,
// no system call; process_vm_readv only wins from about 64 KiB), so rings
// are as large as a shared-memory budget per process allows: 2 MiB (eager
// 64 KiB) up to 16 local peers, halving as peers grow, 64 KiB (eager 4 KiB)
// at least. Each connected peer costs two rings (one per direction).
void ScifModule::size_for_job()
{
    if (sized_ || !c_.process)
        return;
    sized_ = true;
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
        c_.caps.eager_limit = c_.caps.inline_max = config_.eager_limit;
    }
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
    if (!ep.reported) {
        ep.reported = true;
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
        if (total <= sc::max_message(*s)) {
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
        return WEFT_ERR_AGAIN;
    ScifEndpoint::Pending p;
    p.am_id = am_id;
    p.data.resize(total);
    size_t at = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (iov[i].iov_len)
            std::memcpy(p.data.data() + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    ep.pending_bytes += total;
    ep.pending.push_back(std::move(p));
    if (ep.phase == EpPhase::connected)
        flush_pending(ep);
    return WEFT_SUCCESS;
}

int ScifModule::sendi(ScifEndpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len,
                      const void *payload, size_t payload_len)
{
    if (ep.closing || ep.phase == EpPhase::dead)
        return WEFT_ERR_UNREACHABLE;
    if (hdr_len + payload_len > c_.caps.inline_max || (hdr_len && !hdr) ||
        (payload_len && !payload))
        return WEFT_ERR_BAD_PARAM;
    if (ep.phase != EpPhase::connected || !ep.pending.empty())
        return WEFT_ERR_AGAIN;
    sc::Endpoint *s = sc::lookup(ep.epd);
    const std::span<const std::byte> pieces[2] = {bytes(hdr, hdr_len), bytes(payload, payload_len)};
    int rc = sc::try_send_message(*s, kAm, am_id, pieces);
    if (rc == 0) {
        if (s->tx.consumer_sleeps())
            sc::notify(*s);
        return WEFT_SUCCESS;
    }
    return rc == -EAGAIN ? WEFT_ERR_AGAIN : WEFT_ERR_UNREACHABLE;
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
        } else if (!p.started && s->single_copy) {
            // Rendezvous: the peer reads our copy in one process_vm_readv.
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

uint32_t ScifModule::my_rank() const { return c_.process ? c_.process->rank : UINT32_MAX; }

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
    const std::span<const std::byte> body[1] = {bytes(&rank, sizeof rank)};
    if (sc::try_send_message(s, kHelloReply, answer, body) == 0 && s.tx.consumer_sleeps())
        sc::notify(s);
}

} // namespace

void ScifModule::connected(ScifEndpoint &ep, int *events, bool announce)
{
    ep.phase = EpPhase::connected;
    ep.c.state = WEFT_BTL_EP_CONNECTED;
    ++*events;
    // Which path large data takes to this peer, said once per connection.
    if (const sc::Endpoint *s = sc::lookup(ep.epd)) {
        if (s->single_copy)
            host_->log(&c_.component->base, WEFT_LOG_INFO,
                       "btl/scif: rank %u (pid %d): large messages and put/get by single copy "
                       "(process_vm_readv/writev)",
                       ep.c.peer_rank, static_cast<int>(s->peer_pid));
        else
            host_->log(&c_.component->base, WEFT_LOG_INFO,
                       "btl/scif: rank %u (pid %d): the kernel refused process_vm_readv toward "
                       "it (seccomp profile or ptrace rules; a real attempt failed): large "
                       "messages go in fragments through the shared ring, put/get fail with "
                       "not-supported",
                       ep.c.peer_rank, static_cast<int>(s->peer_pid));
    }
    if (announce) {
        // The peer may have sent right after its accept: that data waits for
        // the next progress() call, so the runtime sees CONNECTED first.
        ep.connected_round = rounds_;
        if (c_.upcalls.state)
            c_.upcalls.state(c_.upcalls.ctx, &ep.c, WEFT_BTL_EP_CONNECTED, WEFT_SUCCESS, "");
    }
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

int ScifModule::deliver(ScifEndpoint &ep, int budget)
{
    sc::Endpoint *s = sc::lookup(ep.epd);
    int events = 0;
    sc::Chunk c;
    // Not in the round that announced CONNECTED (see connected_round).
    while (events < budget && s && ep.phase != EpPhase::dead && ep.connected_round != rounds_ &&
           s->rx.peek(&c)) {
        const auto type = static_cast<uint8_t>(c.type);
        if (ep.phase == EpPhase::awaiting_hello) {
            // Copied out and freed first: handle_hello may hand the
            // connection to another endpoint or close it.
            // One byte more than the largest hello, so a longer one is refused.
            std::byte hello[sizeof(HelloHead) + kMaxJobId + 1];
            const size_t len = type == kHello ? std::min(c.payload.size(), sizeof hello) : 0;
            if (len)
                std::memcpy(hello, c.payload.data(), len);
            s->rx.pop();
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
            if (ep.phase != EpPhase::connected)
                return events;   // adopted by the endpoint of our own connect
            continue;
        }
        if (ep.phase == EpPhase::awaiting_reply) {
            const uint8_t answer = type == kHelloReply ? c.tag : uint8_t{kRefuse};
            s->rx.pop();
            ++events;
            handle_reply(ep, answer);
            if (ep.phase != EpPhase::connected)
                return events;
            continue;
        }
        switch (type) {
        case kAm:
            if (c_.upcalls.recv)
                c_.upcalls.recv(c_.upcalls.ctx, &ep.c, c.tag, c.payload.data(), c.payload.size());
            break;
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
            ep.reasm.assign(c.payload.begin() + sizeof total, c.payload.end());
            ep.reasm.reserve(total);
            ep.reasm_total = total;
            ep.reasm_am = c.tag;
            ep.reasm_active = true;
            break;
        }
        case kFrag:
            if (!ep.reasm_active || ep.reasm.size() + c.payload.size() > ep.reasm_total)
                break;
            ep.reasm.insert(ep.reasm.end(), c.payload.begin(), c.payload.end());
            if (ep.reasm.size() == ep.reasm_total) {
                ep.reasm_active = false;
                if (c_.upcalls.recv)
                    c_.upcalls.recv(c_.upcalls.ctx, &ep.c, ep.reasm_am, ep.reasm.data(),
                                    ep.reasm.size());
                std::vector<std::byte>().swap(ep.reasm);
            }
            break;
        default:
            break;   // unknown types from a newer peer are skipped
        }
        s->rx.pop();
        ++events;
    }
    return events;
}

void ScifModule::advance(ScifEndpoint &ep, int *events)
{
    // The common idle poll, first: a connected endpoint with nothing to
    // send or acknowledge and nothing in its ring (the socket check has
    // rounds of its own; a closing peer is noticed below).
    if (ep.phase == EpPhase::connected && !ep.closing && ep.pending.empty() && ep.acks_owed.empty() &&
        rounds_ % kSocketCheckRounds != 0)
        if (sc::Endpoint *s = sc::lookup(ep.epd); s && !s->rx.ready() && !s->peer_closed())
            return;
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
    if (ep.phase == EpPhase::awaiting_hello && std::chrono::steady_clock::now() >= ep.hello_deadline) {
        refuse_endpoint(ep, "no hello within btl_scif_handshake_timeout");
        ++*events;
        return;
    }
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
        if (sc::try_send_message(*s, kHello, 0, hello) != 0) {
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
        if (s->rx.peek(&c))
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
    for (size_t i = 0; i < endpoints_.size(); ++i)
        advance(*endpoints_[i], &events);
    if (!completions_.empty()) {
        std::vector<Completion> done;
        done.swap(completions_);
        for (const Completion &c : done) {
            c.cb(c.ep, c.ctx, c.status);
            ++events;
        }
    }
    // An endpoint dies in a round that reports something; the periodic
    // sweep is the safety net. An idle poll then costs no scan.
    if (events > 0 || rounds_ % 64 == 0)
        reap();
    in_progress_ = false;
    return events;
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
        if (s->rx.peek(&c) || s->peer_closed())
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
    Rkey k{kRkeyMagic, static_cast<uint32_t>(getpid()), reinterpret_cast<uintptr_t>(addr), len};
    reg->addr = addr;
    reg->length = len;
    std::memcpy(reg->rkey, &k, sizeof k);
    reg->rkey_len = sizeof k;
    reg->module_ctx = nullptr;
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
