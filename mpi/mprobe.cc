// SPDX-License-Identifier: BSD-3-Clause
// Matched probes: MPI_Mprobe / MPI_Improbe take a message off the matching
// queue and name it by an MPI_Message; MPI_Mrecv / MPI_Imrecv receive
// exactly that message.
//
// weft's engine offers probe (weft_iprobe_ctx) and receive, but no "probe
// and remove". The MPI layer builds it: as soon as a probe finds a
// message, a receive for exactly its source and tag is posted into bytes
// of its full size. Messages from one source in one context do not
// overtake each other, and the probed one is the first waiting message
// that matches the probe, so the first waiting message from its source
// with its tag is that same message: the receive takes it, and no later
// receive or probe (of this or, under MPI_THREAD_MULTIPLE, another thread)
// can. MPI_Mrecv then unpacks those bytes into the user's buffer (one copy).
#include <algorithm>
#include <string>
#include <vector>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

struct Matched {
    weft_request_t req = WEFT_REQUEST_NULL;
    std::vector<std::byte> bytes;   // the whole message
    MPI_Comm comm = MPI_COMM_NULL;
};
Table<Matched> g_messages(2);   // handles from 2: 0 is MPI_MESSAGE_NULL, 1 MPI_MESSAGE_NO_PROC

// The message's bytes into the user's buffer: at most count elements of t,
// MPI_ERR_TRUNCATE (in status and returned) when it had more.
int deliver(const Matched &m, const weft_msg_status_t &ws, void *buf, int count, const Datatype &t,
            MPI_Status *status)
{
    const size_t room = t.size * static_cast<size_t>(count);
    const size_t n = std::min(room, ws.count);
    unpack(m.bytes.data(), n, buf, count, t);
    weft_msg_status_t got = ws;
    got.count = n;
    if (got.error == WEFT_SUCCESS && ws.count > room)
        got.error = WEFT_ERR_TRUNCATED;
    if (status) {
        Comm none;
        const Comm *c = comm(m.comm);
        to_status(got, c ? *c : none, status);
    }
    return got.error == WEFT_SUCCESS ? MPI_SUCCESS : fail_class(got.error);
}

// MPI_Imrecv's request: done when the message's bytes are all here.
struct MatchedReceive final : Operation {
    std::unique_ptr<Matched> message;
    void *buf;
    int count;
    Datatype type;   // a copy: the program may free its datatype meanwhile

    MatchedReceive(std::unique_ptr<Matched> m, void *b, int n, const Datatype &t)
        : message(std::move(m)), buf(b), count(n), type(t)
    {
    }
    ~MatchedReceive() override
    {
        if (message && message->req != WEFT_REQUEST_NULL)
            weft_request_free(&message->req);
    }
    bool progress(MPI_Status *status) override
    {
        int done = 0;
        weft_msg_status_t ws{};
        const int rc = weft_test(&message->req, &done, &ws);
        if (!done && rc == WEFT_SUCCESS)
            return false;
        if (!done)
            ws.error = rc;
        MPI_Status st;
        status->MPI_ERROR = deliver(*message, ws, buf, count, type, &st);
        const int err = status->MPI_ERROR;
        *status = st;
        status->MPI_ERROR = err;
        return true;
    }
};

