// SPDX-License-Identifier: BSD-3-Clause
// The cpc (connection pseudo-component) sub-framework of btl/openib: how an
// RC queue pair gets connected to a peer's. Each cpc is a table of entry
// points (the seed interface's open/query/init, then start_connect and
// finalize on the per-module object), linked into openib (never dlopened).
//
//   open          registers the cpc's parameters (shown by weft_info)
//   query         can this cpc run on this port? (RoCE needs rdmacm or a
//                 GID-routed handshake; a cpc may need a device feature)
//   init          binds the cpc to one module (one port): sets up whatever
//                 receives incoming connection requests asynchronously
//   start_connect begins connecting an endpoint, never blocking
//   finalize      (the CpcModule's destructor) stops asynchronous handling;
//                 the QPs themselves belong to openib
//
// openib's side (CpcHost) is the seed's two callbacks, post_recvs(endpoint)
// once the local QP can receive and connected(endpoint) once both sides are
// connected, plus what a handshake needs: creating the endpoint of a peer
// that connects first, preparing and readying the QP, and failing.
//
// Each port picks, per peer, the highest-priority cpc that both its own
// query accepted and the peer's card lists (the card carries one section per
// cpc). The acceptor answers on whichever cpc the request came through.
//
// Two later hooks serve a cpc that wires its peers at init instead of on
// demand (oob): job_known (the job's rank and size are known, the card is
// about to be published: reserve queue pairs, or decline) and modex_ready
// (every peer's card is readable through CpcHost::peer_section: connect).
// A lazy cpc ignores both.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <weft/component.h>
#include <weft/host.h>

namespace weft::openib {

struct Endpoint;   // btl_openib_module.hpp; cpcs use it only through CpcHost

// One side of an RC connection, as a cpc carries it to the other side.
struct QpAddress {
    uint32_t qpn = 0;          // 24 bits
    uint32_t psn = 0;          // 24 bits: first packet sequence number
    uint16_t lid = 0;          // InfiniBand; 0 on RoCE
    uint8_t gid[16] = {};      // RoCE and routed IB
    uint8_t mtu = 0;           // enum ibv_mtu of the sender's port
    uint32_t recv_credits = 0; // receive buffers the sender posted for this peer
};

// The port a module runs on, as its cpcs see it.
struct PortInfo {
    ibv_context *ctx = nullptr;
    ibv_pd *pd = nullptr;
    uint8_t port_num = 0;
    int gid_index = 0;
    ibv_gid gid{};
    ibv_port_attr attr{};
    bool roce = false;               // link layer Ethernet: addresses are GIDs, no LIDs
    std::string name;                // "rxe0:1", for messages
    std::string ipv4;                // the port's IPv4 address if it has one (rdmacm), else ""
};

// What openib offers a cpc. Everything is called from the module's progress
// (or start_connect), on one thread.
class CpcHost {
public:
    virtual ~CpcHost() = default;
    virtual const weft_host_t *host() const = 0;
    virtual const weft_component_t *owner() const = 0;    // for host->log / show_help
    virtual const PortInfo &port() const = 0;
    virtual uint32_t my_rank() const = 0;
    virtual std::string job_id() const = 0;              // the peer must be of the same job

    // The endpoint of a peer that connects to us first: made here and shown
    // to the runtime (accepted upcall). nullptr with *why if refused. If an
    // endpoint for that rank exists already it is returned (simultaneous
    // connect: the cpc decides which attempt survives).
    virtual Endpoint *incoming(uint32_t peer_rank, std::string *why) = 0;
    virtual uint32_t peer_rank(const Endpoint &ep) const = 0;

    // Creates the endpoint's RC QP if it has none (RESET -> INIT) and fills
    // the local address. A QP left from an earlier attempt is reset first.
    virtual int prepare_qp(Endpoint &ep, QpAddress *local, std::string *why) = 0;
    // INIT -> RTR -> RTS against the remote address.
    virtual int ready_qp(Endpoint &ep, const QpAddress &remote, std::string *why) = 0;
    // The seed's callbacks: receives posted (after ready_qp, before the peer
    // may send), and connected on both sides: the endpoint may carry data.
    virtual int post_recvs(Endpoint &ep, std::string *why) = 0;
    virtual void connected(Endpoint &ep) = 0;
    // The connection cannot be made (the endpoint goes FAILED with why).
    virtual void connect_failed(Endpoint &ep, int status, const std::string &why) = 0;
    // The peer's side of a connected endpoint went away (its connection
    // manager said so: it finalized or died). Fails the endpoint unless an
    // orderly close got there first.
    virtual void peer_gone(Endpoint &ep, const std::string &why) = 0;

