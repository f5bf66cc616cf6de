// SPDX-License-Identifier: BSD-3-Clause
// Rendezvous: how a large put's data moves once its header (Rts) matched.
//
//   initiator                          target
//   Rts (+ rkey when registered,  --->  start(): an Incoming in the MD
//        else the first bytes)          (the first bytes landed in it)
//                                      by RDMA: get [0, split) ...
//   <--- PutReq (split: write the rest) ... and the initiator puts the rest
//   put, then PutDone           --->
//                                      else: Cts, asking for the rest
//   <--- Cts                           of the data in chunks (or the
//                                      Fin at once when the Rts held all)
//   Data, Data, ... (any order)  --->  counted (or placed straight into
//                                      the MD by the module)
//   <--- Fin (status, length)          when every byte is in, or on error
//
// This part holds the target's receives in progress (Incoming) and the
// Data frames a module is placing (Landing); the initiator's operations
// (Op) are the engine's, looked up here by the handle a frame or an RDMA
// completion carries, and never completed here: each call that moves an
// operation returns a btl status and the engine completes it. An RDMA
// operation the module cannot start yet (WEFT_ERR_AGAIN) waits in the
// peer's retry queue (Peers) and starts again from the engine's progress
// (retry).
//
// rendezvous.cc has the protocol, rendezvous_data.cc the Data frames and
// the btl's optional extensions for them (unordered sends, placement).
#pragma once

#include <weft/btl.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/host.hpp"
#include "engine/interval_clock.hpp"
#include "engine/objects.hpp"
#include "engine/params.hpp"
#include "engine/peers.hpp"
#include "engine/pool.hpp"
#include "engine/portals.hpp"
#include "engine/wire.hpp"

namespace weft::engine {

class Rendezvous {
public:
    Rendezvous(Host &host, Portals &portals, Peers &peers, Pool<Op, 5> &ops, CounterPage &counters,
               const Config &config);
    ~Rendezvous();
    Rendezvous(const Rendezvous &) = delete;
    Rendezvous &operator=(const Rendezvous &) = delete;

    // The btl's RDMA completions reach this object from now on.
    void init();
    // Placement of a Data frame (the engine's place handler passes them
    // here): 1 with *place filled in, or 0 to decline (the frame then
    // arrives through on_data). placed: the module's answer for a token
    // place() gave.
    int place(weft_btl_endpoint_t *ep, std::span<const std::byte> head, size_t len, weft_btl_placement_t *out);
    void placed(uint64_t token, int status);
    // Whether a placement token is one of place()'s.
    static bool is_landing(uint64_t token) { return decltype(landings_)::names(token); }

    // ---- initiator
    // Sends op's Rts on ps's primary endpoint, registering op's data first
    // when the module lets the target read it. A btl status; on success
    // op waits for the Fin (or a Cts, or a PutReq).
    int send_rts(PeerTraffic &ps, Op *op);
    // A Cts from ep: the operation that now sends its data in chunks
    // (state Sending, send_granted), or null (rejected).
    Op *on_cts(weft_btl_endpoint_t *ep, const wire::Frame &f);
    // The granted chunks of op as Data frames, each on the rail that
    // would finish it first. WEFT_ERR_AGAIN: every rail is full, call
    // again later; WEFT_SUCCESS: all sent, op waits for the Fin; else the
    // error that ends op.
    int send_granted(PeerTraffic &ps, Op *op);
    // A PutReq from ep: the target asks us to write part of the data.
    void on_put_req(weft_btl_endpoint_t *ep, const wire::Frame &f);

    // ---- target
    // An Rts matched md: receive mlength of its u.length bytes at offset
    // off of md (by RDMA when u carries a key and ep's module can read,
    // else by Cts and Data), first: the data bytes the Rts carried, landed
    // here. ack: the Fin asks the initiator for an ACK event. The request
    // of md, if any, completes when the data is in.
    void start(Md *md, const PutInfo &u, std::span<const std::byte> first, size_t off, size_t mlength,
               unsigned portal, bool ack);
    void on_data(const wire::Frame &f);
    void on_put_done(const wire::Frame &f);

    // ---- both
    // One deferred RDMA operation again: WEFT_ERR_AGAIN keeps it queued.
    int retry(const DeferredRdma &d);
    // rank failed: its receives in progress end with error (their Fin is
    // queued for no one; the requests and events say error).
    void fail_peer(uint32_t rank, int error);

private:
    // Target side of the RDMA path.
    // Asks the initiator to write the second half (PutReq); false: no split.
    bool split(Incoming *in);
    int start_part_get(Incoming *in, size_t from, size_t len);
    int issue_part_get(Incoming *in, size_t from, size_t len);
    void part_done(Incoming *in, int status);
    void finish(Incoming *in, int status);
    void defer(uint32_t rank, const DeferredRdma &d);
    void send_put_done(uint32_t target, uint64_t token, int status);
    static void on_get_done(weft_btl_endpoint_t *ep, void *ctx, int status);
    static void on_put_written(weft_btl_endpoint_t *ep, void *ctx, int status);

    // Data frames (rendezvous_data.cc).
    int send_data(weft_btl_endpoint_t *ep, const wire::Data &d, std::span<const std::byte> payload);
    Incoming *data_target(const wire::Data &d, size_t bytes, bool quiet);
    void data_landed(Incoming *in, size_t bytes);

    // The btl's RDMA completions carry a handle, not this pointer.
    static Rendezvous *current_;
    Host &host_;
    Portals &portals_;
    Peers &peers_;
    Pool<Op, 5> &ops_;
    CounterPage &counters_;                // transfers by protocol, RDMA fallbacks
    uint32_t my_rank_, job_size_;
    size_t chunk_;
    size_t first_max_;                     // engine_base_rndv_first (0: the Rts carries no data)
    size_t eager_window_;                  // the first bytes count against it like eager data
    bool rdma_;                            // engine_base_rndv_rdma
    size_t split_min_;                     // engine_base_rndv_split (0: never)
    Pool<Incoming, 7> incoming_;
    Pool<Landing, 8> landings_;
    IntervalClock clock_;                  // each Incoming's time from match to last byte (rndv_ns)
};

} // namespace weft::engine
