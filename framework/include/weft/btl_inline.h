/* SPDX-License-Identifier: BSD-3-Clause */
/* Inline callers of the btl ops table, included by <weft/btl.h>.
 *
 * Everyone who drives a module (the runtime, tests, tools, a component's
 * own tests) calls these instead of m->ops->x, as libfabric's fi_send()
 * wraps its provider's ops: one place decides whether an op is there.
 * A mandatory op (reachable, send, progress, finalize: the loader refuses a
 * module without them) is called straight through. An optional op that is
 * NULL, or lies beyond the module's ops->size (a module built before it was
 * appended), answers WEFT_ERR_NOT_SUPPORTED, or the op's documented neutral
 * value (wait_fd: -1). WEFT_BTL_HAS_OP says whether an op is there, for
 * callers that choose a path once (inline sends, RDMA, wake-ups) rather
 * than learn it from a status code on every call.
 *
 * Plain C, static inline: usable from C and C++ and from components built
 * out of tree. Include <weft/btl.h>, which includes this; including this
 * first works too. */
#ifndef WEFT_BTL_INLINE_H
#define WEFT_BTL_INLINE_H

#include <string.h>

#include <weft/btl.h>   /* which includes this file at its end: the guard above stops the loop */

#ifdef __cplusplus
extern "C" {
#endif

/* True when the ops table of module m has op and it is not NULL. The size
 * test folds away at compile time for members inside the ABI 1.0 minimum
 * (WEFT_BTL_MODULE_OPS_MIN_SIZE), which the loader guarantees. */
#define WEFT_BTL_HAS_OP(m, op)                                                                  \
    ((offsetof(weft_btl_module_ops_t, op) + sizeof(((weft_btl_module_ops_t *)0)->op) <=         \
          WEFT_BTL_MODULE_OPS_MIN_SIZE ||                                                       \
      WEFT_HAS_MEMBER((m)->ops, weft_btl_module_ops_t, op)) &&                                  \
     (m)->ops->op != NULL)

/* ---- mandatory ops --------------------------------------------------- */

static inline int weft_btl_reachable(struct weft_btl_module *m, const weft_btl_peer_t *peer, char *why,
                                     size_t why_len)
{
    return m->ops->reachable(m, peer, why, why_len);
}

static inline int weft_btl_send(struct weft_btl_endpoint *ep, uint8_t am_id, const struct iovec *iov,
                                int iovcnt)
{
    return ep->module->ops->send(ep, am_id, iov, iovcnt);
}

static inline int weft_btl_progress(struct weft_btl_module *m)
{
    return m->ops->progress(m);
}

static inline int weft_btl_finalize(struct weft_btl_module *m)
{
    return m->ops->finalize(m);
}

/* ---- optional ops ---------------------------------------------------- */

static inline int weft_btl_card(struct weft_btl_module *m, void *buf, size_t *len)
{
    return WEFT_BTL_HAS_OP(m, card) ? m->ops->card(m, buf, len) : WEFT_ERR_NOT_SUPPORTED;
}

static inline int weft_btl_sendi(struct weft_btl_endpoint *ep, uint8_t am_id, const void *hdr, size_t hdr_len,
                                 const void *payload, size_t payload_len)
{
    return WEFT_BTL_HAS_OP(ep->module, sendi)
               ? ep->module->ops->sendi(ep, am_id, hdr, hdr_len, payload, payload_len)
               : WEFT_ERR_NOT_SUPPORTED;
}

static inline int weft_btl_sendx(struct weft_btl_endpoint *ep, uint8_t am_id, const struct iovec *iov,
                                 int iovcnt, uint32_t flags)
{
    return WEFT_BTL_HAS_OP(ep->module, sendx) ? ep->module->ops->sendx(ep, am_id, iov, iovcnt, flags)
                                              : WEFT_ERR_NOT_SUPPORTED;
}

static inline int weft_btl_put(struct weft_btl_endpoint *ep, const void *local, size_t len, uint64_t remote_addr,
                               const void *rkey, size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx)
{
    return WEFT_BTL_HAS_OP(ep->module, put)
               ? ep->module->ops->put(ep, local, len, remote_addr, rkey, rkey_len, cb, cb_ctx)
               : WEFT_ERR_NOT_SUPPORTED;
}

static inline int weft_btl_get(struct weft_btl_endpoint *ep, void *local, size_t len, uint64_t remote_addr,
                               const void *rkey, size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx)
{
    return WEFT_BTL_HAS_OP(ep->module, get)
               ? ep->module->ops->get(ep, local, len, remote_addr, rkey, rkey_len, cb, cb_ctx)
               : WEFT_ERR_NOT_SUPPORTED;
}

static inline int weft_btl_mem_register(struct weft_btl_module *m, void *addr, size_t len, weft_btl_reg_t *reg)
{
    return WEFT_BTL_HAS_OP(m, mem_register) ? m->ops->mem_register(m, addr, len, reg) : WEFT_ERR_NOT_SUPPORTED;
}

static inline int weft_btl_mem_deregister(struct weft_btl_module *m, weft_btl_reg_t *reg)
{
    return WEFT_BTL_HAS_OP(m, mem_deregister) ? m->ops->mem_deregister(m, reg) : WEFT_ERR_NOT_SUPPORTED;
}

/* -1 (no descriptor to block on) when the module has no wait_fd. */
static inline int weft_btl_wait_fd(struct weft_btl_module *m)
{
    return WEFT_BTL_HAS_OP(m, wait_fd) ? m->ops->wait_fd(m) : -1;
}

static inline int weft_btl_disconnect(struct weft_btl_endpoint *ep)
{
    return WEFT_BTL_HAS_OP(ep->module, disconnect) ? ep->module->ops->disconnect(ep) : WEFT_ERR_NOT_SUPPORTED;
}

static inline int weft_btl_prepare_wait(struct weft_btl_module *m)
{
    return WEFT_BTL_HAS_OP(m, prepare_wait) ? m->ops->prepare_wait(m) : WEFT_ERR_NOT_SUPPORTED;
}

static inline int weft_btl_modex_ready(struct weft_btl_module *m)
{
    return WEFT_BTL_HAS_OP(m, modex_ready) ? m->ops->modex_ready(m) : WEFT_ERR_NOT_SUPPORTED;
}

static inline int weft_btl_attach_counters(struct weft_btl_module *m, weft_btl_counters_t *block)
{
    return WEFT_BTL_HAS_OP(m, attach_counters) ? m->ops->attach_counters(m, block) : WEFT_ERR_NOT_SUPPORTED;
}

/* ---- for whoever owns the module (the runtime, a test harness) ------- */

/* NULL when module m, as init() returned it, may be used; else why not
 * (the checks "Growth rules" in btl.h promise). */
static inline const char *weft_btl_module_abi_problem(const struct weft_btl_module *m)
{
    if (m == NULL)
        return "init returned a NULL module";
    if (m->size < WEFT_BTL_MODULE_MIN_SIZE)
        return "the module struct is smaller than ABI 1.0's";
    if (m->ops == NULL)
        return "the module has no ops table";
    if (m->ops->size < WEFT_BTL_MODULE_OPS_MIN_SIZE)
        return "the ops table is smaller than ABI 1.0's";
    if (!m->ops->reachable || !m->ops->send || !m->ops->progress || !m->ops->finalize)
        return "the ops table lacks a mandatory op (reachable, send, progress, finalize)";
    return NULL;
}

/* Gives module m the runtime's upcalls: as much of *up as both sides know
 * (the module's room is what its size says lies from upcalls on), with
 * m->upcalls.size saying how much that was. Never writes past the module's
 * declared size. */
static inline void weft_btl_module_set_upcalls(struct weft_btl_module *m, const weft_btl_upcalls_t *up)
{
    if (m->size < WEFT_BTL_MODULE_MIN_SIZE)
        return;   /* weft_btl_module_abi_problem() refuses such a module */
    size_t room = m->size - offsetof(weft_btl_module_t, upcalls);
    size_t n = up->size < room ? up->size : room;
    memcpy(&m->upcalls, up, n);
    m->upcalls.size = n;
}

#ifdef __cplusplus
}
#endif
#endif
