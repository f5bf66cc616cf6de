// SPDX-License-Identifier: BSD-3-Clause
// Per-peer transport state: which modules carry traffic to each rank (the
// choice is made on first use, from the peer's class and the modules'
// answers), their endpoints, and the lazy, non-blocking connection.
//
// Peer classes come from PMIx node ids, never host names (network
// namespaces and containers share host names).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <weft/btl.h>

#include "core/status.hpp"
#include "engine/counters.hpp"
#include "rte/btl_layer.hpp"
#include "rte/peer_select.hpp"
#include "rte/pmix_client.hpp"

namespace weft::log { class Logger; }

namespace weft::rt {

enum class PeerState { Unresolved, Resolved, Connecting, Connected, Failed };
const char *peer_state_name(PeerState s);

struct Peer {
    uint32_t rank = 0;
    uint32_t node_id = 0;
    weft_peer_class_t peer_class = WEFT_PEER_SELF;
    std::string hostname;
    PeerState state = PeerState::Unresolved;
    PeerChoice choice;
    size_t cards_found = 0;                        // modules whose card the peer published
    std::vector<weft_btl_endpoint_t *> endpoints;  // parallel to choice.chosen; null until started
    std::string failure;                           // why Failed
    std::chrono::steady_clock::time_point connect_started;   // for the counter page
};

class Endpoints {
public:
    Endpoints(PmixClient &pmix, BtlLayer &btl, log::Logger &log);

    // The peer with its class and transport choice (cards read from the
    // modex on first use). An error only for a rank outside the job.
    Result<Peer *> resolve(uint32_t rank);
    // Starts connecting (non-blocking) if not already; UNREACHABLE with the
    // list of components tried when no transport reaches the peer.
    Status start(uint32_t rank);
    bool settled(uint32_t rank) const;   // Connected or Failed
    Status status_of(uint32_t rank) const;

    // Upcalls from modules (through the runtime).
    void on_state(weft_btl_endpoint_t *ep, weft_btl_ep_state_t state, int status, const char *reason);
    void *on_accepted(weft_btl_endpoint_t *ep);
    // A peer died (PMIx event): its endpoints fail and its operations with them.
    void fail(uint32_t rank, const std::string &why);

    // Disconnects every endpoint (finalize).
    void close_all();
    // Called once per peer when it becomes Failed after having been usable
    // (the engine fails the operations pending on it).
    void set_failed_callback(void (*fn)(void *, uint32_t, const std::string &), void *ctx)
    {
        failed_fn_ = fn;
        failed_ctx_ = ctx;
    }
    // Called with each module this side starts connecting through, so its
    // handshake is progressed on every pass from the start.
    void set_connecting_callback(void (*fn)(void *, weft_btl_module_t *), void *ctx)
    {
        connecting_fn_ = fn;
        connecting_ctx_ = ctx;
    }
    // Where connection events are counted (the engine's page; none: not counted).
    void set_counters(engine::CounterPage *page) { counters_ = page; }
    // The peer's state, for the engine's fast path; null if never resolved.
    Peer *peer(uint32_t rank) const { return find(rank); }
    // Peers whose connection is under way (Connecting).
    size_t connecting() const { return connecting_; }

private:
    Peer *find(uint32_t rank) const;
    Status unreachable(const Peer &p) const;
    void log_class_choice(const Peer &p);

    PmixClient &pmix_;
    BtlLayer &btl_;
    log::Logger &log_;
    std::unordered_map<uint32_t, std::unique_ptr<Peer>> peers_;
    std::set<weft_peer_class_t> classes_logged_;
    void (*failed_fn_)(void *, uint32_t, const std::string &) = nullptr;
    void *failed_ctx_ = nullptr;
    void (*connecting_fn_)(void *, weft_btl_module_t *) = nullptr;
    void *connecting_ctx_ = nullptr;
    void notify_failed(const Peer &p);
    void count_failure(const Peer &p);
    // Every change of a peer's state goes here (it keeps connecting_).
    void set_state(Peer &p, PeerState s);
    size_t connecting_ = 0;
    // p is Connected now: counted with its connect time and primary module.
    void set_connected(Peer &p);
    engine::CounterPage *counters_ = nullptr;
};

} // namespace weft::rt
