// SPDX-License-Identifier: BSD-3-Clause
// The btl/openib module: one per RDMA port this process uses. It owns a
// completion queue (with a completion channel: the runtime's wait_fd), a
// pool of registered send buffers, the registration cache, the endpoints
// (one RC queue pair each) and the cpcs that connect them.
//
// Flow control: each endpoint posts btl_openib_recv_depth receive buffers
// for data frames, plus kControlRecvs for credit frames and one for the
// close frame. A sender spends a data credit per frame and gets credits
// back in the immediate of the peer's frames (see btl_openib_wire.hpp);
// a receiver that owes half its depth and has nothing to send answers with
// a credit frame, which spends a control credit, returned the same way. So
// a send never meets a missing receive buffer (no RNR retries), and credit
// frames never chase each other.
//
// Completions: every work request carries a wr_id naming its kind, its
// endpoint's id and a slot, so a completion that arrives after its endpoint
// failed finds nothing to touch. Upcalls happen only inside progress().
#pragma once

#include <infiniband/verbs.h>

#include <endian.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <weft/btl_base.hpp>

#include "btl_openib_device.hpp"
#include "btl_openib_rcache.hpp"
#include "btl_openib_wire.hpp"
#include "cpc/cpc.hpp"

namespace weft::openib {

struct OpenibConfig {
    int priority = 50;
    size_t eager_limit = 12 * 1024;
    size_t buf_size = 16 * 1024;       // receive and send buffer size (btl_openib_frame_size)
    size_t max_send = size_t{64} << 20; // largest send(): longer than a buffer goes in several frames
    unsigned recv_depth = 64;          // data receive buffers per peer (its credits)
    unsigned send_bufs = 256;          // registered send buffers of the module
    unsigned inline_max = 128;         // asked of the QP; the device may give less
    unsigned rdma_depth = 64;          // RDMA reads/writes in flight per peer
    unsigned max_rd_atomic = 16;       // RDMA reads in flight per QP, cut to the device's
    unsigned timeout = 20;             // RC ack timeout exponent: 4.096 us * 2^timeout
    unsigned retry_count = 7;
    size_t reg_limit = size_t{1} << 30;
    bool leave_pinned = false;
    size_t max_early = 1024;           // frames queued per endpoint while connecting
    std::vector<std::string> cpc_order; // btl_openib_cpc: cpcs allowed, in preference order
};

inline constexpr unsigned kControlRecvs = 2;   // credit frames in flight per direction
inline constexpr unsigned kCloseRecvs = 1;

enum class EpPhase { connecting, connected, closing, gone };

class Module;

struct Endpoint : weft::btl::EndpointBase {
    uint32_t id = 0;                   // in wr_ids
    std::string host;                  // peer host, for messages
    EpPhase phase = EpPhase::connecting;
    Card card;                         // the peer's, once known
    CpcModule *cpc = nullptr;          // the cpc connecting it
    void *cpc_data = nullptr;

    struct QpDeleter {
        void operator()(ibv_qp *qp) const { ibv_destroy_qp(qp); }
    };
    std::unique_ptr<ibv_qp, QpDeleter> qp;
    QpAddress local;
    bool qp_ready = false;
    unsigned inline_max = 0;           // what the QP granted
    unsigned max_sge = 1;              // gather entries per send the QP granted (at most 4)
    unsigned sendi_max = 0;            // sendi's straight path: inline_max, or 0 if max_sge < 2
    // sendi_max while the endpoint takes a straight sendi (connected, not
    // closed either way, nothing queued), else 0: the four state tests
    // folded into sendi's size test (Module::settle keeps it).
    unsigned straight_max = 0;

    // The work request of every inline frame, built once per QP
    // (install_qp): a frame writes only its immediate, gather entries,
    // flags and wr_id, not the whole request (about 22 instructions of
    // zeroing per message, callgrind in the Soft-RoCE VM).
    ibv_send_wr inline_wr{};
    ibv_sge inline_sge[4]{};

    // Receive buffers of this peer, and a receive work request per buffer
    // (with its gather entry), built with them: a repost only chains them.
    std::unique_ptr<std::byte[]> rbufs;
    RegCache::Region *rreg = nullptr;
    unsigned nrecv = 0;
    std::unique_ptr<ibv_recv_wr[]> recv_wr;
    std::unique_ptr<ibv_sge[]> recv_sge;

    // Receive buffers consumed but not yet back on the QP (see repost()).
    static constexpr unsigned kRepostBatch = 16;
    uint16_t unposted_slot[kRepostBatch] = {};
    unsigned unposted = 0, repost_batch = 1;
    uint32_t unposted_data = 0, unposted_control = 0;

