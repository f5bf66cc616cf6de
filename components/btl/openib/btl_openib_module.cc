// SPDX-License-Identifier: BSD-3-Clause
// btl/openib module: resources, connection callbacks (CpcHost) and state.
// The data path (send, receive, RDMA, completions) is in btl_openib_data.cc.
#include "btl_openib_module.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>

#include <weft/component_util.hpp>
#include <weft/status.h>


namespace weft::openib {

namespace {

// A bandwidth estimate from the port's width and speed (MB/s), for the
// runtime's scoring only.
double port_bandwidth(const ibv_port_attr &a)
{
    double lanes = a.active_width == 1 ? 1 : a.active_width == 2 ? 4 : a.active_width == 4 ? 8
                 : a.active_width == 8 ? 12 : a.active_width == 16 ? 2 : 1;
    double gbps = a.active_speed == 1 ? 2.5 : a.active_speed == 2 ? 5 : a.active_speed == 4 ? 10
                : a.active_speed == 8 ? 10.3125 : a.active_speed == 16 ? 14.0625 : a.active_speed == 32 ? 25.78125
                : a.active_speed == 64 ? 53.125 : 10;
    return lanes * gbps * 1000.0 / 8.0;
}

} // namespace

Module::Module(const weft_host_t *host, const weft_btl_component_t *component, const OpenibConfig &config,
               Port port)
    : ModuleBase(component), host_(host), config_(config), port_(std::move(port))
{
    c_.caps.latency_us = port_.info.roce ? 3.0 : 1.5;
    c_.caps.bandwidth_mbs = port_bandwidth(port_.info.attr);
    c_.caps.eager_limit = config_.eager_limit;
    c_.caps.max_send = config_.max_send;
    // What sendi takes: the inline size asked of each QP. A QP that grants
    // less sends the rest of that range through a buffer.
    c_.caps.inline_max = config_.inline_max;
    c_.caps.exclusivity = WEFT_BTL_EXCLUSIVITY_DEFAULT;
    c_.caps.flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET | WEFT_BTL_FLAG_FD |
                    (config_.inline_max > 0 ? WEFT_BTL_FLAG_INLINE : 0u);
    c_.caps.priority = config_.priority;
    std::snprintf(c_.name, sizeof c_.name, "openib/%s", port_.info.name.c_str());
    c_.module_ctx = this;
}

Module::~Module()
{
    cpcs_.clear();                     // stop connecting before the QPs go
    for (auto &ep : endpoints_) {
        ep->qp.reset();
        if (ep->rreg)
            rcache_->release(ep->rreg);
    }
    endpoints_.clear();
    reserved_.clear();                 // QPs no endpoint adopted, before their CQ
    if (sreg_)
        rcache_->release(sreg_);
    rcache_.reset();
    if (cq_) {
        drain_channel(true);           // ibv_destroy_cq waits for every event to be acked
        ibv_destroy_cq(cq_);
    }
    if (channel_)
        ibv_destroy_comp_channel(channel_);
    if (epfd_ >= 0)
        close(epfd_);
}

const weft_component_t *Module::owner() const { return &c_.component->base; }

uint32_t Module::my_rank() const { return c_.process ? c_.process->rank : 0; }

std::string Module::job_id() const { return c_.process && c_.process->job_id ? c_.process->job_id : ""; }

std::string Module::where(const Endpoint &ep) const
{
    return "btl/openib on " + port_.info.name + ", peer rank " + std::to_string(ep.c.peer_rank) +
           (ep.host.empty() ? "" : " (" + ep.host + ")");
}

std::string Module::open()
{
    const ibv_device_attr &da = port_.device->attr();
    config_.max_rd_atomic = std::max(1u, std::min<unsigned>(config_.max_rd_atomic, da.max_qp_init_rd_atom));
    config_.recv_depth = std::min<unsigned>(config_.recv_depth, da.max_qp_wr - kControlRecvs - kCloseRecvs);
    half_depth_ = std::max(1u, config_.recv_depth / 2);
    rcache_ = std::make_unique<RegCache>(port_.info.pd, port_.info.name, config_.reg_limit, config_.leave_pinned,
                                         &counters_);

    channel_ = ibv_create_comp_channel(port_.info.ctx);
    if (!channel_)
        return "ibv_create_comp_channel failed: " + std::string(std::strerror(errno));
    fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);
    cq_size_ = std::min(da.max_cqe, 16384);
    cq_ = ibv_create_cq(port_.info.ctx, cq_size_, nullptr, channel_, 0);
    if (!cq_)
        return "ibv_create_cq(" + std::to_string(cq_size_) + ") failed: " + std::strerror(errno);

