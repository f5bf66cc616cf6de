// SPDX-License-Identifier: BSD-3-Clause
// The engine's plain objects: event queues, match entries, memory
// descriptors, requests, operations, arrived puts, receives in progress and
// per-peer traffic. Who owns which: Portals (EQ, ME, MD, the portal
// lists, unexpected puts), Matching (the posted list of receives), Peers
// (PeerTraffic and its DeferredRdma), Rendezvous (Incoming, Landing), the
// Engine (the Request and Op pools).
#pragma once

#include <weft.h>
#include <weft/btl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "engine/counters.hpp"
#include "engine/wire.hpp"

namespace weft::engine {

inline constexpr uint32_t kTaggedContextUser = 0;     // weft_send/weft_recv
inline constexpr uint32_t kTaggedContextBarrier = 1;  // weft_barrier
inline constexpr uint32_t kTaggedContextReport = 2;   // the end-of-job report's gather (rte)
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
// the posted list (Matching: no match entry, no MD) until a message matches
// it; only a rendezvous or a long unexpected message gives it an MD, which
// carries the data transfer with the portal machinery.
struct Request {
    uint64_t handle = 0;
    bool done = false;
    bool is_recv = false;
    bool posted = false;                   // in the posted-receive list
    bool orphaned = false;                 // its handle was freed before it completed
    bool landing = false;                  // matched; a module places its data (Engine::place_tagged)
    bool reads_at_once = false;            // WEFT_RECV_READ_AT_ONCE: its rendezvous is not split
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
        done = is_recv = posted = orphaned = landing = reads_at_once = false;
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
    bool forward = false;                  // TaggedSend: WEFT_SEND_FORWARD (eager where it can)
    bool rendezvous = false;               // its Rts went out: counted in its peer's rndv_in_flight until it ends
    size_t sent = 0;                       // Cts mode: bytes sent so far
    size_t first = 0;                      // rendezvous: data bytes the Rts carried
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
    size_t first = 0;                      // Rts: the data bytes [0, first) it carries
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
    // The data that came with it: all of an eager put, an Rts's first bytes.
    size_t carried() const { return info.type == wire::Type::Rts ? info.first : info.length; }
    std::span<const std::byte> data() const
    {
        return carried() <= kInlineUnexpected ? std::span<const std::byte>(inline_data.data(), carried())
                                              : std::span<const std::byte>(heap_data);
    }
};

// A rendezvous put this process is receiving (Rendezvous): by RDMA, or in
// chunks (Cts mode).
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
    uint64_t matched_ns = 0;               // when it matched: the counters' transfer time
};

// A Data frame a module is receiving straight into an MD (rendezvous_data.cc).
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

// The engine's traffic with one peer: what it queued, its eager credits,
// the frames waiting for room. (The peer's transports and connection state
// are the runtime's: Host::connected_endpoints.)
struct PeerTraffic {
    uint32_t rank = 0;
    weft_peer_counters_t *counters = nullptr;  // its record in the counter page (set by Peers::slot)
    bool started = false;                  // Host::start_connect asked
    weft_btl_endpoint_t *ep = nullptr;     // primary endpoint once connected
    size_t eager_limit = 0;                // min(module eager limit, engine limit)
    // Longer messages up to this go eagerly when the module takes them at
    // once (sendx with WEFT_BTL_SEND_NOW), else by rendezvous; 0: none.
    size_t eager_if_room = 0;
    // Longer messages up to eager_limit go by rendezvous while
    // rndv_in_flight is 0, eagerly otherwise (weft_btl_endpoint_t.
    // single_copy_from); 0: none. direct_max is what try_eager sends
    // straight away: single_copy_from when set, else eager_limit.
    size_t single_copy_from = 0;
    size_t direct_max = 0;
    // eager_if_room for a forwarded send (WEFT_SEND_FORWARD): the module's
    // own limit where the connection's limits are lower, else the same.
    size_t forward_if_room = 0;
    uint32_t rndv_in_flight = 0;           // rendezvous sends to it not yet ended
    size_t inline_max = 0;
    size_t eager_outstanding = 0;          // sent, not yet credited back
    size_t consumed_unreported = 0;        // received and matched, not yet credited
    Op *queue_head = nullptr, *queue_tail = nullptr;   // ops waiting for the connection
    std::deque<std::vector<std::byte>> control;        // control frames that got AGAIN
    std::deque<DeferredRdma> rdma_retry;                // RDMA operations that got AGAIN
    // Rendezvous Data bytes given to each of the peer's endpoints (parallel
    // to its connected endpoints): the striping's account, logged at finalize.
    std::vector<uint64_t> rail_bytes;
    bool busy = false;                     // in the engine's busy list
    bool failed = false;
    std::string failure;
};

} // namespace weft::engine
