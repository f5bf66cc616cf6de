// SPDX-License-Identifier: BSD-3-Clause
// Collectives on a communicator's collective context (so they never match
// its point-to-point traffic), built on weft's tagged messages:
//  - Barrier: dissemination (log p rounds of empty messages), or at few
//    ranks linear (all to rank 0, which releases them);
//  - Bcast: binomial tree, or at few ranks and small sizes linear (the
//    root sends to every rank);
//  - Reduce: binomial tree, or reduce-scatter + gather for large vectors;
//  - Allreduce: recursive doubling, or Rabenseifner for large vectors
//    (non-powers of two fold their extra ranks in first);
//  - Gather(v) / Scatter(v): the root posts every receive (send) at once;
//  - Allgather(v): Bruck or recursive doubling (small), a ring (large or
//    not one dense array), p-1 steps of one block each;
//  - Alltoall: Bruck for small blocks, the scattered exchange (all pairs
//    posted at once) for medium ones, else (and Alltoallv) the pairwise
//    exchange, p-1 steps.
// coll_choose.cc picks the algorithm (coll_algos.hpp has them).
// Data moves as bytes: contiguous datatypes straight from the user's
// buffers, others packed. Reductions work on arrays of the datatype's
// basic element in memory layout (pairs keep their padding).
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <utility>

#include "mpi/coll.hpp"
#include "mpi/coll_algos.hpp"
#include "mpi/coll_choose.hpp"
#include "mpi/coll_inter.hpp"
#include "mpi/coll_sched.hpp"
#include "mpi/internal.hpp"