    stash_.reserve(64);
    stashed_.reserve(64);
    sbufs_ = std::make_unique_for_overwrite<std::byte[]>(size_t{config_.send_bufs} * config_.buf_size);
    std::string why;
    sreg_ = rcache_->acquire(sbufs_.get(), size_t{config_.send_bufs} * config_.buf_size, &why);
    if (!sreg_)
        return why;
    for (uint32_t i = config_.send_bufs; i-- > 0;)
        free_sbufs_.push_back(i);

    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epfd_ < 0)
        return "epoll_create1 failed: " + std::string(std::strerror(errno));
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, channel_->fd, &ev) != 0)
        return "epoll_ctl failed: " + std::string(std::strerror(errno));

    // The cpcs this port runs: btl_openib_cpc's order, each asked by query.
    std::string refused;               // why each cpc did not run, for the error if none does
    for (const std::string &name : config_.cpc_order) {
        const CpcComponent *cpc = nullptr;
        for (const CpcComponent *c : all_cpcs())
            if (name == c->name)
                cpc = c;
        if (!cpc)
            continue;                  // the component checked the names
        std::string no;
        auto refuse = [&] { refused += std::string(refused.empty() ? "" : "; ") + cpc->name + ": " + no; };
        if (cpc->query(host_, port_.info, &no) != 1) {
            refuse();
            if (host_->log_enabled(owner(), WEFT_LOG_DEBUG))
                host_->log(owner(), WEFT_LOG_DEBUG, "%s: cpc %s not used: %s", port_.info.name.c_str(),
                           cpc->name, no.c_str());
            continue;
        }
        std::unique_ptr<CpcModule> m;
        if (int rc = cpc->init(*this, &m, &no); rc != WEFT_SUCCESS || !m) {
            refuse();
            // Quiet: another cpc usually carries the port (a machine without
            // rdma_cm still has udcm); open() fails loudly only if none can.
            host_->log(owner(), WEFT_LOG_DEBUG, "%s: cpc %s could not start: %s", port_.info.name.c_str(), cpc->name,
                       no.c_str());
            continue;
        }
        if (int fd = m->wait_fd(); fd >= 0) {
            epoll_event cev{};
            cev.events = EPOLLIN;
            epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &cev);
        }
        cpc_names_.push_back(cpc->name);
        cpcs_.push_back(std::move(m));
    }
    if (cpcs_.empty())
        return "no connection method (cpc) can run on " + port_.info.name + " (" + refused +
               "; btl_openib_cpc lists which to try)";
    return "";
}

void Module::job_known()
{
    job_told_ = true;
    for (size_t i = 0; i < cpcs_.size();) {
        std::string why;
        const int rc = weft::cutil::guarded([&] { return cpcs_[i]->job_known(&why); });
        if (rc == WEFT_SUCCESS) {
            ++i;
            continue;
        }
        // Declined: no section in the card, so every peer uses another cpc.
        const bool last = cpcs_.size() == 1;
        const int level = !c_.process ? WEFT_LOG_DEBUG : last ? WEFT_LOG_WARN : WEFT_LOG_INFO;
        if (host_->log_enabled(owner(), level))
            host_->log(owner(), level, "%s: cpc %s not used in this job: %s%s", port_.info.name.c_str(),
                       cpc_names_[i].c_str(), why.c_str(),
                       last ? " (it was the only connection method of this port: it reaches no peer)" : "");
        if (int fd = cpcs_[i]->wait_fd(); fd >= 0)
            epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
        declined_ += (declined_.empty() ? "" : "; ") + why;
        for (auto &ep : endpoints_)    // none is made before the card, but never dangle
            if (ep->cpc == cpcs_[i].get())
                ep->cpc = nullptr;
        cpcs_.erase(cpcs_.begin() + static_cast<std::ptrdiff_t>(i));
        cpc_names_.erase(cpc_names_.begin() + static_cast<std::ptrdiff_t>(i));
    }
}

