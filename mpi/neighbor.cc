// SPDX-License-Identifier: BSD-3-Clause
// The neighbourhood collectives (MPI-3.1 7.6): every process sends to its
// out-neighbours and receives from its in-neighbours on the topology of
// the communicator. Each call is one Operation: its receives and sends are
// posted at once on the communicator's collective context, and progress()
// completes it when all of them are done; the blocking forms start one and
// wait for it.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi/topo.hpp"

namespace weft::mpi {

namespace {

class NeighbourExchange final : public Operation {
public:
    NeighbourExchange(size_t nrecv, size_t nsend)
    {
        recvs_.reserve(nrecv);
        sends_.reserve(nsend);
    }

    int post_recv(const Comm &c, int from, int tag, void *buf, int count, const Datatype &t)
    {
        if (from == MPI_PROC_NULL)
            return WEFT_SUCCESS;
        Recv &r = recvs_.emplace_back();
        r.buf = buf;
        r.count = count;
        r.type = t;
        wire_for_recv(buf, count, t, &r.wire);
        const int rc = coll_irecv(c, r.wire.ptr, r.wire.bytes, from, tag, &r.req);
        if (rc != WEFT_SUCCESS)
            r.req = WEFT_REQUEST_NULL;
        return rc;
    }

    int post_send(const Comm &c, int to, int tag, const void *buf, int count, const Datatype &t)
    {
        if (to == MPI_PROC_NULL)
            return WEFT_SUCCESS;
        Send &s = sends_.emplace_back();
        wire_for_send(buf, count, t, &s.wire);
        const int rc = coll_isend(c, s.wire.ptr, s.wire.bytes, to, tag, &s.req);
        if (rc != WEFT_SUCCESS)
            s.req = WEFT_REQUEST_NULL;
        return rc;
    }

    bool progress(MPI_Status *status) override
    {
        for (Recv &r : recvs_)
            if (!test(&r.req, &r.received))
                return false;
        for (Send &s : sends_) {
            size_t ignored = 0;
            if (!test(&s.req, &ignored))
                return false;
        }
        for (Recv &r : recvs_)
            if (r.wire.packed)
                wire_finish_recv(r.wire, r.received, r.buf, r.count, r.type);
        empty_status(status);
        status->MPI_SOURCE = MPI_ANY_SOURCE;
        status->MPI_TAG = MPI_ANY_TAG;
        status->MPI_ERROR = error_;
        return true;
    }

    void fail(int cls)
    {
        if (error_ == MPI_SUCCESS)
            error_ = cls;
    }

private:
    struct Recv {
        Wire wire;
        void *buf = nullptr;
        int count = 0;
        Datatype type;                   // a copy: the caller may free its own meanwhile
        weft_request_t req = WEFT_REQUEST_NULL;
        size_t received = 0;
    };
    struct Send {
        Wire wire;
        weft_request_t req = WEFT_REQUEST_NULL;
    };

    // True when *q is done (null: done before); a failure is kept as the
    // operation's class.
    bool test(weft_request_t *q, size_t *received)
    {
        if (*q == WEFT_REQUEST_NULL)
            return true;
        int done = 0;
        weft_msg_status_t ws{};
        const int rc = weft_test(q, &done, &ws);
        if (rc != WEFT_SUCCESS && !done)
            ws.error = rc, done = 1;
        if (!done)
            return false;
        *q = WEFT_REQUEST_NULL;
        *received = ws.count;
        if (ws.error != WEFT_SUCCESS && error_ == MPI_SUCCESS)
            error_ = fail_class(ws.error);
        return true;
    }

