// SPDX-License-Identifier: BSD-3-Clause
// Point-to-point: the send modes, receives, probes and buffered sends, on
// weft's tagged messages in the communicator's point-to-point context.
// The common case (a contiguous datatype, a valid rank and tag) goes
// straight to weft with the user's buffer; anything else takes the
// checked path, which says exactly what is wrong.
#include <cstring>
#include <string>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

// Buffered sends and freed packed sends still on their way: their bytes
// live here until weft is done with them.
struct Background {
    weft_request_t req = WEFT_REQUEST_NULL;
    std::vector<std::byte> data;
    size_t charged = 0;   // bytes of the attached buffer it holds
};
std::vector<Background> g_background;
void *g_bsend_buffer = nullptr;
size_t g_bsend_capacity = 0, g_bsend_used = 0;
bool g_bsend_attached = false;

void reap_background()
{
    for (size_t i = 0; i < g_background.size();) {
        int done = 0;
        weft_test(&g_background[i].req, &done, nullptr);
        if (done) {
            g_bsend_used -= g_background[i].charged;
            g_background[i] = std::move(g_background.back());
            g_background.pop_back();
        } else {
            ++i;
        }
    }
}

std::string type_name(MPI_Datatype h)
{
    const Datatype *t = datatype(h);
    return t && !t->name.empty() ? t->name : "datatype " + std::to_string(h);
}

// Checks the arguments of a send or receive; returns MPI_SUCCESS or the
// error already raised. peer may be MPI_PROC_NULL (and, for receives,
// MPI_ANY_SOURCE); tag may be MPI_ANY_TAG for receives.
int check(const char *fn, MPI_Comm h, Comm *c, const void *buf, int count, const Datatype *t, MPI_Datatype th,
          int peer, int tag, bool recv)
{
    if (!initialized())
        return raise(nullptr, MPI_ERR_OTHER, fn, "MPI is not initialized (call MPI_Init first)");
    if (!c)
        return raise(nullptr, MPI_ERR_COMM, fn,
                     h == MPI_COMM_NULL ? "the communicator is MPI_COMM_NULL"
                                        : "communicator " + std::to_string(h) + " is not valid (freed?)");
    if (count < 0)
        return raise(c, MPI_ERR_COUNT, fn, "count " + std::to_string(count) + " is negative");
    if (!t)
        return raise(c, MPI_ERR_TYPE, fn,
                     th == MPI_DATATYPE_NULL ? "the datatype is MPI_DATATYPE_NULL"
                                             : "datatype " + std::to_string(th) + " is not valid (freed?)");
    if (!t->committed)
        return raise(c, MPI_ERR_TYPE, fn, "the datatype is not committed (call MPI_Type_commit before using it)");
    const bool any_ok = recv && peer == MPI_ANY_SOURCE;
    if (peer != MPI_PROC_NULL && !any_ok && (peer < 0 || peer >= c->size))
        return raise(c, MPI_ERR_RANK, fn,
                     std::string(recv ? "source " : "dest ") + std::to_string(peer) + " is not a rank of " +
                         (c->name.empty() ? "the communicator" : c->name) + " (size " + std::to_string(c->size) +
                         ")");
    if (tag < 0 && !(recv && tag == MPI_ANY_TAG))
        return raise(c, MPI_ERR_TAG, fn,
                     "tag " + std::to_string(tag) + " is negative" + (recv ? " (and not MPI_ANY_TAG)" : ""));
    if (!buf && count > 0 && t->size > 0 && t->blocks.size() == 1 && t->blocks[0].offset == 0)
        return raise(c, MPI_ERR_BUFFER, fn, "buf is NULL with count " + std::to_string(count));
    return MPI_SUCCESS;
}

} // namespace

int check_p2p(const char *fn, MPI_Comm h, Comm *c, const void *buf, int count, const Datatype *t, MPI_Datatype th,
              int peer, int tag, bool recv)
{
    return check(fn, h, c, buf, count, t, th, peer, tag, recv);
}

namespace {

int send_failed(Comm *c, const char *fn, int rc, int dest)
{
    return raise(c, fail_class(rc), fn,
                 "to rank " + std::to_string(dest) + ": " + weft_why(rc));
}

} // namespace

