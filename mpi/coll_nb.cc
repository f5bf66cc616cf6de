// SPDX-License-Identifier: BSD-3-Clause
// The collectives that run on schedules (coll_sched.hpp): MPI-3.1's other
// blocking ones (Reduce_scatter(_block), Scan, Exscan, Alltoallw), every
// nonblocking one (MPI_I*) and MPI-4's persistent ones (MPI_*_init,
// started by persistent.cc's MPI_Start). Each of a collective's three forms builds the
// same schedule: the blocking one runs it to the end, the nonblocking one
// leaves it to the MPI layer's progress (every wait and test), the
// persistent one keeps it for MPI_Start.
#include <string>

#include "mpi/coll_sched.hpp"

using namespace weft::mpi;
using namespace weft::mpi::coll;

namespace {

// The regular nonblocking collectives, whose schedules a communicator keeps
// (ScheduleKey).
enum Keyed : int {
    kIbarrier = 1,
    kIbcast,
    kIreduce,
    kIallreduce,
    kIgather,
    kIscatter,
    kIallgather,
    kIalltoall,
    kIreduceScatterBlock,
    kIscan,
    kIexscan
};

// Nonblocking (persistent false) or persistent: the request to return.
template <class Build>
int begin(const Ctx &cx, MPI_Comm h, MPI_Request *req, bool persistent, Build build)
{
    if (!req)
        return raise(cx.c, MPI_ERR_ARG, cx.fn, "request is NULL");
    auto s = std::make_unique<Schedule>(*cx.c, next_tag(*cx.c));
    if (int rc = build(*s))
        return rc;
    return persistent ? persist_schedule(cx, h, std::move(s), req) : start_schedule(cx, h, std::move(s), req);
}

// Alltoall(v/w)'s blocks: counts, displacements (in elements of one type,
// or in bytes with a type each).
int blocks_of(const Ctx &cx, const char *what, const int counts[], const int displs[], MPI_Datatype type,
              const MPI_Datatype types[], Blocks *out)
{
    const int p = cx.c->size;
    if (!counts || !displs)
        return raise(cx.c, MPI_ERR_ARG, cx.fn, std::string(what) + " counts or displacements are NULL");
    const Datatype *t = types ? nullptr : datatype(type);
    const std::ptrdiff_t extent = t ? t->extent() : 1;
    out->counts.assign(counts, counts + p);
    out->displs.resize(static_cast<size_t>(p));
    out->types.resize(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r) {
        out->displs[r] = static_cast<std::ptrdiff_t>(displs[r]) * extent;
        out->types[r] = types ? types[r] : type;
    }
    return MPI_SUCCESS;
}

int regular_blocks(const Ctx &cx, const char *what, int count, MPI_Datatype type, Blocks *out)
{
    const int p = cx.c->size;
    std::vector<int> counts(static_cast<size_t>(p), count), displs(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r)
        displs[r] = r * count;
    return blocks_of(cx, what, counts.data(), displs.data(), type, nullptr, out);
}

// The arrays of a regular (non-v) gather, scatter or allgather.
struct Regular {
    std::vector<int> counts, displs;
    Regular(int p, int count) : counts(static_cast<size_t>(p), count), displs(static_cast<size_t>(p))
    {
        for (int r = 0; r < p; ++r)
            displs[r] = r * count;
    }
};

int alltoall(const Ctx &cx, Schedule &s, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype)
{
    Blocks out, in;
    if (int rc = regular_blocks(cx, "recv", recvcount, recvtype, &in))
        return rc;
    if (sendbuf != MPI_IN_PLACE)
        if (int rc = regular_blocks(cx, "send", sendcount, sendtype, &out))
            return rc;
    return build_alltoallw(cx, s, sendbuf, out, recvbuf, in);
}

int alltoallv(const Ctx &cx, Schedule &s, const void *sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype)
{
    Blocks out, in;
    if (int rc = blocks_of(cx, "recv", recvcounts, rdispls, recvtype, nullptr, &in))
        return rc;
    if (sendbuf != MPI_IN_PLACE)
        if (int rc = blocks_of(cx, "send", sendcounts, sdispls, sendtype, nullptr, &out))
            return rc;
    return build_alltoallw(cx, s, sendbuf, out, recvbuf, in);
}

int alltoallw(const Ctx &cx, Schedule &s, const void *sendbuf, const int sendcounts[], const int sdispls[],
              const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
              const MPI_Datatype recvtypes[])
{
    if (!recvtypes || (sendbuf != MPI_IN_PLACE && !sendtypes))
        return raise(cx.c, MPI_ERR_ARG, cx.fn, "the array of send or receive datatypes is NULL");
    Blocks out, in;
    if (int rc = blocks_of(cx, "recv", recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, &in))
        return rc;
    if (sendbuf != MPI_IN_PLACE)
        if (int rc = blocks_of(cx, "send", sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, &out))
            return rc;
    return build_alltoallw(cx, s, sendbuf, out, recvbuf, in);
}

int reduce_scatter_block(const Ctx &cx, Schedule &s, const void *sendbuf, void *recvbuf, int recvcount,
                         MPI_Datatype th, MPI_Op op)
{
    if (recvcount < 0)
        return raise(cx.c, MPI_ERR_COUNT, cx.fn, "recvcount " + std::to_string(recvcount) + " is negative");
    const Regular g(cx.c->size, recvcount);
    return build_reduce_scatter(cx, s, sendbuf, recvbuf, g.counts.data(), th, op);
}

} // namespace

