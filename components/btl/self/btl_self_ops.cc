// The C operations table of btl/self: each entry checks the pointers it is
// given, then calls into SelfModule. Nothing here lets an exception out.
#include <cstdio>
#include <new>

#include <weft/component_util.hpp>

#include "btl_self_component.hpp"
#include "btl_self_module.hpp"

namespace weft::btl_self {

namespace {

using weft::cutil::guarded;

int op_reachable(weft_btl_module_t *m, const weft_btl_peer_t *peer, char *why, size_t why_len)
{
    SelfModule *self = SelfModule::from(m);
    if (!self) {
        if (why && why_len > 0)
            std::snprintf(why, why_len, "btl/self: reachable() called on a module that is not btl/self's");
        return 0;
    }
    return self->reachable(peer, why, why_len);
}

int op_card(weft_btl_module_t *m, void *buf, size_t *len)
{
    SelfModule *self = SelfModule::from(m);
    return self ? self->card(buf, len) : WEFT_ERR_BAD_PARAM;
}

int op_send(weft_btl_endpoint_t *ep, uint8_t am_id, const struct iovec *iov, int iovcnt)
{
    SelfEndpoint *e = SelfModule::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return guarded([&] { return SelfModule::from(ep->module)->send(*e, am_id, iov, iovcnt); });
}

int op_sendi(weft_btl_endpoint_t *ep, uint8_t am_id, const void *hdr, size_t hdr_len,
             const void *payload, size_t payload_len)
{
    SelfEndpoint *e = SelfModule::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return SelfModule::from(ep->module)->sendi(*e, am_id, hdr, hdr_len, payload, payload_len);
}

int op_put(weft_btl_endpoint_t *ep, const void *local, size_t len, uint64_t remote_addr,
           const void *rkey, size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx)
{
    SelfEndpoint *e = SelfModule::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    // put only reads local; the shared rdma() path takes a mutable pointer.
    auto *src = const_cast<std::byte *>(static_cast<const std::byte *>(local));
    return SelfModule::from(ep->module)
        ->rdma(*e, true, src, len, remote_addr, rkey, rkey_len, cb, cb_ctx);
}

int op_get(weft_btl_endpoint_t *ep, void *local, size_t len, uint64_t remote_addr,
           const void *rkey, size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx)
{
    SelfEndpoint *e = SelfModule::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return SelfModule::from(ep->module)
        ->rdma(*e, false, static_cast<std::byte *>(local), len, remote_addr, rkey, rkey_len, cb,
               cb_ctx);
}

int op_mem_register(weft_btl_module_t *m, void *addr, size_t len, weft_btl_reg_t *reg)
{
    SelfModule *self = SelfModule::from(m);
    return self ? guarded([&] { return self->mem_register(addr, len, reg); }) : WEFT_ERR_BAD_PARAM;
}

int op_mem_deregister(weft_btl_module_t *m, weft_btl_reg_t *reg)
{
    SelfModule *self = SelfModule::from(m);
    return self ? self->mem_deregister(reg) : WEFT_ERR_BAD_PARAM;
}

int op_progress(weft_btl_module_t *m)
{
    SelfModule *self = SelfModule::from(m);
    return self ? self->progress() : WEFT_ERR_BAD_PARAM;
}

// Self has nothing to block on: everything it delivers it queued itself.
int op_wait_fd(weft_btl_module_t *) { return -1; }

int op_disconnect(weft_btl_endpoint_t *ep)
{
    SelfEndpoint *e = SelfModule::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return SelfModule::from(ep->module)->disconnect(*e);
}

int op_finalize(weft_btl_module_t *m) { return release_module(m); }

} // namespace

const weft_btl_module_ops_t kSelfModuleOps = {
    .size = sizeof(weft_btl_module_ops_t),
    .reachable = op_reachable,
    .card = op_card,
    .send = op_send,
    .sendi = op_sendi,
    .put = op_put,
    .get = op_get,
    .mem_register = op_mem_register,
    .mem_deregister = op_mem_deregister,
    .progress = op_progress,
    .wait_fd = op_wait_fd,
    .disconnect = op_disconnect,
    .finalize = op_finalize,
    .prepare_wait = nullptr,
    .sendx = nullptr,   // self delivers in order only
    .modex_ready = nullptr,
};

} // namespace weft::btl_self
