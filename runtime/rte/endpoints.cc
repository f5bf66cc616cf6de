// SPDX-License-Identifier: BSD-3-Clause
#include "rte/endpoints.hpp"

#include <cstdio>

#include "log/log.hpp"

namespace weft::rt {

const char *peer_state_name(PeerState s)
{
    switch (s) {
    case PeerState::Unresolved: return "unresolved";
    case PeerState::Resolved: return "resolved";
    case PeerState::Connecting: return "connecting";
    case PeerState::Connected: return "connected";
    case PeerState::Failed: return "failed";
    }
    return "?";
}

Endpoints::Endpoints(PmixClient &pmix, BtlLayer &btl, log::Logger &log)
    : pmix_(pmix), btl_(btl), log_(log)
{
}

Peer *Endpoints::find(uint32_t rank) const
{
    auto it = peers_.find(rank);
    return it == peers_.end() ? nullptr : it->second.get();
}

Result<Peer *> Endpoints::resolve(uint32_t rank)
{
    if (Peer *p = find(rank))
        return p;
    auto node = pmix_.node_id_of(rank);
    if (!node.ok())
        return node.status();
    auto peer = std::make_unique<Peer>();
    Peer &p = *peer;
    p.rank = rank;
    p.node_id = node.value();
    p.peer_class = rank == pmix_.rank()          ? WEFT_PEER_SELF
                   : p.node_id == pmix_.node_id() ? WEFT_PEER_SAME_NODE
                                                  : WEFT_PEER_OTHER_NODE;
    p.hostname = pmix_.hostname_of(rank);

    // Cards stay alive in `cards` while the modules judge reachability.
    std::vector<std::vector<std::byte>> cards;
    std::vector<Candidate> cands;
    cards.reserve(btl_.modules().size());
    for (const auto &om : btl_.modules()) {
        auto card = pmix_.get(rank, om.card_key);
        cards.push_back(card.ok() ? std::move(card.value()) : std::vector<std::byte>{});
        if (card.ok())
            ++p.cards_found;
        weft_btl_peer_t wp{};
        wp.size = sizeof wp;
        wp.rank = rank;
        wp.node_id = p.node_id;
        wp.peer_class = p.peer_class;
        wp.hostname = p.hostname.c_str();
        wp.card = card.ok() ? cards.back().data() : nullptr;
        wp.card_len = card.ok() ? cards.back().size() : 0;
        cands.push_back({om.module, wp});
    }
    p.choice = choose(p.peer_class, cands, btl_.required());
    p.endpoints.assign(p.choice.chosen.size(), nullptr);
    set_state(p, PeerState::Resolved);
    if (!p.choice.reachable()) {
        set_state(p, PeerState::Failed);
        p.failure = unreachable(p).message();
    }
    log_class_choice(p);
    Peer *raw = peer.get();
    peers_.emplace(rank, std::move(peer));
    return raw;
}

Status Endpoints::unreachable(const Peer &p) const
{
    std::string msg = p.choice.unreachable_message(p.rank, p.hostname);
    // Components without a module never got asked; say why they were not there.
    std::string also;
    for (const auto &c : btl_.components())
        if (!c.used)
            also += "  btl/" + c.name + ": not in use: " + c.reason + "\n";
    if (!also.empty() && p.choice.require_error.empty())
        msg += "\nComponents not in use in this process:\n" + also.substr(0, also.size() - 1);
    return Status(WEFT_ERR_UNREACHABLE, msg);
}

// One info line per peer class: which transports carry it and what was
// passed over, so "why is this slow" has an answer at -v.
void Endpoints::log_class_choice(const Peer &p)
{
    if (!classes_logged_.insert(p.peer_class).second || !log_.enabled("btl", WEFT_LOG_INFO))
        return;
    std::string line = std::string("peers ") + peer_class_name(p.peer_class) + ": " + p.choice.summary();
    std::string others;
    for (const auto &v : p.choice.verdicts)
        if (v.role == Verdict::Role::Excluded || v.role == Verdict::Role::Unreachable)
            others += (others.empty() ? "" : "; ") + v.module + " " + role_name(v.role) + " (" + v.reason + ")";
    if (!others.empty())
        line += "; not used: " + others;
    log_.write("btl", "base", WEFT_LOG_INFO, line);
}

Status Endpoints::start(uint32_t rank)
{
    auto r = resolve(rank);
    if (!r.ok())
        return r.status();
    Peer &p = *r.value();
    if (p.state == PeerState::Failed)
        return Status(WEFT_ERR_UNREACHABLE, p.failure);
    if (p.state != PeerState::Resolved)
        return Status::success();
    set_state(p, PeerState::Connecting);
    p.connect_started = std::chrono::steady_clock::now();
    for (size_t k = 0; k < p.choice.chosen.size(); ++k) {
        if (p.endpoints[k])
            continue;   // the peer connected to us first (on_accepted)
        const auto &om = btl_.modules()[p.choice.chosen[k]];
        weft_btl_peer_t wp{};
        wp.size = sizeof wp;
        wp.rank = rank;
        wp.node_id = p.node_id;
        wp.peer_class = p.peer_class;
        wp.hostname = p.hostname.c_str();
        auto card = pmix_.get(rank, om.card_key);
        wp.card = card.ok() ? card.value().data() : nullptr;
        wp.card_len = card.ok() ? card.value().size() : 0;
        weft_btl_endpoint_t *ep = nullptr;
        int rc = om.component->start_connect(om.module, &wp, &ep);
        if (rc != WEFT_SUCCESS || !ep) {
            set_state(p, PeerState::Failed);
            p.failure = "btl/" + std::string(om.module->name) + ": cannot start connecting to rank " +
                        std::to_string(rank) + " on " + p.hostname + ": " + weft_status_string(rc);
            count_failure(p);   // never usable: failed_fn_ is for peers that were
            return Status(rc < 0 ? rc : WEFT_ERROR, p.failure);
        }
        ep->runtime_ctx = &p;
        p.endpoints[k] = ep;
        if (connecting_fn_)
            connecting_fn_(connecting_ctx_, om.module);
    }
    // A module may report CONNECTED at once through ep->state.
    bool all = true;
    for (auto *ep : p.endpoints)
        all = all && ep->state == WEFT_BTL_EP_CONNECTED;
    if (all)
        set_connected(p);
    return Status::success();
}

bool Endpoints::settled(uint32_t rank) const
{
    const Peer *p = find(rank);
    return p && (p->state == PeerState::Connected || p->state == PeerState::Failed);
}

Status Endpoints::status_of(uint32_t rank) const
{
    const Peer *p = find(rank);
    if (!p)
        return Status(WEFT_ERR_NOT_FOUND, "rank " + std::to_string(rank) + " was never contacted");
    if (p->state == PeerState::Failed)
        return Status(WEFT_ERR_UNREACHABLE, p->failure);
    return Status::success();
}

void Endpoints::on_state(weft_btl_endpoint_t *ep, weft_btl_ep_state_t state, int status,
                         const char *reason)
{
    auto *p = static_cast<Peer *>(ep->runtime_ctx);
    if (!p)
        return;
    if (state == WEFT_BTL_EP_FAILED || state == WEFT_BTL_EP_CLOSED) {
        if (p->state != PeerState::Failed) {
            set_state(*p, PeerState::Failed);
            p->failure = "btl/" + std::string(ep->module->name) + ": connection to rank " +
                         std::to_string(p->rank) + " on " + p->hostname +
                         (state == WEFT_BTL_EP_CLOSED ? " closed" : " failed") + ": " +
                         (reason && *reason ? reason : weft_status_string(status));
            notify_failed(*p);
        }
        for (auto *&e : p->endpoints)
            if (e == ep)
                e = nullptr;   // the module frees a closed or failed endpoint
        return;
    }
    if (state == WEFT_BTL_EP_CONNECTED && p->state == PeerState::Connecting) {
        bool all = true;
        for (auto *e : p->endpoints)
            all = all && e && e->state == WEFT_BTL_EP_CONNECTED;
        if (all)
            set_connected(*p);
    }
}

void *Endpoints::on_accepted(weft_btl_endpoint_t *ep)
{
    auto r = resolve(ep->peer_rank);
    if (!r.ok())
        return nullptr;   // a rank outside the job: refuse
    Peer &p = *r.value();
    for (size_t k = 0; k < p.choice.chosen.size(); ++k)
        if (btl_.modules()[p.choice.chosen[k]].module == ep->module && !p.endpoints[k]) {
            p.endpoints[k] = ep;
            if (p.state == PeerState::Resolved)
                set_state(p, PeerState::Connecting);
            // An accepted endpoint is usually connected already, and its
            // module owes no state upcall for it: the peer may be complete.
            if (p.state == PeerState::Connecting) {
                bool all = true;
                for (auto *e : p.endpoints)
                    all = all && e && e->state == WEFT_BTL_EP_CONNECTED;
                if (all)
                    set_connected(p);
            }
            return &p;
        }
    // Not a module we chose for this peer: accept anyway so the peer's
    // traffic is not lost (its choice may differ, e.g. other priorities).
    return &p;
}

void Endpoints::fail(uint32_t rank, const std::string &why)
{
    Peer *p = find(rank);
    if (!p) {
        auto r = resolve(rank);
        if (!r.ok())
            return;
        p = r.value();
    }
    const bool was_failed = p->state == PeerState::Failed;
    set_state(*p, PeerState::Failed);
    p->failure = why;
    if (!was_failed)
        notify_failed(*p);
    for (auto *&ep : p->endpoints)
        if (ep && weft_btl_disconnect(ep) != WEFT_ERR_NOT_SUPPORTED)
            ep = nullptr;
}

void Endpoints::notify_failed(const Peer &p)
{
    count_failure(p);
    if (failed_fn_)
        failed_fn_(failed_ctx_, p.rank, p.failure);
}

void Endpoints::count_failure(const Peer &p)
{
    if (!counters_ || p.rank >= counters_->header().job_size)
        return;
    weft_peer_counters_t &c = counters_->peer(p.rank);
    ++c.failures;
    std::snprintf(c.failure, sizeof c.failure, "%s", p.failure.c_str());
}

void Endpoints::set_state(Peer &p, PeerState s)
{
    if (p.state == PeerState::Connecting)
        --connecting_;
    if (s == PeerState::Connecting)
        ++connecting_;
    p.state = s;
}

void Endpoints::set_connected(Peer &p)
{
    set_state(p, PeerState::Connected);
    if (!counters_ || p.rank >= counters_->header().job_size)
        return;
    weft_peer_counters_t &c = counters_->peer(p.rank);
    ++c.connects;
    c.connect_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - p.connect_started)
            .count());
    c.primary_module = p.choice.chosen.empty() ? -1 : static_cast<int64_t>(p.choice.chosen.front());
    c.peer_class = static_cast<uint32_t>(p.peer_class) + 1;
}

void Endpoints::close_all()
{
    for (auto &[rank, p] : peers_)
        for (auto *&ep : p->endpoints)
            if (ep) {
                ep->runtime_ctx = nullptr;
                weft_btl_disconnect(ep);
                ep = nullptr;
            }
}

} // namespace weft::rt
