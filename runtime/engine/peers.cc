// SPDX-License-Identifier: BSD-3-Clause
// Per-peer traffic (peers.hpp): connecting through the host on first use,
// the queues and control frames that wait for a connection or for room,
// eager credits, the rails of rendezvous data, what a failure left, and
// frames refused.
#include "engine/peers.hpp"

#include <algorithm>

#include "log/log.hpp"

namespace weft::engine {

Peers::Peers(Host &host, log::Logger &log, const Config &config, CounterPage &counters)
    : host_(host), log_(log), counters_(counters), job_size_(config.job_size), eager_limit_cap_(config.eager_limit_cap),
      eager_window_(config.eager_window), chunk_(config.chunk), peers_(config.job_size)
{
}

PeerTraffic *Peers::for_send(uint32_t rank, Status *err)
{
    if (rank >= job_size_) {
        *err = Status(WEFT_ERR_BAD_PARAM, "rank " + std::to_string(rank) + " is not in the job (size " +
                                              std::to_string(job_size_) + ")");
        return nullptr;
    }
    PeerTraffic &ps = slot(rank);
    if (!ps.started && !ps.failed) {
        Status st = host_.start_connect(rank);
        ps.started = true;
        if (!st.ok()) {
            ps.failed = true;
            ps.failure = st.message();
        }
    }
    if (ps.failed) {
        *err = Status(WEFT_ERR_UNREACHABLE, ps.failure);
        return nullptr;
    }
    return &ps;
}

PeerTraffic &Peers::slot(uint32_t rank)
{
    auto &slot = peers_[rank];
    if (!slot) {
        slot = std::make_unique<PeerTraffic>();
        slot->rank = rank;
        slot->counters = &counters_.peer(rank);
    }
    return *slot;
}

// The user's engine_base_eager_limit caps the module's limit and overrides
// what the module chose for this one connection; left at 0, a connection's
// own limit (a module that measured a faster protocol for it) comes before
// the module's. Neither may exceed the module's caps: its sends are sized for
// that.
size_t eager_limit_for(const weft_btl_endpoint_t *ep, size_t user_cap)
{
    const size_t module_limit = ep->module->caps.eager_limit;
    if (user_cap)
        return std::min(module_limit, user_cap);
    if (WEFT_HAS_MEMBER(ep, weft_btl_endpoint_t, eager_limit) && ep->eager_limit)
        return std::min(module_limit, ep->eager_limit);
    return module_limit;
}

// The connection's eager-if-room range (weft_btl_endpoint_t.eager_if_room),
// above eager_limit: only from a module with sendx, never against the user's
// engine_base_eager_limit, never past the module's caps.
size_t eager_if_room_for(const weft_btl_endpoint_t *ep, size_t user_cap, size_t eager_limit)
{
    if (user_cap || !WEFT_HAS_MEMBER(ep, weft_btl_endpoint_t, eager_if_room) || !WEFT_BTL_HAS_OP(ep->module, sendx))
        return 0;
    const size_t limit = std::min(ep->module->caps.eager_limit, ep->eager_if_room);
    return limit > eager_limit ? limit : 0;
}

// How far a forwarded send (WEFT_SEND_FORWARD) may go eagerly when the
// module takes it at once: the module's own limit (its caps), where the
// connection's limits are lower; never against the user's
// engine_base_eager_limit, only from a module with sendx.
size_t forward_if_room_for(const weft_btl_endpoint_t *ep, size_t user_cap, size_t connection_max)
{
    if (user_cap || !WEFT_BTL_HAS_OP(ep->module, sendx))
        return 0;
    return ep->module->caps.eager_limit > connection_max ? ep->module->caps.eager_limit : 0;
}

// The connection's single-copy threshold (weft_btl_endpoint_t.
// single_copy_from): only below eager_limit, never against the user's
// engine_base_eager_limit.
size_t single_copy_from_for(const weft_btl_endpoint_t *ep, size_t user_cap, size_t eager_limit)
{
    if (user_cap || !WEFT_HAS_MEMBER(ep, weft_btl_endpoint_t, single_copy_from))
        return 0;
    return ep->single_copy_from < eager_limit ? ep->single_copy_from : 0;
}

bool Peers::connect_now(PeerTraffic &ps)
{
    if (!ps.started)
        return false;
    const auto eps = host_.connected_endpoints(ps.rank);
    if (eps.empty())
        return false;
    ps.ep = eps.front();
    ps.rail_bytes.assign(eps.size(), 0);
    const weft_btl_caps_t &caps = ps.ep->module->caps;
    ps.eager_limit = eager_limit_for(ps.ep, eager_limit_cap_);
    // An eager frame must fit one send with its header.
    const size_t frame_max = caps.max_send > sizeof(wire::Put) ? caps.max_send - sizeof(wire::Put) : SIZE_MAX;
    ps.eager_limit = std::min(ps.eager_limit, frame_max);
    ps.eager_if_room = std::min(eager_if_room_for(ps.ep, eager_limit_cap_, ps.eager_limit), frame_max);
    // Where ranks share cores (progress mode yield or block) a message on
    // its own stays eager up to the eager limit: the single copy's
    // handshake waits for the receiver to get a core and answer, where an
    // eager message is done once written. 4 ranks on 2 vCPUs with the
    // single copy from 4 KiB: osu_bcast of 8 KiB 3.37 us against 0.85 at
    // 4 KiB, osu_alltoall 13.9 against 5.1.
    ps.single_copy_from = host_.progress().effective_mode() == rt::ProgressMode::Busy
                              ? single_copy_from_for(ps.ep, eager_limit_cap_, ps.eager_limit)
                              : 0;
    ps.direct_max = ps.single_copy_from ? ps.single_copy_from : ps.eager_limit;
    const size_t module_if_room =
        forward_if_room_for(ps.ep, eager_limit_cap_, std::max(ps.eager_limit, ps.eager_if_room));
    ps.forward_if_room = std::max(ps.eager_if_room, std::min(module_if_room, frame_max));
    ps.inline_max = (WEFT_BTL_HAS_OP(ps.ep->module, sendi) && (caps.flags & WEFT_BTL_FLAG_INLINE)) ? caps.inline_max : 0;
    ps.counters->eager_limit = ps.eager_limit;
    ps.counters->eager_if_room = ps.eager_if_room;
    return true;
}

void Peers::enqueue(PeerTraffic &ps, Op *op)
{
    op->next_queued = nullptr;
    if (ps.queue_tail)
        ps.queue_tail->next_queued = op;
    else
        ps.queue_head = op;
    ps.queue_tail = op;
    mark_busy(ps);
}

void Peers::mark_busy(PeerTraffic &ps)
{
    if (ps.busy)
        return;
    ps.busy = true;
    busy_.push_back(&ps);
}

void Peers::send_control(PeerTraffic &ps, std::span<const std::byte> frame)
{
    if (ps.failed)
        return;
    if (ps.control.empty() && connected(ps)) {
        int rc = send_frame(ps, frame, {});
        if (rc == WEFT_SUCCESS)
            return;
        if (rc != WEFT_ERR_AGAIN) {
            log_.write("engine", "base", WEFT_LOG_WARN,
                       std::string("cannot send a ") + wire::type_name(static_cast<wire::Type>(frame[0])) +
                           " frame: " + weft_status_string(rc));
            return;
        }
    }
    ps.control.emplace_back(frame.begin(), frame.end());
    mark_busy(ps);
}

void Peers::send_control_to(uint32_t rank, std::span<const std::byte> frame)
{
    Status err;
    if (PeerTraffic *ps = for_send(rank, &err))
        send_control(*ps, frame);
}

// Striping: a peer reached by several modules of the same exclusivity (two
// NICs, two ports; peer_select marks them "striping") gets its rendezvous
// Data chunks spread over all of them, each chunk on the endpoint whose
// share, counted in bytes against its module's bandwidth, is the least.
// Only Data frames are spread: each names its receive and its offset, and
// the receiver counts bytes, so the order they land in does not matter.
// Every frame that is matched (eager, Rts) and every control frame stays on
// the primary endpoint, which is what keeps a peer's messages in order.
size_t Peers::pick_rail(const PeerTraffic &ps, std::span<weft_btl_endpoint_t *const> eps,
                        uint32_t tried) const
{
    if (eps.size() == 1 || ps.rail_bytes.size() != eps.size())
        return (tried & 1u) ? SIZE_MAX : 0;
    size_t best = SIZE_MAX;
    double best_finish = 0;
    for (size_t k = 0; k < eps.size() && k < 32; ++k) {
        if ((tried & (1u << k)) || !eps[k] || eps[k]->state != WEFT_BTL_EP_CONNECTED)
            continue;
        const double bw = eps[k]->module->caps.bandwidth_mbs > 0 ? eps[k]->module->caps.bandwidth_mbs : 1;
        const double finish = static_cast<double>(ps.rail_bytes[k] + chunk_) / bw;
        if (best == SIZE_MAX || finish < best_finish) {
            best = k;
            best_finish = finish;
        }
    }
    return best;
}

void Peers::log_striping() const
{
    for (const auto &slot : peers_) {
        if (!slot || slot->rail_bytes.size() < 2)
            continue;
        const PeerTraffic &ps = *slot;
        const auto eps = host_.connected_endpoints(ps.rank);
        if (eps.size() != ps.rail_bytes.size())
            continue;
        uint64_t total = 0;
        for (uint64_t b : ps.rail_bytes)
            total += b;
        if (total == 0)
            continue;
        std::string line = "rendezvous data to rank " + std::to_string(ps.rank) + " striped:";
        for (size_t k = 0; k < ps.rail_bytes.size(); ++k)
            line += (k ? ", " : " ") + std::string(eps[k]->module->name) + " " +
                    std::to_string(ps.rail_bytes[k]) + " B (" + std::to_string(ps.rail_bytes[k] * 100 / total) +
                    "%)";
        log_.write("engine", "base", WEFT_LOG_INFO, line);
    }
}

std::string Peers::failure_of(uint32_t rank, int error) const
{
    if (error == WEFT_ERR_UNREACHABLE && rank < peers_.size() && peers_[rank] && peers_[rank]->failed)
        return peers_[rank]->failure;
    return weft_status_string(error);
}

void Peers::consume_credit_slow(uint32_t src, size_t bytes)
{
    if (src >= job_size_ || bytes == 0)
        return;
    count_received(slot(src).counters, WEFT_PROTO_EAGER, bytes);
    return_credit(src, bytes);
}

void Peers::return_credit(uint32_t src, size_t bytes)
{
    if (src >= job_size_ || bytes == 0)
        return;
    PeerTraffic &ps = slot(src);
    ps.consumed_unreported += bytes;
    if (ps.consumed_unreported >= eager_window_ / 4) {
        wire::Credit c{};
        c.type = static_cast<uint8_t>(wire::Type::Credit);
        c.bytes = ps.consumed_unreported;
        ps.consumed_unreported = 0;
        send_control_to(src, wire::bytes_of(c));
    }
}

void Peers::on_credit(uint32_t src, uint64_t bytes)
{
    if (PeerTraffic *ps = find(src))
        ps->eager_outstanding -= std::min<size_t>(ps->eager_outstanding, bytes);
}

void Peers::reject(uint32_t src, const std::string &why)
{
    ++rejected_;
    counters_.process().rejected = rejected_;
    if (rejected_ <= 8 || log_.enabled("engine", WEFT_LOG_DEBUG))
        log_.write("engine", "base", WEFT_LOG_WARN,
                   "dropped a malformed frame from rank " + std::to_string(src) + ": " + why);
}

} // namespace weft::engine
