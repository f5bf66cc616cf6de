// The messaging engine: LNet-style portals (match entries, memory
// descriptors, event queues, put/get) and MPI-style tagged messages on top,
// carried by the btl modules the runtime chose for each peer.
//
// Protocols (wire.hpp):
//  - eager: a put up to the peer's eager limit goes in one active message,
//    through the module's inline sendi when it fits; the sender's data is
//    copied out when the call returns;
//  - rendezvous: larger puts send a header (Rts); the target matches it and
//    either reads the data by RDMA get (when the module can and the sender
//    registered its buffer) or asks for it in chunks (Cts, Data);
//  - get: a request, answered by Reply chunks.
// Per-peer order: every header goes through the peer's primary module, so
// matching sees one peer's messages in the order they were sent.
// Flow control: each peer may have at most engine_base_eager_window bytes of
// eager data not yet consumed by the target; past that the sender uses the
// rendezvous protocol, whose headers are small, until the target returns
// credits. This bounds the memory the unexpected queue can hold.
//
// Everything runs in the caller's thread and in progress(); no locks. The
// small-message path allocates nothing once the pools are warm.
#pragma once

#include <weft.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "engine/pool.hpp"
#include "engine/wire.hpp"

namespace weft::rt { class Runtime; struct Peer; }

namespace weft::engine {

inline constexpr uint32_t kTaggedContextUser = 0;     // weft_send/weft_recv
inline constexpr uint32_t kTaggedContextBarrier = 1;  // weft_barrier
static_assert(WEFT_CONTEXT_FIRST_FREE > kTaggedContextBarrier);
inline constexpr size_t kInlineUnexpected = 256;      // unexpected data kept without heap

struct Md;
struct Request;

struct Eq {
    uint64_t handle = 0;
    std::vector<weft_event_t> ring;
    size_t head = 0, count = 0;
    uint64_t sequence = 0;
    bool dropped = false;
    uint64_t last_md = 0;                  // MD of the newest stored event
    weft_eq_handler_t handler = nullptr;
};

struct Me {
    uint64_t handle = 0;
    unsigned portal = 0;
    uint32_t match_rank = WEFT_RANK_ANY;
    uint64_t match_bits = 0, ignore_bits = 0;
    weft_unlink_t unlink = WEFT_RETAIN;
    Md *md = nullptr;
    Me *prev = nullptr, *next = nullptr;   // the portal's list
};

struct Md {
    uint64_t handle = 0;
    weft_md_desc_t desc{};
    weft_unlink_t unlink = WEFT_RETAIN;
    Me *me = nullptr;                      // attached, or null when bound
    int threshold = 0;
    size_t local_offset = 0;
    int pending = 0;                       // operations still moving data
    bool unlink_when_idle = false;         // used up or unlinked while pending
    Request *request = nullptr;            // a tagged receive's MD
};

// A tagged send or receive the application waits for. A receive waits in
// the engine's posted list (no match entry, no MD) until a message matches
// it; only a rendezvous or a long unexpected message gives it an MD, which
// carries the data transfer with the portal machinery.
struct Request {
    uint64_t handle = 0;
    bool done = false;
    bool is_recv = false;
    bool posted = false;                   // in the posted-receive list
    bool orphaned = false;                 // its handle was freed before it completed
    weft_msg_status_t status{};
    Md *md = nullptr;                      // a matched receive's MD while data moves
    void *buf = nullptr;                   // receive buffer and what it matches
    size_t len = 0;
    uint32_t source = WEFT_ANY_SOURCE;
    uint64_t bits = 0, ignore = 0;
    Request *prev = nullptr, *next = nullptr;   // the posted list