    // Per-endpoint storage for the cpc (its connection record).
    virtual void set_cpc_data(Endpoint &ep, void *data) = 0;
    virtual void *cpc_data(const Endpoint &ep) const = 0;

    // For cpcs that wire at init (oob). The job's size (0 when no runtime
    // told the module who it is).
    virtual uint32_t job_size() const = 0;
    // The section named cpc of the card peer_rank published for this
    // module, read from the modex: only from CpcModule::modex_ready on.
    // WEFT_ERR_NOT_FOUND (with *why) when the peer published no card or no
    // such section, another error when the card cannot be read or its port
    // cannot be reached from here (link layer, subnet).
    virtual int peer_section(uint32_t peer_rank, const std::string &cpc, std::vector<uint8_t> *out,
                             std::string *why) = 0;
    // Creates an RC QP (RESET -> INIT) for a peer that has no endpoint yet
    // and keeps it for that rank; fills its local address. A second call
    // for the same rank returns the same QP's address.
    virtual int reserve_qp(uint32_t peer_rank, QpAddress *local, std::string *why) = 0;
    // Moves the QP reserved for ep's rank into ep (which must have no QP
    // yet), as prepare_qp would have made it, and fills its local address
    // (the same as reserve_qp gave).
    virtual int adopt_qp(Endpoint &ep, QpAddress *local, std::string *why) = 0;
    // Destroys the QP reserved for peer_rank, if any.
    virtual void release_qp(uint32_t peer_rank) = 0;
};

// A cpc bound to one module.
class CpcModule {
public:
    virtual ~CpcModule() = default;      // finalize
    // The cpc's section of the module's card (what a peer needs to reach it).
    virtual std::vector<uint8_t> card() const = 0;
    // Begins connecting ep to the peer whose card section is peer_card.
    // Returns WEFT_SUCCESS (the result comes later through CpcHost) or an
    // error with *why.
    virtual int start_connect(Endpoint &ep, std::span<const uint8_t> peer_card, std::string *why) = 0;
    // Handles incoming handshake traffic and timeouts; returns events handled
    // or an error. A busy rank calls it now and then with nothing to do:
    // where it can, it then returns without a system call.
    virtual int progress() = 0;
    // progress() before the rank sleeps on wait_fd: wait_fd is left quiet
    // unless there is work (pending events consumed, wake-ups re-armed).
    virtual int prepare_wait() { return progress(); }
    // A descriptor readable when progress() has work, or -1 (polled only).
    virtual int wait_fd() const { return -1; }
    // The endpoint is going away (closed or failed): forget it.
    virtual void forget(Endpoint &ep) = 0;
    // Traffic from the peer arrived on ep's QP before the handshake ended
    // (its last message late or lost): the connection is up; stop
    // retransmitting and treat it as established.
    virtual void established(Endpoint &ep) { (void)ep; }
    // The job is known (CpcHost::my_rank and job_size), and the card is
    // asked for the first time. A cpc that wires at init reserves its queue
    // pairs here. An error with *why declines: the cpc is dropped from this
    // module (no card section, no connections) and the others carry on.
    virtual int job_known(std::string *why) { (void)why; return WEFT_SUCCESS; }
    // Once, after the modex fence of weft_init: every peer's card is
    // readable (CpcHost::peer_section). An error with *why is logged;
    // the cpc fails or skips the peers it could not wire itself.
    virtual int modex_ready(std::string *why) { (void)why; return WEFT_SUCCESS; }
    // Asked before start_connect: true with *why when this cpc will not
    // connect ep now (oob connects only inside weft_init); openib then
    // tries the next cpc both sides run, and fails the endpoint with the
    // reasons if none is left. A lazy cpc never declines.
    virtual bool declines(const Endpoint &ep, std::string *why) const
    {
        (void)ep;
        (void)why;
        return false;
    }
};

// The entry-point table of one cpc (size first, as every table of weft).
struct CpcComponent {
    size_t size;
    const char *name;                    // "udcm", "rdmacm", "oob"
    int default_priority;                // btl_openib_cpc_<name>_priority overrides
    // Registers parameters (weft_info shows them). May be NULL.
    int (*open)(const weft_host_t *host, const weft_component_t *owner);
    // 1 if the cpc can run on port, else 0 with why.
    int (*query)(const weft_host_t *host, const PortInfo &port, std::string *why);
    // Binds the cpc to one module.
    int (*init)(CpcHost &module, std::unique_ptr<CpcModule> *out, std::string *why);
};

// Every cpc built in, in default priority order.
std::span<const CpcComponent *const> all_cpcs();

} // namespace weft::openib
