// The C operations table of btl/tcp: each entry checks the pointers it is
// given, then calls into TcpModule. Nothing here lets an exception out.
// put/get are absent: the engine does rendezvous over send.
#include <cstdio>
#include <new>

#include <weft/component_util.hpp>

#include "btl_tcp_component.hpp"
#include "btl_tcp_module.hpp"

namespace weft::btl_tcp {

namespace {

using weft::cutil::guarded;

int op_reachable(weft_btl_module_t *m, const weft_btl_peer_t *peer, char *why, size_t why_len)
{
    TcpModule *tcp = TcpModule::from(m);
    if (!tcp || !peer) {
        if (why && why_len > 0)
            std::snprintf(why, why_len, "btl/tcp: reachable() without a btl/tcp module or a peer");
        return 0;
    }
    int rc = guarded([&] { return tcp->reachable(peer, why, why_len); });
    return rc == 1 ? 1 : 0;
}

int op_card(weft_btl_module_t *m, void *buf, size_t *len)
{
    TcpModule *tcp = TcpModule::from(m);
    return tcp ? guarded([&] { return tcp->card(buf, len); }) : WEFT_ERR_BAD_PARAM;
}

int op_send(weft_btl_endpoint_t *ep, uint8_t am_id, const struct iovec *iov, int iovcnt)
{
    TcpEndpoint *e = TcpModule::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return guarded([&] { return TcpModule::from(ep->module)->send(*e, am_id, iov, iovcnt, 0); });
}

int op_sendi(weft_btl_endpoint_t *ep, uint8_t am_id, const void *hdr, size_t hdr_len, const void *payload,
             size_t payload_len)
{
    TcpEndpoint *e = TcpModule::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return guarded(
        [&] { return TcpModule::from(ep->module)->sendi(*e, am_id, hdr, hdr_len, payload, payload_len); });
}

int op_sendx(weft_btl_endpoint_t *ep, uint8_t am_id, const struct iovec *iov, int iovcnt, uint32_t flags)
{
    TcpEndpoint *e = TcpModule::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return guarded([&] { return TcpModule::from(ep->module)->send(*e, am_id, iov, iovcnt, flags); });
}

int op_progress(weft_btl_module_t *m)
{
    TcpModule *tcp = TcpModule::from(m);
    return tcp ? guarded([&] { return tcp->progress(); }) : WEFT_ERR_BAD_PARAM;
}

int op_wait_fd(weft_btl_module_t *m)
{
    TcpModule *tcp = TcpModule::from(m);
    return tcp ? tcp->wait_fd() : -1;
}

int op_prepare_wait(weft_btl_module_t *m)
{
    TcpModule *tcp = TcpModule::from(m);
    return tcp ? guarded([&] { return tcp->prepare_wait(); }) : WEFT_ERR_BAD_PARAM;
}

int op_disconnect(weft_btl_endpoint_t *ep)
{
    TcpEndpoint *e = TcpModule::endpoint(ep);
    if (!e)
        return WEFT_ERR_BAD_PARAM;
    return guarded([&] { return TcpModule::from(ep->module)->disconnect(*e); });
}

int op_finalize(weft_btl_module_t *m) { return release_module(m); }

} // namespace

const weft_btl_module_ops_t kTcpModuleOps = {
    .size = sizeof(weft_btl_module_ops_t),
    .reachable = op_reachable,
    .card = op_card,
    .send = op_send,
    .sendi = op_sendi,
    .put = nullptr,
    .get = nullptr,
    .mem_register = nullptr,
    .mem_deregister = nullptr,
    .progress = op_progress,
    .wait_fd = op_wait_fd,
    .disconnect = op_disconnect,
    .finalize = op_finalize,
    .prepare_wait = op_prepare_wait,
    .sendx = op_sendx,
    .modex_ready = nullptr,   // connects lazily
};

} // namespace weft::btl_tcp
