// SPDX-License-Identifier: BSD-3-Clause
// Persistent point-to-point requests: MPI_Send_init and its modes,
// MPI_Recv_init, MPI_Start, MPI_Startall. A persistent request keeps its
// handle across rounds: MPI_Start begins a round exactly as the matching
// nonblocking call would (the same checks, fast paths and packing), and
// completion leaves it inactive (request.cc) until the next MPI_Start.
#include <string>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

enum class Mode { Standard, Sync, Ready, Buffered, Receive };

const char *start_name(Mode m)
{
    switch (m) {
    case Mode::Standard: return "MPI_Start (of an MPI_Send_init request)";
    case Mode::Sync: return "MPI_Start (of an MPI_Ssend_init request)";
    case Mode::Ready: return "MPI_Start (of an MPI_Rsend_init request)";
    case Mode::Buffered: return "MPI_Start (of an MPI_Bsend_init request)";
    case Mode::Receive: return "MPI_Start (of an MPI_Recv_init request)";
    }
    return "MPI_Start";
}

// Moves the round that the nonblocking call started in `from` into the
// persistent request r, and gives the slot of `from` back. The wires are
// swapped, so r's packing buffer from the last round is reused by the pool.
void adopt(Request &r, MPI_Request from)
{
    Request &f = *request(from);
    r.kind = f.kind;
    r.req = f.req;
    r.buf = f.buf;
    r.count = f.count;
    r.unpack_type = std::move(f.unpack_type);
    std::swap(r.wire, f.wire);
    r.done_status = f.done_status;
    f.req = WEFT_REQUEST_NULL;
    free_request(from);
}

struct PointToPoint final : Persistent {
    Mode mode;
    void *buf;
    int count;
    MPI_Datatype type_handle;
    Datatype type;   // a copy: MPI lets the program free the datatype meanwhile
    int peer, tag;
    MPI_Comm comm_handle;

    PointToPoint(Mode m, void *b, int n, MPI_Datatype th, const Datatype &t, int p, int tg, MPI_Comm c)
        : mode(m), buf(b), count(n), type_handle(th), type(t), peer(p), tag(tg), comm_handle(c)
    {
    }

    int start(Request &r) override
    {
        const char *fn = start_name(mode);
        MPI_Request round = MPI_REQUEST_NULL;
        int rc;
        switch (mode) {
        case Mode::Receive:
            rc = start_recv(fn, buf, count, type_handle, peer, tag, comm_handle, &round, &type);
            break;
        case Mode::Buffered:
            rc = bsend(fn, buf, count, type_handle, peer, tag, comm_handle, &round, &type);
            break;
        default:
            rc = start_send(fn, buf, count, type_handle, peer, tag, comm_handle,
                            mode == Mode::Sync ? WEFT_SEND_SYNC : 0u, &round, &type);
            break;
        }
        if (rc != MPI_SUCCESS)
            return rc;
        adopt(r, round);
        return MPI_SUCCESS;
    }
};

// MPI_X_init: the arguments are checked now (as the nonblocking call
// would check them), the request starts inactive.
int init(const char *fn, Mode mode, const void *buf, int count, MPI_Datatype th, int peer, int tag, MPI_Comm h,
         MPI_Request *out)
{
    MPI_NEED_INIT(fn);
    Comm *c = comm(h);
    if (!out)
        return raise(c, MPI_ERR_ARG, fn, "request is NULL");
    const Datatype *t = datatype(th);
    if (int rc = check_p2p(fn, h, c, buf, count, t, th, peer, tag, mode == Mode::Receive))
        return rc;
    *out = make_persistent(
        std::make_unique<PointToPoint>(mode, const_cast<void *>(buf), count, th, *t, peer, tag, h), h);
    return MPI_SUCCESS;
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Send_init)
int PMPI_Send_init(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    return init("MPI_Send_init", Mode::Standard, buf, count, th, dest, tag, h, req);
}

WEFT_MPI_WEAK(Ssend_init)
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    return init("MPI_Ssend_init", Mode::Sync, buf, count, th, dest, tag, h, req);
}

WEFT_MPI_WEAK(Rsend_init)
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    return init("MPI_Rsend_init", Mode::Ready, buf, count, th, dest, tag, h, req);
}

WEFT_MPI_WEAK(Bsend_init)
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    return init("MPI_Bsend_init", Mode::Buffered, buf, count, th, dest, tag, h, req);
}

WEFT_MPI_WEAK(Recv_init)
int PMPI_Recv_init(void *buf, int count, MPI_Datatype th, int source, int tag, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    return init("MPI_Recv_init", Mode::Receive, buf, count, th, source, tag, h, req);
}

WEFT_MPI_WEAK(Start)
int PMPI_Start(MPI_Request *h)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Start");
    if (!h)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Start", "request is NULL");
    Request *r = request(*h);
    if (!r)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Start",
                     "request " + std::to_string(*h) + " is not valid (freed already?)");
    if (!r->persistent)
        return raise(comm(r->comm), MPI_ERR_REQUEST, "MPI_Start",
                     "request " + std::to_string(*h) +
                         " is not persistent (MPI_Start takes requests made by MPI_Send_init, MPI_Recv_init and "
                         "the other _init calls)");
    if (r->active)
        return raise(comm(r->comm), MPI_ERR_REQUEST, "MPI_Start",
                     "request " + std::to_string(*h) +
                         " is still active: complete its last round (MPI_Wait, MPI_Test) before starting it again");
    if (int rc = r->recipe->start(*r))
        return rc;   // it stays inactive
    r->active = true;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Startall)
int PMPI_Startall(int n, MPI_Request reqs[])
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Startall");
    if (n < 0 || (n > 0 && !reqs))
        return raise(nullptr, MPI_ERR_ARG, "MPI_Startall", "count is negative or the request array is NULL");
    for (int i = 0; i < n; ++i)
        if (int rc = PMPI_Start(&reqs[i]))
            return rc;
    return MPI_SUCCESS;
}

} // extern "C"