int start_send(const char *fn, const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h,
               unsigned flags, MPI_Request *out, const Datatype *type)
{
    Comm *c = comm(h);
    const Datatype *t = type ? type : datatype(th);
    if (int rc = check(fn, h, c, buf, count, t, th, dest, tag, false))
        return rc;
    if (dest == MPI_PROC_NULL) {
        if (out) {
            Request *r;
            *out = new_request(&r);
            r->kind = Request::Kind::Done;
            r->comm = h;
            empty_status(&r->done_status);
        }
        return MPI_SUCCESS;
    }
    if (!out) {   // blocking
        // With windows open, a blocking send waits through wait_one so the
        // one-sided service keeps answering other ranks meanwhile.
        if (t->contiguous(count) && !flags && !g_service) {
            const std::byte *p = static_cast<const std::byte *>(buf) + t->data_offset;
            if (int rc = weft_send_ctx(p, t->size * static_cast<size_t>(count), c->to_world(dest), tag, c->context))
                return send_failed(c, fn, rc, dest);
            return MPI_SUCCESS;
        }
        Wire w;
        wire_for_send(buf, count, *t, &w);
        weft_request_t q;
        if (int rc = weft_isend_ctx(w.ptr, w.bytes, c->to_world(dest), tag, c->context, flags, &q))
            return send_failed(c, fn, rc, dest);
        weft_msg_status_t ws{};
        if (int rc = wait_one(&q, &ws))
            return send_failed(comm(h), fn, rc, dest);
        return MPI_SUCCESS;
    }
    Request *r;
    MPI_Request rh = new_request(&r);
    r->kind = Request::Kind::Send;
    r->comm = h;
    wire_for_send(buf, count, *t, &r->wire);
    if (int rc = weft_isend_ctx(r->wire.ptr, r->wire.bytes, c->to_world(dest), tag, c->context, flags, &r->req)) {
        free_request(rh);
        return send_failed(c, fn, rc, dest);
    }
    *out = rh;
    return MPI_SUCCESS;
}

int bsend(const char *fn, const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h,
          MPI_Request *out, const Datatype *type)
{
    Comm *c = comm(h);
    const Datatype *t = type ? type : datatype(th);
    if (int rc = check(fn, h, c, buf, count, t, th, dest, tag, false))
        return rc;
    if (out) {
        Request *r;
        *out = new_request(&r);
        r->kind = Request::Kind::Done;
        r->comm = h;
        empty_status(&r->done_status);
        r->done_status.MPI_ERROR = MPI_SUCCESS;
    }
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    reap_background();
    const size_t bytes = t->size * static_cast<size_t>(count);
    const size_t charge = bytes + MPI_BSEND_OVERHEAD;
    if (!g_bsend_attached)
        return raise(c, MPI_ERR_BUFFER, fn,
                     "no buffer is attached: call MPI_Buffer_attach with room for the message plus "
                     "MPI_BSEND_OVERHEAD (" + std::to_string(charge) + " bytes here)");
    if (g_bsend_used + charge > g_bsend_capacity)
        return raise(c, MPI_ERR_BUFFER, fn,
                     "the attached buffer is too small: " + std::to_string(g_bsend_capacity) + " bytes, " +
                         std::to_string(g_bsend_used) + " held by buffered sends still on their way, this one needs " +
                         std::to_string(charge) + " (message + MPI_BSEND_OVERHEAD); attach a bigger buffer");
    Background b;
    b.data.resize(bytes);
    pack(buf, count, *t, b.data.data());
    b.charged = charge;
    if (int rc = weft_isend_ctx(b.data.data(), bytes, c->to_world(dest), tag, c->context, 0, &b.req))
        return send_failed(c, fn, rc, dest);
    g_bsend_used += charge;
    g_background.push_back(std::move(b));
    return MPI_SUCCESS;
}

namespace {

uint32_t weft_source(const Comm &c, int source)
{
    return source == MPI_ANY_SOURCE ? WEFT_ANY_SOURCE : c.to_world(source);
}

} // namespace

// A freed send whose bytes were packed keeps them until weft is done.
void keep_in_background(weft_request_t req, std::vector<std::byte> data)
{
    Background b;
    b.req = req;
    b.data = std::move(data);
    g_background.push_back(std::move(b));
}