    uint32_t send_credits = 0, control_credits = 0;
    uint32_t peer_depth = 0;           // the data receive buffers the peer posted (its recv_depth)
    uint32_t owed_data = 0, owed_control = 0;
    unsigned sq_free = 0;
    unsigned unsignaled = 0;           // work requests posted since the last signaled one
    unsigned signal_every = 1;         // an inline frame is signaled at least this often

    struct Frame {
        uint8_t am_id;
        FrameKind kind;                // data, or more (a message's frame but its last)
        std::vector<std::byte> bytes;
    };
    std::deque<Frame> pending;         // accepted while connecting or short of credits
    std::vector<std::byte> joined;     // the frames so far of a message longer than one buffer

    bool user_closed = false, close_posted = false, close_done = false, peer_closed = false;
    bool reported_final = false;
    bool attention = false;            // listed in Module::attention_
};

struct RdmaOp {
    weft_btl_rdma_cb_t cb = nullptr;
    void *cb_ctx = nullptr;
    uint32_t ep = 0;
    RegCache::Region *local = nullptr;
    unsigned wrs = 0;                  // work requests still out
    int status = 0;
    bool live = false;
};

class Module final : public CpcHost, public weft::btl::ModuleBase<Module> {
public:
    using Endpoint = openib::Endpoint;
    static constexpr const char *kName = "openib";

    Module(const weft_host_t *host, const weft_btl_component_t *component, const OpenibConfig &config,
           Port port);
    ~Module() override;

    // CQ, send buffers, cpcs. "" or what failed.
    std::string open();
    const std::vector<std::string> &cpc_names() const { return cpc_names_; }

    int reachable(const weft_btl_peer_t *peer, char *why, size_t why_len) const;
    // The first call tells the cpcs the job is known (CpcModule::job_known).
    int card(void *buf, size_t *len);
    // After the modex fence (the modex_ready op): CpcModule::modex_ready.
    int modex_ready();
    int connect(const weft_btl_peer_t *peer, weft_btl_endpoint_t **out);
    int send(Endpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt);
    // Inline, so that it compiles into the ops entry (btl_base.hpp's
    // Ops::sendi): under emulation the call and frame of a function of its
    // own were about 20 instructions of a 64-byte message.
    [[gnu::always_inline]] int sendi(Endpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len,
                                     const void *payload, size_t payload_len)
    {
        // A small frame of an endpoint that can send now (straight_max)
        // and has a credit and a queue slot: straight into its inline work
        // request, without send()'s iovec walk and queueing decisions.
        if (hdr_len + payload_len <= ep.straight_max && ep.send_credits > 0 && ep.sq_free > 0 &&
            (hdr || !hdr_len) && (payload || !payload_len)) [[likely]] {
            ibv_sge *sge = ep.inline_sge;
            int n = 0;
            if (hdr_len) {
                sge[0].addr = reinterpret_cast<uintptr_t>(hdr);
                sge[0].length = static_cast<uint32_t>(hdr_len);
                n = 1;
            }
            if (payload_len) {
                sge[n].addr = reinterpret_cast<uintptr_t>(payload);
                sge[n].length = static_cast<uint32_t>(payload_len);
                ++n;
            }
            ep.inline_wr.num_sge = n;
            ep.inline_wr.send_flags = n ? IBV_SEND_INLINE : 0;
            return post_wr(ep, ep.inline_wr, am_id, FrameKind::data, 0, UINT32_MAX);
        }
        return sendi_slow(ep, am_id, hdr, hdr_len, payload, payload_len);
    }
    int rdma(Endpoint &ep, bool write, void *local, size_t len, uint64_t remote_addr, const void *rkey,
             size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx);
    int mem_register(void *addr, size_t len, weft_btl_reg_t *reg);
    int mem_deregister(weft_btl_reg_t *reg);
    int progress();
    int wait_fd() const { return epfd_; }
    int prepare_wait();
    int disconnect(Endpoint &ep);
    bool in_progress() const { return in_progress_; }

