// SPDX-License-Identifier: BSD-3-Clause
// The btl/tcp module: one per chosen interface. It owns a listener on the
// interface's address, an epoll set (listener, handshakes, links) that is
// also the runtime's wait_fd, the endpoints, and the handshakes in flight.
//
// Links: an endpoint is btl_tcp_links connections to its peer, every one
// set up by the same handshake (it names the link and the count, which
// both sides must agree on). Ordered frames all go on link 0, so they keep
// their order; frames the runtime sends unordered (sendx) take whichever
// link is idle, which spreads large transfers over all of them. The
// endpoint is CONNECTED once every link is up, and an orderly close sends a
// close frame on every link: the peer reports CLOSED only after all of them
// (so after every frame sent before it, whatever link it took).
//
// Connection rule, per link (deterministic, no extra round trip): the
// connector sends a hello with the acceptor's secret; the acceptor answers
// accept, refuse or duplicate. When both ranks connect the same link at
// once, the connection started by the lower rank wins: an acceptor with its
// own attempt on that link under way answers "duplicate" to a higher-ranked
// connector (whose link then waits for the lower rank's connection), and
// adopts a lower-ranked connector's connection (its own attempt then gets
// "duplicate").
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <weft/btl_base.hpp>

#include "btl_tcp_iface.hpp"
#include "btl_tcp_link.hpp"
#include "btl_tcp_wire.hpp"

namespace weft::btl_tcp {

struct TcpConfig {
    int priority = 10;
    size_t eager_limit = 64 * 1024;
    size_t max_send = size_t{64} << 20;
    size_t sndbuf = size_t{4} << 20, rcvbuf = size_t{4} << 20;
    unsigned links = 2;                 // connections per endpoint
    size_t max_queued = 4096;           // frames waiting per endpoint before AGAIN
    double handshake_timeout = 10.0;    // seconds
    int keepalive_time = 30, keepalive_intvl = 5, keepalive_probes = 4;   // seconds, count
};

// What all modules of this process share: the secret in every card and the
// addresses of every module (each card lists them all, so a peer's module
// pairs with ours whatever the interface order on its host).
struct Identity {
    uint8_t secret[kSecretBytes] = {};
    std::vector<CardEntry> entries;
    bool has_loopback = false;
};

struct TcpEndpoint;
class TcpModule;

// Shared by the module's sources (btl_tcp_module.cc, _connect.cc, _data.cc).
using Clock = std::chrono::steady_clock;
// epoll tags: the low bits of an (8-aligned) object pointer say what it is.
inline constexpr uintptr_t kTagListener = 0, kTagHandshake = 1, kTagEndpoint = 2, kTagMask = 7;
// How long a closed link waits for the peer's end before it is dropped.
inline constexpr auto kLinger = std::chrono::seconds(5);

// The socket address of a card entry (*len: its length).
sockaddr_storage to_sockaddr(const CardEntry &e, socklen_t *len);

// A connection in its handshake, either direction.
struct Handshake {
    UniqueFd fd;
    bool outgoing = false;
    bool connected = false;             // outgoing: the TCP connect completed
    TcpEndpoint *ep = nullptr;          // outgoing: the endpoint it serves
    unsigned link = 0;                  // outgoing: which of its links
    std::byte buf[kHelloBytes] = {};
    size_t have = 0;                    // bytes read (incoming hello or outgoing reply)
    size_t sent = 0;                    // outgoing hello bytes written
    std::chrono::steady_clock::time_point deadline;
    std::string from;                   // peer address, for messages
    bool dead = false;                  // reaped on the next pass; its descriptor is closed or adopted
};

enum class EpPhase { connecting, connected, closing, gone };

// Where an endpoint's links deliver: the runtime's upcalls for it.
class EndpointSink final : public LinkSink {
public:
    EndpointSink(TcpModule &module, TcpEndpoint &ep) : module_(module), ep_(ep) {}
    void message(uint8_t am_id, std::span<const std::byte> data) override;
    bool stop() const override;
    bool place(uint8_t am_id, std::span<const std::byte> head, size_t len, weft_btl_placement_t *place) override;
    void placed(uint8_t am_id, uint64_t token, int status) override;

private:
    TcpModule &module_;
    TcpEndpoint &ep_;
};

// One link of an endpoint (its epoll tag, so it must not move).
struct LinkSlot {
    TcpEndpoint *ep = nullptr;
    unsigned index = 0;
    bool outgoing = false;              // our connection attempt for it is under way
    bool closed = false;                // the peer's close frame arrived on it
    bool watched = false;               // its descriptor is in the epoll set (see progress())
    std::unique_ptr<Link> link;         // once up
};

struct TcpEndpoint : weft::btl::EndpointBase {
    std::string host;                   // peer's host name, for messages
    std::string addr;                   // peer's address, for messages
    EpPhase phase = EpPhase::connecting;
    bool user_closed = false;           // disconnect() was called
    std::vector<std::unique_ptr<LinkSlot>> slots;   // btl_tcp_links of them
    unsigned up = 0, closed = 0;        // links up; links the peer closed
    unsigned next = 0;                  // where the next unordered frame tries first
    std::chrono::steady_clock::time_point deadline;   // connecting: every link up by then
    // Frames accepted while connecting, sent on link 0 once connected.
    std::deque<std::pair<FrameHeader, std::vector<std::byte>>> early;
    // Placements a failed or closed link abandoned: told before the state upcall.
    std::vector<Unlanded> unlanded;
    // Where its links deliver; built with the first link that reads.
    std::unique_ptr<EndpointSink> sink;
    // Why it closed or failed: logged when its links are closed (reap()).
    std::string ended;
    Link &primary() { return *slots[0]->link; }
};

class TcpModule : public weft::btl::ModuleBase<TcpModule> {
public:
    using Endpoint = TcpEndpoint;
    static constexpr const char *kName = "tcp";
    // A gone endpoint waits for reap(); the runtime's operations on it fail.
    static bool usable(const TcpEndpoint &ep) { return ep.phase != EpPhase::gone; }

