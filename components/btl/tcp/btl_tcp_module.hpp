// The btl/tcp module: one per chosen interface. It owns a listener on the
// interface's address, an epoll set (listener, handshakes, links) that is
// also the runtime's wait_fd, the endpoints, and the handshakes in flight.
//
// Connection rule (deterministic, no extra round trip): the connector sends
// a hello with the acceptor's secret; the acceptor answers accept, refuse or
// duplicate. When both ranks connect at once, the connection started by the
// lower rank wins: an acceptor with its own attempt under way answers
// "duplicate" to a higher-ranked connector (whose endpoint then waits for
// the lower rank's connection), and adopts a lower-ranked connector's
// connection for its endpoint (its own attempt then gets "duplicate").
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <weft/btl.h>

#include "btl_tcp_iface.hpp"
#include "btl_tcp_link.hpp"
#include "btl_tcp_wire.hpp"

namespace weft::btl_tcp {

struct TcpConfig {
    int priority = 10;
    size_t eager_limit = 64 * 1024;
    size_t max_send = size_t{64} << 20;
    size_t sndbuf = 0, rcvbuf = 0;
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

// A connection in its handshake, either direction.
struct Handshake {
    Fd fd;
    bool outgoing = false;
    bool connected = false;             // outgoing: the TCP connect completed
    TcpEndpoint *ep = nullptr;          // outgoing: the endpoint it serves
    std::byte buf[kHelloBytes] = {};
    size_t have = 0;                    // bytes read (incoming hello or outgoing reply)
    size_t sent = 0;                    // outgoing hello bytes written
    std::chrono::steady_clock::time_point deadline;
    std::string from;                   // peer address, for messages
    bool dead = false;
};

enum class EpPhase { connecting, waiting_peer, connected, closing, gone };

struct TcpEndpoint {
    weft_btl_endpoint_t c{};
    std::string host;                   // peer's host name, for messages
    std::string addr;                   // peer's address, for messages
    EpPhase phase = EpPhase::connecting;
    bool user_closed = false;           // disconnect() was called
    std::unique_ptr<Link> link;
    // Frames accepted while connecting, sent once connected.
    std::deque<std::pair<FrameHeader, std::vector<std::byte>>> early;
};

class TcpModule {
public:
    TcpModule(const weft_host_t *host, const weft_btl_component_t *component,
              const TcpConfig &config, const Chosen &iface, Identity *identity);
    ~TcpModule();
    TcpModule(const TcpModule &) = delete;
    TcpModule &operator=(const TcpModule &) = delete;

    // Listener and epoll set; "" or what failed.
    std::string open(uint16_t *port);
    weft_btl_module_t *c_module() { return &c_; }
    static TcpModule *from(weft_btl_module_t *m);
    static TcpEndpoint *endpoint(weft_btl_endpoint_t *ep);

    int reachable(const weft_btl_peer_t *peer, char *why, size_t why_len) const;
    int card(void *buf, size_t *len) const;
    int connect(const weft_btl_peer_t *peer, weft_btl_endpoint_t **out);
    int send(TcpEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt);
    int progress();
    int wait_fd() const { return epfd_.get(); }
    int disconnect(TcpEndpoint &ep);
    bool in_progress() const { return in_progress_; }
    unsigned long refused() const { return refused_; }

private:
    // Which peer entry this module connects to (or nullptr with *why).
    const CardEntry *match(const weft_btl_peer_t *peer, const Card &card, std::string *why) const;
    void watch(int fd, void *tag, uint32_t events, bool modify);
    void on_listener();
    void on_handshake(Handshake &hs, uint32_t events);
    void on_link(TcpEndpoint &ep, uint32_t events);
    void incoming_hello(Handshake &hs);
    void outgoing_reply(Handshake &hs);
    void refuse(Handshake &hs, const std::string &why);
    void adopt(TcpEndpoint &ep, Fd fd);
    void fail(TcpEndpoint &ep, int status, const std::string &why);
    void report(TcpEndpoint &ep, weft_btl_ep_state_t state, int status, const std::string &why);
    void after_io(TcpEndpoint &ep);
    void tune(int fd) const;
    void drain_reports();
    void reap();
    int frame_send(TcpEndpoint &ep, const FrameHeader &h, const struct iovec *iov, int iovcnt);
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
    weft_btl_module_t c_{};
    TcpConfig config_;
    Chosen iface_;
    Identity *identity_;
    Fd listener_, epfd_;
    std::vector<std::unique_ptr<TcpEndpoint>> endpoints_;
    std::vector<std::unique_ptr<Handshake>> handshakes_;
    std::deque<Report> reports_;
    std::vector<std::pair<Fd, std::chrono::steady_clock::time_point>> lingering_;
    bool in_progress_ = false;
    unsigned long refused_ = 0;
    bool warned_refused_ = false;
    bool close_pending_ = false;        // a disconnect() waits for its close frame to go out
};

extern const weft_btl_module_ops_t kTcpModuleOps;

} // namespace weft::btl_tcp