    // Back to the initial values, field by field: the pool's `obj = T{}`
    // compiles to a memset call, a third of an isend's own cost. Keep in
    // step with the initializers above (engine_test checks it).
    void reset()
    {
        handle = 0;
        done = is_recv = posted = orphaned = false;
        status = weft_msg_status_t{};
        md = nullptr;
        buf = nullptr;
        len = 0;
        source = WEFT_ANY_SOURCE;
        bits = ignore = 0;
        prev = next = nullptr;
    }
};

// An operation this process started and that is not finished.
struct Op {
    uint64_t handle = 0;
    // Reply: the target side of a get, sending its data back.
    enum class Kind { Put, Get, TaggedSend, Reply } kind = Kind::Put;
    enum class State { Queued, WaitAck, WaitFin, Sending, WaitReply } state = State::Queued;
    Md *md = nullptr;                      // Put/Get: the bound MD
    Request *request = nullptr;            // TaggedSend
    uint32_t target = 0;
    unsigned portal = 0;
    uint64_t match_bits = 0, hdr_data = 0;
    size_t offset = 0;                     // remote offset
    const std::byte *data = nullptr;       // Put/TaggedSend source
    std::byte *sink = nullptr;             // Get destination
    size_t length = 0;
    bool ack = false;
    bool sync = false;                     // TaggedSend: rendezvous, so it completes once matched
    bool rendezvous = false;
    size_t sent = 0;                       // Cts mode: bytes sent so far
    uint64_t token = 0;                    // Cts mode: the target's receive; Reply: the get's op
    size_t granted = 0;                    // Cts mode: bytes the target takes
    size_t ack_offset = 0;                 // where the target put it (from the Ack)
    int reply_status = 0;                  // Reply: the answer to the get
    size_t rlength = 0;                    // Reply: bytes the get asked for
    size_t md_offset = 0;                  // Reply: where in the MD
    size_t received = 0;                   // Get: reply bytes so far
    weft_btl_reg_t reg{};                  // rendezvous by RDMA: the registration
    weft_btl_module_t *reg_module = nullptr;
    uint64_t put_token = 0;                // split rendezvous: the target's receive we write to
    Op *next_queued = nullptr;             // the peer's queue
};

// What a put (or rendezvous header) says, as it arrived; the receive path
// works on this small description and copies it only when it must wait.
struct PutInfo {
    uint32_t source = 0;
    wire::Type type = wire::Type::Eager;
    uint8_t flags = 0;
    unsigned portal = 0;
    uint64_t match_bits = 0, offset = 0, hdr_data = 0, op = 0;
    size_t length = 0;                     // the put's total length
    uint64_t addr = 0;                     // Rts by RDMA
    const uint8_t *rkey = nullptr;         // Rts by RDMA (points into the frame or an Unexpected)
    size_t rkey_len = 0;
    weft_btl_endpoint_t *ep = nullptr;     // where it came from
};

// A put that arrived before a match entry wanted it (lazy portals).
struct Unexpected {
    uint64_t handle = 0;
    PutInfo info;
    std::array<uint8_t, 64> rkey;          // info.rkey points here
    std::array<std::byte, kInlineUnexpected> inline_data;   // eager data up to kInlineUnexpected
    std::vector<std::byte> heap_data;      // eager data above it
    Unexpected *next = nullptr;
    bool matches(uint32_t rank, uint64_t bits, uint64_t ignore) const
    {
        return (rank == WEFT_RANK_ANY || rank == info.source) && ((bits ^ info.match_bits) & ~ignore) == 0;
    }
    std::span<const std::byte> data() const
    {
        return info.length <= kInlineUnexpected ? std::span<const std::byte>(inline_data.data(), info.length)
                                                : std::span<const std::byte>(heap_data);
    }
};

// A rendezvous put this process is receiving in chunks (Cts mode).
struct Incoming {
    uint64_t handle = 0;
    Md *md = nullptr;
    uint32_t source = 0;
    uint64_t op = 0;                       // the initiator's id
    uint64_t match_bits = 0, hdr_data = 0;
    size_t offset = 0, rlength = 0, mlength = 0, received = 0;
    bool ack = false;
    unsigned portal = 0;
    // Rendezvous by RDMA: transfers still moving (the target's get, and
    // the initiator's put of the second part when split), the first error.
    int parts = 0;
    int error = 0;
    size_t split = 0;                      // we read [0, split); the initiator writes the rest
    bool put_pending = false;              // split: the initiator's PutDone is still due
    weft_btl_endpoint_t *ep = nullptr;
    uint64_t peer_addr = 0;                // the initiator's buffer and rkey, for a get
    std::array<uint8_t, 64> peer_rkey{};
    size_t peer_rkey_len = 0;
    weft_btl_reg_t reg{};                  // split: our buffer, for the initiator's put
    weft_btl_module_t *reg_module = nullptr;
};

// A Data frame a module is receiving straight into an MD (placement.cc).
struct Landing {
    uint64_t handle = 0;
    uint64_t incoming = 0;                 // the Incoming's handle
    size_t bytes = 0;
};

struct Portal {
    Me *head = nullptr, *tail = nullptr;
    bool lazy = false;
    Unexpected *uq_head = nullptr, *uq_tail = nullptr;
};

// An RDMA read or write the module could not start yet (WEFT_ERR_AGAIN: its
// queues are full); retried from the engine's progress, in order.
struct DeferredRdma {
    bool is_put = false;
    uint64_t handle = 0;                   // get: the Incoming's; put: the Op's
    size_t from = 0, len = 0;              // get: part of the receive; put: offset into the op's data
    uint64_t addr = 0;                     // put: where at the target
    uint64_t token = 0;                    // put: the target's receive, for PutDone
    weft_btl_endpoint_t *ep = nullptr;     // put: the endpoint the PutReq came on
    std::array<uint8_t, 64> rkey{};        // put: the target's key
    size_t rkey_len = 0;
};

struct PeerState {
    rt::Peer *peer = nullptr;              // the runtime's (stable) peer, once resolved
    weft_btl_endpoint_t *ep = nullptr;     // primary endpoint once connected
    size_t eager_limit = 0;                // min(module eager limit, engine limit)
    size_t inline_max = 0;
    size_t eager_outstanding = 0;          // sent, not yet credited back
    size_t consumed_unreported = 0;        // received and matched, not yet credited
    Op *queue_head = nullptr, *queue_tail = nullptr;   // ops waiting for the connection
    std::deque<std::vector<std::byte>> control;        // control frames that got AGAIN
    std::deque<DeferredRdma> rdma_retry;                // RDMA operations that got AGAIN
    // Rendezvous Data bytes given to each of the peer's endpoints (parallel
    // to peer->endpoints): the striping's account, logged at finalize.
    std::vector<uint64_t> rail_bytes;
    bool busy = false;                     // in the engine's busy list
    bool failed = false;
    std::string failure;
};

class Engine;
// The process's engine, for the btl's RDMA completion callbacks (which get
// an operation handle, never a pointer that may be stale).
extern Engine *g_engine_for_callbacks;

class Engine {
public:
    explicit Engine(rt::Runtime &rt);
    ~Engine();
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    Status init();
    // Finishes what is in flight (bounded), then releases everything.
    Status drain(std::chrono::milliseconds timeout);