    TcpModule(const weft_host_t *host, const weft_btl_component_t *component,
              const TcpConfig &config, const Chosen &iface, Identity *identity);
    ~TcpModule();

    // Listener and epoll set; "" or what failed.
    std::string open(uint16_t *port);

    int reachable(const weft_btl_peer_t *peer, char *why, size_t why_len) const;
    int card(void *buf, size_t *len) const;
    int connect(const weft_btl_peer_t *peer, weft_btl_endpoint_t **out);
    int send(TcpEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt)
    {
        return sendx(ep, am_id, iov, iovcnt, 0);
    }
    int sendx(TcpEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt, uint32_t flags);
    int sendi(TcpEndpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
              size_t payload_len);
    int progress();
    int wait_fd() const { return epfd_.get(); }
    int disconnect(TcpEndpoint &ep);
    bool in_progress() const { return in_progress_; }
    // Before the runtime sleeps on wait_fd: puts the links back in the
    // epoll set. 1 when there is work already (no sleep), else 0.
    int prepare_wait();
    // Busy polling without epoll's extra system call (see progress()).
    bool direct_reads_ok() const;
    void read_links_directly();
    unsigned long refused() const { return refused_; }
    const weft_btl_upcalls_t &upcalls() const { return c_.upcalls; }
    // A message for the runtime (EndpointSink).
    void deliver(TcpEndpoint &ep, uint8_t am_id, std::span<const std::byte> data)
    {
        ++messages_in_;
        const weft_btl_upcalls_t &up = c_.upcalls;
        if (WEFT_HAS_MEMBER(&up, weft_btl_upcalls_t, recv) && up.recv && !ep.user_closed)
            up.recv(up.ctx, &ep.c, am_id, data.data(), data.size());
    }

private:
    // Which peer entry this module connects to (or nullptr with *why).
    const CardEntry *match(const weft_btl_peer_t *peer, const Card &card, std::string *why) const;
    void watch(int fd, void *tag, uint32_t events, bool modify);
    void on_listener();
    void on_handshake(Handshake &hs, uint32_t events);
    void on_link(LinkSlot &slot, uint32_t events);
    // Reads a connected link; ends it on a close frame, a bad frame or an error.
    void read_link(LinkSlot &slot);
    void link_ended(LinkSlot &slot, int rc, const std::string &error);
    void incoming_hello(Handshake &hs);
    void outgoing_reply(Handshake &hs);
    void refuse(Handshake &hs, const std::string &why);
    // Closes a handshake's connection (if it still has one) and says why.
    void close_handshake(Handshake &hs, const std::string &why);
    // Debug-level message, built only when debug is on.
    template <class Text>
    void debug(Text &&text) const;
    void adopt(TcpEndpoint &ep, unsigned link, UniqueFd fd);
    TcpEndpoint &new_endpoint(uint32_t rank);
    void watch_link(LinkSlot &slot, bool out);
    void unwatch_link(LinkSlot &slot);
    void set_watched(LinkSlot &slot, bool watched);
    // Every link in the epoll set; or the first links out of it, while
    // they are read directly (see progress()).
    void watch_all_links();
    void unwatch_first_links();
    void abandon_placements(TcpEndpoint &ep);
    void fail(TcpEndpoint &ep, int status, const std::string &why);
    void report(TcpEndpoint &ep, weft_btl_ep_state_t state, int status, const std::string &why);
    void after_io(TcpEndpoint &ep);
    void tune(int fd) const;
    // Delivers the queued state reports; how many.
    int drain_reports();
    void reap();
    int frame_send(TcpEndpoint &ep, const FrameHeader &h, const struct iovec *iov, int iovcnt,
                   bool unordered = false);
    // A send that found the connection broken: the endpoint fails (told from progress()).
    int send_failed(TcpEndpoint &ep, int err);
    int link_send(TcpEndpoint &ep, LinkSlot &slot, const FrameHeader &h, const struct iovec *iov, int iovcnt);
    TcpEndpoint *find_peer(uint32_t rank);
    uint32_t my_rank() const;
    std::string job_id() const;
    std::string where(const TcpEndpoint &ep) const;