int Module::modex_ready()
{
    int result = WEFT_SUCCESS;
    for (size_t i = 0; i < cpcs_.size(); ++i) {
        std::string why;
        const int rc = weft::cutil::guarded([&] { return cpcs_[i]->modex_ready(&why); });
        if (rc != WEFT_SUCCESS) {
            host_->log(owner(), WEFT_LOG_WARN, "%s: cpc %s after the modex: %s", port_.info.name.c_str(),
                       cpc_names_[i].c_str(), why.c_str());
            result = rc;
        }
    }
    return result;
}

int Module::card(void *buf, size_t *len)
{
    // The runtime sets process before it asks for the card: the job is
    // known (without a runtime, a cpc that needs the job declines here).
    if (!job_told_)
        job_known();
    Card card;
    std::memcpy(card.gid, port_.info.gid.raw, sizeof card.gid);
    card.lid = port_.info.attr.lid;
    card.roce = port_.info.roce;
    card.subnet_prefix = port_.info.gid.global.subnet_prefix;
    for (size_t i = 0; i < cpcs_.size(); ++i)
        if (std::vector<uint8_t> s = cpcs_[i]->card(); !s.empty())   // nothing to publish: not offered
            card.sections.push_back({cpc_names_[i], std::move(s)});
    std::vector<uint8_t> bytes = encode_card(card);
    const size_t room = *len;
    *len = bytes.size();
    if (room < bytes.size())
        return WEFT_ERR_TRUNCATED;
    std::memcpy(buf, bytes.data(), bytes.size());
    return WEFT_SUCCESS;
}

int Module::reachable(const weft_btl_peer_t *peer, char *why, size_t why_len) const
{
    auto no = [&](const std::string &text) {
        weft::btl::write_reason(why, why_len, "%s", text.c_str());
        return 0;
    };
    if (!peer->card || peer->card_len == 0)
        return no("the peer published no btl/openib card (no usable RDMA port there)");
    Card card;
    std::string err;
    if (!decode_card(std::span(static_cast<const uint8_t *>(peer->card), peer->card_len), &card, &err))
        return no("the peer's btl/openib card is unreadable: " + err);
    if (card.roce != port_.info.roce)
        return no(std::string("link layers differ (") + (port_.info.roce ? "Ethernet/RoCE" : "InfiniBand") +
                  " here, " + (card.roce ? "Ethernet/RoCE" : "InfiniBand") + " there)");
    if (!card.roce && card.subnet_prefix != port_.info.gid.global.subnet_prefix)
        return no("the ports are on different InfiniBand subnets (GID prefixes differ)");
    if (cpc_names_.empty())
        return no("no connection method runs on " + port_.info.name + " in this job (" +
                  (declined_.empty() ? std::string("none started") : declined_) + ")");
    for (const std::string &mine : cpc_names_)
        for (const CardSection &s : card.sections)
            if (s.cpc == mine)
                return 1;
    std::string theirs;
    for (const CardSection &s : card.sections)
        theirs += (theirs.empty() ? "" : ",") + s.cpc;
    std::string ours;
    for (const std::string &n : cpc_names_)
        ours += (ours.empty() ? "" : ",") + n;
    return no("no connection method in common (here: " + ours + "; the peer: " + (theirs.empty() ? "none" : theirs) +
              "; see btl_openib_cpc)");
}

