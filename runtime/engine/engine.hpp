// SPDX-License-Identifier: BSD-3-Clause
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
//
// The engine sees the process runtime only through Host (host.hpp); the
// runtime (runtime/rte) builds it and registers nothing on its behalf.
//
// Its parts, each with a header of its own:
//  - Portals (portals.hpp): EQ, ME, MD, the portal lists and unexpected
//    queues, events;
//  - Peers (peers.hpp): per-peer queues, credits, frames out, failures;
//  - Matching (matching.hpp): posted receives, the tagged unexpected
//    queue, eager landing (its fast path inline);
//  - Rendezvous (rendezvous.hpp, rendezvous.cc, rendezvous_data.cc): a
//    large put's data after its header matched, by RDMA or by chunks;
// and Engine, the facade the C API calls (messaging_api.cc), which holds
// the requests and operations and joins the parts: tagged sends and
// receives and the frame handler's fast path (tagged.cc, one translation
// unit with Matching's inline part), the receiving side (target.cc), the
// initiator side and progress (engine.cc).
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
#include "engine/counters.hpp"
#include "engine/host.hpp"
#include "engine/matching.hpp"
#include "engine/objects.hpp"
#include "engine/params.hpp"
#include "engine/peers.hpp"
#include "engine/pool.hpp"
#include "engine/portals.hpp"
#include "engine/rendezvous.hpp"
#include "engine/wire.hpp"

namespace weft::engine {

class Engine {
public:
    Engine(Host &host, const Config &config);
    ~Engine();
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    // Registers its handlers and progress source with the host.
    Status init();
    // Waits (up to config.finalize_timeout) for what is in flight.
    Status drain();
    // The process's engine once init() succeeded: the one the C API calls.
    // (The btl's RDMA completions reach its Rendezvous the same way, with
    // a handle, never a pointer that may be stale.)
    static Engine *current() { return current_; }
    // The progress loop it waits in (the host's).
    rt::ProgressEngine &progress_engine() { return progress_; }
    uint32_t rank() const { return my_rank_; }

    // Portals API (weft.h); errors carry a message.
    // The objects themselves (EQ, ME, MD) are the portal table's; the
    // engine adds waiting (eq_poll), delivery of what already arrived
    // (md_attach) and the transfers (put, get).
    Portals &portals() { return portals_; }
    Status eq_poll(std::span<const weft_eq_t> eqs, int timeout_ms, weft_event_t *ev, int *which);
    Status md_attach(weft_me_t me, const weft_md_desc_t &desc, weft_unlink_t unlink, weft_md_t *out);
    Status put(weft_md_t md, weft_ack_req_t ack, uint32_t target, unsigned portal, uint64_t bits,
               size_t offset, uint64_t hdr_data);
    Status get(weft_md_t md, uint32_t target, unsigned portal, uint64_t bits, size_t offset);