    struct Report {
        TcpEndpoint *ep;
        weft_btl_ep_state_t state;
        int status;
        std::string reason;
    };

    const weft_host_t *host_;
    TcpConfig config_;
    Chosen iface_;
    Identity *identity_;
    UniqueFd listener_, epfd_;
    std::vector<std::unique_ptr<TcpEndpoint>> endpoints_;
    std::vector<std::unique_ptr<Handshake>> handshakes_;
    std::deque<Report> reports_;
    // Links closed locally, kept until the peer closes its end (or kLinger).
    struct Lingering {
        UniqueFd fd;
        std::chrono::steady_clock::time_point deadline;
        std::string who;
    };
    std::vector<Lingering> lingering_;
    bool in_progress_ = false;
    unsigned long refused_ = 0;
    bool warned_refused_ = false;
    bool close_pending_ = false;        // a disconnect() waits for its close frame to go out
    unsigned passes_ = 0;               // progress() calls
    unsigned watched_first_links_ = 0;  // endpoints' first links in the epoll set
    size_t messages_in_ = 0;            // messages handed to the runtime
    size_t rmem_max_ = SIZE_MAX, wmem_max_ = SIZE_MAX;   // what SO_RCVBUF/SO_SNDBUF may ask
};

// In the header: every source of the module logs. Callers pass a callable
// that builds the text: nothing is built unless debug output is on.
template <class Text>
void TcpModule::debug(Text &&text) const
{
    const auto *self = &c_.component->base;
    if (host_->log_enabled(self, WEFT_LOG_DEBUG))
        host_->log(self, WEFT_LOG_DEBUG, "%s: %s", c_.name, std::string(text()).c_str());
}

} // namespace weft::btl_tcp