Endpoint &Module::new_endpoint(uint32_t rank, const std::string &host)
{
    auto ep = std::make_unique<Endpoint>();
    ep->c.size = sizeof ep->c;
    ep->c.module = &c_;
    ep->c.peer_rank = rank;
    ep->c.state = WEFT_BTL_EP_CONNECTING;
    ep->id = static_cast<uint32_t>(endpoints_.size() + 1);
    ep->host = host;
    endpoints_.push_back(std::move(ep));
    ++connecting_;
    cpc_look_in_ = 1;
    return *endpoints_.back();
}

Endpoint *Module::find_rank(uint32_t rank)
{
    for (auto &ep : endpoints_)
        if (ep->c.peer_rank == rank && ep->phase != EpPhase::gone)
            return ep.get();
    return nullptr;
}

int Module::connect(const weft_btl_peer_t *peer, weft_btl_endpoint_t **out)
{
    if (Endpoint *have = find_rank(peer->rank)) {
        // The peer connected first (accepted) or an earlier call made it.
        *out = &have->c;
        return WEFT_SUCCESS;
    }
    Card card;
    std::string why;
    if (!peer->card ||
        !decode_card(std::span(static_cast<const uint8_t *>(peer->card), peer->card_len), &card, &why)) {
        host_->log(owner(), WEFT_LOG_ERROR, "%s: cannot connect to rank %u: %s", port_.info.name.c_str(), peer->rank,
                   peer->card ? why.c_str() : "it published no card");
        return WEFT_ERR_UNREACHABLE;
    }
    Endpoint &ep = new_endpoint(peer->rank, peer->hostname ? peer->hostname : "");
    ep.card = card;
    *out = &ep.c;
    std::string declined;              // why cpcs both sides run would not connect now
    for (size_t i = 0; i < cpcs_.size(); ++i)
        for (const CardSection &s : card.sections) {
            if (s.cpc != cpc_names_[i])
                continue;
            if (std::string no; cpcs_[i]->declines(ep, &no)) {
                declined += (declined.empty() ? "" : "; ") + no;
                break;                 // the next cpc in this port's order
            }
            ep.cpc = cpcs_[i].get();
            if (int rc = ep.cpc->start_connect(ep, s.data, &why); rc != WEFT_SUCCESS)
                fail(ep, rc, "cpc " + cpc_names_[i] + " could not start: " + why);
            return WEFT_SUCCESS;
        }
    fail(ep, WEFT_ERR_UNREACHABLE, declined.empty() ? "no connection method in common with the peer" : declined);
    return WEFT_SUCCESS;
}

Endpoint *Module::incoming(uint32_t peer_rank, std::string *why)
{
    if (Endpoint *have = find_rank(peer_rank))
        return have;
    if (c_.process && peer_rank >= c_.process->job_size) {
        *why = "rank " + std::to_string(peer_rank) + " is not in this job of " +
               std::to_string(c_.process->job_size);
        return nullptr;
    }
    Endpoint &ep = new_endpoint(peer_rank, "");
    if (!c_.upcalls.accepted) {
        --connecting_;
        ep.phase = EpPhase::gone;
        *why = "the runtime takes no incoming connections";
        return nullptr;
    }
    ep.c.runtime_ctx = c_.upcalls.accepted(c_.upcalls.ctx, &ep.c);
    if (!ep.c.runtime_ctx) {
        --connecting_;
        ep.phase = EpPhase::gone;
        *why = "the runtime refused rank " + std::to_string(peer_rank);
        return nullptr;
    }
    return &ep;
}