    // Tagged messages.
    // isend and irecv return the status code, and *error gets the message
    // when it is not success; with error null the message goes to
    // api_fail (weft_error_message). The C API passes null: it then builds
    // no Status and its call is a jump (a Status of its own, and the frame
    // it needed, cost weft_irecv_ctx 21 and weft_isend_ctx about 60
    // instructions a call, callgrind).
    int isend(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context, unsigned flags,
              weft_request_t *req, Status *error);
    // flags: WEFT_RECV_READ_AT_ONCE or 0.
    int irecv(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, weft_request_t *req,
              Status *error, unsigned flags = 0);
    // The same, with the Status returned (the engine's own callers, tests).
    Status isend(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context, unsigned flags,
                 weft_request_t *req)
    {
        Status error;
        isend(buf, len, dest, tag, context, flags, req, &error);
        return error;
    }
    Status irecv(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, weft_request_t *req)
    {
        Status error;
        irecv(buf, len, source, tag, context, req, &error);
        return error;
    }
    // irecv's argument checks, with fn in the messages.
    Status check_recv(const char *fn, const void *buf, size_t len, uint32_t source, int32_t tag) const;
    // The same checks as one test, without building a Status.
    bool recv_args_ok(const void *buf, size_t len, uint32_t source, int32_t tag) const
    {
        return (tag >= 0 || tag == WEFT_ANY_TAG) && (buf || !len) &&
               (source == WEFT_ANY_SOURCE || (source < job_size_ && !peers_.failed(source)));
    }
    // Fills a receive request; matches it against the unexpected queue or posts it.
    void start_recv(Request *r, void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context);
    // start_recv's match against the unexpected queue: true when r took a message.
    [[gnu::noinline]] bool take_arrived(Request *r);
    // Blocking send without a request object when it can complete at once.
    // Returns the status code; when it is not success, on_error(Status)
    // is called with the message and its result returned (no Status is
    // built on the fast path: that costs as much as the send's own checks).
    template <class OnError>
    [[gnu::always_inline]] int send(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context,
                                    OnError &&on_error)
    {
        const int rc = send_now(buf, len, dest, tag, context);   // connected, nothing queued, eager
        if (rc == WEFT_SUCCESS) [[likely]]
            return rc;
        return send_rest(rc, buf, len, dest, tag, context, on_error);
    }
    // send()'s other cases, apart: their Status (a string) in send()
    // itself gave every caller a stack frame and its saved registers, about
    // 14 instructions of a message that needs neither.
    template <class OnError>
    [[gnu::noinline]] int send_rest(int rc, const void *buf, size_t len, uint32_t dest, int32_t tag,
                                    uint32_t context, OnError &on_error)
    {
        Status error;
        rc = send_slow(rc, buf, len, dest, tag, context, &error);
        return rc == WEFT_SUCCESS ? rc : on_error(error);
    }
    // The rest of send() after send_now gave rc: its error, or a queued
    // (rendezvous or waiting) send waited for.
    int send_slow(int rc, const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context, Status *error);
    // The small-message path of send: WEFT_SUCCESS if the message went out
    // eagerly at once, else a code and nothing sent (send() then says why
    // or queues it). Inline: send_api is then one function from the C
    // call to the module's sendi.
    [[gnu::always_inline]] int send_now(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context)
    {
        PeerTraffic *ps = peers_.find(dest);
        if (tag < 0 || (!buf && len) || !ps || ps->failed)
            return WEFT_ERR_AGAIN;
        return peers_.try_eager(*ps, tag_bits(context, tag), buf, len);
    }
    // send() and recv() with api_fail for their errors, for the process's
    // engine (current(), which the caller checked): weft_send, weft_recv
    // and their _ctx forms. Out of line, and static (six arguments, all in
    // registers), so that each C call is a jump here: one frame (saved
    // registers) per message, not two (about 15 instructions each way,
    // callgrind of `weft_bench lat 8`).
    static int send_api(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context);
    static int recv_api(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context,
                        weft_msg_status_t *status);
    // Blocking receive; its request lives on the stack, not in the pool
    // (nothing outside this call can name it). status may be null. Returns
    // the status code; when it is not success, on_error(Status) is called
    // with the message and its result returned (as send(): no Status on
    // the way of a receive that succeeds).
    template <class OnError>
    [[gnu::always_inline]] int recv(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context,
                                    weft_msg_status_t *status, OnError &&on_error)
    {
        if (!recv_args_ok(buf, len, source, tag)) [[unlikely]]
            return on_error(check_recv("weft_recv", buf, len, source, tag));
        weft_msg_status_t mine;
        weft_msg_status_t *out = status ? status : &mine;
        const int rc = recv_now(buf, len, source, tag, context, out);
        if (rc == WEFT_SUCCESS) [[likely]]
            return rc;
        return on_error(recv_failure(rc, *out));
    }
    // The same, with the message in *error (the runtime's callers).
    int recv(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, weft_msg_status_t *status,
             Status *error);
    // recv() once its arguments are good: the receive matched or posted,
    // waited for, its status in *out. Returns its status code. (tagged.cc
    // only: inline into recv_api.)
    inline int recv_now(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context,
                        weft_msg_status_t *out);
    // The message of a receive that ended with rc and status st.
    [[gnu::noinline]] Status recv_failure(int rc, const weft_msg_status_t &st) const;
    // Inline, like the pool's get and free: every request's wait passes here.
    Request *request(weft_request_t r) { return requests_.get(reinterpret_cast<uint64_t>(r)); }
    void free_request(Request *r)
    {
        if (r->posted || r->md)
            detach_request(r);
        requests_.free(r);
    }
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
    bool idle() const { return peers_.idle(); }
    // The process's counter page: the runtime adds connection events and
    // hands the btl modules their blocks; the C API reads it.
    CounterPage &counters() { return *counters_; }
    std::shared_ptr<CounterPage> shared_counters() const { return counters_; }
    size_t dropped() const { return dropped_; }
    size_t rejected() const { return peers_.rejected(); }
    // Why operations with rank failed with error (Peers::failure_of).
    std::string failure_of(uint32_t rank, int error) const { return peers_.failure_of(rank, error); }

private:
    static void on_am(void *ctx, weft_btl_endpoint_t *ep, const void *data, size_t len);
    // Every frame but a tagged eager message that found its receive
    // (Matching::land_tagged_frame).
    [[gnu::noinline]] void on_frame(weft_btl_endpoint_t *ep, const void *data, size_t len);
    // The host's placement of the engine's large frames: a tagged eager
    // message that matches a posted receive lands straight in its buffer
    // (place_tagged), a rendezvous Data frame in its MD (Rendezvous).
    static int on_place(void *ctx, weft_btl_endpoint_t *ep, std::span<const std::byte> head, size_t len,
                        weft_btl_placement_t *place);
    static void on_placed(void *ctx, weft_btl_endpoint_t *ep, uint64_t token, int status);
    int place_tagged(weft_btl_endpoint_t *ep, std::span<const std::byte> head, size_t len,
                     weft_btl_placement_t *place);
    void tagged_placed(uint32_t src, Request *r, int status);
    static void on_peer_failed(void *ctx, uint32_t rank, const std::string &why);
    static int poll(void *ctx);

