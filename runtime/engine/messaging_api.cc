// SPDX-License-Identifier: BSD-3-Clause
// The C API of weft.h for messaging (portals and tagged messages), and the
// error path every weft.h call shares (api_fail, weft_error_message). Every
// call checks that the engine is up (weft_init built it); errors return a
// status and leave their message for weft_error_message().
#include <weft.h>

#include <chrono>
#include <string>

#include "engine/api_error.hpp"
#include "engine/engine.hpp"

using weft::Status;
using weft::api_fail;
using weft::engine::Engine;

namespace {
thread_local std::string t_error;
} // namespace

int weft::api_fail(const Status &st)
{
    t_error = st.message();
    return st.code();
}

namespace {

int result(const Status &st) { return st.ok() ? WEFT_SUCCESS : api_fail(st); }

[[gnu::noinline]] Engine *not_initialized(const char *fn, int *rc)
{
    *rc = api_fail(Status(WEFT_ERR_NOT_AVAILABLE, std::string(fn) + ": call weft_init first"));
    return nullptr;
}

// Every call's first step, inlined: the process's engine while it exists.
inline Engine *engine(const char *fn, int *rc)
{
    if (Engine *e = Engine::current()) [[likely]]
        return e;
    return not_initialized(fn, rc);
}

#define ENGINE_OR_RETURN(fn)                                                                       \
    int rc_ = 0;                                                                                   \
    Engine *e = engine(fn, &rc_);                                                                  \
    if (!e)                                                                                        \
        return rc_

constexpr auto kForever = weft::rt::ProgressEngine::kForever;

// finish's message for a request that failed (not truncated or canceled).
[[gnu::noinline]] int request_failed(Engine *e, int error, bool is_recv, uint32_t peer)
{
    return api_fail(Status(error, std::string(is_recv ? "receive from" : "send to") + " rank " +
                                      std::to_string(peer) + " failed: " + e->failure_of(peer, error)));
}

// Finishes a completed request: status out, request freed, handle cleared.
inline int finish(Engine *e, weft::engine::Request *r, weft_request_t *req, weft_msg_status_t *status)
{
    if (status)
        *status = r->status;
    const int error = r->status.error;
    const uint32_t peer = r->status.source;
    const bool is_recv = r->is_recv;
    e->free_request(r);
    *req = WEFT_REQUEST_NULL;
    if (error != WEFT_SUCCESS && error != WEFT_ERR_TRUNCATED && error != WEFT_ERR_CANCELED) [[unlikely]]
        request_failed(e, error, is_recv, peer);
    return error;
}

// wait_one's rest: r (what *req names, null for none) is an error when
// null, else waited for. Apart, so the common case inlines.
[[gnu::noinline]] int wait_pending(Engine *e, const char *fn, weft::engine::Request *r, weft_request_t *req,
                                   weft_msg_status_t *status)
{
    if (!r) [[unlikely]]
        return api_fail(Status(WEFT_ERR_BAD_PARAM, std::string(fn) + ": not a request (stale or invalid)"));
    if (!r->done)
        e->progress_engine().wait_until([r] { return r->done; }, kForever);
    return finish(e, r, req, status);
}

// weft_wait's work on one request (weft_waitall calls it for each, with
// the engine it looked up once): a null request is done at once, a
// completed one finished here, the rest by wait_pending. Inlined: a window
// of sends that completed as they went out (eager) is the common case, and
// a call per request cost it 17 instructions (callgrind).
[[gnu::always_inline]] inline int wait_one(Engine *e, const char *fn, weft_request_t *req,
                                           weft_msg_status_t *status)
{
    if (*req == WEFT_REQUEST_NULL) {
        if (status)
            *status = weft_msg_status_t{};
        return WEFT_SUCCESS;
    }
    weft::engine::Request *r = e->request(*req);
    if (r && r->done) [[likely]]
        return finish(e, r, req, status);
    return wait_pending(e, fn, r, req, status);
}

} // namespace

