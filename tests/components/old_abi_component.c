/* SPDX-License-Identifier: BSD-3-Clause */
/* weft_btl_oldabi: a btl as if built against an older, smaller btl.h, for
 * tests/unit/btl_abi_test.cc. A working loopback (it reaches only its own
 * process) whose structs stop where an older header's would:
 * - its ops table ends after finalize (WEFT_BTL_MODULE_OPS_MIN_SIZE): it
 *   predates prepare_wait, sendx and modex_ready. What lies beyond its size
 *   in its memory is, to the runtime, not an op: here it is a trap that
 *   counts calls, so a caller that ignored ops->size would be caught;
 * - its module ends after upcalls.accepted (WEFT_BTL_MODULE_MIN_SIZE): it
 *   predates place/placed, and the memory after that is its own, filled
 *   with OLDABI_CANARY, which the runtime's copy of the upcalls must leave
 *   alone;
 * - its endpoints end after runtime_ctx: they predate eager_limit.
 * It has no card, no sendi and no wait_fd (optional ops left NULL).
 * Written in C: the ABI promises that a plain C component loads. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <weft/btl.h>

#include "old_abi_component.h"

typedef struct frame {
    struct frame *next;
    weft_btl_endpoint_t *ep;
    uint8_t am_id;
    size_t len;
    unsigned char data[];
} frame_t;

typedef struct oldabi_endpoint {
    weft_btl_endpoint_t ep;
    int announced;          /* CONNECTED reported */
    int closing;            /* disconnect() called: CLOSED to report */
    struct oldabi_endpoint *next;
} oldabi_endpoint_t;

static weft_btl_module_t g_module;
static oldabi_report_t g_report;
static oldabi_endpoint_t *g_endpoints;
static frame_t *g_head, *g_tail;
static int g_in_upcall;

static oldabi_endpoint_t *from_ep(weft_btl_endpoint_t *ep) { return (oldabi_endpoint_t *)ep; }

static int op_reachable(weft_btl_module_t *m, const weft_btl_peer_t *peer, char *why, size_t why_len)
{
    (void)m;
    if (peer && peer->peer_class == WEFT_PEER_SELF)
        return 1;
    if (why && why_len > 0) {
        strncpy(why, "btl/oldabi reaches only its own process", why_len - 1);
        why[why_len - 1] = '\0';
    }
    return 0;
}

static int op_send(weft_btl_endpoint_t *ep, uint8_t am_id, const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    if (!ep || iovcnt < 0 || (iovcnt > 0 && !iov) || from_ep(ep)->closing)
        return WEFT_ERR_BAD_PARAM;
    for (int i = 0; i < iovcnt; ++i)
        len += iov[i].iov_len;
    frame_t *f = malloc(sizeof *f + len);
    if (!f)
        return WEFT_ERR_NO_MEMORY;
    f->next = NULL;
    f->ep = ep;
    f->am_id = am_id;
    f->len = 0;
    for (int i = 0; i < iovcnt; ++i) {
        memcpy(f->data + f->len, iov[i].iov_base, iov[i].iov_len);
        f->len += iov[i].iov_len;
    }
    if (g_tail)
        g_tail->next = f;
    else
        g_head = f;
    g_tail = f;
    return WEFT_SUCCESS;
}

static int op_progress(weft_btl_module_t *m)
{
    const weft_btl_upcalls_t *up = &m->upcalls;
    int events = 0;
    if (g_in_upcall)
        return 0;
    g_in_upcall = 1;
    for (oldabi_endpoint_t *e = g_endpoints; e; e = e->next)
        if (!e->announced) {
            e->announced = 1;
            e->ep.state = WEFT_BTL_EP_CONNECTED;
            up->state(up->ctx, &e->ep, WEFT_BTL_EP_CONNECTED, WEFT_SUCCESS, NULL);
            ++events;
        }
    while (g_head) {
        frame_t *f = g_head;
        g_head = f->next;
        if (!g_head)
            g_tail = NULL;
        up->recv(up->ctx, f->ep, f->am_id, f->data, f->len);
        free(f);
        ++events;
    }
    for (oldabi_endpoint_t **pe = &g_endpoints; *pe;) {
        oldabi_endpoint_t *e = *pe;
        if (!e->closing) {
            pe = &e->next;
            continue;
        }
        *pe = e->next;
        e->ep.state = WEFT_BTL_EP_CLOSED;
        up->state(up->ctx, &e->ep, WEFT_BTL_EP_CLOSED, WEFT_SUCCESS, NULL);
        free(e);
        ++events;
    }
    g_in_upcall = 0;
    return events;
}