int start_recv(const char *fn, void *buf, int count, MPI_Datatype th, int source, int tag, MPI_Comm h,
               MPI_Request *out, const Datatype *type)
{
    Comm *c = comm(h);
    const Datatype *t = type ? type : datatype(th);
    if (int rc = check(fn, h, c, buf, count, t, th, source, tag, true))
        return rc;
    Request *r;
    MPI_Request rh = new_request(&r);
    r->comm = h;
    if (source == MPI_PROC_NULL) {
        r->kind = Request::Kind::Done;
        empty_status(&r->done_status);
        *out = rh;
        return MPI_SUCCESS;
    }
    r->kind = Request::Kind::Recv;
    r->buf = buf;
    r->count = count;
    wire_for_recv(buf, count, *t, &r->wire);
    if (r->wire.packed)   // the type may be freed before the data lands
        r->unpack_type = std::make_unique<Datatype>(*t);
    if (int rc = weft_irecv_ctx(r->wire.ptr, r->wire.bytes, weft_source(*c, source),
                                tag == MPI_ANY_TAG ? WEFT_ANY_TAG : tag, c->context, &r->req)) {
        free_request(rh);
        return raise(c, fail_class(rc), fn, weft_why(rc));
    }
    *out = rh;
    return MPI_SUCCESS;
}

int probe_once(const char *fn, int source, int tag, MPI_Comm h, int *flag, weft_msg_status_t *ws)
{
    Comm *c = comm(h);
    if (int rc = check(fn, h, c, nullptr, 0, datatype(MPI_BYTE), MPI_BYTE, source, tag, true))
        return rc;
    if (!flag)
        return raise(c, MPI_ERR_ARG, fn, "flag is NULL");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (g_service)
        g_service();
    if (int rc = weft_iprobe_ctx(weft_source(*c, source), tag == MPI_ANY_TAG ? WEFT_ANY_TAG : tag, c->context, flag,
                                 ws))
        return raise(c, fail_class(rc), fn, weft_why(rc));
    return MPI_SUCCESS;
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Send)
int PMPI_Send(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    // The fast path: every check the slow path makes, in one branch.
    Comm *c = comm(h);
    const Datatype *t = datatype(th);
    if (c && t && t->committed && count >= 0 && tag >= 0 && dest >= 0 && dest < c->size && t->contiguous(count) &&
        !g_service) {
        const std::byte *p = static_cast<const std::byte *>(buf) + t->data_offset;
        if (int rc = weft_send_ctx(p, t->size * static_cast<size_t>(count), c->to_world(dest), tag, c->context))
            return send_failed(c, "MPI_Send", rc, dest);
        return MPI_SUCCESS;
    }
    return start_send("MPI_Send", buf, count, th, dest, tag, h, 0, nullptr);
}

WEFT_MPI_WEAK(Rsend)
int PMPI_Rsend(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    return start_send("MPI_Rsend", buf, count, th, dest, tag, h, 0, nullptr);
}

WEFT_MPI_WEAK(Ssend)
int PMPI_Ssend(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    return start_send("MPI_Ssend", buf, count, th, dest, tag, h, WEFT_SEND_SYNC, nullptr);
}

WEFT_MPI_WEAK(Bsend)
int PMPI_Bsend(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    return bsend("MPI_Bsend", buf, count, th, dest, tag, h, nullptr);
}

WEFT_MPI_WEAK(Isend)
int PMPI_Isend(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    // The fast path, as MPI_Send's.
    Comm *c = comm(h);
    const Datatype *t = datatype(th);
    if (req && c && t && t->committed && count >= 0 && tag >= 0 && dest >= 0 && dest < c->size &&
        t->contiguous(count)) {
        Request *r;
        const MPI_Request rh = new_request(&r);
        r->comm = h;
        const std::byte *p = static_cast<const std::byte *>(buf) + t->data_offset;
        if (int rc = weft_isend_ctx(p, t->size * static_cast<size_t>(count), c->to_world(dest), tag, c->context,
                                    WEFT_SEND_DONE_NULL, &r->req)) {
            free_request(rh);
            return send_failed(c, "MPI_Isend", rc, dest);
        }
        *req = rh;
        return MPI_SUCCESS;
    }
    if (!req)
        return raise(comm(h), MPI_ERR_ARG, "MPI_Isend", "request is NULL");
    return start_send("MPI_Isend", buf, count, th, dest, tag, h, 0, req);
}

WEFT_MPI_WEAK(Irsend)
int PMPI_Irsend(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    if (!req)
        return raise(comm(h), MPI_ERR_ARG, "MPI_Irsend", "request is NULL");
    return start_send("MPI_Irsend", buf, count, th, dest, tag, h, 0, req);
}