extern "C" {

int weft_get_id(uint32_t *rank)
{
    ENGINE_OR_RETURN("weft_get_id");
    if (!rank)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_get_id: rank is NULL"));
    *rank = e->rank();
    return WEFT_SUCCESS;
}

int weft_eq_alloc(unsigned count, weft_eq_handler_t handler, weft_eq_t *eq)
{
    ENGINE_OR_RETURN("weft_eq_alloc");
    return result(e->portals().eq_alloc(count, handler, eq));
}

int weft_eq_free(weft_eq_t eq)
{
    ENGINE_OR_RETURN("weft_eq_free");
    return result(e->portals().eq_free(eq));
}

int weft_eq_poll(const weft_eq_t *eqs, int neq, int timeout_ms, weft_event_t *event, int *which)
{
    ENGINE_OR_RETURN("weft_eq_poll");
    if (!eqs || neq <= 0)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_eq_poll: give at least one event queue"));
    return result(e->eq_poll({eqs, static_cast<size_t>(neq)}, timeout_ms, event, which));
}

int weft_me_attach(unsigned portal, uint32_t match_rank, uint64_t match_bits, uint64_t ignore_bits,
                   weft_unlink_t unlink, weft_ins_pos_t pos, weft_me_t *me)
{
    ENGINE_OR_RETURN("weft_me_attach");
    return result(e->portals().me_attach(portal, match_rank, match_bits, ignore_bits, unlink, pos, nullptr, me));
}

int weft_me_insert(weft_me_t current, uint32_t match_rank, uint64_t match_bits, uint64_t ignore_bits,
                   weft_unlink_t unlink, weft_ins_pos_t pos, weft_me_t *me)
{
    ENGINE_OR_RETURN("weft_me_insert");
    return result(e->portals().me_insert(current, match_rank, match_bits, ignore_bits, unlink, pos, me));
}

int weft_me_unlink(weft_me_t me)
{
    ENGINE_OR_RETURN("weft_me_unlink");
    return result(e->portals().me_unlink(me));
}

int weft_portal_set_lazy(unsigned portal, int lazy)
{
    ENGINE_OR_RETURN("weft_portal_set_lazy");
    return result(e->portals().portal_set_lazy(portal, lazy != 0));
}

int weft_md_attach(weft_me_t me, const weft_md_desc_t *desc, weft_unlink_t unlink, weft_md_t *md)
{
    ENGINE_OR_RETURN("weft_md_attach");
    if (!desc)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_md_attach: desc is NULL"));
    return result(e->md_attach(me, *desc, unlink, md));
}

int weft_md_bind(const weft_md_desc_t *desc, weft_unlink_t unlink, weft_md_t *md)
{
    ENGINE_OR_RETURN("weft_md_bind");
    if (!desc)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_md_bind: desc is NULL"));
    return result(e->portals().md_bind(*desc, unlink, md));
}

int weft_md_unlink(weft_md_t md)
{
    ENGINE_OR_RETURN("weft_md_unlink");
    return result(e->portals().md_unlink(md));
}

int weft_put(weft_md_t md, weft_ack_req_t ack, uint32_t target, unsigned portal, uint64_t match_bits,
             size_t offset, uint64_t hdr_data)
{
    ENGINE_OR_RETURN("weft_put");
    return result(e->put(md, ack, target, portal, match_bits, offset, hdr_data));
}

int weft_get(weft_md_t md, uint32_t target, unsigned portal, uint64_t match_bits, size_t offset)
{
    ENGINE_OR_RETURN("weft_get");
    return result(e->get(md, target, portal, match_bits, offset));
}

int weft_isend(const void *buf, size_t len, uint32_t dest, int32_t tag, weft_request_t *req)
{
    ENGINE_OR_RETURN("weft_isend");
    return e->isend(buf, len, dest, tag, weft::engine::kTaggedContextUser, 0, req, nullptr);
}

int weft_irecv(void *buf, size_t len, uint32_t source, int32_t tag, weft_request_t *req)
{
    ENGINE_OR_RETURN("weft_irecv");
    return e->irecv(buf, len, source, tag, weft::engine::kTaggedContextUser, req, nullptr);
}

// The blocking pair, a jump to the engine (Engine::send_api, recv_api):
// no frame of their own.
int weft_send(const void *buf, size_t len, uint32_t dest, int32_t tag)
{
    if (Engine::current()) [[likely]]
        return Engine::send_api(buf, len, dest, tag, weft::engine::kTaggedContextUser);
    int rc;
    not_initialized("weft_send", &rc);
    return rc;
}

int weft_recv(void *buf, size_t len, uint32_t source, int32_t tag, weft_msg_status_t *status)
{
    if (Engine::current()) [[likely]]
        return Engine::recv_api(buf, len, source, tag, weft::engine::kTaggedContextUser, status);
    int rc;
    not_initialized("weft_recv", &rc);
    return rc;
}

namespace {

// bad_context's error, apart so the test inlines.
[[gnu::noinline]] int reserved_context(const char *fn, uint32_t context)
{
    return api_fail(Status(WEFT_ERR_BAD_PARAM, std::string(fn) + ": context " + std::to_string(context) +
                                                   " is reserved (use 0 or a context >= " +
                                                   std::to_string(WEFT_CONTEXT_FIRST_FREE) + ")"));
}

// Contexts 1 .. WEFT_CONTEXT_FIRST_FREE-1 are the engine's own. Inline: the
// MPI layer's every send and receive passes here (a call cost 20
// instructions, callgrind).
inline bool bad_context(const char *fn, uint32_t context, int *rc)
{
    if (context == WEFT_CONTEXT_DEFAULT || context >= WEFT_CONTEXT_FIRST_FREE) [[likely]]
        return false;
    *rc = reserved_context(fn, context);
    return true;
}

} // namespace

int weft_isend_ctx(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context, unsigned flags,
                   weft_request_t *req)
{
    ENGINE_OR_RETURN("weft_isend_ctx");
    if (bad_context("weft_isend_ctx", context, &rc_))
        return rc_;
    if (flags & ~(WEFT_SEND_SYNC | WEFT_SEND_DONE_NULL | WEFT_SEND_FORWARD))
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_isend_ctx: unknown flags " + std::to_string(flags)));
    return e->isend(buf, len, dest, tag, context, flags, req, nullptr);
}

int weft_send_ctx(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context)
{
    ENGINE_OR_RETURN("weft_send_ctx");
    if (bad_context("weft_send_ctx", context, &rc_))
        return rc_;
    return Engine::send_api(buf, len, dest, tag, context);
}

int weft_irecv_ctx(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, weft_request_t *req)
{
    ENGINE_OR_RETURN("weft_irecv_ctx");
    if (bad_context("weft_irecv_ctx", context, &rc_))
        return rc_;
    return e->irecv(buf, len, source, tag, context, req, nullptr);
}

int weft_irecv_flags(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, unsigned flags,
                     weft_request_t *req)
{
    ENGINE_OR_RETURN("weft_irecv_flags");
    if (bad_context("weft_irecv_flags", context, &rc_))
        return rc_;
    if (flags & ~WEFT_RECV_READ_AT_ONCE)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_irecv_flags: unknown flags " + std::to_string(flags) +
                                                       " (only WEFT_RECV_READ_AT_ONCE is defined)"));
    return e->irecv(buf, len, source, tag, context, req, nullptr, flags);
}

