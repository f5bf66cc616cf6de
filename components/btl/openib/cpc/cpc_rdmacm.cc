// SPDX-License-Identifier: BSD-3-Clause
// The rdmacm cpc. Each module listens on its port's IPv4 address (from the
// port's RoCE v2 GID) and publishes address and TCP-space port in its card.
// openib creates the queue pairs itself; rdma_cm only carries the handshake:
//
//   active                               passive
//   resolve address, route
//   prepare QP; connect(private: QP) ->  CONNECT_REQUEST: incoming(rank),
//                                        prepare QP, ready it, post receives,
//                                        accept(private: QP)
//   CONNECT_RESPONSE: ready QP, post  <-
//   receives, establish (RTU); connected
//                                        ESTABLISHED: connected
//
// Both ranks connecting at once: the lower rank's request wins. The higher
// rank accepts the lower's request and drops its own attempt; the lower
// rank rejects the higher's request with kLowerRankWins, which tells it to
// wait for the lower rank's request instead of failing.
#include "cpc_rdmacm.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <weft/component_util.hpp>
#include <weft/status.h>

namespace weft::openib {

namespace {

constexpr uint16_t kMagic = 0x7743;   // "wC"
constexpr uint8_t kVersion = 1;

template <class T>
void put(uint8_t *&p, T v)
{
    for (size_t i = 0; i < sizeof(T); ++i)
        *p++ = static_cast<uint8_t>(uint64_t(v) >> (8 * i));
}

template <class T>
T get(const uint8_t *&p)
{
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
        v |= uint64_t(*p++) << (8 * i);
    return static_cast<T>(v);
}

} // namespace

uint64_t job_hash(const std::string &job_id)
{
    uint64_t h = 1469598103934665603ull;   // FNV-1a
    for (unsigned char c : job_id) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

void encode_private(const RdmacmPrivate &d, uint8_t out[kRdmacmPrivateBytes])
{
    // The fields take 47 of the 51 bytes: zero the rest, or stack garbage
    // of the caller's buffer goes to the peer.
    std::memset(out, 0, kRdmacmPrivateBytes);
    uint8_t *p = out;
    put<uint16_t>(p, kMagic);
    put<uint8_t>(p, kVersion);
    put<uint8_t>(p, d.kind);
    put<uint64_t>(p, d.job);
    put<uint32_t>(p, d.rank);
    put<uint32_t>(p, d.qp.qpn);
    put<uint32_t>(p, d.qp.psn);
    put<uint16_t>(p, d.qp.lid);
    std::memcpy(p, d.qp.gid, 16);
    p += 16;
    put<uint8_t>(p, d.qp.mtu);
    put<uint32_t>(p, d.qp.recv_credits);
}

bool decode_private(const void *data, size_t len, RdmacmPrivate *d, std::string *why)
{
    // rdma_cm pads private data to its message's field size: more is fine.
    if (!data || len < kRdmacmPrivateBytes) {
        *why = "connection data of " + std::to_string(len) + " bytes, expected at least " +
               std::to_string(kRdmacmPrivateBytes) + " (not a weft peer?)";
        return false;
    }
    const uint8_t *p = static_cast<const uint8_t *>(data);
    if (get<uint16_t>(p) != kMagic || get<uint8_t>(p) != kVersion) {
        *why = "connection data is not weft's or of another version";
        return false;
    }
    d->kind = get<uint8_t>(p);
    d->job = get<uint64_t>(p);
    d->rank = get<uint32_t>(p);
    d->qp.qpn = get<uint32_t>(p);
    d->qp.psn = get<uint32_t>(p);
    d->qp.lid = get<uint16_t>(p);
    std::memcpy(d->qp.gid, p, 16);
    p += 16;
    d->qp.mtu = get<uint8_t>(p);
    d->qp.recv_credits = get<uint32_t>(p);
    if (d->kind < RdmacmPrivate::kConnect || d->kind > RdmacmPrivate::kLowerRankWins) {
        *why = "connection data has an unknown kind " + std::to_string(d->kind);
        return false;
    }
    // A refusal carries no queue pair (its QP fields are zero): check them
    // only where they will be used.
    const bool carries_qp = d->kind != RdmacmPrivate::kLowerRankWins;
    if (carries_qp && (d->qp.qpn > 0xffffff || d->qp.psn > 0xffffff || d->qp.mtu < IBV_MTU_256 ||
                       d->qp.mtu > IBV_MTU_4096)) {
        *why = "connection data has out-of-range fields";
        return false;
    }
    return true;
}

namespace {

struct Conn {
    Endpoint *ep = nullptr;
    rdma_cm_id *active = nullptr;      // our own attempt
    rdma_cm_id *passive = nullptr;     // the peer's, once accepted
    bool waiting_for_peer = false;     // lost the simultaneous-connect race
    std::vector<uint8_t> peer_card;    // for another attempt
    int attempts = 0;
};

// A connection manager's own refusal (not the peer process's: that is
// IB_CM_REJ_CONSUMER_DEFINED) or a lost exchange may be passing: try again
// this often. (A peer that has exited answers INVALID_SERVICE_ID, status 8,
// on every attempt: its listener is gone.)
constexpr int kMaxAttempts = 3;
constexpr int kRejectConsumerDefined = 28;

int g_timeout_ms = 5000;

class RdmacmModule final : public CpcModule {
public:
    explicit RdmacmModule(CpcHost &host) : host_(host) {}
    ~RdmacmModule() override
    {
        for (auto &c : conns_)
            drop_ids(*c);
        if (listen_)
            rdma_destroy_id(listen_);
        if (channel_)
            rdma_destroy_event_channel(channel_);
    }

    std::string start()
    {
        const PortInfo &port = host_.port();
        channel_ = rdma_create_event_channel();
        if (!channel_)
            return "rdma_create_event_channel failed: " + std::string(std::strerror(errno)) +
                   " (is /dev/infiniband/rdma_cm there? modprobe rdma_ucm)";
        fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);
        if (rdma_create_id(channel_, &listen_, nullptr, RDMA_PS_TCP) != 0)
            return "rdma_create_id failed: " + std::string(std::strerror(errno));
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        inet_pton(AF_INET, port.ipv4.c_str(), &sin.sin_addr);
        if (rdma_bind_addr(listen_, reinterpret_cast<sockaddr *>(&sin)) != 0)
            return "rdma_bind_addr(" + port.ipv4 + ") failed: " + std::strerror(errno);
        if (!listen_->verbs || listen_->verbs->device != port.ctx->device)
            return port.ipv4 + " belongs to another RDMA device than " + port.name;
        if (rdma_listen(listen_, 128) != 0)
            return "rdma_listen failed: " + std::string(std::strerror(errno));
        addr_ = sin.sin_addr.s_addr;
        port_ = rdma_get_src_port(listen_);
        return "";
    }

    std::vector<uint8_t> card() const override
    {
        std::vector<uint8_t> out(6);
        std::memcpy(out.data(), &addr_, 4);     // network order, as sockaddr wants it
        std::memcpy(out.data() + 4, &port_, 2);
        return out;
    }

    int start_connect(Endpoint &ep, std::span<const uint8_t> peer_card, std::string *why) override
    {
        if (peer_card.size() != 6) {
            *why = "the peer's rdmacm card has " + std::to_string(peer_card.size()) + " bytes, expected 6";
            return WEFT_ERR_BAD_PARAM;
        }
        Conn &c = conn_for(ep);
        if (c.active || c.passive)
            return WEFT_SUCCESS;
        c.peer_card.assign(peer_card.begin(), peer_card.end());
        ++c.attempts;
        if (rdma_create_id(channel_, &c.active, &c, RDMA_PS_TCP) != 0) {
            c.active = nullptr;
            *why = "rdma_create_id failed: " + std::string(std::strerror(errno));
            return WEFT_ERROR;
        }
        sockaddr_in src{}, dst{};
        src.sin_family = dst.sin_family = AF_INET;
        src.sin_addr.s_addr = addr_;
        std::memcpy(&dst.sin_addr.s_addr, peer_card.data(), 4);
        std::memcpy(&dst.sin_port, peer_card.data() + 4, 2);
        if (rdma_resolve_addr(c.active, reinterpret_cast<sockaddr *>(&src), reinterpret_cast<sockaddr *>(&dst),
                              g_timeout_ms) != 0) {
            *why = "rdma_resolve_addr failed: " + std::string(std::strerror(errno));
            return WEFT_ERROR;
        }
        return WEFT_SUCCESS;
    }

    int progress() override
    {
        int handled = 0;
        rdma_cm_event *event = nullptr;
        while (rdma_get_cm_event(channel_, &event) == 0) {
            // Copy what is needed, then ack: an id cannot be destroyed while
            // an event of it is unacknowledged.
            const rdma_cm_event_type type = event->event;
            rdma_cm_id *id = event->id;
            const int status = event->status;
            std::vector<uint8_t> priv;
            if (event->param.conn.private_data && event->param.conn.private_data_len)
                priv.assign(static_cast<const uint8_t *>(event->param.conn.private_data),
                            static_cast<const uint8_t *>(event->param.conn.private_data) +
                                event->param.conn.private_data_len);
            rdma_ack_cm_event(event);
            on_event(type, id, status, priv);
            ++handled;
        }
        std::erase_if(conns_, [](const std::unique_ptr<Conn> &c) { return !c->ep && !c->active && !c->passive; });
        return handled;
    }

    int wait_fd() const override { return channel_ ? channel_->fd : -1; }

    void forget(Endpoint &ep) override
    {
        if (auto *c = static_cast<Conn *>(host_.cpc_data(ep))) {
            c->ep = nullptr;
            drop_ids(*c);
            host_.set_cpc_data(ep, nullptr);
        }
    }

private:
    Conn &conn_for(Endpoint &ep)
    {
        if (auto *c = static_cast<Conn *>(host_.cpc_data(ep)))
            return *c;
        conns_.push_back(std::make_unique<Conn>());
        conns_.back()->ep = &ep;
        host_.set_cpc_data(ep, conns_.back().get());
        return *conns_.back();
    }

    void drop_ids(Conn &c)
    {
        for (rdma_cm_id **id : {&c.active, &c.passive})
            if (*id) {
                rdma_destroy_id(*id);
                *id = nullptr;
            }
    }

    RdmacmPrivate mine(uint8_t kind, const QpAddress &qp) const
    {
        RdmacmPrivate d;
        d.kind = kind;
        d.job = job_hash(host_.job_id());
        d.rank = host_.my_rank();
        d.qp = qp;
        return d;
    }

    rdma_conn_param conn_param(const uint8_t *priv) const
    {
        rdma_conn_param p{};
        p.private_data = priv;
        p.private_data_len = kRdmacmPrivateBytes;
        p.responder_resources = 16;
        p.initiator_depth = 16;
        p.retry_count = 7;
        p.rnr_retry_count = 7;
        return p;
    }

    // Drops the failed attempt and starts another, while attempts remain
    // and the peer has not connected to us meanwhile.
    bool retry(Conn &c)
    {
        if (!c.ep || c.passive || c.attempts >= kMaxAttempts)
            return false;
        rdma_destroy_id(c.active);
        c.active = nullptr;
        std::string why;
        const std::vector<uint8_t> card = c.peer_card;
        return start_connect(*c.ep, card, &why) == WEFT_SUCCESS;
    }

    void failed(Conn &c, const std::string &why)
    {
        if (Endpoint *ep = c.ep) {
            host_.connect_failed(*ep, WEFT_ERR_UNREACHABLE, "rdmacm: " + why);   // calls forget()
        } else {
            drop_ids(c);
        }
    }

    void log(int level, const std::string &text) const
    {
        if (host_.host()->log_enabled(host_.owner(), level))
            host_.host()->log(host_.owner(), level, "rdmacm %s: %s", host_.port().name.c_str(), text.c_str());
    }

    void on_event(rdma_cm_event_type type, rdma_cm_id *id, int status, const std::vector<uint8_t> &priv)
    {
        if (host_.host()->log_enabled(host_.owner(), WEFT_LOG_DEBUG)) {
            auto *c = static_cast<Conn *>(id->context);
            log(WEFT_LOG_DEBUG, std::string(rdma_event_str(type)) + " status " + std::to_string(status) +
                                    " on " + (!c ? "a new id" : id == c->active ? "our attempt" :
                                                  id == c->passive ? "the accepted id" : "a dropped id") +
                                    (c && c->ep ? " (peer rank " + std::to_string(host_.peer_rank(*c->ep)) + ")" : ""));
        }
        if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
            on_request(id, priv);
            return;
        }
        auto *c = static_cast<Conn *>(id->context);
        if (!c || (id != c->active && id != c->passive))
            return;                    // an attempt already dropped
        std::string why;
        switch (type) {
        case RDMA_CM_EVENT_ADDR_RESOLVED:
            if (rdma_resolve_route(id, g_timeout_ms) != 0)
                failed(*c, "rdma_resolve_route failed: " + std::string(std::strerror(errno)));
            return;
        case RDMA_CM_EVENT_ROUTE_RESOLVED: {
            if (!c->ep)
                return;
            QpAddress local;
            if (host_.prepare_qp(*c->ep, &local, &why) != WEFT_SUCCESS)
                return failed(*c, why);
            uint8_t data[kRdmacmPrivateBytes];
            encode_private(mine(RdmacmPrivate::kConnect, local), data);
            rdma_conn_param p = conn_param(data);
            p.qp_num = local.qpn;
            if (rdma_connect(id, &p) != 0)
                failed(*c, "rdma_connect failed: " + std::string(std::strerror(errno)));
            return;
        }
        case RDMA_CM_EVENT_CONNECT_RESPONSE: {
            RdmacmPrivate d;
            if (!c->ep)
                return;
            if (!decode_private(priv.data(), priv.size(), &d, &why) || d.kind != RdmacmPrivate::kAccept)
                return failed(*c, "bad accept from the peer: " + (why.empty() ? "not an accept" : why));
            if (host_.ready_qp(*c->ep, d.qp, &why) != WEFT_SUCCESS || host_.post_recvs(*c->ep, &why) != WEFT_SUCCESS)
                return failed(*c, why);
            if (rdma_establish(id) != 0)
                return failed(*c, "rdma_establish failed: " + std::string(std::strerror(errno)));
            host_.connected(*c->ep);
            return;
        }
        case RDMA_CM_EVENT_ESTABLISHED:
            if (id == c->passive && c->ep)
                host_.connected(*c->ep);
            return;
        case RDMA_CM_EVENT_REJECTED: {
            RdmacmPrivate d;
            if (id == c->active && decode_private(priv.data(), priv.size(), &d, &why) &&
                d.kind == RdmacmPrivate::kLowerRankWins) {
                // The peer's own request wins; it is on its way (or here).
                rdma_destroy_id(c->active);
                c->active = nullptr;
                c->waiting_for_peer = true;
                return;
            }
            if (id == c->active && status != kRejectConsumerDefined && retry(*c))
                return;
            return failed(*c, "the peer rejected the connection (status " + std::to_string(status) + ")");
        }
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_CONNECT_ERROR:
            if (id == c->active && retry(*c))
                return;
            [[fallthrough]];
        case RDMA_CM_EVENT_ADDR_ERROR:
        case RDMA_CM_EVENT_ROUTE_ERROR:
            return failed(*c, std::string(rdma_event_str(type)) + " (status " + std::to_string(status) +
                                  "; is the peer's address reachable from " + host_.port().ipv4 +
                                  "? btl_openib_cpc_rdmacm_timeout is " + std::to_string(g_timeout_ms) + " ms)");
        case RDMA_CM_EVENT_DISCONNECTED:
            // Also the end of an orderly close (openib's own close frames
            // came first then, and peer_gone ignores it).
            if (c->ep)
                host_.peer_gone(*c->ep, "rdmacm: the peer disconnected (it finalized or died)");
            return;
        default:
            return;                    // TIMEWAIT_EXIT and the like
        }
    }

    void on_request(rdma_cm_id *id, const std::vector<uint8_t> &priv)
    {
        RdmacmPrivate d;
        std::string why;
        auto refuse = [&](uint8_t kind) {
            uint8_t data[kRdmacmPrivateBytes];
            encode_private(mine(kind, QpAddress{}), data);
            if (rdma_reject(id, data, kRdmacmPrivateBytes) != 0)
                log(WEFT_LOG_WARN, "rdma_reject failed: " + std::string(std::strerror(errno)) +
                                       " (the peer sees a plain reject and fails its attempt)");
            rdma_destroy_id(id);
        };
        if (!decode_private(priv.data(), priv.size(), &d, &why) || d.kind != RdmacmPrivate::kConnect ||
            d.job != job_hash(host_.job_id()) || d.rank == host_.my_rank()) {
            rdma_reject(id, nullptr, 0);
            rdma_destroy_id(id);
            return;
        }
        Endpoint *ep = host_.incoming(d.rank, &why);
        if (!ep) {
            rdma_reject(id, nullptr, 0);
            rdma_destroy_id(id);
            return;
        }
        Conn &c = conn_for(*ep);
        log(WEFT_LOG_DEBUG, "request from rank " + std::to_string(d.rank) + (c.passive ? ", already accepted one" : "") +
                                (c.active ? ", ours is out" : ""));
        if (c.passive) {
            refuse(RdmacmPrivate::kConnect);   // a duplicate request
            return;
        }
        if (c.active) {
            if (host_.my_rank() < d.rank) {
                refuse(RdmacmPrivate::kLowerRankWins);   // ours wins
                return;
            }
            rdma_destroy_id(c.active);   // theirs wins: drop ours
            c.active = nullptr;
        }
        c.passive = id;
        id->context = &c;
        QpAddress local;
        if (host_.prepare_qp(*ep, &local, &why) != WEFT_SUCCESS || host_.ready_qp(*ep, d.qp, &why) != WEFT_SUCCESS ||
            host_.post_recvs(*ep, &why) != WEFT_SUCCESS) {
            rdma_reject(id, nullptr, 0);
            return failed(c, why);
        }
        uint8_t data[kRdmacmPrivateBytes];
        encode_private(mine(RdmacmPrivate::kAccept, local), data);
        rdma_conn_param p = conn_param(data);
        p.qp_num = local.qpn;
        if (rdma_accept(id, &p) != 0)
            failed(c, "rdma_accept failed: " + std::string(std::strerror(errno)));
    }

    CpcHost &host_;
    rdma_event_channel *channel_ = nullptr;
    rdma_cm_id *listen_ = nullptr;
    uint32_t addr_ = 0;                // network order
    uint16_t port_ = 0;                // network order
    std::vector<std::unique_ptr<Conn>> conns_;
};

const weft_component_t *g_owner = nullptr;

const weft::cutil::ParamSpec kParams[] = {
    {"cpc_rdmacm_timeout", WEFT_PARAM_INT, "5000", WEFT_LEVEL_TUNER_DETAIL,
     "Milliseconds rdma_cm may take to resolve a peer's address and route."},
};

int rdmacm_open(const weft_host_t *host, const weft_component_t *owner)
{
    g_owner = owner;
    return weft::cutil::register_params(host, owner, kParams);
}

int rdmacm_query(const weft_host_t *, const PortInfo &port, std::string *why)
{
    if (port.ipv4.empty()) {
        *why = "the port has no IPv4 address in its GID table (rdmacm connects by IP address)";
        return 0;
    }
    return 1;
}

int rdmacm_init(CpcHost &host, std::unique_ptr<CpcModule> *out, std::string *why)
{
    int64_t t = g_timeout_ms;
    host.host()->param_get_int("btl_openib_cpc_rdmacm_timeout", &t);
    g_timeout_ms = static_cast<int>(std::clamp<int64_t>(t, 10, 600000));
    auto m = std::make_unique<RdmacmModule>(host);
    if (std::string err = m->start(); !err.empty()) {
        *why = err;
        return WEFT_ERR_NOT_AVAILABLE;
    }
    *out = std::move(m);
    return WEFT_SUCCESS;
}

} // namespace

const CpcComponent kCpcRdmacm = {
    sizeof(CpcComponent), "rdmacm", 20, rdmacm_open, rdmacm_query, rdmacm_init,
};

} // namespace weft::openib
