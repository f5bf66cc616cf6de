// SPDX-License-Identifier: BSD-3-Clause
// Per-peer traffic: the engine's record of each peer (PeerTraffic: queued
// operations, eager credits, control frames and RDMA operations waiting for
// room, the failure), connecting through the host on first use, the frames
// that go out on a peer's primary endpoint, and the count of frames refused
// from peers. The small-message send (try_eager, send_eager, send_frame)
// and the credit count of every eager message are inline here, so the fast
// paths in tagged.cc compile into one function each with no call of this
// class left (peers.cc has the rest).
#pragma once

#include <weft/btl.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "engine/host.hpp"
#include "engine/objects.hpp"
#include "engine/params.hpp"
#include "engine/wire.hpp"

namespace weft::engine {

// The eager limit toward a peer reached through ep: the module's, the
// connection's own (weft_btl_endpoint_t.eager_limit) or the user's
// engine_base_eager_limit (user_cap, 0 when unset). See peers.cc.
size_t eager_limit_for(const weft_btl_endpoint_t *ep, size_t user_cap);
// The connection's weft_btl_endpoint_t.eager_if_room as the engine uses it:
// 0 unless it lies above eager_limit and the module has sendx.
size_t eager_if_room_for(const weft_btl_endpoint_t *ep, size_t user_cap, size_t eager_limit);
// The connection's weft_btl_endpoint_t.single_copy_from as the engine uses
// it: 0 unless it lies below eager_limit and the user set no limit.
size_t single_copy_from_for(const weft_btl_endpoint_t *ep, size_t user_cap, size_t eager_limit);
// How far past the connection's limits a forwarded send may go eagerly
// (PeerTraffic::forward_if_room); 0: not past them.
size_t forward_if_room_for(const weft_btl_endpoint_t *ep, size_t user_cap, size_t connection_max);

class Peers {
public:
    Peers(Host &host, log::Logger &log, const Config &config, CounterPage &counters);

    // rank's record if it has one (null too for a rank outside the job).
    // Against job_size_, not peers_.size(): one load instead of two and a
    // subtraction, on every message sent and received.
    PeerTraffic *find(uint32_t rank) const { return rank < job_size_ ? peers_[rank].get() : nullptr; }
    bool failed(uint32_t rank) const
    {
        const PeerTraffic *ps = find(rank);
        return ps && ps->failed;
    }
    // rank's record, connecting it through the host on first use; null with
    // *err (not in the job, unreachable, failed) when nothing can go to it.
    PeerTraffic *for_send(uint32_t rank, Status *err);
    // rank's traffic record, created (not connected) if it has none.
    PeerTraffic &slot(uint32_t rank);
    // Inline: asked for every message sent; true at once once the peer has
    // its endpoint.
    bool connected(PeerTraffic &ps) { return ps.ep || connect_now(ps); }
    bool connect_now(PeerTraffic &ps);
    void enqueue(PeerTraffic &ps, Op *op);
    void mark_busy(PeerTraffic &ps);
    // Peers with queued operations, control frames or RDMA retries: the
    // engine's progress takes the list, works on it, and gives the vector
    // back (recycle) so that its capacity stays.
    bool idle() const { return busy_.empty(); }
    void take_busy(std::vector<PeerTraffic *> &work) { work.swap(busy_); }
    void recycle(std::vector<PeerTraffic *> &work)
    {
        if (!work.empty() && busy_.empty())
            busy_.swap(work), busy_.clear();
    }