int Module::create_qp(RcQp *out, std::string *why)
{
    const ibv_device_attr &da = port_.device->attr();
    ibv_qp_init_attr ia{};
    ia.send_cq = cq_;
    ia.recv_cq = cq_;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = std::min<unsigned>(config_.recv_depth + kControlRecvs + kCloseRecvs + config_.rdma_depth,
                                            da.max_qp_wr);
    ia.cap.max_recv_wr = config_.recv_depth + kControlRecvs + kCloseRecvs;
    ia.cap.max_send_sge = std::min(4, da.max_sge);
    ia.cap.max_recv_sge = 1;
    ia.cap.max_inline_data = config_.inline_max;
    ia.sq_sig_all = 0;
    ibv_qp *qp = ibv_create_qp(port_.info.pd, &ia);
    if (!qp && config_.inline_max) {
        ia.cap.max_inline_data = 0;    // some devices have no inline sends
        qp = ibv_create_qp(port_.info.pd, &ia);
    }
    if (!qp) {
        *why = "ibv_create_qp failed: " + std::string(std::strerror(errno)) +
               " (max_qp on the device: " + std::to_string(da.max_qp) + ")";
        return WEFT_ERR_NO_MEMORY;
    }
    out->qp.reset(qp);
    out->inline_max = ia.cap.max_inline_data;
    out->max_sge = std::clamp(ia.cap.max_send_sge, 1u, 4u);
    out->max_send_wr = ia.cap.max_send_wr;
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = port_.info.port_num;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0) {
        *why = "ibv_modify_qp(INIT) failed: " + std::string(std::strerror(errno));
        return WEFT_ERROR;
    }
    static thread_local std::mt19937 rng{std::random_device{}()};
    QpAddress &local = out->local;
    local.qpn = qp->qp_num;
    local.psn = rng() & 0xffffff;
    local.lid = port_.info.attr.lid;
    std::memcpy(local.gid, port_.info.gid.raw, sizeof local.gid);
    local.mtu = static_cast<uint8_t>(port_.info.attr.active_mtu);
    local.recv_credits = config_.recv_depth;
    return WEFT_SUCCESS;
}

int Module::install_qp(Endpoint &ep, RcQp q, std::string *why)
{
    ep.qp = std::move(q.qp);
    ep.qp_ready = false;
    ep.unposted = ep.unposted_data = ep.unposted_control = 0;
    ep.inline_max = q.inline_max;
    ep.max_sge = q.max_sge;
    ep.sendi_max = ep.max_sge >= 2 ? std::min<unsigned>(ep.inline_max, c_.caps.inline_max) : 0;
    settle(ep);
    ep.inline_wr = ibv_send_wr{};
    ep.inline_wr.opcode = IBV_WR_SEND_WITH_IMM;
    ep.inline_wr.sg_list = ep.inline_sge;
    ep.sq_free = q.max_send_wr;
    ep.unsignaled = 0;
    ep.signal_every = std::clamp(q.max_send_wr / 4, 1u, 32u);
    // Receive buffers, registered once per endpoint.
    if (!ep.rbufs) {
        ep.nrecv = config_.recv_depth + kControlRecvs + kCloseRecvs;
        ep.repost_batch = std::clamp(config_.recv_depth / 4, 1u, Endpoint::kRepostBatch);
        ep.rbufs = std::make_unique_for_overwrite<std::byte[]>(size_t{ep.nrecv} * config_.buf_size);
        ep.rreg = rcache_->acquire(ep.rbufs.get(), size_t{ep.nrecv} * config_.buf_size, why);
        if (!ep.rreg)
            return WEFT_ERR_NO_MEMORY;
        ep.recv_wr = std::make_unique<ibv_recv_wr[]>(ep.nrecv);
        ep.recv_sge = std::make_unique<ibv_sge[]>(ep.nrecv);
        for (unsigned slot = 0; slot < ep.nrecv; ++slot) {
            ep.recv_sge[slot] = {reinterpret_cast<uintptr_t>(ep.rbufs.get() + size_t{slot} * config_.buf_size),
                                 static_cast<uint32_t>(config_.buf_size), ep.rreg->mr->lkey};
            ep.recv_wr[slot].wr_id = wr_id(Wr::recv, ep.id, slot);
            ep.recv_wr[slot].sg_list = &ep.recv_sge[slot];
            ep.recv_wr[slot].num_sge = 1;
        }
    }
    ep.local = q.local;
    return WEFT_SUCCESS;
}