namespace weft::mpi {

using namespace coll;

int coll_isend(const Comm &c, const void *buf, size_t bytes, int to, int tag, weft_request_t *r, uint32_t flags)
{
    return weft_isend_ctx(buf, bytes, c.to_world(to), tag, c.coll_context(), flags, r);
}

int coll_irecv(const Comm &c, void *buf, size_t bytes, int from, int tag, weft_request_t *r)
{
    // A reduction combines what it receives at once: the receiver's core
    // copies it all (WEFT_RECV_READ_AT_ONCE), so it is in this core's cache.
    const bool combined_at_once = tag == kTagReduce || tag == kTagAllreduce;
    return weft_irecv_flags(buf, bytes, c.to_world(from), tag, c.coll_context(),
                            combined_at_once ? WEFT_RECV_READ_AT_ONCE : 0u, r);
}

int coll_send(const Comm &c, const void *buf, size_t bytes, int to, int tag)
{
    if (g_service) {   // windows are open: wait in a way that keeps serving them
        weft_request_t r;
        if (int rc = coll_isend(c, buf, bytes, to, tag, &r))
            return rc;
        weft_msg_status_t st{};
        return wait_one(&r, &st);
    }
    return weft_send_ctx(buf, bytes, c.to_world(to), tag, c.coll_context());
}

int coll_recv(const Comm &c, void *buf, size_t bytes, int from, int tag)
{
    weft_request_t r;
    if (int rc = coll_irecv(c, buf, bytes, from, tag, &r))
        return rc;
    weft_msg_status_t st{};
    return wait_one(&r, &st);
}

int coll_sendrecv(const Comm &c, const void *sbuf, size_t sbytes, int to, void *rbuf, size_t rbytes, int from,
                  int tag, uint32_t send_flags)
{
    weft_request_t r;
    if (int rc = coll_irecv(c, rbuf, rbytes, from, tag, &r))
        return rc;
    weft_msg_status_t st{};
    if (send_flags) {
        weft_request_t s;
        if (int rc = coll_isend(c, sbuf, sbytes, to, tag, &s, send_flags | WEFT_SEND_DONE_NULL)) {
            weft_request_free(&r);
            return rc;
        }
        const int src = wait_one(&s, &st);
        const int rrc = wait_one(&r, &st);
        return src != WEFT_SUCCESS ? src : rrc;
    }
    if (int rc = coll_send(c, sbuf, sbytes, to, tag)) {
        weft_request_free(&r);
        return rc;
    }
    return wait_one(&r, &st);
}

int coll_waitall(std::vector<weft_request_t> &reqs)
{
    int first = WEFT_SUCCESS;
    for (weft_request_t &r : reqs) {
        weft_msg_status_t st{};
        int rc = wait_one(&r, &st);
        if (rc != WEFT_SUCCESS && first == WEFT_SUCCESS)
            first = rc;
    }
    reqs.clear();
    return first;
}

namespace {

// The root's half of a linear (flat) collective: buf to every other rank,
// in windows of 32 posted sends.
int send_to_all(const Comm &c, const void *buf, size_t bytes, int root, int tag)
{
    constexpr int kWindow = 32;
    weft_request_t reqs[kWindow];
    int first_rc = WEFT_SUCCESS;
    for (int next = 1; next < c.size && first_rc == WEFT_SUCCESS;) {
        int n = 0;
        for (; n < kWindow && next < c.size; ++n, ++next)
            if (int rc = coll_isend(c, buf, bytes, (root + next) % c.size, tag, &reqs[n], WEFT_SEND_DONE_NULL)) {
                first_rc = rc;
                break;
            }
        // Every posted send is waited for, also after a failure: they read buf.
        for (int i = 0; i < n; ++i) {
            weft_msg_status_t st{};
            if (int rc = wait_one(&reqs[i], &st); rc != WEFT_SUCCESS && first_rc == WEFT_SUCCESS)
                first_rc = rc;
        }
    }
    return first_rc;
}

// Every rank tells rank 0 it has arrived; rank 0, once all have, releases
// them. Messages between two ranks do not overtake each other, so one tag
// serves both halves and consecutive barriers.
int barrier_linear(const Comm &c)
{
    if (c.rank != 0) {
        if (int rc = coll_send(c, nullptr, 0, 0, kTagBarrier))
            return rc;
        return coll_recv(c, nullptr, 0, 0, kTagBarrier);
    }
    for (int r = 1; r < c.size; ++r)
        if (int rc = coll_recv(c, nullptr, 0, r, kTagBarrier))
            return rc;
    return send_to_all(c, nullptr, 0, 0, kTagBarrier);
}

} // namespace

int barrier(const Comm &c)
{
    const Choice how = choose_barrier(c.size);
    report_choice("MPI_Barrier", c.rank, c.size, 0, how);
    if (how.algorithm == Algorithm::Linear)
        return barrier_linear(c);
    for (int dist = 1; dist < c.size; dist <<= 1) {
        const int to = (c.rank + dist) % c.size;
        const int from = (c.rank - dist + c.size) % c.size;
        if (int rc = coll_sendrecv(c, nullptr, 0, to, nullptr, 0, from, kTagBarrier))
            return rc;
    }
    return WEFT_SUCCESS;
}

namespace {

// A reduction's arrays on this rank (coll_algos.hpp): the user's buffers
// themselves when dense, else packed copies in the communicator's
// scratch. result_buf: where this rank's result goes (null: nowhere, a
// reduce's non-root).
struct Dense {
    const std::byte *input;
    std::byte *result;
    std::byte *work;
};
Dense dense_arrays(Comm &c, const Datatype &t, int count, const void *input, void *result_buf, size_t bytes,
                   bool dense)
{
    const bool own_result = !dense || !result_buf;
    std::byte *scratch = c.scratch.get(bytes * (1 + (own_result ? 1 : 0) + (dense ? 0 : 1)));
    Dense d{nullptr, nullptr, scratch};
    std::byte *next = scratch + bytes;
    d.result = own_result ? std::exchange(next, next + bytes) : static_cast<std::byte *>(result_buf) + t.data_offset;
    if (dense) {
        d.input = static_cast<const std::byte *>(input) + t.data_offset;
    } else {
        load(input, count, t, next, bytes);
        d.input = next;
    }
    return d;
}

// Allgather(v) when the blocks lie back to back in one dense array: Bruck
// or recursive doubling where coll_choose says so; kNotDense when the
// layout is not one array or the ring was chosen (the caller's).
constexpr int kNotDense = 1;
// own: this rank's block in the caller's send buffer, not yet in recvbuf
// (null: recvbuf has it); copied there on every path but kNotDense.
int allgather_dense(Comm &c, void *recvbuf, const int counts[], const int displs[], const Datatype &t,
                    const std::byte *own)
{
    const int p = c.size;
    if (!t.dense || p == 1)
        return kNotDense;
    std::vector<size_t> &off = c.coll_offsets;
    off.assign(static_cast<size_t>(p) + 1, 0);
    for (int r = 0; r < p; ++r) {
        if (r + 1 < p && displs[r + 1] != displs[r] + counts[r])
            return kNotDense;
        off[r + 1] = off[r] + t.size * static_cast<size_t>(counts[r]);
    }
    if (off[p] == 0)
        return WEFT_SUCCESS;
    const Choice how = choose_allgather(p, off[p]);
    report_choice("MPI_Allgather", c.rank, p, off[p], how);
    std::byte *base = at(recvbuf, displs[0], t) + t.data_offset;
    if (how.algorithm == Algorithm::RecursiveDoubling)
        return allgather_recursive_doubling(c, base, off, own);
    if (how.algorithm != Algorithm::Bruck)
        return kNotDense;   // the ring, the caller's
    if (own)
        std::memcpy(base + off[c.rank], own, off[c.rank + 1] - off[c.rank]);
    return allgather_bruck(c, base, off, c.scratch.get(off[p]));
}

// Alltoall where both sides are one dense array of equal blocks, by the
// algorithm coll_choose picks; kNotDense otherwise (MPI_Alltoallv's
// pairwise exchange, which also checks the arguments).
int alltoall_small(const Ctx &cx, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype)
{
    Comm &c = *cx.c;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const Datatype *rt = datatype(recvtype);
    const Datatype *st = in_place ? rt : datatype(sendtype);
    if (!rt || !st || !rt->committed || !st->committed || !rt->dense || !st->dense || recvcount <= 0 ||
        (!in_place && sendcount < 0) || c.size == 1)
        return kNotDense;
    const size_t block = rt->size * static_cast<size_t>(recvcount);
    if (!in_place && st->size * static_cast<size_t>(sendcount) != block)
        return kNotDense;
    const Choice how = choose_alltoall(c.size, block);
    report_choice("MPI_Alltoall", c.rank, c.size, block, how);
    std::byte *recv = at(recvbuf, 0, *rt) + rt->data_offset;
    const std::byte *send = in_place ? recv : at(sendbuf, 0, *st) + st->data_offset;
    if (in_place && how.algorithm != Algorithm::Bruck) {   // what goes out is copied before any block lands
        const size_t all = block * static_cast<size_t>(c.size);
        std::byte *copy = c.scratch.get(all);
        std::memcpy(copy, recv, all);
        send = copy;
    }
    int wrc = WEFT_SUCCESS;
    switch (how.algorithm) {
    case Algorithm::Bruck:
        wrc = alltoall_bruck(c, send, recv, block, c.scratch.get(alltoall_bruck_work(c.size, block)));
        break;
    case Algorithm::Scattered: wrc = alltoall_scattered(c, send, recv, block); break;
    default: wrc = alltoall_pairwise(c, send, recv, block); break;
    }
    if (wrc)
        return fail(cx, wrc);
    return MPI_SUCCESS;
}

// Binomial tree. Below kBcastPostTogetherMax a rank's sends to its
// children are posted together, then waited for: past the eager limit each
// is a rendezvous the child completes by reading this rank's buffer, and
// one blocking send after the other made each child wait for the one
// before to finish reading (16 ranks on a 16-core host, 32 KiB: 35.7 us
// one after the other, 29.6 posted together; MPICH 26-32). Larger vectors
// go one child at a time, the largest subtree first: read at once, the
// children shared the sender's memory bandwidth and the first subtree
// started later (1 MiB: 1.35x MPICH's time posted together, 0.68x one
// at a time, in two runs on that host).
//
// The sends are forwarded ones (WEFT_SEND_FORWARD): each child waits for
// the data and passes it on, so they go eagerly where the transport can,
// up to its own eager limit (64 KiB through btl/scif's 2 MiB rings), not
// by a single copy's handshake. 16 ranks on that host (btl/scif's single
// copy from 8 KiB), 16, 32, 64 KiB: 18.0, 32.8, 38.4 us before, 12.0-14.3,
// 16.7-19.6, 27.5-36.0 forwarded in four runs (MPICH 15.5-17.3,
// 24.5-26.6, 39.1-42.5). A send to a leaf, which passes nothing on, is a
// plain one: forwarded too, 2 ranks on a VM where btl/scif single-copies
// from 8 KiB took 2.02, 3.07, 4.72 us at 16, 32, 64 KiB, plain 1.69, 2.29,
// 3.19 (Open MPI vader 1.33, 2.15, 3.46; 4 alternated jobs). Half the
// sends of a tree go to leaves; at 16 ranks on the 16-core host the plain
// ones are not measured yet (tests/mpi/bcast_protocol.sh checks which
// protocol each takes).
constexpr size_t kBcastPostTogetherMax = 64 * 1024;
int bcast_binomial(const Comm &c, void *buf, size_t bytes, int root, int tag)
{
    const int vr = (c.rank - root + c.size) % c.size;
    int mask = 1;
    for (; mask < c.size; mask <<= 1)
        if (vr & mask) {
            if (int rc = coll_recv(c, buf, bytes, (vr - mask + root) % c.size, tag))
                return rc;
            break;
        }
    // Large vectors: each send waited for as soon as it is posted.
    const bool one_at_a_time = bytes >= kBcastPostTogetherMax;
    weft_request_t reqs[32];   // one per bit of the rank: children never number more
    int n = 0, waited = 0, first_rc = WEFT_SUCCESS;
    for (mask >>= 1; mask > 0 && first_rc == WEFT_SUCCESS; mask >>= 1)
        if (vr + mask < c.size) {
            // A child with children of its own (vr + mask + m for some m
            // below mask) passes the data on; a leaf does not.
            const bool child_forwards = mask > 1 && vr + mask + 1 < c.size;
            if (int rc = coll_isend(c, buf, bytes, (vr + mask + root) % c.size, tag, &reqs[n],
                                    WEFT_SEND_DONE_NULL | (child_forwards ? WEFT_SEND_FORWARD : 0u))) {
                first_rc = rc;
                break;
            }
            ++n;
            if (one_at_a_time) {
                weft_msg_status_t st{};
                first_rc = wait_one(&reqs[waited++], &st);
            }
        }
    // Every posted send is waited for, also after a failure: they read buf.
    for (int i = waited; i < n; ++i) {
        weft_msg_status_t st{};
        if (int rc = wait_one(&reqs[i], &st); rc != WEFT_SUCCESS && first_rc == WEFT_SUCCESS)
            first_rc = rc;
    }
    return first_rc;
}

int bcast_bytes(const Comm &c, void *buf, size_t bytes, int root, int tag)
{
    const Choice how = choose_bcast(c.size, bytes);
    report_choice("MPI_Bcast", c.rank, c.size, bytes, how);
    if (how.algorithm == Algorithm::Linear)
        return c.rank == root ? send_to_all(c, buf, bytes, root, tag) : coll_recv(c, buf, bytes, root, tag);
    return bcast_binomial(c, buf, bytes, root, tag);
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Barrier)
int PMPI_Barrier(MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_OR_INTER("MPI_Barrier", h, inter::barrier(cx));
    if (int rc = barrier(*c))
        return fail(cx, rc);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Bcast)
int PMPI_Bcast(void *buffer, int count, MPI_Datatype th, int root, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_OR_INTER("MPI_Bcast", h, inter::bcast(cx, buffer, count, th, root));
    int rc = 0;
    const Datatype *t = check_type(cx, th, count, &rc);
    if (!t)
        return rc;
    if ((rc = check_root(cx, root)))
        return rc;
    if (c->size == 1 || count == 0 || t->size == 0)
        return MPI_SUCCESS;
    Xfer x;
    if (c->rank == root)
        x.for_send(buffer, count, *t);
    else
        x.for_recv(buffer, count, *t);
    if (int wrc = bcast_bytes(*c, x.w.ptr, x.w.bytes, root, kTagBcast))
        return fail(cx, wrc);
    x.done();
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Reduce_local)
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype th, MPI_Op op)
{
    MPI_THREAD_GUARD;
    COLL_COMM("MPI_Reduce_local", MPI_COMM_SELF);
    int rc = 0;
    const Datatype *t = check_type(cx, th, count, &rc);
    if (!t)
        return rc;
    if (const UserOp *u = user_op(op)) {   // the user's function, on the user's buffers
        u->fn(const_cast<void *>(inbuf), inoutbuf, &count, &th);
        return MPI_SUCCESS;
    }
    size_t n, elem;
    if ((rc = reduction_shape(cx, *t, count, op, &n, &elem)))
        return rc;
    if (dense_as_is(*t, count)) {
        reduce_apply(op, t->basic, static_cast<const std::byte *>(inbuf) + t->data_offset,
                     static_cast<std::byte *>(inoutbuf) + t->data_offset, n);
        return MPI_SUCCESS;
    }
    std::vector<std::byte> in(n * elem), io(n * elem);
    load(inbuf, count, *t, in.data(), in.size());
    load(inoutbuf, count, *t, io.data(), io.size());
    reduce_apply(op, t->basic, in.data(), io.data(), n);
    store(io.data(), io.size(), inoutbuf, count, *t);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, int root, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_OR_INTER("MPI_Reduce", h, inter::reduce(cx, sendbuf, recvbuf, count, th, op, root));
    if (user_op(op))   // a schedule applies user-defined operations in rank order (coll_build.cc)
        return run_schedule(cx, kTagUserReduce, [&](Schedule &s) {
            return build_reduce(cx, s, sendbuf, recvbuf, count, th, op, root);
        });
    int rc = 0;
    const Datatype *t = check_type(cx, th, count, &rc);
    if (!t)
        return rc;
    if ((rc = check_root(cx, root)))
        return rc;
    size_t n, elem;
    if ((rc = reduction_shape(cx, *t, count, op, &n, &elem)))
        return rc;
    if (count == 0)
        return MPI_SUCCESS;
    // The dense arrays: the root's result is its receive buffer itself
    // when that is dense; every rank reads its input where it is.
    const bool is_root = c->rank == root;
    const void *input = sendbuf == MPI_IN_PLACE && is_root ? recvbuf : sendbuf;
    const bool dense = dense_as_is(*t, count);
    Dense d = dense_arrays(*c, *t, count, input, is_root ? recvbuf : nullptr, n * elem, dense);
    const Vec v{op, t->basic, n, elem};
    const Choice how = choose_reduce(c->size, v.bytes(), n, true);
    report_choice("MPI_Reduce", c->rank, c->size, v.bytes(), how);
    const size_t segment = reduce_segment_bytes();
    bool pipelined = false;
    const int wrc = how.algorithm == Algorithm::ReduceScatterGather
                        ? reduce_scatter_gather(*c, v, d.input, d.result, d.work, root)
                    : segment > 0 && v.bytes() > segment
                        ? reduce_binomial_segmented(*c, v, d.input, d.result, d.work, root, segment, &pipelined)
                        : reduce_binomial(*c, v, d.input, d.result, d.work, root, how.far_first);
    if (pipelined)
        report_choice("MPI_Reduce", c->rank, c->size, v.bytes(),
                      {Algorithm::Binomial, "pipelined in segments of mpi_coll_reduce_segment_size"});
    if (wrc)
        return fail(cx, wrc);
    if (is_root && !dense)
        store(d.result, v.bytes(), recvbuf, count, *t);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_OR_INTER("MPI_Allreduce", h, inter::allreduce(cx, sendbuf, recvbuf, count, th, op));
    if (user_op(op))
        return run_schedule(cx, kTagUserAllreduce,
                            [&](Schedule &s) { return build_allreduce(cx, s, sendbuf, recvbuf, count, th, op); });
    int rc = 0;
    const Datatype *t = check_type(cx, th, count, &rc);
    if (!t)
        return rc;
    size_t n, elem;
    if ((rc = reduction_shape(cx, *t, count, op, &n, &elem)))
        return rc;
    if (count == 0)
        return MPI_SUCCESS;
    const bool dense = dense_as_is(*t, count);
    const void *input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    Dense d = dense_arrays(*c, *t, count, input, recvbuf, n * elem, dense);
    const Vec v{op, t->basic, n, elem};
    const Choice how = choose_allreduce(c->size, v.bytes(), n, true);
    report_choice("MPI_Allreduce", c->rank, c->size, v.bytes(), how);
    const int wrc = how.algorithm == Algorithm::Rabenseifner
                        ? allreduce_rabenseifner(*c, v, d.input, d.result, d.work)
                        : allreduce_recursive_doubling(*c, v, d.input, d.result, d.work);
    if (wrc)
        return fail(cx, wrc);
    if (!dense)
        store(d.result, v.bytes(), recvbuf, count, *t);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_OR_INTER(
        "MPI_Gatherv", h,
        inter::gatherv(cx, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root));
    int rc = 0;
    if ((rc = check_root(cx, root)))
        return rc;
    const bool is_root = c->rank == root;
    const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
    const Datatype *st = nullptr;
    if (!in_place && !(st = check_type(cx, sendtype, sendcount, &rc, "sendtype")))
        return rc;
    if (!is_root) {
        Xfer x;
        x.for_send(sendbuf, sendcount, *st);
        if (int wrc = coll_send(*c, x.w.ptr, x.w.bytes, root, kTagGather))
            return fail(cx, wrc);
        return MPI_SUCCESS;
    }
    const Datatype *rt = check_type(cx, recvtype, 0, &rc, "recvtype");
    if (!rt)
        return rc;
    if ((rc = check_counts(cx, recvcounts, displs, "recv")))
        return rc;
    std::vector<Xfer> xs(static_cast<size_t>(c->size));
    std::vector<weft_request_t> reqs;
    for (int r = 0; r < c->size; ++r) {
        if (r == root)
            continue;
        xs[r].for_recv(at(recvbuf, displs[r], *rt), recvcounts[r], *rt);
        weft_request_t q;
        if (int wrc = coll_irecv(*c, xs[r].w.ptr, xs[r].w.bytes, r, kTagGather, &q))
            return fail(cx, wrc);
        reqs.push_back(q);
    }
    if (!in_place)
        copy_typed(sendbuf, sendcount, *st, at(recvbuf, displs[root], *rt), recvcounts[root], *rt);
    if (int wrc = coll_waitall(reqs))
        return fail(cx, wrc);
    for (Xfer &x : xs)
        x.done();
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_ANY("MPI_Gather", h);   // the v-form takes intercommunicators
    std::vector<int> counts(static_cast<size_t>(c->size), recvcount), displs(static_cast<size_t>(c->size));
    for (int r = 0; r < c->size; ++r)
        displs[r] = r * recvcount;
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, counts.data(), displs.data(), recvtype, root, h);
}