// Checks a message handle and the receive arguments; takes the message
// (setting *h to MPI_MESSAGE_NULL) into *out, or says it came from
// MPI_PROC_NULL (*out stays null).
int take_message(const char *fn, MPI_Message *h, void *buf, int count, MPI_Datatype th, const Datatype **t,
                 std::unique_ptr<Matched> *out)
{
    MPI_NEED_INIT(fn);
    if (!h)
        return raise(nullptr, MPI_ERR_ARG, fn, "message is NULL");
    if (*h == MPI_MESSAGE_NO_PROC) {
        *h = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    Matched *m = g_messages.get(*h);
    if (!m)
        return raise(nullptr, MPI_ERR_REQUEST, fn,
                     *h == MPI_MESSAGE_NULL
                         ? std::string("the message is MPI_MESSAGE_NULL (it was received already?)")
                         : "message " + std::to_string(*h) + " is not one MPI_Mprobe or MPI_Improbe returned");
    Comm *c = comm(m->comm);
    *t = datatype(th);
    // Rank and tag were the probe's: check the rest as a receive from
    // MPI_ANY_SOURCE would be.
    if (int rc = check_p2p(fn, m->comm, c, buf, count, *t, th, MPI_ANY_SOURCE, MPI_ANY_TAG, true))
        return rc;
    auto taken = std::make_unique<Matched>(std::move(*m));
    g_messages.remove(*h);
    *h = MPI_MESSAGE_NULL;
    *out = std::move(taken);
    return MPI_SUCCESS;
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Improbe)
int PMPI_Improbe(int source, int tag, MPI_Comm h, int *flag, MPI_Message *message, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    if (!message)
        return raise(comm(h), MPI_ERR_ARG, "MPI_Improbe", "message is NULL");
    weft_msg_status_t ws{};
    if (int rc = probe_once("MPI_Improbe", source, tag, h, flag, &ws))
        return rc;
    if (*flag && source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!*flag)
        return MPI_SUCCESS;
    Comm *c = comm(h);
    auto m = std::make_unique<Matched>();
    m->bytes.resize(ws.count);
    m->comm = h;
    if (int rc = weft_irecv_ctx(m->bytes.data(), ws.count, ws.source, ws.tag, c->context, &m->req)) {
        *flag = 0;
        return raise(c, fail_class(rc), "MPI_Improbe", "receiving the probed message: " + weft_why(rc));
    }
    *message = g_messages.add(std::move(m));
    if (status)
        to_status(ws, *c, status);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Mprobe)
int PMPI_Mprobe(int source, int tag, MPI_Comm h, MPI_Message *message, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    int flag = 0;
    for (;;) {
        if (int rc = PMPI_Improbe(source, tag, h, &flag, message, status))
            return rc;
        if (flag)
            return MPI_SUCCESS;
        weft_progress();
    }
}

WEFT_MPI_WEAK(Mrecv)
int PMPI_Mrecv(void *buf, int count, MPI_Datatype th, MPI_Message *h, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    const Datatype *t = nullptr;
    std::unique_ptr<Matched> m;
    if (int rc = take_message("MPI_Mrecv", h, buf, count, th, &t, &m))
        return rc;
    if (!m) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    weft_msg_status_t ws{};
    if (int rc = wait_one(&m->req, &ws); rc != WEFT_SUCCESS && ws.error == WEFT_SUCCESS)
        ws.error = rc;
    const int cls = deliver(*m, ws, buf, count, *t, status);
    if (cls == MPI_SUCCESS)
        return MPI_SUCCESS;
    const std::string why = cls == MPI_ERR_TRUNCATE ? "the message (" + std::to_string(ws.count) +
                                                          " bytes) is longer than the receive buffer (" +
                                                          std::to_string(t->size * static_cast<size_t>(count)) +
                                                          " bytes)"
                                                    : weft_why(ws.error);
    return raise(comm(m->comm), cls, "MPI_Mrecv", why);
}

WEFT_MPI_WEAK(Imrecv)
int PMPI_Imrecv(void *buf, int count, MPI_Datatype th, MPI_Message *h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    if (!req)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Imrecv", "request is NULL");
    const Datatype *t = nullptr;
    std::unique_ptr<Matched> m;
    if (int rc = take_message("MPI_Imrecv", h, buf, count, th, &t, &m))
        return rc;
    if (!m) {   // from MPI_PROC_NULL: complete at once
        Request *r;
        *req = new_request(&r);
        r->kind = Request::Kind::Done;
        r->comm = MPI_COMM_WORLD;
        empty_status(&r->done_status);
        return MPI_SUCCESS;
    }
    const MPI_Comm c = m->comm;
    *req = start_operation(std::make_unique<MatchedReceive>(std::move(m), buf, count, *t), c);
    return MPI_SUCCESS;
}

} // extern "C"
