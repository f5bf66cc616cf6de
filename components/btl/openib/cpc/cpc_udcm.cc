// SPDX-License-Identifier: BSD-3-Clause
// The udcm cpc bound to verbs and openib. One UdcmModule per openib module
// (port) owns a UD queue pair with its own CQ and completion channel, a
// registered ring of receive buffers (GRH + message each) and a small pool
// of send buffers. Each peer that is connecting or connected has a
// PeerRecord: the peer's UD address, the udcm::Connection that runs the
// handshake, and the Actions that turn the machine's wishes into UD sends
// and CpcHost calls.
//
// Everything runs on openib's progress thread: start_connect, progress and
// forget. Outcomes that may make openib forget the endpoint (connected,
// failed, closed) are queued while the state machine runs and delivered to
// CpcHost after it returns, so a record is never destroyed under its own
// Connection.
//
// Timers are checked on every progress() call against steady_clock; openib
// must call progress() now and then while a connection is under way, even
// when wait_fd() is quiet (a lost datagram makes no noise).
#include "cpc_udcm.hpp"

#include <fcntl.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <weft/component_util.hpp>
#include <weft/status.h>

#include "udcm_fsm.hpp"
#include "udcm_wire.hpp"

namespace weft::openib {

namespace {

using udcm::Clock;
using udcm::Message;
using udcm::MsgType;

constexpr uint32_t kQkey = 0x57554443;           // "WUDC": udcm datagrams only
constexpr size_t kGrhBytes = 40;                 // a UD receive starts with room for the GRH
constexpr size_t kRecvSlotBytes = kGrhBytes + udcm::kMaxMessageBytes;
constexpr uint32_t kRecvSlots = 128;
constexpr uint32_t kSendSlots = 64;
constexpr uint64_t kSendTag = uint64_t{1} << 63; // wr_id of sends; receives are their slot index

const weft::cutil::ParamSpec kParams[] = {
    {"cpc_udcm_timeout", WEFT_PARAM_INT, "2000", WEFT_LEVEL_TUNER_DETAIL,
     "udcm connection cpc: milliseconds to wait for an answer to a connection message before resending it "
     "(each resend waits twice as long, up to 4 times this). Generous by default because Soft-RoCE under "
     "emulation is slow."},
    {"cpc_udcm_retries", WEFT_PARAM_INT, "8", WEFT_LEVEL_TUNER_DETAIL,
     "udcm connection cpc: how many times a connection message is resent before the connection fails."},
};

// ---- RAII for verbs objects --------------------------------------------------

struct QpDeleter { void operator()(ibv_qp *p) const { ibv_destroy_qp(p); } };
struct CqDeleter { void operator()(ibv_cq *p) const { ibv_destroy_cq(p); } };
struct ChannelDeleter { void operator()(ibv_comp_channel *p) const { ibv_destroy_comp_channel(p); } };
struct MrDeleter { void operator()(ibv_mr *p) const { ibv_dereg_mr(p); } };
struct AhDeleter { void operator()(ibv_ah *p) const { ibv_destroy_ah(p); } };
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using ChannelPtr = std::unique_ptr<ibv_comp_channel, ChannelDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using AhPtr = std::unique_ptr<ibv_ah, AhDeleter>;

std::string errno_text(const char *call, int err)
{
    return std::string(call) + ": " + std::strerror(err);
}

udcm::RcAddress to_rc(const QpAddress &q)
{
    udcm::RcAddress r;
    r.qpn = q.qpn;
    r.psn = q.psn;
    r.lid = q.lid;
    std::memcpy(r.gid, q.gid, sizeof r.gid);
    r.mtu = q.mtu;
    r.recv_credits = q.recv_credits;
    return r;
}

QpAddress to_qp(const udcm::RcAddress &r)
{
    QpAddress q;
    q.qpn = r.qpn;
    q.psn = r.psn;
    q.lid = r.lid;
    std::memcpy(q.gid, r.gid, sizeof q.gid);
    q.mtu = r.mtu;
    q.recv_credits = r.recv_credits;
    return q;
}

int64_t int_param(const weft_host_t *host, const char *name, int64_t fallback)
{
    int64_t v = fallback;
    if (host->param_get_int(name, &v) != WEFT_SUCCESS)
        return fallback;
    return v;
}

class UdcmModule;

// What a Connection's Actions produced that CpcHost must hear after the
// state machine returns.
struct Outcome {
    enum Kind { connected, failed, closed } kind;
    uint32_t rank;
    int status;
    std::string why;
};

struct PeerRecord final : udcm::Actions {
    PeerRecord(UdcmModule &m, Endpoint *e, uint32_t r) : module(m), ep(e), rank(r) {}

