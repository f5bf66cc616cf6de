// SPDX-License-Identifier: BSD-3-Clause
#include "btl_self_module.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <type_traits>

#include <weft/component_util.hpp>

namespace weft::btl_self {

using weft::btl::write_reason;

namespace {

// Slab growth of the event free list: enough for a burst of small messages
// without many allocations, small enough not to matter when idle.
constexpr size_t kCellsPerSlab = 64;

// The card says which process published it, so a peer description that
// claims SELF but carries another process's card is refused.
constexpr uint32_t kCardMagic = 0x57534331;   // "WSC1"
struct Card {
    uint32_t magic;
    uint32_t pid;
};

const char *describe(weft_peer_class_t c)
{
    switch (c) {
    case WEFT_PEER_SELF: return "self";
    case WEFT_PEER_SAME_NODE: return "same node";
    case WEFT_PEER_OTHER_NODE: return "other node";
    }
    return "unknown class";
}

} // namespace

SelfModule::SelfModule(const weft_host_t *host, const weft_btl_component_t *component,
                       const SelfConfig &config)
    : ModuleBase(component), host_(host), config_(config), queue_(config.max_queued, kCellsPerSlab)
{
    // A memcpy within one process: latency and bandwidth are memory's.
    c_.caps.latency_us = 0.05;
    c_.caps.bandwidth_mbs = 20000.0;
    c_.caps.eager_limit = config.eager_limit;
    c_.caps.max_send = config.max_send;
    c_.caps.inline_max = kInlineBytes;
    c_.caps.exclusivity = WEFT_BTL_EXCLUSIVITY_SELF;
    c_.caps.flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_INLINE | WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET |
                    WEFT_BTL_FLAG_LOCAL_ONLY;
    c_.caps.priority = config.priority;
    std::snprintf(c_.name, sizeof c_.name, "self");
    c_.module_ctx = this;
}

int SelfModule::reachable(const weft_btl_peer_t *peer, char *why, size_t why_len) const
{
    if (!WEFT_HAS_MEMBER(peer, weft_btl_peer_t, card_len)) {
        write_reason(why, why_len, "btl/self: no usable peer description (NULL or too small)");
        return 0;
    }
    if (peer->peer_class != WEFT_PEER_SELF) {
        // The module is not told its own rank; the peer's rank and class say enough.
        write_reason(why, why_len,
                     "btl/self reaches only the calling process; peer rank %u (%s, host %s) is "
                     "another process",
                     static_cast<unsigned>(peer->rank), describe(peer->peer_class),
                     peer->hostname ? peer->hostname : "?");
        return 0;
    }
    if (peer->card && peer->card_len > 0) {
        Card card{};
        if (peer->card_len != sizeof card) {
            write_reason(why, why_len,
                         "btl/self: the card of peer rank %u has %zu bytes, not a btl/self card "
                         "(%zu bytes); the runtime paired cards of different components",
                         static_cast<unsigned>(peer->rank), peer->card_len, sizeof card);
            return 0;
        }
        std::memcpy(&card, peer->card, sizeof card);
        if (card.magic != kCardMagic || card.pid != static_cast<uint32_t>(getpid())) {
            write_reason(why, why_len,
                         "btl/self reaches only the calling process (pid %u); peer rank %u is "
                         "described as self but its card comes from pid %u",
                         static_cast<unsigned>(getpid()), static_cast<unsigned>(peer->rank),
                         static_cast<unsigned>(card.pid));
            return 0;
        }
    }
    return 1;
}

int SelfModule::card(void *buf, size_t *len) const
{
    if (!len)
        return WEFT_ERR_BAD_PARAM;
    const Card card{kCardMagic, static_cast<uint32_t>(getpid())};
    const size_t room = *len;
    *len = sizeof card;
    if (!buf || room < sizeof card)
        return WEFT_ERR_TRUNCATED;
    std::memcpy(buf, &card, sizeof card);
    return WEFT_SUCCESS;
}

int SelfModule::queue_state(SelfEndpoint &ep, weft_btl_ep_state_t state)
{
    Event *e = nullptr;
    // State events do not count against the data-path limit: a connect or
    // disconnect must not fail because messages are waiting.
    if (int rc = queue_.acquire(false, &e); rc != WEFT_SUCCESS)
        return rc;
    e->kind = EventKind::state;
    e->ep = &ep.c;
    e->state = state;
    queue_.push(e);
    return WEFT_SUCCESS;
}

int SelfModule::connect(const weft_btl_peer_t *peer, weft_btl_endpoint_t **out)
{
    *out = nullptr;
    char why[WEFT_REASON_MAX];
    if (!reachable(peer, why, sizeof why)) {
        if (host_->log_enabled(&c_.component->base, WEFT_LOG_DEBUG))
            host_->log(&c_.component->base, WEFT_LOG_DEBUG, "start_connect refused: %s", why);
        return WEFT_ERR_UNREACHABLE;
    }
    auto ep = std::unique_ptr<SelfEndpoint>(new (std::nothrow) SelfEndpoint);
    if (!ep)
        return WEFT_ERR_NO_MEMORY;
    ep->c.size = sizeof ep->c;
    ep->c.module = &c_;
    ep->c.peer_rank = peer->rank;
    ep->c.state = WEFT_BTL_EP_CONNECTING;
    try {
        endpoints_.reserve(endpoints_.size() + 1);
    } catch (const std::bad_alloc &) {
        return WEFT_ERR_NO_MEMORY;
    }
    // The loopback is connected at once, but the runtime hears it from the
    // next progress(), like from every other transport.
    if (int rc = queue_state(*ep, WEFT_BTL_EP_CONNECTED); rc != WEFT_SUCCESS)
        return rc;
    *out = &ep->c;
    endpoints_.push_back(std::move(ep));
    return WEFT_SUCCESS;
}

int SelfModule::send(SelfEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt)
{
    if (ep.closing || iovcnt < 0 || (iovcnt > 0 && !iov))
        return WEFT_ERR_BAD_PARAM;
    size_t total = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (!iov[i].iov_base && iov[i].iov_len > 0)
            return WEFT_ERR_BAD_PARAM;
        if (iov[i].iov_len > config_.max_send - total)   // also catches overflow of the sum
            return WEFT_ERR_BAD_PARAM;
        total += iov[i].iov_len;
    }
    Event *e = nullptr;
    if (int rc = queue_.acquire(true, &e); rc != WEFT_SUCCESS)
        return rc;
    std::span<std::byte> room = e->reserve(total);
    if (room.size() != total) {
        queue_.release(e);
        return WEFT_ERR_NO_MEMORY;
    }
    size_t at = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (iov[i].iov_len > 0)
            weft::cutil::copy_bytes(room.data() + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    e->kind = EventKind::message;
    e->ep = &ep.c;
    e->am_id = am_id;
    queue_.push(e);
    return WEFT_SUCCESS;
}

int SelfModule::sendi(SelfEndpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len,
                      const void *payload, size_t payload_len)
{
    if (ep.closing || (!hdr && hdr_len > 0) || (!payload && payload_len > 0) ||
        hdr_len > kInlineBytes || payload_len > kInlineBytes - hdr_len)
        return WEFT_ERR_BAD_PARAM;
    Event *e = nullptr;
    if (int rc = queue_.acquire(true, &e); rc != WEFT_SUCCESS)
        return rc;
    std::span<std::byte> room = e->reserve(hdr_len + payload_len);   // inline: cannot fail
    if (hdr_len > 0)
        std::memcpy(room.data(), hdr, hdr_len);
    if (payload_len > 0)
        weft::cutil::copy_bytes(room.data() + hdr_len, payload, payload_len);
    e->kind = EventKind::message;
    e->ep = &ep.c;
    e->am_id = am_id;
    queue_.push(e);
    return WEFT_SUCCESS;
}

int SelfModule::rdma(SelfEndpoint &ep, bool is_put, void *local_ptr, size_t len,
                     uint64_t remote_addr, const void *rkey, size_t rkey_len,
                     weft_btl_rdma_cb_t cb, void *cb_ctx)
{
    auto *local = static_cast<std::byte *>(local_ptr);
    if (ep.closing || (!local && len > 0))
        return WEFT_ERR_BAD_PARAM;
    std::byte *remote = nullptr;
    if (int rc = registrations_.resolve(rkey, rkey_len, remote_addr, len, &remote);
        rc != WEFT_SUCCESS)
        return rc;
    // Take the completion cell first, so an AGAIN leaves memory untouched.
    Event *e = nullptr;
    if (cb)
        if (int rc = queue_.acquire(true, &e); rc != WEFT_SUCCESS)
            return rc;
    if (len > 0) {
        // memmove: the runtime may put/get within one registered buffer.
        if (is_put)
            std::memmove(remote, local, len);
        else
            std::memmove(local, remote, len);
    }
    if (e) {
        e->kind = EventKind::rdma_done;
        e->ep = &ep.c;
        e->rdma_cb = cb;
        e->rdma_ctx = cb_ctx;
        e->status = WEFT_SUCCESS;
        queue_.push(e);
    }
    return WEFT_SUCCESS;
}

int SelfModule::mem_register(void *addr, size_t len, weft_btl_reg_t *reg)
{
    return registrations_.add(addr, len, reg);
}

int SelfModule::mem_deregister(weft_btl_reg_t *reg)
{
    return registrations_.remove(reg);
}

int SelfModule::disconnect(SelfEndpoint &ep)
{
    if (ep.closing)
        return WEFT_ERR_BAD_PARAM;
    if (int rc = queue_state(ep, WEFT_BTL_EP_CLOSED); rc != WEFT_SUCCESS)
        return rc;
    ep.closing = true;
    return WEFT_SUCCESS;
}

void SelfModule::forget(weft_btl_endpoint_t *ep)
{
    std::erase_if(endpoints_, [ep](const auto &owned) { return &owned->c == ep; });
}

void SelfModule::deliver(Event &e)
{
    const weft_btl_upcalls_t &up = c_.upcalls;
    switch (e.kind) {
    case EventKind::message:
        if (WEFT_HAS_MEMBER(&up, weft_btl_upcalls_t, recv) && up.recv) {
            std::span<const std::byte> data = e.payload();
            up.recv(up.ctx, e.ep, e.am_id, data.data(), data.size());
        }
        break;
    case EventKind::state:
        e.ep->state = e.state;
        if (WEFT_HAS_MEMBER(&up, weft_btl_upcalls_t, state) && up.state)
            up.state(up.ctx, e.ep, e.state, e.status, nullptr);
        // The contract: the module frees an endpoint after its CLOSED upcall.
        if (e.state == WEFT_BTL_EP_CLOSED)
            forget(e.ep);
        break;
    case EventKind::rdma_done:
        e.rdma_cb(e.ep, e.rdma_ctx, e.status);
        break;
    }
}

int SelfModule::deliver_queued()
{
    // An upcall that calls progress() gets nothing: upcalls are never
    // re-entered, and the outer call keeps the order.
    if (in_progress_)
        return 0;
    in_progress_ = true;
    // Only what was queued before this call: a handler that sends from its
    // upcall is served by the next progress(), not by an endless loop here.
    size_t budget = queue_.size();
    int handled = 0;
    while (budget-- > 0) {
        Event *e = queue_.pop();
        if (!e)
            break;
        deliver(*e);
        queue_.release(e);
        if (handled < INT32_MAX)
            ++handled;
    }
    in_progress_ = false;
    return handled;
}

} // namespace weft::btl_self