int weft_recv_ctx(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, weft_msg_status_t *status)
{
    ENGINE_OR_RETURN("weft_recv_ctx");
    if (bad_context("weft_recv_ctx", context, &rc_))
        return rc_;
    return Engine::recv_api(buf, len, source, tag, context, status);
}

int weft_iprobe_ctx(uint32_t source, int32_t tag, uint32_t context, int *flag, weft_msg_status_t *status)
{
    ENGINE_OR_RETURN("weft_iprobe_ctx");
    if (bad_context("weft_iprobe_ctx", context, &rc_))
        return rc_;
    if (!flag)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_iprobe_ctx: flag is NULL"));
    e->progress_engine().progress();
    return result(e->iprobe(source, tag, context, flag, status));
}

int weft_wait(weft_request_t *req, weft_msg_status_t *status)
{
    ENGINE_OR_RETURN("weft_wait");
    if (!req)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_wait: req is NULL"));
    return wait_one(e, "weft_wait", req, status);
}

int weft_test(weft_request_t *req, int *done, weft_msg_status_t *status)
{
    ENGINE_OR_RETURN("weft_test");
    if (!req || !done)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_test: req and done must not be NULL"));
    *done = 0;
    if (*req == WEFT_REQUEST_NULL) {
        *done = 1;
        return WEFT_SUCCESS;
    }
    weft::engine::Request *r = e->request(*req);
    if (!r)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_test: not a request (stale or invalid)"));
    if (!r->done)
        e->progress_engine().progress();
    if (!r->done)
        return WEFT_SUCCESS;
    *done = 1;
    return finish(e, r, req, status);
}