    void send(const Message &m) override;
    int prepare_qp(udcm::RcAddress *local, std::string *why) override;
    int ready_qp(const udcm::RcAddress &remote, std::string *why) override;
    int post_recvs(std::string *why) override;
    void connected() override;
    void failed(int status, const std::string &why) override;
    void closed(const std::string &why) override;
    void arm_timer(udcm::TimePoint) override {}   // progress() checks every deadline

    UdcmModule &module;
    Endpoint *ep;               // nullptr once openib forgot it (the record lingers for DREQ/timewait)
    uint32_t rank;
    udcm::UdAddress ud{};       // where the peer's udcm listens
    std::unique_ptr<udcm::Connection> conn;
};

class UdcmModule final : public CpcModule {
public:
    explicit UdcmModule(CpcHost &host) : host_(host) {}
    ~UdcmModule() override { say_goodbye(); }

    int init(std::string *why);
    // The module is going (finalize): connected peers get a DREQ, and the
    // datagrams get up to 200 ms to leave before the UD QP is destroyed. A
    // peer that only receives would otherwise never learn this side is gone.
    void say_goodbye();

    std::vector<uint8_t> card() const override { return udcm::encode_card(self_ud_); }
    int start_connect(Endpoint &ep, std::span<const uint8_t> peer_card, std::string *why) override;
    int progress() override;
    int prepare_wait() override;
    int wait_fd() const override { return channel_ ? channel_->fd : -1; }
    void forget(Endpoint &ep) override;
    void established(Endpoint &ep) override;

    // Used by PeerRecord.
    CpcHost &host() { return host_; }
    void send_to(const udcm::UdAddress &to, const Message &m);
    void queue(Outcome o) { outcomes_.push_back(std::move(o)); }

private:
    udcm::Config config_for(uint32_t peer_rank) const;
    PeerRecord &make_record(Endpoint *ep, uint32_t rank, const udcm::UdAddress &ud);
    void drop_record(uint32_t rank);
    ibv_ah *ah_for(const udcm::UdAddress &to);
    int post_recv(uint32_t slot);
    void handle_datagram(std::span<const uint8_t> bytes);
    void deliver_outcomes();
    void log(int level, const std::string &text) const
    {
        if (host_.host()->log_enabled(host_.owner(), level))
            host_.host()->log(host_.owner(), level, "udcm %s: %s", host_.port().name.c_str(), text.c_str());
    }

    CpcHost &host_;
    uint64_t job_hash_ = 0;
    std::chrono::milliseconds timeout_{2000};
    unsigned retries_ = 8;
    udcm::UdAddress self_ud_{};
    uint32_t next_id_ = 1;
    bool cq_armed_ = false;
    bool channel_due_ = false;         // prepare_wait: drain the channel even without completions