    // CpcHost
    const weft_host_t *host() const override { return host_; }
    const weft_component_t *owner() const override;
    const PortInfo &port() const override { return port_.info; }
    uint32_t my_rank() const override;
    std::string job_id() const override;
    Endpoint *incoming(uint32_t peer_rank, std::string *why) override;
    uint32_t peer_rank(const Endpoint &ep) const override { return ep.c.peer_rank; }
    int prepare_qp(Endpoint &ep, QpAddress *local, std::string *why) override;
    int ready_qp(Endpoint &ep, const QpAddress &remote, std::string *why) override;
    int post_recvs(Endpoint &ep, std::string *why) override;
    void connected(Endpoint &ep) override;
    void connect_failed(Endpoint &ep, int status, const std::string &why) override;
    void peer_gone(Endpoint &ep, const std::string &why) override;
    void set_cpc_data(Endpoint &ep, void *data) override { ep.cpc_data = data; }
    void *cpc_data(const Endpoint &ep) const override { return ep.cpc_data; }
    uint32_t job_size() const override;
    int peer_section(uint32_t peer_rank, const std::string &cpc, std::vector<uint8_t> *out,
                     std::string *why) override;
    int reserve_qp(uint32_t peer_rank, QpAddress *local, std::string *why) override;
    int adopt_qp(Endpoint &ep, QpAddress *local, std::string *why) override;
    void release_qp(uint32_t peer_rank) override;

private:
    enum class Wr : uint64_t { recv = 0, send_buf = 1, send_inline = 2, rdma = 3 };
    // A wr_id: kind (2 bits), endpoint id (30), and 32 bits of slot: its low
    // 16 bits name the buffer, RDMA operation or frame flag, its high 16
    // bits count the unsignaled work requests this completion retires.
    static constexpr uint32_t kSlotMask = 0xffff;
    static uint64_t wr_id(Wr kind, uint32_t ep, uint32_t slot)
    {
        return uint64_t(kind) << 62 | uint64_t(ep & 0x3fffffff) << 32 | slot;
    }

    // An RC QP in INIT with its local address, before it has an endpoint.
    struct RcQp {
        std::unique_ptr<ibv_qp, Endpoint::QpDeleter> qp;
        unsigned inline_max = 0, max_sge = 1, max_send_wr = 0;
        QpAddress local;
    };
    int create_qp(RcQp *out, std::string *why);
    int install_qp(Endpoint &ep, RcQp qp, std::string *why);
    void job_known();

    Endpoint &new_endpoint(uint32_t rank, const std::string &host);
    Endpoint *find_ep(uint32_t id)
    {
        return id >= 1 && id <= endpoints_.size() ? endpoints_[id - 1].get() : nullptr;
    }
    Endpoint *find_rank(uint32_t rank);
    int repost(Endpoint &ep);
    // The receive path (on_completion, on_recv) is inlined into
    // progress(): under emulation (Soft-RoCE in a TCG VM) every call and
    // return costs a lookup, and a 64-byte round trip made about 60 calls
    // on each side (callgrind in the VM).
    // A verbs call failed: the endpoint fails, with the call and its error.
    [[gnu::noinline]] void verbs_failed(Endpoint &ep, const char *call, int rc);
    int post_frame(Endpoint &ep, uint8_t am_id, FrameKind kind, const struct iovec *iov, int iovcnt,
                   size_t total);
    // What every frame out does once its work request is filled in but
    // for the immediate, flags and wr_id: credits, signaling, the post, the
    // accounting. sbuf is the send buffer's index or UINT32_MAX (inline).
    [[gnu::always_inline]] inline int post_wr(Endpoint &ep, ibv_send_wr &wr, uint8_t am_id, FrameKind kind,
                                              uint32_t slot, uint32_t sbuf);
    // sendi's other cases: too long, out of credits or queue slots,
    // queued frames, not connected (send() decides).
    [[gnu::noinline]] int sendi_slow(Endpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len,
                                     const void *payload, size_t payload_len);
    // ep.straight_max again, after its phase, close flags or queue changed.
    static void settle(Endpoint &ep)
    {
        ep.straight_max = ep.phase == EpPhase::connected && !ep.user_closed && !ep.peer_closed && ep.pending.empty()
                              ? ep.sendi_max
                              : 0;
    }
    void flush_pending(Endpoint &ep);
    void maybe_return_credits(Endpoint &ep);
    bool needs_attention(const Endpoint &ep) const;
    void want_attention(Endpoint &ep);
    void post_close(Endpoint &ep);
    // Completions (inlined into progress(), see the note above): each in
    // order, one asking to wait for the next progress call stops handle().
    [[gnu::always_inline]] inline bool on_completion(const ibv_wc &wc);
    [[gnu::always_inline]] inline bool handle(const ibv_wc *wcs, int n, int *handled);
    [[gnu::always_inline]] inline void on_recv(Endpoint &ep, const ibv_wc &wc, unsigned slot);
    // Their rare parts, apart: an error completion, a frame of a longer
    // message, a frame that breaks the protocol.
    [[gnu::noinline]] void completion_failed(Endpoint &ep, const ibv_wc &wc);
    [[gnu::noinline]] bool join_more(Endpoint &ep, const std::byte *data, size_t len);
    [[gnu::noinline]] void bad_frame(Endpoint &ep, const char *what);
    void finish_rdma(uint32_t slot, int status);
    void fail(Endpoint &ep, int status, const std::string &why);
    void report(Endpoint &ep, weft_btl_ep_state_t state, int status, const std::string &why);
    void maybe_closed(Endpoint &ep);
    void drain_reports();
    // progress() past its check for an idle pass; polled: completions it
    // polled into polled_ already.
    [[gnu::noinline]] int full_pass(int polled);
    void drain_channel(bool always = false);
    std::string where(const Endpoint &ep) const;