int Module::prepare_qp(Endpoint &ep, QpAddress *local, std::string *why)
{
    ep.qp.reset();
    ep.qp_ready = false;
    RcQp q;
    if (int rc = create_qp(&q, why); rc != WEFT_SUCCESS)
        return rc;
    if (int rc = install_qp(ep, std::move(q), why); rc != WEFT_SUCCESS)
        return rc;
    *local = ep.local;
    return WEFT_SUCCESS;
}

uint32_t Module::job_size() const { return c_.process ? c_.process->job_size : 0; }

int Module::reserve_qp(uint32_t peer_rank, QpAddress *local, std::string *why)
{
    if (auto it = reserved_.find(peer_rank); it != reserved_.end()) {
        *local = it->second.local;
        return WEFT_SUCCESS;
    }
    RcQp q;
    if (int rc = create_qp(&q, why); rc != WEFT_SUCCESS)
        return rc;
    *local = q.local;
    reserved_.emplace(peer_rank, std::move(q));
    return WEFT_SUCCESS;
}

int Module::adopt_qp(Endpoint &ep, QpAddress *local, std::string *why)
{
    auto it = reserved_.find(ep.c.peer_rank);
    if (it == reserved_.end()) {
        *why = "no queue pair was reserved for rank " + std::to_string(ep.c.peer_rank);
        return WEFT_ERR_NOT_FOUND;
    }
    if (ep.qp) {
        *why = "the endpoint of rank " + std::to_string(ep.c.peer_rank) + " has a queue pair already";
        return WEFT_ERR_EXISTS;
    }
    RcQp q = std::move(it->second);
    reserved_.erase(it);
    if (int rc = install_qp(ep, std::move(q), why); rc != WEFT_SUCCESS)
        return rc;
    *local = ep.local;
    return WEFT_SUCCESS;
}

void Module::release_qp(uint32_t peer_rank) { reserved_.erase(peer_rank); }

int Module::peer_section(uint32_t peer_rank, const std::string &cpc, std::vector<uint8_t> *out, std::string *why)
{
    const weft_btl_process_t *proc = WEFT_HAS_MEMBER(&c_, weft_btl_module_t, process) ? c_.process : nullptr;
    if (!WEFT_HAS_MEMBER(proc, weft_btl_process_t, peer_card) || !proc->peer_card) {
        *why = "the runtime cannot show peers' cards (no process.peer_card)";
        return WEFT_ERR_NOT_SUPPORTED;
    }
    std::vector<uint8_t> bytes(4096);
    size_t len = bytes.size();
    int rc = proc->peer_card(proc->card_ctx, &c_, peer_rank, bytes.data(), &len);
    if (rc == WEFT_ERR_TRUNCATED && len > bytes.size() && len <= (size_t{1} << 20)) {
        bytes.resize(len);
        rc = proc->peer_card(proc->card_ctx, &c_, peer_rank, bytes.data(), &len);
    }
    if (rc == WEFT_ERR_NOT_FOUND) {
        *why = "rank " + std::to_string(peer_rank) + " published no btl/openib card for this port";
        return WEFT_ERR_NOT_FOUND;
    }
    if (rc != WEFT_SUCCESS || len > bytes.size()) {
        *why = "the card of rank " + std::to_string(peer_rank) + " could not be read from the modex (status " +
               std::to_string(rc) + (rc == WEFT_SUCCESS ? ", longer than it said" : "") + ")";
        return rc == WEFT_SUCCESS ? WEFT_ERROR : rc;
    }
    bytes.resize(len);
    weft_btl_peer_t peer{};
    peer.size = sizeof peer;
    peer.rank = peer_rank;
    peer.card = bytes.data();
    peer.card_len = len;
    char no[256] = "";
    if (reachable(&peer, no, sizeof no) != 1) {
        // No cpc in common is a missing section; anything else a card we cannot use.
        const bool none = std::strstr(no, "no connection method in common") != nullptr;
        *why = "rank " + std::to_string(peer_rank) + ": " + no;
        return none ? WEFT_ERR_NOT_FOUND : WEFT_ERR_UNREACHABLE;
    }
    Card card;
    decode_card(bytes, &card, why);    // reachable() decoded it already
    for (CardSection &s : card.sections)
        if (s.cpc == cpc) {
            *out = std::move(s.data);
            return WEFT_SUCCESS;
        }
    *why = "rank " + std::to_string(peer_rank) + " runs no " + cpc + " (its card has no such section)";
    return WEFT_ERR_NOT_FOUND;
}