WEFT_MPI_WEAK(Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_OR_INTER(
        "MPI_Scatterv", h,
        inter::scatterv(cx, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root));
    int rc = 0;
    if ((rc = check_root(cx, root)))
        return rc;
    const bool is_root = c->rank == root;
    const bool in_place = is_root && recvbuf == MPI_IN_PLACE;
    const Datatype *rt = nullptr;
    if (!in_place && !(rt = check_type(cx, recvtype, recvcount, &rc, "recvtype")))
        return rc;
    if (!is_root) {
        Xfer x;
        x.for_recv(recvbuf, recvcount, *rt);
        if (int wrc = coll_recv(*c, x.w.ptr, x.w.bytes, root, kTagScatter))
            return fail(cx, wrc);
        x.done();
        return MPI_SUCCESS;
    }
    const Datatype *st = check_type(cx, sendtype, 0, &rc, "sendtype");
    if (!st)
        return rc;
    if ((rc = check_counts(cx, sendcounts, displs, "send")))
        return rc;
    std::vector<Xfer> xs(static_cast<size_t>(c->size));
    std::vector<weft_request_t> reqs;
    for (int r = 0; r < c->size; ++r) {
        if (r == root)
            continue;
        xs[r].for_send(at(sendbuf, displs[r], *st), sendcounts[r], *st);
        weft_request_t q;
        if (int wrc = coll_isend(*c, xs[r].w.ptr, xs[r].w.bytes, r, kTagScatter, &q))
            return fail(cx, wrc);
        reqs.push_back(q);
    }
    if (!in_place)
        copy_typed(at(sendbuf, displs[root], *st), sendcounts[root], *st, recvbuf, recvcount, *rt);
    if (int wrc = coll_waitall(reqs))
        return fail(cx, wrc);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_ANY("MPI_Scatter", h);   // the v-form takes intercommunicators
    std::vector<int> counts(static_cast<size_t>(c->size), sendcount), displs(static_cast<size_t>(c->size));
    for (int r = 0; r < c->size; ++r)
        displs[r] = r * sendcount;
    return PMPI_Scatterv(sendbuf, counts.data(), displs.data(), sendtype, recvbuf, recvcount, recvtype, root, h);
}