static int op_disconnect(weft_btl_endpoint_t *ep)
{
    if (!ep || from_ep(ep)->closing)
        return WEFT_ERR_BAD_PARAM;
    from_ep(ep)->closing = 1;
    return WEFT_SUCCESS;
}

static int op_finalize(weft_btl_module_t *m)
{
    (void)m;
    while (g_head) {
        frame_t *f = g_head;
        g_head = f->next;
        free(f);
    }
    g_tail = NULL;
    while (g_endpoints) {
        oldabi_endpoint_t *e = g_endpoints;
        g_endpoints = e->next;
        free(e);
    }
    g_report.finalized = 1;
    return WEFT_SUCCESS;
}

/* Beyond the table's declared size: never to be called. */
static int trap_prepare_wait(weft_btl_module_t *m)
{
    (void)m;
    ++g_report.tail_op_calls;
    return 1;
}
static int trap_sendx(weft_btl_endpoint_t *ep, uint8_t am_id, const struct iovec *iov, int iovcnt, uint32_t flags)
{
    (void)ep, (void)am_id, (void)iov, (void)iovcnt, (void)flags;
    ++g_report.tail_op_calls;
    return WEFT_SUCCESS;
}
static int trap_modex_ready(weft_btl_module_t *m)
{
    (void)m;
    ++g_report.tail_op_calls;
    return WEFT_SUCCESS;
}

static const weft_btl_module_ops_t g_ops = {
    .size = WEFT_BTL_MODULE_OPS_MIN_SIZE,
    .reachable = op_reachable,
    .send = op_send,
    .progress = op_progress,
    .disconnect = op_disconnect,
    .finalize = op_finalize,
    .prepare_wait = trap_prepare_wait,
    .sendx = trap_sendx,
    .modex_ready = trap_modex_ready,
};

static int c_open(const weft_host_t *host)
{
    (void)host;
    return WEFT_SUCCESS;
}

static int c_query(const weft_host_t *host, weft_query_result_t *result)
{
    (void)host;
    result->available = 1;
    result->priority = 1;
    strcpy(result->reason, "a loopback built against a smaller btl.h");
    return WEFT_SUCCESS;
}

static int c_finalize(const weft_host_t *host)
{
    (void)host;
    return WEFT_SUCCESS;
}

static int c_init(const weft_host_t *host, weft_btl_module_t **modules, int max_modules, int *num_modules)
{
    (void)host;
    if (max_modules < 1)
        return WEFT_ERR_BAD_PARAM;
    memset(&g_module, 0, sizeof g_module);
    memset(&g_report, 0, sizeof g_report);
    g_module.size = WEFT_BTL_MODULE_MIN_SIZE;
    g_module.ops = &g_ops;
    g_module.caps.size = sizeof g_module.caps;
    g_module.caps.max_send = 1u << 20;
    g_module.caps.eager_limit = 4096;
    g_module.caps.exclusivity = WEFT_BTL_EXCLUSIVITY_SELF;
    g_module.caps.flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_LOCAL_ONLY;
    strcpy(g_module.name, "oldabi");
    g_module.module_ctx = &g_report;
    memset((unsigned char *)&g_module + WEFT_BTL_MODULE_MIN_SIZE, OLDABI_CANARY,
           sizeof g_module - WEFT_BTL_MODULE_MIN_SIZE);
    modules[0] = &g_module;
    *num_modules = 1;
    return WEFT_SUCCESS;
}

static int c_start_connect(weft_btl_module_t *module, const weft_btl_peer_t *peer, weft_btl_endpoint_t **endpoint)
{
    char why[WEFT_REASON_MAX];
    if (!endpoint || op_reachable(module, peer, why, sizeof why) != 1)
        return WEFT_ERR_UNREACHABLE;
    oldabi_endpoint_t *e = calloc(1, sizeof *e);
    if (!e)
        return WEFT_ERR_NO_MEMORY;
    /* 1.0's endpoint ends after runtime_ctx (no eager_limit); the bytes
     * there hold the canary, which the runtime must not take for a limit. */
    e->ep.size = offsetof(weft_btl_endpoint_t, eager_limit);
    memset(&e->ep.eager_limit, OLDABI_CANARY, sizeof e->ep.eager_limit);
    e->ep.module = module;
    e->ep.peer_rank = peer->rank;
    e->ep.state = WEFT_BTL_EP_CONNECTING;
    e->next = g_endpoints;
    g_endpoints = e;
    *endpoint = &e->ep;
    return WEFT_SUCCESS;
}

WEFT_EXPORT const weft_btl_component_t weft_btl_oldabi_component = {
    .base = {WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "oldabi", 1, 0, 0), .open = c_open,
             .query = c_query, .finalize = c_finalize},
    .init = c_init,
    .start_connect = c_start_connect,
};