    // Header + payload to the peer's module: sendi when it fits. Inline
    // here, like send_eager: every eager message passes through both, and
    // a call and return each is a measurable part of a small message's
    // cost under emulation (Soft-RoCE in a TCG VM).
    // Now: through sendx with WEFT_BTL_SEND_NOW, for a message past the
    // eager limit that goes eagerly only if the module takes it at once.
    template <bool Now = false>
    [[gnu::always_inline]] int send_frame(PeerTraffic &ps, std::span<const std::byte> hdr,
                                          std::span<const std::byte> payload)
    {
        weft_btl_endpoint_t *ep = ps.ep;
        if (!Now && hdr.size() + payload.size() <= ps.inline_max) {
            // inline_max is 0 unless the module has sendi (connect_now):
            // saying so spares the wrapper's test on every message.
            if (!WEFT_BTL_HAS_OP(ep->module, sendi))
                __builtin_unreachable();
            return weft_btl_sendi(ep, wire::kAmEngine, hdr.data(), hdr.size(), payload.data(), payload.size());
        }
        iovec iov[2] = {{const_cast<std::byte *>(hdr.data()), hdr.size()},
                        {const_cast<std::byte *>(payload.data()), payload.size()}};
        if constexpr (Now)
            return weft_btl_sendx(ep, wire::kAmEngine, iov, payload.empty() ? 1 : 2, WEFT_BTL_SEND_NOW);
        return weft_btl_send(ep, wire::kAmEngine, iov, payload.empty() ? 1 : 2);
    }
    // An eager frame: Tagged (8 header bytes) where it can say the match
    // bits, else Eager.
    template <bool Now = false>
    [[gnu::always_inline]] int send_eager(PeerTraffic &ps, unsigned portal, uint64_t bits, std::span<const std::byte> data)
    {
        if (portal == WEFT_PT_TAGGED && (bits >> 32) <= wire::Tagged::kMaxContext) {
            wire::Tagged t;
            t.type = static_cast<uint8_t>(wire::Type::Tagged);
            t.set_match_bits(bits);
            return send_frame<Now>(ps, std::as_bytes(std::span(&t, 1)), data);
        }
        wire::Eager e{};
        e.type = static_cast<uint8_t>(wire::Type::Eager);
        e.portal = static_cast<uint8_t>(portal);
        e.length = static_cast<uint32_t>(data.size());
        e.match_bits = bits;
        return send_frame<Now>(ps, std::as_bytes(std::span(&e, 1)), data);
    }
    void send_control(PeerTraffic &ps, std::span<const std::byte> frame);
    void send_control_to(uint32_t rank, std::span<const std::byte> frame);
    // A tagged eager message straight to the module when nothing stands in
    // the way; WEFT_ERR_AGAIN when it must take the queued path.
    // Always inlined: as a call of its own (GCC left it out of line once
    // it moved here) it cost about 40 instructions per round trip.
    // max: the largest message to send now (direct_max; eager_limit for a
    // forwarded send).
    [[gnu::always_inline]] int try_eager(PeerTraffic &ps, uint64_t bits, const void *buf, size_t len)
    {
        return try_eager(ps, bits, buf, len, ps.direct_max);
    }
    [[gnu::always_inline]] int try_eager(PeerTraffic &ps, uint64_t bits, const void *buf, size_t len, size_t max)
    {
        if (ps.queue_head || !ps.control.empty() || !connected(ps) || len > max ||
            ps.eager_outstanding + len > eager_window_)
            return WEFT_ERR_AGAIN;
        const int rc = send_eager(ps, WEFT_PT_TAGGED, bits, {static_cast<const std::byte *>(buf), len});
        if (rc == WEFT_SUCCESS) {
            ps.eager_outstanding += len;
            count_sent(ps.counters, WEFT_PROTO_EAGER, len);
        }
        return rc;
    }
    // Counts bytes of src's eager traffic consumed here; a Credit frame
    // tells the peer when a quarter of its window is used. Every eager
    // message passes here: the common case inline, the rest apart.
    void consume_credit(uint32_t src, size_t bytes)
    {
        if (PeerTraffic *ps = find(src); ps && ps->consumed_unreported + bytes < eager_window_ / 4) {
            ps->consumed_unreported += bytes;
            count_received(ps->counters, WEFT_PROTO_EAGER, bytes);
            return;
        }
        consume_credit_slow(src, bytes);
    }
    [[gnu::noinline]] void consume_credit_slow(uint32_t src, size_t bytes);
    // The credit alone, for eager-window bytes that are not an eager
    // message (an Rts's first bytes: counted with their rendezvous).
    void return_credit(uint32_t src, size_t bytes);
    // A Credit frame from src: bytes of ours it consumed.
    void on_credit(uint32_t src, uint64_t bytes);
    // Why operations with `rank` failed with `error`: the transport's
    // account of the peer's failure (which module, host and cause) when
    // there is one, else the status's name.
    std::string failure_of(uint32_t rank, int error) const;
    // A malformed or unexpected frame from src (WEFT_RANK_ANY when the
    // frame does not say): counted, logged (the first 8, all at debug).
    void reject(uint32_t src, const std::string &why);
    size_t rejected() const { return rejected_; }

    // Striping of rendezvous data over a peer's endpoints.
    // The endpoint (index into peer->endpoints) the next Data chunk goes
    // on, among those of eps (the peer's connected endpoints) whose bit in
    // `tried` is clear; SIZE_MAX if none.
    size_t pick_rail(const PeerTraffic &ps, std::span<weft_btl_endpoint_t *const> eps, uint32_t tried) const;
    void log_striping() const;

private:
    Host &host_;
    log::Logger &log_;
    CounterPage &counters_;
    uint32_t job_size_;
    size_t eager_limit_cap_, eager_window_, chunk_;
    std::vector<std::unique_ptr<PeerTraffic>> peers_;
    std::vector<PeerTraffic *> busy_;
    size_t rejected_ = 0;
};

} // namespace weft::engine