int weft_waitall(int n, weft_request_t *reqs, weft_msg_status_t *statuses)
{
    ENGINE_OR_RETURN("weft_waitall");
    if (n < 0 || (n > 0 && !reqs))
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_waitall: bad request array"));
    int first_error = WEFT_SUCCESS;
    for (int i = 0; i < n; ++i) {
        int rc = wait_one(e, "weft_waitall", &reqs[i], statuses ? &statuses[i] : nullptr);
        if (rc != WEFT_SUCCESS && first_error == WEFT_SUCCESS)
            first_error = rc;
    }
    return first_error;
}

int weft_waitany(int n, weft_request_t *reqs, int *index, weft_msg_status_t *status)
{
    ENGINE_OR_RETURN("weft_waitany");
    if (n < 0 || (n > 0 && !reqs) || !index)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_waitany: bad request array or index"));
    *index = -1;
    bool any = false;
    for (int i = 0; i < n; ++i) {
        if (reqs[i] == WEFT_REQUEST_NULL)
            continue;
        if (!e->request(reqs[i]))
            return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_waitany: request " + std::to_string(i) +
                                                                     " is stale or invalid"));
        any = true;
    }
    if (!any)
        return WEFT_SUCCESS;   // nothing to wait for: index stays -1
    int found = -1;
    e->progress_engine().wait_until(
        [&] {
            for (int i = 0; i < n; ++i)
                if (reqs[i] != WEFT_REQUEST_NULL && e->request(reqs[i])->done) {
                    found = i;
                    return true;
                }
            return false;
        },
        kForever);
    *index = found;
    return finish(e, e->request(reqs[found]), &reqs[found], status);
}

int weft_cancel(weft_request_t *req)
{
    ENGINE_OR_RETURN("weft_cancel");
    weft::engine::Request *r = req ? e->request(*req) : nullptr;
    if (!r)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_cancel: not a request (NULL, stale or invalid)"));
    e->cancel(r);
    return WEFT_SUCCESS;
}

int weft_request_free(weft_request_t *req)
{
    ENGINE_OR_RETURN("weft_request_free");
    if (req && *req == WEFT_REQUEST_NULL)
        return WEFT_SUCCESS;
    weft::engine::Request *r = req ? e->request(*req) : nullptr;
    if (!r)
        return api_fail(
            Status(WEFT_ERR_BAD_PARAM, "weft_request_free: not a request (NULL, stale or invalid)"));
    e->release_request(r);
    *req = WEFT_REQUEST_NULL;
    return WEFT_SUCCESS;
}

int weft_iprobe(uint32_t source, int32_t tag, int *flag, weft_msg_status_t *status)
{
    ENGINE_OR_RETURN("weft_iprobe");
    if (!flag)
        return api_fail(Status(WEFT_ERR_BAD_PARAM, "weft_iprobe: flag is NULL"));
    e->progress_engine().progress();
    return result(e->iprobe(source, tag, weft::engine::kTaggedContextUser, flag, status));
}

int weft_probe(uint32_t source, int32_t tag, weft_msg_status_t *status)
{
    ENGINE_OR_RETURN("weft_probe");
    int flag = 0;
    if (Status st = e->iprobe(source, tag, weft::engine::kTaggedContextUser, &flag, status); !st.ok())
        return result(st);
    if (!flag)
        e->progress_engine().wait_until(
            [&] { return e->iprobe(source, tag, weft::engine::kTaggedContextUser, &flag, status).ok() && flag; },
            kForever);
    return WEFT_SUCCESS;
}

const char *weft_error_message(void) { return t_error.c_str(); }

} // extern "C"