    // Declaration order is teardown order reversed: AHs and MRs go before
    // the QP, the QP before its CQ, the CQ before its channel, buffers last.
    std::vector<uint8_t> recv_buf_;
    std::vector<uint8_t> send_buf_;
    ChannelPtr channel_;
    CqPtr cq_;
    QpPtr qp_;
    MrPtr recv_mr_;
    MrPtr send_mr_;
    std::map<std::array<uint8_t, 18>, AhPtr> ahs_;   // by (lid, gid): an AH does not depend on the qpn
    std::vector<uint32_t> free_send_slots_;
    std::map<uint32_t, std::unique_ptr<PeerRecord>> peers_;   // by rank
    std::vector<Outcome> outcomes_;
    uint64_t dropped_ = 0;   // datagrams refused by decode() or screen()
};

// ---- PeerRecord: the state machine's actions ----------------------------------

void PeerRecord::send(const Message &m) { module.send_to(ud, m); }

int PeerRecord::prepare_qp(udcm::RcAddress *local, std::string *why)
{
    if (!ep) {
        *why = "the endpoint was closed";
        return WEFT_ERR_NOT_AVAILABLE;
    }
    QpAddress q;
    const int rc = module.host().prepare_qp(*ep, &q, why);
    if (rc == WEFT_SUCCESS)
        *local = to_rc(q);
    return rc;
}

int PeerRecord::ready_qp(const udcm::RcAddress &remote, std::string *why)
{
    if (!ep) {
        *why = "the endpoint was closed";
        return WEFT_ERR_NOT_AVAILABLE;
    }
    return module.host().ready_qp(*ep, to_qp(remote), why);
}

int PeerRecord::post_recvs(std::string *why)
{
    if (!ep) {
        *why = "the endpoint was closed";
        return WEFT_ERR_NOT_AVAILABLE;
    }
    return module.host().post_recvs(*ep, why);
}

void PeerRecord::connected() { module.queue({Outcome::connected, rank, WEFT_SUCCESS, ""}); }

void PeerRecord::failed(int status, const std::string &why) { module.queue({Outcome::failed, rank, status, why}); }

void PeerRecord::closed(const std::string &why)
{
    module.queue({Outcome::closed, rank, WEFT_ERR_UNREACHABLE, why});
}

// ---- UdcmModule -----------------------------------------------------------------

int UdcmModule::init(std::string *why)
{
    const weft_host_t *h = host_.host();
    const PortInfo &port = host_.port();
    const int64_t timeout = int_param(h, "btl_openib_cpc_udcm_timeout", 2000);
    const int64_t retries = int_param(h, "btl_openib_cpc_udcm_retries", 8);
    if (timeout < 1 || timeout > 600000 || retries < 0 || retries > 1000) {
        *why = "btl_openib_cpc_udcm_timeout must be 1..600000 ms and btl_openib_cpc_udcm_retries 0..1000 (got " +
               std::to_string(timeout) + " and " + std::to_string(retries) + ")";
        return WEFT_ERR_BAD_VALUE;
    }
    timeout_ = std::chrono::milliseconds(timeout);
    retries_ = static_cast<unsigned>(retries);
    job_hash_ = udcm::job_hash(host_.job_id());
    // Ids differ between incarnations of this process's modules, so a
    // restarted process is not mistaken for its previous self.
    next_id_ = static_cast<uint32_t>(std::random_device{}()) | 1u;

    channel_.reset(ibv_create_comp_channel(port.ctx));
    if (!channel_) {
        *why = errno_text("ibv_create_comp_channel", errno);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    // progress() drains events without blocking.
    const int flags = fcntl(channel_->fd, F_GETFL);
    if (flags < 0 || fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        *why = errno_text("fcntl(O_NONBLOCK) on the completion channel", errno);
        return WEFT_ERR_IO;
    }
    cq_.reset(ibv_create_cq(port.ctx, static_cast<int>(kRecvSlots + kSendSlots), nullptr, channel_.get(), 0));
    if (!cq_) {
        *why = errno_text("ibv_create_cq", errno);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    ibv_qp_init_attr qa{};
    qa.send_cq = cq_.get();
    qa.recv_cq = cq_.get();
    qa.qp_type = IBV_QPT_UD;
    qa.cap.max_send_wr = kSendSlots;
    qa.cap.max_recv_wr = kRecvSlots;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    qp_.reset(ibv_create_qp(port.pd, &qa));
    if (!qp_) {
        *why = errno_text("ibv_create_qp(UD)", errno);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = port.port_num;
    attr.qkey = kQkey;
    if (int e = ibv_modify_qp(qp_.get(), &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) {
        *why = errno_text("ibv_modify_qp(UD RESET->INIT)", e);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    if (int e = ibv_modify_qp(qp_.get(), &attr, IBV_QP_STATE)) {
        *why = errno_text("ibv_modify_qp(UD INIT->RTR)", e);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = 0;
    if (int e = ibv_modify_qp(qp_.get(), &attr, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
        *why = errno_text("ibv_modify_qp(UD RTR->RTS)", e);
        return WEFT_ERR_NOT_AVAILABLE;
    }

    recv_buf_.assign(size_t{kRecvSlots} * kRecvSlotBytes, 0);
    send_buf_.assign(size_t{kSendSlots} * udcm::kMaxMessageBytes, 0);
    recv_mr_.reset(ibv_reg_mr(port.pd, recv_buf_.data(), recv_buf_.size(), IBV_ACCESS_LOCAL_WRITE));
    send_mr_.reset(ibv_reg_mr(port.pd, send_buf_.data(), send_buf_.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!recv_mr_ || !send_mr_) {
        *why = errno_text("ibv_reg_mr(udcm buffers)", errno);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    for (uint32_t i = 0; i < kRecvSlots; ++i)
        if (int rc = post_recv(i); rc != 0) {
            *why = errno_text("ibv_post_recv(UD)", rc);
            return WEFT_ERR_NOT_AVAILABLE;
        }
    for (uint32_t i = kSendSlots; i > 0; --i)
        free_send_slots_.push_back(i - 1);
    if (int e = ibv_req_notify_cq(cq_.get(), 0)) {
        *why = errno_text("ibv_req_notify_cq", e);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    cq_armed_ = true;

    self_ud_.qpn = qp_->qp_num;
    self_ud_.lid = port.roce ? 0 : port.attr.lid;
    std::memcpy(self_ud_.gid, port.gid.raw, sizeof self_ud_.gid);
    log(WEFT_LOG_DEBUG, "UD qpn " + std::to_string(self_ud_.qpn) + " ready (timeout " +
                            std::to_string(timeout) + " ms, " + std::to_string(retries) + " retries)");
    return WEFT_SUCCESS;
}

int UdcmModule::post_recv(uint32_t slot)
{
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(recv_buf_.data() + size_t{slot} * kRecvSlotBytes);
    sge.length = static_cast<uint32_t>(kRecvSlotBytes);
    sge.lkey = recv_mr_->lkey;
    ibv_recv_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr *bad = nullptr;
    return ibv_post_recv(qp_.get(), &wr, &bad);
}

udcm::Config UdcmModule::config_for(uint32_t peer_rank) const
{
    udcm::Config c;
    c.job_hash = job_hash_;
    c.my_rank = host_.my_rank();
    c.peer_rank = peer_rank;
    c.my_ud = self_ud_;
    c.timeout = timeout_;
    c.retries = retries_;
    c.timewait = timeout_;
    return c;
}

PeerRecord &UdcmModule::make_record(Endpoint *ep, uint32_t rank, const udcm::UdAddress &ud)
{
    auto rec = std::make_unique<PeerRecord>(*this, ep, rank);
    rec->ud = ud;
    uint32_t id = next_id_++;
    if (id == 0)
        id = next_id_++;
    rec->conn = std::make_unique<udcm::Connection>(config_for(rank), id, *rec);
    PeerRecord &ref = *rec;
    peers_[rank] = std::move(rec);
    if (ep)
        host_.set_cpc_data(*ep, &ref);
    return ref;
}

void UdcmModule::drop_record(uint32_t rank)
{
    auto it = peers_.find(rank);
    if (it == peers_.end())
        return;
    if (it->second->ep)
        host_.set_cpc_data(*it->second->ep, nullptr);
    peers_.erase(it);
}

ibv_ah *UdcmModule::ah_for(const udcm::UdAddress &to)
{
    std::array<uint8_t, 18> key{};
    std::memcpy(key.data(), &to.lid, 2);
    std::memcpy(key.data() + 2, to.gid, 16);
    if (auto it = ahs_.find(key); it != ahs_.end())
        return it->second.get();
    const PortInfo &port = host_.port();
    ibv_ah_attr a{};
    a.dlid = to.lid;
    a.sl = 0;
    a.port_num = port.port_num;
    // RoCE has no LIDs: every packet carries a GRH routed by GID.
    if (port.roce) {
        a.is_global = 1;
        std::memcpy(a.grh.dgid.raw, to.gid, 16);
        a.grh.sgid_index = static_cast<uint8_t>(port.gid_index);
        a.grh.hop_limit = 64;
    }
    AhPtr ah(ibv_create_ah(port.pd, &a));
    if (!ah) {
        log(WEFT_LOG_WARN, errno_text("ibv_create_ah", errno) + " (a connection message is not sent; "
                           "its retry will try again)");
        return nullptr;
    }
    ibv_ah *raw = ah.get();
    ahs_.emplace(key, std::move(ah));
    return raw;
}

void UdcmModule::send_to(const udcm::UdAddress &to, const Message &m)
{
    if (free_send_slots_.empty()) {
        // Every send buffer is in flight: a datagram lost here is what the
        // state machine's retries are for.
        log(WEFT_LOG_DEBUG, std::string("no free send buffer; ") + udcm::to_string(m.type) + " to rank " +
                                std::to_string(m.dst_rank) + " dropped");
        return;
    }
    ibv_ah *ah = ah_for(to);
    if (!ah)
        return;
    const uint32_t slot = free_send_slots_.back();
    uint8_t *buf = send_buf_.data() + size_t{slot} * udcm::kMaxMessageBytes;
    const size_t len = udcm::encode(m, std::span<uint8_t, udcm::kMaxMessageBytes>(buf, udcm::kMaxMessageBytes));
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(buf);
    sge.length = static_cast<uint32_t>(len);
    sge.lkey = send_mr_->lkey;
    ibv_send_wr wr{};
    wr.wr_id = kSendTag | slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = to.qpn;
    wr.wr.ud.remote_qkey = kQkey;
    ibv_send_wr *bad = nullptr;
    if (int e = ibv_post_send(qp_.get(), &wr, &bad)) {
        log(WEFT_LOG_WARN, errno_text("ibv_post_send(UD)", e) + "; " + udcm::to_string(m.type) + " to rank " +
                               std::to_string(m.dst_rank) + " not sent");
        return;
    }
    free_send_slots_.pop_back();
}

int UdcmModule::start_connect(Endpoint &ep, std::span<const uint8_t> peer_card, std::string *why)
{
    return weft::cutil::guarded([&]() -> int {
        udcm::UdAddress ud;
        std::string card_why;
        const uint32_t rank = host_.peer_rank(ep);
        if (!udcm::decode_card(peer_card, &ud, &card_why)) {
            *why = "udcm: the card of rank " + std::to_string(rank) + " is unusable: " + card_why;
            return WEFT_ERR_BAD_PARAM;
        }
        if (auto it = peers_.find(rank); it != peers_.end()) {
            if (!it->second->conn->finished() && it->second->ep == &ep)
                return WEFT_SUCCESS;   // already under way (the peer may have connected first)
            drop_record(rank);
        }
        PeerRecord &rec = make_record(&ep, rank, ud);
        rec.conn->start(Clock::now());
        deliver_outcomes();
        return WEFT_SUCCESS;
    });
}

void UdcmModule::say_goodbye()
{
    if (!cq_)
        return;
    for (auto &[rank, rec] : peers_)
        if (rec->ep && rec->conn->state() == udcm::State::established)
            rec->conn->disconnect(Clock::now());
    const auto deadline = Clock::now() + std::chrono::milliseconds(200);
    ibv_wc wc[16];
    while (free_send_slots_.size() < kSendSlots && Clock::now() < deadline) {
        const int n = ibv_poll_cq(cq_.get(), 16, wc);
        for (int i = 0; i < n; ++i)
            if (wc[i].wr_id & kSendTag)
                free_send_slots_.push_back(static_cast<uint32_t>(wc[i].wr_id & ~kSendTag));
    }
}

void UdcmModule::forget(Endpoint &ep)
{
    auto *rec = static_cast<PeerRecord *>(host_.cpc_data(ep));
    if (!rec)
        return;
    host_.set_cpc_data(ep, nullptr);
    rec->ep = nullptr;
    // A connected peer hears about it (DREQ); the record lingers through
    // timewait, detached from the endpoint, and progress() drops it then.
    if (rec->conn->state() == udcm::State::established) {
        rec->conn->disconnect(Clock::now());   // its outcomes find no endpoint: not delivered
        return;
    }
    peers_.erase(rec->rank);
}

void UdcmModule::established(Endpoint &ep)
{
    auto *rec = static_cast<PeerRecord *>(host_.cpc_data(ep));
    if (!rec)
        return;
    rec->conn->on_traffic(Clock::now());
    deliver_outcomes();
}

void UdcmModule::handle_datagram(std::span<const uint8_t> bytes)
{
    Message m;
    std::string why;
    if (!udcm::decode(bytes, &m, &why)) {
        ++dropped_;
        log(WEFT_LOG_DEBUG, "datagram dropped: " + why);
        return;
    }
    const udcm::Disposition screened = udcm::screen(m, job_hash_, host_.my_rank());
    if (screened == udcm::Disposition::other_job) {
        ++dropped_;
        // Answer another job's request so its sender fails fast with a
        // clear reason instead of timing out; never answer anything else
        // (two jobs must not be able to make each other loop).
        if (m.type == MsgType::req)
            send_to(m.ud, udcm::reject_without_connection(m, udcm::RejectReason::wrong_job, host_.my_rank()));
        log(WEFT_LOG_DEBUG, std::string(udcm::to_string(m.type)) + " of another job from rank " +
                                std::to_string(m.src_rank) + " dropped");
        return;
    }
    if (screened != udcm::Disposition::handled) {
        ++dropped_;
        return;
    }
    const auto now = Clock::now();
    auto it = peers_.find(m.src_rank);
    if (it != peers_.end()) {
        PeerRecord &rec = *it->second;
        if (m.type == MsgType::req || m.type == MsgType::rep)
            rec.ud = m.ud;   // the peer's current return address
        const udcm::Disposition d = rec.conn->on_message(m, now);
        if (d != udcm::Disposition::new_attempt)
            return;
        // A new incarnation of the peer after this record finished: it
        // gets a fresh record below (and openib an endpoint for it).
        drop_record(m.src_rank);
    }
    if (m.type != MsgType::req)
        return;   // only a request starts a connection
    std::string refused;
    Endpoint *ep = host_.incoming(m.src_rank, &refused);
    if (!ep) {
        send_to(m.ud, udcm::reject_without_connection(m, udcm::RejectReason::consumer, host_.my_rank()));
        log(WEFT_LOG_INFO, "connection request of rank " + std::to_string(m.src_rank) + " refused: " + refused);
        return;
    }
    // incoming() may return an endpoint that is connecting already; if it
    // has a record under another rank key something is badly wrong, so
    // the record by rank is the one truth here.
    PeerRecord &rec = make_record(ep, m.src_rank, m.ud);
    rec.conn->on_message(m, now);
}

void UdcmModule::deliver_outcomes()
{
    // Callbacks may make openib call forget(), which may erase records and
    // clear outcomes_: take the list first.
    std::vector<Outcome> todo;
    todo.swap(outcomes_);
    for (Outcome &o : todo) {
        auto it = peers_.find(o.rank);
        if (it == peers_.end() || !it->second->ep)
            continue;
        Endpoint &ep = *it->second->ep;
        switch (o.kind) {
        case Outcome::connected: host_.connected(ep); break;
        case Outcome::failed: host_.connect_failed(ep, o.status, o.why); break;
        case Outcome::closed: host_.peer_gone(ep, o.why); break;
        }
    }
}

int UdcmModule::prepare_wait()
{
    channel_due_ = true;
    return progress();
}

int UdcmModule::progress()
{
    int events = 0;
    // The completion channel costs a system call to look at (a read that
    // fails with EAGAIN when it is empty), and a busy rank calls this on
    // every 16384th pass, so it is drained, and the CQ re-armed, only when
    // completions came (each may have raised an event) and before the rank
    // sleeps on wait_fd (prepare_wait). The poll after the re-arm finds a
    // completion that landed in between; a later one raises an event.
    bool drain = std::exchange(channel_due_, false) || !cq_armed_;
    ibv_wc wc[16];
    for (;;) {
        if (drain) {
            void *cq_context = nullptr;
            ibv_cq *ev_cq = nullptr;
            unsigned got = 0;
            while (ibv_get_cq_event(channel_.get(), &ev_cq, &cq_context) == 0)
                ++got;
            if (got) {
                ibv_ack_cq_events(cq_.get(), got);
                cq_armed_ = false;
            }
            if (!cq_armed_ && ibv_req_notify_cq(cq_.get(), 0) == 0)
                cq_armed_ = true;
            drain = false;
        }
        const int n = ibv_poll_cq(cq_.get(), 16, wc);
        if (n < 0) {
            log(WEFT_LOG_ERROR, "ibv_poll_cq on the udcm CQ failed");
            return WEFT_ERR_IO;
        }
        if (n == 0)
            break;
        drain = true;
        for (int i = 0; i < n; ++i) {
            ++events;
            if (wc[i].wr_id & kSendTag) {
                free_send_slots_.push_back(static_cast<uint32_t>(wc[i].wr_id & ~kSendTag));
                if (wc[i].status != IBV_WC_SUCCESS)
                    log(WEFT_LOG_DEBUG, std::string("UD send failed: ") + ibv_wc_status_str(wc[i].status));
                continue;
            }
            const auto slot = static_cast<uint32_t>(wc[i].wr_id);
            if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len >= kGrhBytes &&
                wc[i].byte_len <= kRecvSlotBytes) {
                const uint8_t *buf = recv_buf_.data() + size_t{slot} * kRecvSlotBytes;
                handle_datagram(std::span<const uint8_t>(buf + kGrhBytes, wc[i].byte_len - kGrhBytes));
                deliver_outcomes();
            } else if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
                continue;   // the QP is going away: do not repost
            }
            if (int e = post_recv(slot))
                log(WEFT_LOG_ERROR, errno_text("ibv_post_recv(UD)", e) + "; the udcm receive ring shrinks");
        }
    }
    // Timers, on a snapshot: a timer may end a record (forget via callbacks).
    // The clock is read only when a record has a deadline (in a VM without a
    // paravirtual clock a read is a system call).
    std::optional<udcm::TimePoint> now;
    std::vector<uint32_t> ranks;
    ranks.reserve(peers_.size());
    for (const auto &[rank, rec] : peers_)
        ranks.push_back(rank);
    for (uint32_t rank : ranks) {
        auto it = peers_.find(rank);
        if (it == peers_.end())
            continue;
        udcm::Connection &conn = *it->second->conn;
        if (conn.deadline()) {
            if (!now)
                now = Clock::now();
            if (*now >= *conn.deadline()) {
                conn.on_timer(*now);
                ++events;
                deliver_outcomes();
            }
        }
        // A detached record (openib forgot its endpoint) lives only until
        // its disconnect is over.
        it = peers_.find(rank);
        if (it != peers_.end() && !it->second->ep && it->second->conn->finished())
            peers_.erase(it);
    }
    return events;
}

// ---- the component table ------------------------------------------------------

int udcm_open(const weft_host_t *host, const weft_component_t *owner)
{
    return weft::cutil::register_params(host, owner, kParams);
}

int udcm_query(const weft_host_t *, const PortInfo &port, std::string *why)
{
    switch (port.attr.link_layer) {
    case IBV_LINK_LAYER_INFINIBAND:
    case IBV_LINK_LAYER_UNSPECIFIED:   // old drivers: InfiniBand
        if (port.attr.lid == 0 && !port.roce) {
            *why = "udcm: port " + port.name + " has no LID (is a subnet manager running?)";
            return 0;
        }
        return 1;
    case IBV_LINK_LAYER_ETHERNET: {
        // RoCE: the UD address handle needs the port's GID (a GRH on every packet).
        static const uint8_t zero[16] = {};
        if (std::memcmp(port.gid.raw, zero, sizeof zero) == 0) {
            *why = "udcm: RoCE port " + port.name + " has no GID at index " + std::to_string(port.gid_index) +
                   " (is an IP address configured on its netdev?)";
            return 0;
        }
        return 1;
    }
    default:
        *why = "udcm: port " + port.name + " is neither InfiniBand nor RoCE (link layer " +
               std::to_string(port.attr.link_layer) + ")";
        return 0;
    }
}

int udcm_init(CpcHost &host, std::unique_ptr<CpcModule> *out, std::string *why)
{
    return weft::cutil::guarded([&]() -> int {
        auto module = std::make_unique<UdcmModule>(host);
        if (int rc = module->init(why); rc != WEFT_SUCCESS) {
            *why = "udcm on " + host.port().name + ": " + *why;
            return rc;
        }
        *out = std::move(module);
        return WEFT_SUCCESS;
    });
}

} // namespace

const CpcComponent kCpcUdcm = {
    .size = sizeof(CpcComponent),
    .name = "udcm",
    .default_priority = 30,
    .open = udcm_open,
    .query = udcm_query,
    .init = udcm_init,
};

} // namespace weft::openib