    // Portals API (weft.h); errors carry a message.
    Status eq_alloc(unsigned count, weft_eq_handler_t handler, weft_eq_t *eq);
    Status eq_free(weft_eq_t eq);
    Status eq_poll(std::span<const weft_eq_t> eqs, int timeout_ms, weft_event_t *ev, int *which);
    Status me_attach(unsigned portal, uint32_t rank, uint64_t bits, uint64_t ignore, weft_unlink_t unlink,
                     weft_ins_pos_t pos, Me *relative_to, weft_me_t *out);
    Status me_insert(weft_me_t current, uint32_t rank, uint64_t bits, uint64_t ignore,
                     weft_unlink_t unlink, weft_ins_pos_t pos, weft_me_t *out);
    Status me_unlink(weft_me_t me);
    Status portal_set_lazy(unsigned portal, bool lazy);
    Status md_attach(weft_me_t me, const weft_md_desc_t &desc, weft_unlink_t unlink, weft_md_t *out);
    Status md_bind(const weft_md_desc_t &desc, weft_unlink_t unlink, weft_md_t *out);
    Status md_unlink(weft_md_t md);
    Status put(weft_md_t md, weft_ack_req_t ack, uint32_t target, unsigned portal, uint64_t bits,
               size_t offset, uint64_t hdr_data);
    Status get(weft_md_t md, uint32_t target, unsigned portal, uint64_t bits, size_t offset);