int Module::ready_qp(Endpoint &ep, const QpAddress &remote, std::string *why)
{
    if (!ep.qp) {
        *why = "no queue pair to ready (prepare_qp was not called)";
        return WEFT_ERR_BAD_PARAM;
    }
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = static_cast<ibv_mtu>(std::min<unsigned>(port_.info.attr.active_mtu, remote.mtu ? remote.mtu : 1));
    a.dest_qp_num = remote.qpn;
    a.rq_psn = remote.psn;
    a.max_dest_rd_atomic = static_cast<uint8_t>(std::min<unsigned>(port_.device->attr().max_qp_rd_atom, 16));
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = port_.info.port_num;
    a.ah_attr.dlid = remote.lid;
    if (port_.info.roce || remote.lid == 0) {
        a.ah_attr.is_global = 1;
        std::memcpy(a.ah_attr.grh.dgid.raw, remote.gid, sizeof remote.gid);
        a.ah_attr.grh.sgid_index = static_cast<uint8_t>(port_.info.gid_index);
        a.ah_attr.grh.hop_limit = 64;
    }
    if (ibv_modify_qp(ep.qp.get(), &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0) {
        *why = "ibv_modify_qp(RTR) failed: " + std::string(std::strerror(errno));
        return WEFT_ERROR;
    }
    ibv_qp_attr s{};
    s.qp_state = IBV_QPS_RTS;
    s.timeout = static_cast<uint8_t>(config_.timeout);
    s.retry_cnt = static_cast<uint8_t>(config_.retry_count);
    s.rnr_retry = 7;
    s.sq_psn = ep.local.psn;
    s.max_rd_atomic = static_cast<uint8_t>(config_.max_rd_atomic);
    if (ibv_modify_qp(ep.qp.get(), &s,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                          IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
        *why = "ibv_modify_qp(RTS) failed: " + std::string(std::strerror(errno));
        return WEFT_ERROR;
    }
    ep.qp_ready = true;
    ep.send_credits = ep.peer_depth = std::min(remote.recv_credits, kMaxDataCredits);
    ep.control_credits = kControlRecvs;
    return WEFT_SUCCESS;
}

int Module::post_recvs(Endpoint &ep, std::string *why)
{
    // In repost()'s batches; nothing is owed to the peer for these (its
    // credits start at recv_depth).
    for (unsigned i = 0; i < ep.nrecv; ++i) {
        ep.unposted_slot[ep.unposted++] = static_cast<uint16_t>(i);
        if (ep.unposted == Endpoint::kRepostBatch || i + 1 == ep.nrecv)
            if (int rc = repost(ep); rc != 0) {
                *why = "ibv_post_recv failed: " + std::string(std::strerror(rc));
                return WEFT_ERROR;
            }
    }
    return WEFT_SUCCESS;
}

void Module::connected(Endpoint &ep)
{
    if (ep.phase != EpPhase::connecting)
        return;
    ep.phase = EpPhase::connected;
    settle(ep);
    --connecting_;
    report(ep, WEFT_BTL_EP_CONNECTED, WEFT_SUCCESS, "");
    flush_pending(ep);
    if (ep.user_closed)
        post_close(ep);
}

void Module::connect_failed(Endpoint &ep, int status, const std::string &why)
{
    fail(ep, status ? status : WEFT_ERR_UNREACHABLE, why);
}

void Module::peer_gone(Endpoint &ep, const std::string &why)
{
    if (ep.phase == EpPhase::gone)
        return;
    if (ep.peer_closed) {
        // Its close frame came after everything it sent, so the close is
        // complete; ours cannot be acknowledged any more, and need not be.
        ep.close_done = true;
        maybe_closed(ep);
        return;
    }
    fail(ep, WEFT_ERR_UNREACHABLE, why);
}

void Module::fail(Endpoint &ep, int status, const std::string &why)
{
    if (ep.phase == EpPhase::gone)
        return;
    if (ep.phase == EpPhase::connecting)
        --connecting_;
    ep.phase = EpPhase::gone;
    ep.pending.clear();
    settle(ep);
    if (ep.cpc)
        ep.cpc->forget(ep);
    if (ep.qp) {
        ibv_qp_attr a{};
        a.qp_state = IBV_QPS_ERR;
        ibv_modify_qp(ep.qp.get(), &a, IBV_QP_STATE);   // flushes what is posted
    }
    // RDMA operations of this endpoint complete with the error (through
    // their flushed work requests, or here if none is out).
    report(ep, WEFT_BTL_EP_FAILED, status, where(ep) + ": " + why);
}

void Module::report(Endpoint &ep, weft_btl_ep_state_t state, int status, const std::string &why)
{
    count_state(state, why.c_str());
    reports_.push_back({ep.id, state, status, why});
}

void Module::drain_reports()
{
    while (!reports_.empty()) {
        Report r = std::move(reports_.front());
        reports_.pop_front();
        Endpoint *ep = find_ep(r.ep);
        if (!ep || ep->reported_final)
            continue;
        if (r.state == WEFT_BTL_EP_FAILED || r.state == WEFT_BTL_EP_CLOSED)
            ep->reported_final = true;
        ep->c.state = r.state;
        if (c_.upcalls.state)
            c_.upcalls.state(c_.upcalls.ctx, &ep->c, r.state, r.status, r.reason.c_str());
    }
}

int Module::disconnect(Endpoint &ep)
{
    if (ep.user_closed || ep.phase == EpPhase::gone)
        return WEFT_ERR_BAD_PARAM;
    ep.user_closed = true;
    settle(ep);
    if (ep.phase == EpPhase::connected)
        post_close(ep);
    else
        want_attention(ep);
    return WEFT_SUCCESS;
}

void Module::maybe_closed(Endpoint &ep)
{
    if (ep.phase == EpPhase::gone || !ep.close_done || !ep.peer_closed)
        return;
    ep.phase = EpPhase::gone;
    settle(ep);
    if (ep.cpc)
        ep.cpc->forget(ep);
    report(ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, "");
}

int Module::prepare_wait()
{
    if (in_progress_)
        return 1;
    cpc_look_in_ = 1;                  // the wake-up may be a cpc's descriptor
    // The cpcs' descriptors are in wait_fd's set too, and progress() looks
    // at them only now and then: what they have pending (a handshake
    // datagram's completion, a CM event) is taken now, or a quiet module's
    // wait_fd would be readable and the caller's sleep end at once.
    for (auto &cpc : cpcs_)
        (void)cpc->prepare_wait();
    if (!reports_.empty() || !stash_.empty())
        return 1;
    if (!armed_) {
        if (ibv_req_notify_cq(cq_, 0) != 0)
            return WEFT_ERROR;
        armed_ = true;
    }
    // A completion that came before the arming raises no event: look once.
    ibv_wc wc[16];
    int n = ibv_poll_cq(cq_, 16, wc);
    if (n > 0) {
        stash_.insert(stash_.end(), wc, wc + n);
        return 1;
    }
    return 0;
}

void Module::drain_channel(bool always)
{
    if (!armed_ && !always)
        return;
    ibv_cq *ev_cq = nullptr;
    void *ev_ctx = nullptr;
    unsigned events = 0;
    while (ibv_get_cq_event(channel_, &ev_cq, &ev_ctx) == 0)
        ++events;
    if (events)
        ibv_ack_cq_events(cq_, events);
    armed_ = false;
}

} // namespace weft::openib