    std::vector<Recv> recvs_;
    std::vector<Send> sends_;
    int error_ = MPI_SUCCESS;
};

// One call's arguments, checked; its blocks are the i-th send and receive.
struct Call {
    // request: the nonblocking forms' (must not be null); blocking: null.
    Call(const char *name, MPI_Comm handle, MPI_Request *req, bool is_nonblocking)
        : fn(name), h(handle), request(req), nonblocking(is_nonblocking)
    {
    }
    const char *fn;
    MPI_Comm h;
    MPI_Request *request;
    bool nonblocking;
    Comm *c = nullptr;
    Neighbours n;
};

int neighbour_error(Comm *c, int cls, const char *fn, const std::string &why) { return raise(c, cls, fn, why); }

int begin(Call &call)
{
    MPI_NEED_INIT(call.fn);
    call.c = comm(call.h);
    if (call.nonblocking && !call.request)
        return neighbour_error(call.c, MPI_ERR_ARG, call.fn, "request is NULL");
    if (!call.c)
        return neighbour_error(nullptr, MPI_ERR_COMM, call.fn,
                               "communicator " + std::to_string(call.h) + " is not valid");
    if (!call.c->topo)
        return neighbour_error(call.c, MPI_ERR_TOPOLOGY, call.fn,
                               "the communicator has no topology (make it with MPI_Cart_create, MPI_Graph_create "
                               "or MPI_Dist_graph_create)");
    call.n = neighbours(*call.c);
    return MPI_SUCCESS;
}

const Datatype *checked_type(Call &call, MPI_Datatype h, int count, const char *what, int *rc)
{
    const Datatype *t = datatype(h);
    if (!t || !t->committed) {
        *rc = neighbour_error(call.c, MPI_ERR_TYPE, call.fn,
                              std::string(what) + " " + std::to_string(h) +
                                  (t ? " is not committed" : " is not a valid datatype"));
        return nullptr;
    }
    if (count < 0) {
        *rc = neighbour_error(call.c, MPI_ERR_COUNT, call.fn,
                              std::string(what) + "'s count " + std::to_string(count) + " is negative");
        return nullptr;
    }
    return t;
}

// Describes block i of one side: its address, count and type.
struct Side {
    const void *buf;
    std::function<int(size_t)> count;
    std::function<std::ptrdiff_t(size_t)> byte_offset;
    std::function<MPI_Datatype(size_t)> type;
};

// Checks both sides, then posts everything; the request (blocking: waited for).
int run(Call &call, const Side &send, const Side &recv)
{
    if ((send.buf == MPI_IN_PLACE) || (recv.buf == MPI_IN_PLACE))
        return neighbour_error(call.c, MPI_ERR_BUFFER, call.fn,
                               "MPI_IN_PLACE is not allowed in a neighbourhood collective");
    std::vector<const Datatype *> rtypes(call.n.in.size()), stypes(call.n.out.size());
    for (size_t i = 0; i < rtypes.size(); ++i) {
        int rc = MPI_SUCCESS;
        if (!(rtypes[i] = checked_type(call, recv.type(i), recv.count(i), "recvtype", &rc)))
            return rc;
    }
    for (size_t i = 0; i < stypes.size(); ++i) {
        int rc = MPI_SUCCESS;
        if (!(stypes[i] = checked_type(call, send.type(i), send.count(i), "sendtype", &rc)))
            return rc;
    }
    // A post that fails ends the posting; the operation then completes
    // with that error once what was posted is done.
    auto op = std::make_unique<NeighbourExchange>(rtypes.size(), stypes.size());
    int wrc = WEFT_SUCCESS;
    for (size_t i = 0; i < rtypes.size() && wrc == WEFT_SUCCESS; ++i) {
        void *at = static_cast<std::byte *>(const_cast<void *>(recv.buf)) + recv.byte_offset(i);
        wrc = op->post_recv(*call.c, call.n.in[i], call.n.in_tag[i], at, recv.count(i), *rtypes[i]);
    }
    for (size_t i = 0; i < stypes.size() && wrc == WEFT_SUCCESS; ++i) {
        const void *at = static_cast<const std::byte *>(send.buf) + send.byte_offset(i);
        wrc = op->post_send(*call.c, call.n.out[i], call.n.out_tag[i], at, send.count(i), *stypes[i]);
    }
    if (wrc != WEFT_SUCCESS) {
        op->fail(fail_class(wrc));
        raise(call.c, fail_class(wrc), call.fn, weft_why(wrc));
    }
    MPI_Request r = start_operation(std::move(op), call.h);
    if (call.request) {
        *call.request = r;
        return MPI_SUCCESS;
    }
    return PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

std::ptrdiff_t extent_of(MPI_Datatype h)
{
    const Datatype *t = datatype(h);
    return t ? t->extent() : 0;
}

// The same count and type for every block, blocks one after another.
Side uniform(const void *buf, int count, MPI_Datatype type, bool each_block_apart)
{
    const std::ptrdiff_t stride = each_block_apart ? extent_of(type) * count : 0;
    return {buf, [count](size_t) { return count; },
            [stride](size_t i) { return stride * static_cast<std::ptrdiff_t>(i); },
            [type](size_t) { return type; }};
}

// Per-block counts and displacements in elements of one type.
Side varying(const void *buf, const int counts[], const int displs[], MPI_Datatype type)
{
    const std::ptrdiff_t ext = extent_of(type);
    return {buf, [counts](size_t i) { return counts[i]; },
            [displs, ext](size_t i) { return ext * displs[i]; }, [type](size_t) { return type; }};
}

int check_arrays(Call &call, std::initializer_list<const void *> arrays, size_t n)
{
    if (n == 0)
        return MPI_SUCCESS;
    for (const void *a : arrays)
        if (!a)
            return neighbour_error(call.c, MPI_ERR_ARG, call.fn, "a counts, displacements or types array is NULL");
    return MPI_SUCCESS;
}

int allgather(const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
              MPI_Datatype rtype, MPI_Comm h, MPI_Request *request, bool nonblocking)
{
    Call call(fn, h, request, nonblocking);
    if (int rc = begin(call))
        return rc;
    return run(call, uniform(sbuf, scount, stype, false), uniform(rbuf, rcount, rtype, true));
}

int allgatherv(const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
               const int displs[], MPI_Datatype rtype, MPI_Comm h, MPI_Request *request, bool nonblocking)
{
    Call call(fn, h, request, nonblocking);
    if (int rc = begin(call))
        return rc;
    if (int rc = check_arrays(call, {rcounts, displs}, call.n.in.size()))
        return rc;
    return run(call, uniform(sbuf, scount, stype, false), varying(rbuf, rcounts, displs, rtype));
}

int alltoall(const char *fn, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
             MPI_Datatype rtype, MPI_Comm h, MPI_Request *request, bool nonblocking)
{
    Call call(fn, h, request, nonblocking);
    if (int rc = begin(call))
        return rc;
    return run(call, uniform(sbuf, scount, stype, true), uniform(rbuf, rcount, rtype, true));
}

int alltoallv(const char *fn, const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
              void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm h,
              MPI_Request *request, bool nonblocking)
{
    Call call(fn, h, request, nonblocking);
    if (int rc = begin(call))
        return rc;
    if (int rc = check_arrays(call, {scounts, sdispls}, call.n.out.size()))
        return rc;
    if (int rc = check_arrays(call, {rcounts, rdispls}, call.n.in.size()))
        return rc;
    return run(call, varying(sbuf, scounts, sdispls, stype), varying(rbuf, rcounts, rdispls, rtype));
}

int alltoallw(const char *fn, const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
              const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
              const MPI_Datatype rtypes[], MPI_Comm h, MPI_Request *request, bool nonblocking)
{
    Call call(fn, h, request, nonblocking);
    if (int rc = begin(call))
        return rc;
    if (int rc = check_arrays(call, {scounts, sdispls, stypes}, call.n.out.size()))
        return rc;
    if (int rc = check_arrays(call, {rcounts, rdispls, rtypes}, call.n.in.size()))
        return rc;
    // Displacements in bytes, a type per block.
    const Side send{sbuf, [scounts](size_t i) { return scounts[i]; },
                    [sdispls](size_t i) { return static_cast<std::ptrdiff_t>(sdispls[i]); },
                    [stypes](size_t i) { return stypes[i]; }};
    const Side recv{rbuf, [rcounts](size_t i) { return rcounts[i]; },
                    [rdispls](size_t i) { return static_cast<std::ptrdiff_t>(rdispls[i]); },
                    [rtypes](size_t i) { return rtypes[i]; }};
    return run(call, send, recv);
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Neighbor_allgather)
int PMPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                            MPI_Datatype rtype, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    return allgather("MPI_Neighbor_allgather", sbuf, scount, stype, rbuf, rcount, rtype, h, nullptr, false);
}

WEFT_MPI_WEAK(Ineighbor_allgather)
int PMPI_Ineighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                             MPI_Datatype rtype, MPI_Comm h, MPI_Request *request)
{
    MPI_THREAD_GUARD;
    return allgather("MPI_Ineighbor_allgather", sbuf, scount, stype, rbuf, rcount, rtype, h, request, true);
}

WEFT_MPI_WEAK(Neighbor_allgatherv)
int PMPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                             const int displs[], MPI_Datatype rtype, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    return allgatherv("MPI_Neighbor_allgatherv", sbuf, scount, stype, rbuf, rcounts, displs, rtype, h, nullptr, false);
}