    // Tagged messages.
    Status isend(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context, unsigned flags,
                 weft_request_t *req);
    Status irecv(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context,
                 weft_request_t *req);
    // irecv's argument checks, with fn in the messages.
    Status check_recv(const char *fn, const void *buf, size_t len, uint32_t source, int32_t tag) const;
    // The same checks as one test, without building a Status.
    bool recv_args_ok(const void *buf, size_t len, uint32_t source, int32_t tag) const
    {
        return (tag >= 0 || tag == WEFT_ANY_TAG) && (buf || !len) &&
               (source == WEFT_ANY_SOURCE || (source < job_size_ && !(peers_[source] && peers_[source]->failed)));
    }
    // Fills a receive request; matches it against the unexpected queue or posts it.
    void start_recv(Request *r, void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context);
    // start_recv's match against the unexpected queue: true when r took a message.
    [[gnu::noinline]] bool take_arrived(Request *r);
    // Blocking send without a request object when it can complete at once.
    // Returns the status code; *error gets the message when it is not
    // success (no Status is built on the fast path: that costs as much as
    // the send's own checks).
    int send(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context, Status *error)
    {
        const int rc = send_now(buf, len, dest, tag, context);   // connected, nothing queued, eager
        return rc == WEFT_SUCCESS ? rc : send_slow(rc, buf, len, dest, tag, context, error);
    }
    // The rest of send() after send_now gave rc: its error, or a queued
    // (rendezvous or waiting) send waited for.
    int send_slow(int rc, const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context, Status *error);
    // The small-message path of send: WEFT_SUCCESS if the message went out
    // eagerly at once, else a code and nothing sent (send() then says why
    // or queues it).
    int send_now(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context);
    // Blocking receive; its request lives on the stack, not in the pool
    // (nothing outside this call can name it). status may be null. Returns
    // the status code; *error gets the message when it is not success.
    int recv(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context,
             weft_msg_status_t *status, Status *error);
    Request *request(weft_request_t r);
    void free_request(Request *r);
    // What free_request does but return the slot: off the posted list, its
    // MD released (or left to finish its data).
    void detach_request(Request *r);
    void cancel(Request *r);
    // The handle goes; an unfinished send completes (and is freed) later.
    void release_request(Request *r);
    Status iprobe(uint32_t source, int32_t tag, uint32_t context, int *flag, weft_msg_status_t *status);
    Status barrier();

    // The engine's progress: queued operations and control frames.
    int progress();
    bool idle() const { return busy_.empty(); }
    size_t dropped() const { return dropped_; }
    size_t rejected() const { return rejected_; }
    // Why operations with `rank` failed with `error`: the transport's
    // account of the peer's failure (which module, host and cause) when
    // there is one, else the status's name.
    std::string failure_of(uint32_t rank, int error) const;

private:
    friend struct EngineAccess;
    static void on_am(void *ctx, weft_btl_endpoint_t *ep, const void *data, size_t len);
    // Every frame but a tagged eager message (try_tagged_eager).
    [[gnu::noinline]] void on_frame(weft_btl_endpoint_t *ep, const void *data, size_t len);
    static void on_peer_failed(void *ctx, uint32_t rank, const std::string &why);
    static int poll(void *ctx);