WEFT_MPI_WEAK(Issend)
int PMPI_Issend(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    if (!req)
        return raise(comm(h), MPI_ERR_ARG, "MPI_Issend", "request is NULL");
    return start_send("MPI_Issend", buf, count, th, dest, tag, h, WEFT_SEND_SYNC, req);
}

WEFT_MPI_WEAK(Ibsend)
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    if (!req)
        return raise(comm(h), MPI_ERR_ARG, "MPI_Ibsend", "request is NULL");
    return bsend("MPI_Ibsend", buf, count, th, dest, tag, h, req);
}

WEFT_MPI_WEAK(Buffer_attach)
int PMPI_Buffer_attach(void *buffer, int size)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Buffer_attach");
    if (g_bsend_attached)
        return raise(nullptr, MPI_ERR_BUFFER, "MPI_Buffer_attach",
                     "a buffer is already attached (MPI_Buffer_detach it first)");
    if (size < 0 || (!buffer && size > 0))
        return raise(nullptr, MPI_ERR_BUFFER, "MPI_Buffer_attach", "size is negative or buffer is NULL");
    g_bsend_buffer = buffer;
    g_bsend_capacity = static_cast<size_t>(size);
    g_bsend_attached = true;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Buffer_detach)
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Buffer_detach");
    // Every buffered send (and freed packed send) goes out first.
    while (!g_background.empty()) {
        reap_background();
        if (!g_background.empty()) {
            weft_progress();
            if (g_service)
                g_service();
        }
    }
    if (buffer_addr)
        *static_cast<void **>(buffer_addr) = g_bsend_attached ? g_bsend_buffer : nullptr;
    if (size)
        *size = g_bsend_attached ? static_cast<int>(g_bsend_capacity) : 0;
    g_bsend_attached = false;
    g_bsend_buffer = nullptr;
    g_bsend_capacity = g_bsend_used = 0;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Irecv)
int PMPI_Irecv(void *buf, int count, MPI_Datatype th, int source, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    // The fast path: a contiguous receive lands in buf itself.
    Comm *c = comm(h);
    const Datatype *t = datatype(th);
    if (req && c && t && t->committed && count >= 0 && (tag >= 0 || tag == MPI_ANY_TAG) &&
        (source == MPI_ANY_SOURCE || (source >= 0 && source < c->size)) && t->contiguous(count)) {
        Request *r;
        const MPI_Request rh = new_request(&r);
        r->kind = Request::Kind::Recv;
        r->comm = h;
        r->wire.bytes = t->size * static_cast<size_t>(count);
        std::byte *p = static_cast<std::byte *>(buf) + t->data_offset;
        if (int rc = weft_irecv_ctx(p, r->wire.bytes, weft_source(*c, source), tag, c->context, &r->req)) {
            free_request(rh);
            return raise(c, fail_class(rc), "MPI_Irecv", weft_why(rc));
        }
        *req = rh;
        return MPI_SUCCESS;
    }
    if (!req)
        return raise(comm(h), MPI_ERR_ARG, "MPI_Irecv", "request is NULL");
    return start_recv("MPI_Irecv", buf, count, th, source, tag, h, req);
}

WEFT_MPI_WEAK(Recv)
int PMPI_Recv(void *buf, int count, MPI_Datatype th, int source, int tag, MPI_Comm h, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    Comm *c = comm(h);
    const Datatype *t = datatype(th);
    if (c && t && t->committed && count >= 0 && (tag >= 0 || tag == MPI_ANY_TAG) &&
        (source == MPI_ANY_SOURCE || (source >= 0 && source < c->size)) && t->contiguous(count)) {
        std::byte *p = static_cast<std::byte *>(buf) + t->data_offset;
        const size_t bytes = t->size * static_cast<size_t>(count);
        weft_msg_status_t ws{};
        int rc;
        if (!g_service) {
            // No one-sided traffic to serve while waiting: the engine's
            // blocking receive (no request object).
            rc = weft_recv_ctx(p, bytes, weft_source(*c, source), tag, c->context, &ws);
        } else {
            weft_request_t q;
            rc = weft_irecv_ctx(p, bytes, weft_source(*c, source), tag, c->context, &q);
            if (rc == WEFT_SUCCESS)
                rc = wait_one(&q, &ws);
        }
        if (rc != WEFT_SUCCESS && ws.error == WEFT_SUCCESS)
            ws.error = rc;
        if (status)
            to_status(ws, *c, status);
        if (rc == WEFT_SUCCESS || rc == WEFT_ERR_CANCELED)
            return MPI_SUCCESS;
        if (rc == WEFT_ERR_TRUNCATED)
            return raise(comm(h), MPI_ERR_TRUNCATE, "MPI_Recv",
                         "the message is longer than the receive buffer (" + std::to_string(count) + " x " +
                             type_name(th) + " = " + std::to_string(bytes) + " bytes)");
        return raise(comm(h), fail_class(rc), "MPI_Recv", weft_why(rc));
    }
    MPI_Request req;
    if (int rc = start_recv("MPI_Recv", buf, count, th, source, tag, h, &req))
        return rc;
    return PMPI_Wait(&req, status);
}