extern "C" {

// ---------------------------------------------------------------- blocking

WEFT_MPI_WEAK(Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype th, MPI_Op op,
                        MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Reduce_scatter", h);
    return run_schedule(cx, kTagReduceScatter,
                    [&](Schedule &s) { return build_reduce_scatter(cx, s, sendbuf, recvbuf, recvcounts, th, op); });
}

WEFT_MPI_WEAK(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype th, MPI_Op op,
                              MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Reduce_scatter_block", h);
    return run_schedule(cx, kTagReduceScatter,
                    [&](Schedule &s) { return reduce_scatter_block(cx, s, sendbuf, recvbuf, recvcount, th, op); });
}

WEFT_MPI_WEAK(Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Scan", h);
    return run_schedule(cx, kTagScan,
                    [&](Schedule &s) { return build_scan(cx, s, sendbuf, recvbuf, count, th, op, false); });
}

WEFT_MPI_WEAK(Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Exscan", h);
    return run_schedule(cx, kTagExscan,
                    [&](Schedule &s) { return build_scan(cx, s, sendbuf, recvbuf, count, th, op, true); });
}

WEFT_MPI_WEAK(Alltoallw)
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Alltoallw", h);
    return run_schedule(cx, kTagAlltoallw, [&](Schedule &s) {
        return alltoallw(cx, s, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
    });
}

// ---------------------------------------------------------------- nonblocking and persistent

WEFT_MPI_WEAK(Ibarrier)
int PMPI_Ibarrier(MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Ibarrier", h);
    return start_keyed(cx, h, schedule_key(kIbarrier, {}, MPI_OP_NULL), req,
                       [&](Schedule &s) { return build_barrier(s); });
}

WEFT_MPI_WEAK(Barrier_init)
int PMPI_Barrier_init(MPI_Comm h, MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Barrier_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) { return build_barrier(s); });
}

WEFT_MPI_WEAK(Ibcast)
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype th, int root, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Ibcast", h);
    return start_keyed(cx, h, schedule_key(kIbcast, {th}, MPI_OP_NULL, buffer, count, th, root), req,
                       [&](Schedule &s) { return build_bcast(cx, s, buffer, count, th, root); });
}

WEFT_MPI_WEAK(Bcast_init)
int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype th, int root, MPI_Comm h, MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Bcast_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) { return build_bcast(cx, s, buffer, count, th, root); });
}

WEFT_MPI_WEAK(Ireduce)
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, int root, MPI_Comm h,
                 MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Ireduce", h);
    return start_keyed(
        cx, h, schedule_key(kIreduce, {th}, op, sendbuf, recvbuf, count, th, op, root), req,
        [&](Schedule &s) { return build_reduce(cx, s, sendbuf, recvbuf, count, th, op, root); });
}

WEFT_MPI_WEAK(Reduce_init)
int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, int root, MPI_Comm h,
                     MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Reduce_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_reduce(cx, s, sendbuf, recvbuf, count, th, op, root);
    });
}