    // Peers and sending.
    PeerState *peer_for_send(uint32_t rank, Status *err);
    // Inline: asked for every message sent; true at once once the peer has
    // its endpoint.
    bool connected(PeerState &ps) { return ps.ep || connect_now(ps); }
    bool connect_now(PeerState &ps);
    void enqueue(PeerState &ps, Op *op);
    void mark_busy(PeerState &ps);
    bool continue_reply(PeerState &ps, Op *op);
    void finish_incoming(Incoming *in, int status);
    // Header + payload to the peer's module: sendi when it fits. Inline
    // here, like send_eager: every eager message passes through both, and
    // a call and return each is a measurable part of a small message's
    // cost under emulation (Soft-RoCE in a TCG VM).
    int send_frame(PeerState &ps, std::span<const std::byte> hdr, std::span<const std::byte> payload)
    {
        weft_btl_endpoint_t *ep = ps.ep;
        if (hdr.size() + payload.size() <= ps.inline_max) {
            // inline_max is 0 unless the module has sendi (connect_now):
            // saying so spares the wrapper's test on every message.
            if (!WEFT_BTL_HAS_OP(ep->module, sendi))
                __builtin_unreachable();
            return weft_btl_sendi(ep, wire::kAmEngine, hdr.data(), hdr.size(), payload.data(), payload.size());
        }
        iovec iov[2] = {{const_cast<std::byte *>(hdr.data()), hdr.size()},
                        {const_cast<std::byte *>(payload.data()), payload.size()}};
        return weft_btl_send(ep, wire::kAmEngine, iov, payload.empty() ? 1 : 2);
    }
    // An eager frame: Tagged (8 header bytes) where it can say the match
    // bits, else Eager.
    int send_eager(PeerState &ps, unsigned portal, uint64_t bits, std::span<const std::byte> data)
    {
        if (portal == WEFT_PT_TAGGED && (bits >> 32) <= wire::Tagged::kMaxContext) {
            wire::Tagged t;
            t.type = static_cast<uint8_t>(wire::Type::Tagged);
            t.set_match_bits(bits);
            return send_frame(ps, std::as_bytes(std::span(&t, 1)), data);
        }
        wire::Eager e{};
        e.type = static_cast<uint8_t>(wire::Type::Eager);
        e.portal = static_cast<uint8_t>(portal);
        e.length = static_cast<uint32_t>(data.size());
        e.match_bits = bits;
        return send_frame(ps, std::as_bytes(std::span(&e, 1)), data);
    }
    void send_control(PeerState &ps, std::span<const std::byte> frame);
    void send_control_to(uint32_t rank, std::span<const std::byte> frame);
    // Starts (or continues) an op; false when it must wait (queued).
    bool start_op(PeerState &ps, Op *op);
    bool start_put(PeerState &ps, Op *op);
    Status new_md(const char *fn, const weft_md_desc_t &desc, weft_unlink_t unlink, Md **out);
    Status new_op(const char *fn, weft_md_t md, uint32_t target, unsigned portal, Op **op, PeerState **ps);
    // A tagged eager message straight to the module when nothing stands in
    // the way; WEFT_ERR_AGAIN when it must take the queued path.
    int try_eager(PeerState &ps, uint64_t bits, const void *buf, size_t len)
    {
        if (ps.queue_head || !ps.control.empty() || !connected(ps) || len > ps.eager_limit ||
            ps.eager_outstanding + len > eager_window_)
            return WEFT_ERR_AGAIN;
        const int rc = send_eager(ps, WEFT_PT_TAGGED, bits, {static_cast<const std::byte *>(buf), len});
        if (rc == WEFT_SUCCESS)
            ps.eager_outstanding += len;
        return rc;
    }
    bool continue_data(PeerState &ps, Op *op);
    void complete_op(Op *op, int status, size_t mlength);
    void fail_peer_ops(uint32_t rank, const std::string &why);

