// SPDX-License-Identifier: BSD-3-Clause
// The btl/self module: one per process, reaching only the calling process.
// Sends copy into the event queue; progress() delivers. put/get are memcpy
// into registered memory with the range checked against the rkey.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <weft/btl_base.hpp>

#include "btl_self_queue.hpp"
#include "btl_self_rkey.hpp"

namespace weft::btl_self {

// Values of the btl_self_* parameters, read once by init().
struct SelfConfig {
    int priority = 100;
    size_t eager_limit = 64 * 1024;
    size_t max_send = size_t{1} << 30;
    size_t max_queued = 4096;     // data-path events waiting for progress before AGAIN
};

// An endpoint as the module sees it; the runtime holds its C struct (c).
struct SelfEndpoint : weft::btl::EndpointBase {
    bool closing = false;         // disconnect() was called: no new operations
};

class SelfModule : public weft::btl::ModuleBase<SelfModule> {
public:
    using Endpoint = SelfEndpoint;
    static constexpr const char *kName = "self";

    SelfModule(const weft_host_t *host, const weft_btl_component_t *component,
               const SelfConfig &config);

    int reachable(const weft_btl_peer_t *peer, char *why, size_t why_len) const;
    int card(void *buf, size_t *len) const;
    int connect(const weft_btl_peer_t *peer, weft_btl_endpoint_t **out);
    int send(SelfEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt);
    int sendi(SelfEndpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len,
              const void *payload, size_t payload_len);
    int rdma(SelfEndpoint &ep, bool is_put, void *local, size_t len, uint64_t remote_addr,
             const void *rkey, size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx);
    int mem_register(void *addr, size_t len, weft_btl_reg_t *reg);
    int mem_deregister(weft_btl_reg_t *reg);
    // Nothing queued is the common case (a rank sends itself few messages)
    // and every pass of a spinning rank's wait comes here, so that case is a
    // load and a return, inlined into the module's ops entry.
    int progress() { return queue_.size() == 0 ? 0 : deliver_queued(); }
    // Self has nothing to block on: everything it delivers it queued itself.
    int wait_fd() const { return -1; }
    int disconnect(SelfEndpoint &ep);
    bool in_progress() const { return in_progress_; }

private:
    int deliver_queued();
    int queue_state(SelfEndpoint &ep, weft_btl_ep_state_t state);
    void deliver(Event &e);
    void forget(weft_btl_endpoint_t *ep);

    const weft_host_t *host_;
    SelfConfig config_;
    EventQueue queue_;
    Registrations registrations_;
    std::vector<std::unique_ptr<SelfEndpoint>> endpoints_;
    bool in_progress_ = false;
};

} // namespace weft::btl_self
