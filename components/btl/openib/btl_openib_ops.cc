// The C operations table of btl/openib: each entry checks the pointers it is
// given, then calls into Module. Nothing here lets an exception out.
#include <cstdio>

#include <weft/component_util.hpp>

#include "btl_openib_module.hpp"

namespace weft::openib {

namespace {

using weft::cutil::guarded;

int op_reachable(weft_btl_module_t *m, const weft_btl_peer_t *peer, char *why, size_t why_len)
{
    Module *mod = Module::from(m);
    if (!mod || !peer) {
        if (why && why_len > 0)
            std::snprintf(why, why_len, "btl/openib: reachable() without a btl/openib module or a peer");
        return 0;
    }
    return guarded([&] { return mod->reachable(peer, why, why_len); }) == 1 ? 1 : 0;
}

int op_card(weft_btl_module_t *m, void *buf, size_t *len)
{
    Module *mod = Module::from(m);
    return mod && len ? guarded([&] { return mod->card(buf, len); }) : WEFT_ERR_BAD_PARAM;
}

int op_send(weft_btl_endpoint_t *ep, uint8_t am_id, const struct iovec *iov, int iovcnt)
{
    Endpoint *e = Module::endpoint(ep);
    if (!e || (iovcnt > 0 && !iov) || iovcnt < 0)
        return WEFT_ERR_BAD_PARAM;
    return guarded([&] { return Module::from(ep->module)->send(*e, am_id, iov, iovcnt); });
}

int op_sendi(weft_btl_endpoint_t *ep, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
             size_t payload_len)
{
    Endpoint *e = Module::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return guarded([&] { return Module::from(ep->module)->sendi(*e, am_id, hdr, hdr_len, payload, payload_len); });
}

int op_put(weft_btl_endpoint_t *ep, const void *local, size_t len, uint64_t remote_addr, const void *rkey,
           size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx)
{
    Endpoint *e = Module::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return guarded([&] {
        return Module::from(ep->module)->rdma(*e, true, const_cast<void *>(local), len, remote_addr, rkey, rkey_len,
                                              cb, cb_ctx);
    });
}

int op_get(weft_btl_endpoint_t *ep, void *local, size_t len, uint64_t remote_addr, const void *rkey,
           size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx)
{
    Endpoint *e = Module::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return guarded([&] {
        return Module::from(ep->module)->rdma(*e, false, local, len, remote_addr, rkey, rkey_len, cb, cb_ctx);
    });
}

int op_mem_register(weft_btl_module_t *m, void *addr, size_t len, weft_btl_reg_t *reg)
{
    Module *mod = Module::from(m);
    return mod && reg ? guarded([&] { return mod->mem_register(addr, len, reg); }) : WEFT_ERR_BAD_PARAM;
}

int op_mem_deregister(weft_btl_module_t *m, weft_btl_reg_t *reg)
{
    Module *mod = Module::from(m);
    return mod ? guarded([&] { return mod->mem_deregister(reg); }) : WEFT_ERR_BAD_PARAM;
}

int op_progress(weft_btl_module_t *m)
{
    Module *mod = Module::from(m);
    return mod ? guarded([&] { return mod->progress(); }) : WEFT_ERR_BAD_PARAM;
}

int op_wait_fd(weft_btl_module_t *m)
{
    Module *mod = Module::from(m);
    return mod ? mod->wait_fd() : -1;
}

int op_prepare_wait(weft_btl_module_t *m)
{
    Module *mod = Module::from(m);
    return mod ? guarded([&] { return mod->prepare_wait(); }) : WEFT_ERR_BAD_PARAM;
}

int op_disconnect(weft_btl_endpoint_t *ep)
{
    Endpoint *e = Module::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return guarded([&] { return Module::from(ep->module)->disconnect(*e); });
}

int op_finalize(weft_btl_module_t *m) { return release_module(m); }

int op_modex_ready(weft_btl_module_t *m)
{
    Module *mod = Module::from(m);
    return mod ? guarded([&] { return mod->modex_ready(); }) : WEFT_ERR_BAD_PARAM;
}

} // namespace

const weft_btl_module_ops_t kOpenibModuleOps = {
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
    .prepare_wait = op_prepare_wait,
    .sendx = nullptr,   // one QP per peer: every frame is ordered
    .modex_ready = op_modex_ready,   // the oob cpc wires its peers here
};

} // namespace weft::openib