    // Receiving (engine_target.cc).
    void handle(weft_btl_endpoint_t *ep, const wire::Frame &f);
    void handle_put_like(weft_btl_endpoint_t *ep, const wire::Frame &f);
    void handle_ack(const wire::Frame &f, bool fin);
    void handle_get(weft_btl_endpoint_t *ep, const wire::Frame &f);
    void handle_reply(const wire::Frame &f);
    void handle_cts(weft_btl_endpoint_t *ep, const wire::Frame &f);
    void handle_data(const wire::Frame &f);
    void handle_credit(uint32_t src, const wire::Frame &f);
    void handle_put_req(weft_btl_endpoint_t *ep, const wire::Frame &f);
    void handle_put_done(const wire::Frame &f);
    static void on_put_done(weft_btl_endpoint_t *ep, void *ctx, int status);
    void send_put_done(uint32_t target, uint64_t token, int status);
    // Rendezvous by RDMA: the target's get of [from, from + len) of the
    // initiator's data (a btl status: it may not start).
    int start_part_get(Incoming *in, size_t from, size_t len);
    // The module's get alone (start_part_get defers it on WEFT_ERR_AGAIN).
    int issue_part_get(Incoming *in, size_t from, size_t len);
    // Queues d on rank's peer, to be retried from progress().
    void defer_rdma(uint32_t rank, const DeferredRdma &d);
    // One deferred RDMA operation again: WEFT_ERR_AGAIN keeps it queued.
    int retry_rdma(const DeferredRdma &d);
    Status split_rendezvous(Incoming *in, uint64_t handle);
    void part_done(Incoming *in, int status);
    // Rendezvous Data frames (placement.cc): unordered sends, direct placement.
    void enable_placement();
    int send_data(weft_btl_endpoint_t *ep, const wire::Data &d, std::span<const std::byte> payload);
    // The endpoint (index into peer->endpoints) the next Data chunk goes
    // on, among those whose bit in `tried` is clear; SIZE_MAX if none.
    size_t pick_rail(const PeerState &ps, uint32_t tried) const;
    void log_striping() const;
    Incoming *data_target(const wire::Data &d, size_t bytes, bool quiet);
    void data_landed(Incoming *in, size_t bytes);
    static int on_place(void *ctx, weft_btl_endpoint_t *ep, std::span<const std::byte> head, size_t len,
                        weft_btl_placement_t *place);
    static void on_placed(void *ctx, weft_btl_endpoint_t *ep, uint64_t token, int status);
    Me *match(unsigned portal, uint32_t src, uint64_t bits, unsigned op, size_t rlength, size_t offset);
    bool md_accepts(const Md &md, unsigned op, size_t rlength, size_t offset) const;
    // Lands a put (eager data or a rendezvous header) into md.
    void deliver(Md *md, const PutInfo &u, std::span<const std::byte> data);
    // Counts bytes of src's eager traffic consumed here; a Credit frame
    // tells the peer when a quarter of its window is used. Every eager
    // message passes here: the common case inline, the rest apart.
    void consume_credit(uint32_t src, size_t bytes)
    {
        if (src < job_size_ && peers_[src] && peers_[src]->consumed_unreported + bytes < eager_window_ / 4) {
            peers_[src]->consumed_unreported += bytes;
            return;
        }
        consume_credit_slow(src, bytes);
    }
    [[gnu::noinline]] void consume_credit_slow(uint32_t src, size_t bytes);
    void drain_unexpected_into(Me *me);
    // A malformed or unexpected frame from a peer: counted, logged (bounded).
    void reject(uint32_t src, const std::string &why);
    static void on_rdma_done(weft_btl_endpoint_t *ep, void *ctx, int status);
    void post_event(Md *md, weft_event_kind_t kind, uint32_t initiator, uint32_t target, unsigned portal,
                    uint64_t bits, size_t rlength, size_t mlength, size_t offset, uint64_t hdr_data,
                    int status);
    void md_used(Md *md);                  // threshold bookkeeping after an operation
    void md_release(Md *md, bool explicit_unlink);
    void me_remove(Me *me);
    Unexpected *take_unexpected(unsigned portal, uint32_t rank, uint64_t bits, uint64_t ignore);

    // Tagged receives (tagged.cc): the posted list, in posting order.
    void post_recv(Request *r);
    void unpost(Request *r);
    Request *match_posted(uint32_t src, uint64_t bits);
    // An eager tagged message straight into a matched receive.
    void land_eager(Request *r, uint32_t src, uint64_t bits, std::span<const std::byte> data);
    // A matched receive's data by the portal machinery (rendezvous, Put).
    void land_by_md(Request *r, const PutInfo &u, std::span<const std::byte> data);
    // The on_am fast path: a tagged eager frame that matches a posted receive.
    bool try_tagged_eager(weft_btl_endpoint_t *ep, const void *data, size_t len);

    rt::Runtime &rt_;
    uint32_t my_rank_ = 0, job_size_ = 1;
    size_t eager_limit_cap_ = 0, eager_window_ = 0, chunk_ = 0;
    bool rndv_rdma_ = true;
    size_t rndv_split_ = 0;
    std::vector<std::unique_ptr<PeerState>> peers_;
    std::array<Portal, WEFT_MAX_PORTALS> portals_{};
    Pool<Eq, 1> eqs_;
    Pool<Me, 2> mes_;
    Pool<Md, 3> mds_;
    Pool<Request, 4> requests_;
    Pool<Op, 5> ops_;
    Pool<Unexpected, 6> unexpected_;
    Pool<Incoming, 7> incoming_;
    Pool<Landing, 8> landings_;
    std::vector<PeerState *> busy_;        // peers with queued ops or control frames
    size_t dropped_ = 0;                   // puts that matched nothing (non-lazy portal)
    size_t rejected_ = 0;                  // malformed frames
    uint32_t barrier_epoch_ = 0;
    Request *posted_head_ = nullptr, *posted_tail_ = nullptr;
};

} // namespace weft::engine