WEFT_MPI_WEAK(Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_OR_INTER(
        "MPI_Allgatherv", h,
        inter::allgatherv(cx, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
    int rc = 0;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const Datatype *st = nullptr;
    if (!in_place && !(st = check_type(cx, sendtype, sendcount, &rc, "sendtype")))
        return rc;
    const Datatype *rt = check_type(cx, recvtype, 0, &rc, "recvtype");
    if (!rt)
        return rc;
    if ((rc = check_counts(cx, recvcounts, displs, "recv")))
        return rc;
    const int p = c->size, me = c->rank;
    // This rank's block straight from a contiguous send buffer of the same
    // bytes: the dense algorithms copy it into place themselves (recursive
    // doubling while its first exchange is in flight).
    const std::byte *own = nullptr;
    if (!in_place && st->contiguous(sendcount) && rt->contiguous(recvcounts[me]) &&
        st->size * static_cast<size_t>(sendcount) == rt->size * static_cast<size_t>(recvcounts[me]))
        own = static_cast<const std::byte *>(sendbuf) + st->data_offset;
    else if (!in_place)
        copy_typed(sendbuf, sendcount, *st, at(recvbuf, displs[me], *rt), recvcounts[me], *rt);
    if (int wrc = allgather_dense(*c, recvbuf, recvcounts, displs, *rt, own); wrc != kNotDense)
        return wrc ? fail(cx, wrc) : MPI_SUCCESS;
    if (own)
        copy_typed(sendbuf, sendcount, *st, at(recvbuf, displs[me], *rt), recvcounts[me], *rt);
    // Ring: in step s, pass block (me - s) right and take block (me - s - 1)
    // from the left.
    const int right = (me + 1) % p, left = (me - 1 + p) % p;
    for (int s = 0; s < p - 1; ++s) {
        const int sb = (me - s + p) % p, rb = (me - s - 1 + p) % p;
        Xfer out, in;
        out.for_send(at(recvbuf, displs[sb], *rt), recvcounts[sb], *rt);
        in.for_recv(at(recvbuf, displs[rb], *rt), recvcounts[rb], *rt);
        if (int wrc = coll_sendrecv(*c, out.w.ptr, out.w.bytes, right, in.w.ptr, in.w.bytes, left, kTagAllgather))
            return fail(cx, wrc);
        in.done();
    }
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_ANY("MPI_Allgather", h);   // the v-form takes intercommunicators
    std::vector<int> &counts = c->coll_counts, &displs = c->coll_displs;
    counts.assign(static_cast<size_t>(c->size), recvcount);
    displs.resize(static_cast<size_t>(c->size));
    for (int r = 0; r < c->size; ++r)
        displs[r] = r * recvcount;
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, counts.data(), displs.data(), recvtype, h);
}

WEFT_MPI_WEAK(Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_OR_INTER(
        "MPI_Alltoallv", h,
        inter::alltoallv(cx, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype));
    int rc = 0;
    const Datatype *rt = check_type(cx, recvtype, 0, &rc, "recvtype");
    if (!rt)
        return rc;
    if ((rc = check_counts(cx, recvcounts, rdispls, "recv")))
        return rc;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const Datatype *st = rt;
    // In place: what goes out is recvbuf's blocks, copied before any arrives.
    std::vector<std::byte> saved;
    std::vector<int> scount, sdisp;   // allocated in place only
    const void *sbuf = sendbuf;
    if (in_place) {
        scount.resize(static_cast<size_t>(c->size));
        sdisp.resize(static_cast<size_t>(c->size));
        size_t total = 0;
        for (int r = 0; r < c->size; ++r)
            total += rt->size * static_cast<size_t>(recvcounts[r]);
        saved.resize(total);
        size_t off = 0;
        for (int r = 0; r < c->size; ++r) {
            pack(at(recvbuf, rdispls[r], *rt), recvcounts[r], *rt, saved.data() + off);
            scount[r] = static_cast<int>(rt->size * static_cast<size_t>(recvcounts[r]));
            sdisp[r] = static_cast<int>(off);
            off += static_cast<size_t>(scount[r]);
        }
        st = datatype(MPI_BYTE);
        sbuf = saved.data();
        sendcounts = scount.data();
        sdispls = sdisp.data();
    } else {
        if (!(st = check_type(cx, sendtype, 0, &rc, "sendtype")))
            return rc;
        if ((rc = check_counts(cx, sendcounts, sdispls, "send")))
            return rc;
    }
    const int p = c->size, me = c->rank;
    copy_typed(at(sbuf, sdispls[me], *st), sendcounts[me], *st, at(recvbuf, rdispls[me], *rt), recvcounts[me], *rt);
    for (int s = 1; s < p; ++s) {
        const int to = (me + s) % p, from = (me - s + p) % p;
        Xfer out, in;
        out.for_send(at(sbuf, sdispls[to], *st), sendcounts[to], *st);
        in.for_recv(at(recvbuf, rdispls[from], *rt), recvcounts[from], *rt);
        if (int wrc = coll_sendrecv(*c, out.w.ptr, out.w.bytes, to, in.w.ptr, in.w.bytes, from, kTagAlltoall))
            return fail(cx, wrc);
        in.done();
    }
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm h)
{
    MPI_THREAD_GUARD;
    COLL_COMM_ANY("MPI_Alltoall", h);   // the v-form takes intercommunicators
    if (!c->inter)
        if (int rc = alltoall_small(cx, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype); rc != kNotDense)
            return rc;
    const size_t p = static_cast<size_t>(c->size);
    std::vector<int> sc(p, sendcount), sd(p), rc_(p, recvcount), rd(p);
    for (size_t r = 0; r < p; ++r) {
        sd[r] = static_cast<int>(r) * sendcount;
        rd[r] = static_cast<int>(r) * recvcount;
    }
    return PMPI_Alltoallv(sendbuf, sc.data(), sd.data(), sendtype, recvbuf, rc_.data(), rd.data(), recvtype, h);
}

} // extern "C"