WEFT_MPI_WEAK(Sendrecv)
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm h, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    MPI_Request r;
    if (int rc = start_recv("MPI_Sendrecv", recvbuf, recvcount, recvtype, source, recvtag, h, &r))
        return rc;
    if (int rc = start_send("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, h, 0, nullptr)) {
        PMPI_Cancel(&r);
        PMPI_Request_free(&r);
        return rc;
    }
    return PMPI_Wait(&r, status);
}

WEFT_MPI_WEAK(Sendrecv_replace)
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype th, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm h, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    Comm *c = comm(h);
    const Datatype *t = datatype(th);
    if (int rc = check("MPI_Sendrecv_replace", h, c, buf, count, t, th, dest, sendtag, false))
        return rc;
    // The outgoing data is copied first, so the receive may land in buf.
    std::vector<std::byte> out(t->size * static_cast<size_t>(count));
    pack(buf, count, *t, out.data());
    MPI_Request r;
    if (int rc = start_recv("MPI_Sendrecv_replace", buf, count, th, source, recvtag, h, &r))
        return rc;
    if (int rc = start_send("MPI_Sendrecv_replace", out.data(), static_cast<int>(out.size()), MPI_BYTE, dest,
                            sendtag, h, 0, nullptr)) {
        PMPI_Cancel(&r);
        PMPI_Request_free(&r);
        return rc;
    }
    return PMPI_Wait(&r, status);
}

WEFT_MPI_WEAK(Iprobe)
int PMPI_Iprobe(int source, int tag, MPI_Comm h, int *flag, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    weft_msg_status_t ws{};
    if (int rc = probe_once("MPI_Iprobe", source, tag, h, flag, &ws))
        return rc;
    if (*flag && source == MPI_PROC_NULL)
        empty_status(status);
    else if (*flag && status)
        to_status(ws, *comm(h), status);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Probe)
int PMPI_Probe(int source, int tag, MPI_Comm h, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    int flag = 0;
    for (;;) {
        if (int rc = PMPI_Iprobe(source, tag, h, &flag, status))
            return rc;
        if (flag)
            return MPI_SUCCESS;
    }
}

WEFT_MPI_WEAK(Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype th, int *count)
{
    MPI_THREAD_GUARD;
    if (!status || !count)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Get_count", "status and count must not be NULL");
    const Datatype *t = datatype(th);
    if (!t)
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Get_count", "not a datatype");
    if (t->size == 0)
        *count = status->weft_bytes_ == 0 ? 0 : MPI_UNDEFINED;
    else if (status->weft_bytes_ % t->size)
        *count = MPI_UNDEFINED;
    else
        *count = static_cast<int>(status->weft_bytes_ / t->size);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Get_elements)
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype th, int *count)
{
    MPI_THREAD_GUARD;
    if (!status || !count)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Get_elements", "status and count must not be NULL");
    const Datatype *t = datatype(th);
    if (!t)
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Get_elements", "not a datatype");
    // Basic elements, a partial last element included; MPI_UNDEFINED when
    // the bytes end inside a basic element.
    const size_t bytes = status->weft_bytes_;
    if (t->basic != Basic::Mixed) {
        *count = t->basic_size == 0 ? 0
                 : bytes % t->basic_size ? MPI_UNDEFINED
                                         : static_cast<int>(bytes / t->basic_size);
        return MPI_SUCCESS;
    }
    const size_t whole = t->size ? bytes / t->size : 0;
    size_t rest = t->size ? bytes % t->size : 0, n = whole * t->signature.size();
    for (size_t k = 0; k < t->signature.size() && rest >= t->signature[k]; ++k) {
        rest -= t->signature[k];
        ++n;
    }
    *count = rest ? MPI_UNDEFINED : static_cast<int>(n);
    return MPI_SUCCESS;
}

} // extern "C"