    struct Report {
        uint32_t ep;
        weft_btl_ep_state_t state;
        int status;
        std::string reason;
    };

    const weft_host_t *host_;
    OpenibConfig config_;
    Port port_;
    ibv_comp_channel *channel_ = nullptr;
    ibv_cq *cq_ = nullptr;
    int cq_size_ = 0;
    int epfd_ = -1;
    bool armed_ = false;
    std::unique_ptr<RegCache> rcache_;
    std::unique_ptr<std::byte[]> sbufs_;
    RegCache::Region *sreg_ = nullptr;
    std::vector<uint32_t> free_sbufs_;
    std::vector<std::unique_ptr<Endpoint>> endpoints_;   // index = id - 1
    std::vector<RdmaOp> rdma_ops_;
    std::vector<uint32_t> free_rdma_;
    std::vector<std::unique_ptr<CpcModule>> cpcs_;
    std::vector<std::string> cpc_names_;
    std::map<uint32_t, RcQp> reserved_;   // QPs made before their endpoint (reserve_qp), by rank
    bool job_told_ = false;            // the cpcs heard job_known
    std::string declined_;             // why cpcs declined the job (job_known), for reachable()
    std::deque<Report> reports_;
    std::vector<uint32_t> attention_;  // endpoint ids progress() must look at
    std::vector<ibv_wc> stash_;        // completions polled by prepare_wait or held back, handled next progress
    std::vector<ibv_wc> stashed_;      // stash_'s contents while progress() handles them
    std::array<ibv_wc, 32> polled_;    // what progress() polls (not reentrant: in_progress_)
    bool in_progress_ = false;
    unsigned connecting_ = 0;          // endpoints in EpPhase::connecting
    // progress() passes until it next looks at the cpcs: 1 (the next) while
    // an endpoint connects and after prepare_wait(), else kCpcLookEvery.
    // A countdown, so a pass without a look costs one decrement.
    static constexpr unsigned kCpcLookEvery = 16384;
    unsigned cpc_look_in_ = 1;
    uint32_t half_depth_ = 1;          // max(1, recv_depth / 2): owing this many credits, return them
};

// Consumed receive buffers a frame out reposts (see post_wr).
inline constexpr unsigned kRepostWithFrame = 4;

inline int Module::post_wr(Endpoint &ep, ibv_send_wr &wr, uint8_t am_id, FrameKind kind, uint32_t slot,
                           uint32_t sbuf)
{
    Imm imm;
    imm.am_id = am_id;
    imm.kind = kind;
    imm.data_credits = std::min(ep.owed_data, kMaxDataCredits);
    imm.control_credits = std::min(ep.owed_control, kMaxControlCredits);
    wr.imm_data = htobe32(encode_imm(imm));
    // Inline frames are signaled only now and then (a completion costs a
    // poll and a pass through on_completion); a signaled one retires the
    // unsignaled work requests before it, which it counts.
    const bool signal = sbuf != UINT32_MAX || kind == FrameKind::close || ep.unsignaled + 1 >= ep.signal_every ||
                        ep.sq_free <= ep.signal_every;
    if (signal) {
        wr.send_flags |= IBV_SEND_SIGNALED;
        slot |= ep.unsignaled << 16;
    }
    wr.wr_id = wr_id(sbuf != UINT32_MAX ? Wr::send_buf : Wr::send_inline, ep.id, slot);
    ibv_send_wr *bad = nullptr;
    if (int rc = ibv_post_send(ep.qp.get(), &wr, &bad); rc != 0) {
        verbs_failed(ep, "ibv_post_send", rc);
        return WEFT_ERR_IO;
    }
    --ep.sq_free;
    ep.unsignaled = signal ? 0 : ep.unsignaled + 1;
    ep.owed_data -= imm.data_credits;
    ep.owed_control -= imm.control_credits;
    if (kind == FrameKind::data || kind == FrameKind::more)
        --ep.send_credits;
    else if (kind == FrameKind::credit)
        --ep.control_credits;
    // Buffers consumed since the last frame out go back once there are a
    // few, and their credits ride on the next frame: one at a time, a
    // ping-pong would pay an ibv_post_recv per message (0.2-0.5 us of a
    // 14 us one-way latency in interleaved Soft-RoCE VM rounds), and after
    // the doorbell rather than before it, the repost is off the message's
    // path. Fewer wait for on_recv's batch.
    if (ep.unposted >= kRepostWithFrame)
        if (int rc = repost(ep); rc != 0)
            verbs_failed(ep, "ibv_post_recv", rc);   // the frame is out; the endpoint fails from here
    if (sbuf != UINT32_MAX)
        free_sbufs_.pop_back();
    return WEFT_SUCCESS;
}

} // namespace weft::openib