WEFT_MPI_WEAK(Iallreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, MPI_Comm h, MPI_Request
                    *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Iallreduce", h);
    return start_keyed(cx, h, schedule_key(kIallreduce, {th}, op, sendbuf, recvbuf, count, th, op), req,
                       [&](Schedule &s) { return build_allreduce(cx, s, sendbuf, recvbuf, count, th, op); });
}

WEFT_MPI_WEAK(Allreduce_init)
int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, MPI_Comm h,
                        MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Allreduce_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_allreduce(cx, s, sendbuf, recvbuf, count, th, op);
    });
}

WEFT_MPI_WEAK(Igather)
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype
                 recvtype, int root, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Igather", h);
    return start_keyed(cx, h,
                       schedule_key(kIgather, {sendtype, recvtype}, MPI_OP_NULL, sendbuf, sendcount, sendtype,
                                    recvbuf, recvcount, recvtype, root),
                       req, [&](Schedule &s) {
                           const Regular g(c->size, recvcount);
                           return build_gatherv(cx, s, sendbuf, sendcount, sendtype, recvbuf, g.counts.data(),
                                                g.displs.data(), recvtype, root);
                       });
}

WEFT_MPI_WEAK(Gather_init)
int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm h, MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Gather_init", h);
    (void)info;   // no hints are understood
    const Regular g(c->size, recvcount);
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_gatherv(cx, s, sendbuf, sendcount, sendtype, recvbuf, g.counts.data(), g.displs.data(), recvtype,
               root);
    });
}

WEFT_MPI_WEAK(Igatherv)
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Igatherv", h);
    return begin(cx, h, req, false, [&](Schedule &s) {
        return build_gatherv(cx, s, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
    });
}

WEFT_MPI_WEAK(Gatherv_init)
int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
                      recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm h, MPI_Info info,
                      MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Gatherv_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_gatherv(cx, s, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
    });
}

WEFT_MPI_WEAK(Iscatter)
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Iscatter", h);
    return start_keyed(cx, h,
                       schedule_key(kIscatter, {sendtype, recvtype}, MPI_OP_NULL, sendbuf, sendcount,
                                    sendtype, recvbuf, recvcount, recvtype, root),
                       req, [&](Schedule &s) {
                           const Regular g(c->size, sendcount);
                           return build_scatterv(cx, s, sendbuf, g.counts.data(), g.displs.data(), sendtype,
                                                 recvbuf, recvcount, recvtype, root);
                       });
}

WEFT_MPI_WEAK(Scatter_init)
int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm h, MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Scatter_init", h);
    (void)info;   // no hints are understood
    const Regular g(c->size, sendcount);
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_scatterv(cx, s, sendbuf, g.counts.data(), g.displs.data(), sendtype, recvbuf, recvcount,
               recvtype, root);
    });
}

WEFT_MPI_WEAK(Iscatterv)
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void
                   *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Iscatterv", h);
    return begin(cx, h, req, false, [&](Schedule &s) {
        return build_scatterv(cx, s, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
    });
}

WEFT_MPI_WEAK(Scatterv_init)
int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void
                       *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm h, MPI_Info info,
                       MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Scatterv_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_scatterv(cx, s, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
    });
}

WEFT_MPI_WEAK(Iallgather)
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Iallgather", h);
    return start_keyed(cx, h,
                       schedule_key(kIallgather, {sendtype, recvtype}, MPI_OP_NULL, sendbuf, sendcount,
                                    sendtype, recvbuf, recvcount, recvtype),
                       req, [&](Schedule &s) {
                           const Regular g(c->size, recvcount);
                           return build_allgatherv(cx, s, sendbuf, sendcount, sendtype, recvbuf,
                                                   g.counts.data(), g.displs.data(), recvtype);
                       });
}

WEFT_MPI_WEAK(Allgather_init)
int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm h, MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Allgather_init", h);
    (void)info;   // no hints are understood
    const Regular g(c->size, recvcount);
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_allgatherv(cx, s, sendbuf, sendcount, sendtype, recvbuf, g.counts.data(), g.displs.data(),
               recvtype);
    });
}

WEFT_MPI_WEAK(Iallgatherv)
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Iallgatherv", h);
    return begin(cx, h, req, false, [&](Schedule &s) {
        return build_allgatherv(cx, s, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    });
}