    // The initiator (engine.cc). Starts (or continues) an op; false when
    // it must wait (queued).
    bool start_op(PeerTraffic &ps, Op *op);
    // isend's argument checks and the peer's record (connecting it on the
    // first send): null, with the code in *rc and the message reported
    // (to *error, or api_fail when error is null), when nothing can go to dest.
    [[gnu::noinline]] PeerTraffic *isend_peer(const void *buf, size_t len, uint32_t dest, int32_t tag,
                                              weft_request_t *out, Status *error, int *rc);
    // irecv's refusal of its arguments, reported as isend_peer's; the code.
    [[gnu::noinline]] int irecv_refused(const void *buf, size_t len, uint32_t source, int32_t tag,
                                        weft_request_t *out, Status *error) const;
    bool start_put(PeerTraffic &ps, Op *op);
    template <bool Now>
    int send_put_frame(PeerTraffic &ps, Op *op);
    Status new_op(const char *fn, weft_md_t md, uint32_t target, unsigned portal, Op **op, PeerTraffic **ps);
    // The target side of a get: its Reply chunks.
    bool continue_reply(PeerTraffic &ps, Op *op);
    void complete_op(Op *op, int status, size_t mlength);
    void fail_peer_ops(uint32_t rank, const std::string &why);

    // Receiving (target.cc).
    void handle(weft_btl_endpoint_t *ep, const wire::Frame &f);
    void handle_put_like(weft_btl_endpoint_t *ep, const wire::Frame &f);
    void handle_ack(const wire::Frame &f, bool fin);
    void handle_get(weft_btl_endpoint_t *ep, const wire::Frame &f);
    void handle_reply(const wire::Frame &f);
    void handle_cts(weft_btl_endpoint_t *ep, const wire::Frame &f);
    void handle_credit(uint32_t src, const wire::Frame &f);
    // Lands a put (eager data; a rendezvous header starts the Rendezvous)
    // into md.
    void deliver(Md *md, const PutInfo &u, std::span<const std::byte> data);
    void drain_unexpected_into(Me *me);

    // A matched receive's data: eager data copied (and credited), a Put or
    // a rendezvous header by the portal machinery (land_by_md).
    void land_matched(Request *r, const PutInfo &u, std::span<const std::byte> data);
    void land_by_md(Request *r, const PutInfo &u, std::span<const std::byte> data);

    static Engine *current_;
    Host &host_;
    rt::ProgressEngine &progress_;
    log::Logger &log_;
    Portals portals_;                      // EQ, ME, MD and the portal lists
    // What it sent, received, queued (weft/counters.h). Shared: the runtime
    // keeps it until its btl modules, which write into it, are gone.
    std::shared_ptr<CounterPage> counters_;
    Peers peers_;                          // per-peer queues, credits, frames out
    Matching matching_;                    // posted receives; the tagged unexpected queue
    uint32_t my_rank_ = 0, job_size_ = 1;
    size_t eager_window_ = 0, chunk_ = 0;
    std::chrono::milliseconds finalize_timeout_;
    Pool<Request, 4> requests_;
    Pool<Op, 5> ops_;
    Rendezvous rendezvous_;                // large puts' data after the Rts; looks up ops_
    bool placing_ = false;                 // init() registered on_place
    size_t dropped_ = 0;                   // puts that matched nothing (non-lazy portal)
    uint32_t barrier_epoch_ = 0;
};

} // namespace weft::engine