WEFT_MPI_WEAK(Ineighbor_allgatherv)
int PMPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                              const int displs[], MPI_Datatype rtype, MPI_Comm h, MPI_Request *request)
{
    MPI_THREAD_GUARD;
    return allgatherv("MPI_Ineighbor_allgatherv", sbuf, scount, stype, rbuf, rcounts, displs, rtype, h, request, true);
}

WEFT_MPI_WEAK(Neighbor_alltoall)
int PMPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                           MPI_Datatype rtype, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    return alltoall("MPI_Neighbor_alltoall", sbuf, scount, stype, rbuf, rcount, rtype, h, nullptr, false);
}

WEFT_MPI_WEAK(Ineighbor_alltoall)
int PMPI_Ineighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                            MPI_Datatype rtype, MPI_Comm h, MPI_Request *request)
{
    MPI_THREAD_GUARD;
    return alltoall("MPI_Ineighbor_alltoall", sbuf, scount, stype, rbuf, rcount, rtype, h, request, true);
}

WEFT_MPI_WEAK(Neighbor_alltoallv)
int PMPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                            void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    return alltoallv("MPI_Neighbor_alltoallv", sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, h,
                     nullptr, false);
}

WEFT_MPI_WEAK(Ineighbor_alltoallv)
int PMPI_Ineighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                             void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm h,
                             MPI_Request *request)
{
    MPI_THREAD_GUARD;
    return alltoallv("MPI_Ineighbor_alltoallv", sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, h,
                     request, true);
}

WEFT_MPI_WEAK(Neighbor_alltoallw)
int PMPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype rtypes[], MPI_Comm h)
{
    MPI_THREAD_GUARD;
    return alltoallw("MPI_Neighbor_alltoallw", sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, h,
                     nullptr, false);
}

WEFT_MPI_WEAK(Ineighbor_alltoallw)
int PMPI_Ineighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype rtypes[], MPI_Comm h, MPI_Request *request)
{
    MPI_THREAD_GUARD;
    return alltoallw("MPI_Ineighbor_alltoallw", sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, h,
                     request, true);
}

} // extern "C"