WEFT_MPI_WEAK(Allgatherv_init)
int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
                         recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm h, MPI_Info info,
                         MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Allgatherv_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_allgatherv(cx, s, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    });
}

WEFT_MPI_WEAK(Ialltoall)
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Ialltoall", h);
    return start_keyed(cx, h,
                       schedule_key(kIalltoall, {sendtype, recvtype}, MPI_OP_NULL, sendbuf, sendcount,
                                    sendtype, recvbuf, recvcount, recvtype),
                       req, [&](Schedule &s) {
                           return alltoall(cx, s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
                       });
}

WEFT_MPI_WEAK(Alltoall_init)
int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm h, MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Alltoall_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return alltoall(cx, s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    });
}

WEFT_MPI_WEAK(Ialltoallv)
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void
                    *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm h,
                    MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Ialltoallv", h);
    return begin(cx, h, req, false, [&](Schedule &s) {
        return alltoallv(cx, s, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
    });
}

WEFT_MPI_WEAK(Alltoallv_init)
int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void
                        *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm h,
                        MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Alltoallv_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return alltoallv(cx, s, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
    });
}

WEFT_MPI_WEAK(Ialltoallw)
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Ialltoallw", h);
    return begin(cx, h, req, false, [&](Schedule &s) {
        return alltoallw(cx, s, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
    });
}

WEFT_MPI_WEAK(Alltoallw_init)
int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype
                        sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype
                        recvtypes[], MPI_Comm h, MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Alltoallw_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return alltoallw(cx, s, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
    });
}

WEFT_MPI_WEAK(Ireduce_scatter)
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype th, MPI_Op op,
                         MPI_Comm h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Ireduce_scatter", h);
    return begin(cx, h, req, false, [&](Schedule &s) {
        return build_reduce_scatter(cx, s, sendbuf, recvbuf, recvcounts, th, op);
    });
}

WEFT_MPI_WEAK(Reduce_scatter_init)
int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype th, MPI_Op op,
                             MPI_Comm h, MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Reduce_scatter_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_reduce_scatter(cx, s, sendbuf, recvbuf, recvcounts, th, op);
    });
}

WEFT_MPI_WEAK(Ireduce_scatter_block)
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype th, MPI_Op op, MPI_Comm
                               h, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Ireduce_scatter_block", h);
    return start_keyed(
        cx, h, schedule_key(kIreduceScatterBlock, {th}, op, sendbuf, recvbuf, recvcount, th, op), req,
        [&](Schedule &s) { return reduce_scatter_block(cx, s, sendbuf, recvbuf, recvcount, th, op); });
}

WEFT_MPI_WEAK(Reduce_scatter_block_init)
int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype th, MPI_Op op,
                                   MPI_Comm h, MPI_Info info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Reduce_scatter_block_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return reduce_scatter_block(cx, s, sendbuf, recvbuf, recvcount, th, op);
    });
}

WEFT_MPI_WEAK(Iscan)
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, MPI_Comm h, MPI_Request
               *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Iscan", h);
    return start_keyed(
        cx, h, schedule_key(kIscan, {th}, op, sendbuf, recvbuf, count, th, op), req,
        [&](Schedule &s) { return build_scan(cx, s, sendbuf, recvbuf, count, th, op, false); });
}

WEFT_MPI_WEAK(Scan_init)
int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, MPI_Comm h, MPI_Info
                   info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Scan_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_scan(cx, s, sendbuf, recvbuf, count, th, op, false);
    });
}

WEFT_MPI_WEAK(Iexscan)
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, MPI_Comm h, MPI_Request
                 *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Iexscan", h);
    return start_keyed(cx, h, schedule_key(kIexscan, {th}, op, sendbuf, recvbuf, count, th, op), req,
                       [&](Schedule &s) { return build_scan(cx, s, sendbuf, recvbuf, count, th, op, true); });
}

WEFT_MPI_WEAK(Exscan_init)
int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, MPI_Comm h, MPI_Info
                     info, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Exscan_init", h);
    (void)info;   // no hints are understood
    return begin(cx, h, req, true, [&](Schedule &s) {
        return build_scan(cx, s, sendbuf, recvbuf, count, th, op, true);
    });
}

} // extern "C"
