// SPDX-License-Identifier: BSD-3-Clause
// The collectives as schedules (coll_sched.hpp), with the algorithms of
// their blocking twins in coll.cc:
//  - Barrier: dissemination; Bcast: binomial tree (a node's children are
//    sent to at once);
//  - Reduce: binomial tree toward the root, the children's data received
//    at once and combined in rank order; a non-commutative operation uses
//    the tree rooted at rank 0 (so rank order is the tree's order), which
//    then hands the result to the root;
//  - Allreduce: recursive doubling, extra ranks folded in first; at most 8
//    ranks and 2 KiB, one round: everyone's data to everyone (below);
//  - Reduce_scatter(_block): Reduce to rank 0, then Scatterv;
//  - Scan / Exscan: recursive doubling on prefixes (partner rank ^ mask);
//  - Gather(v) / Scatter(v): the root posts every receive (send) at once;
//  - Allgather(v): a ring, p-1 steps of one block each;
//  - Alltoall(v/w): the pairwise exchange's p-1 pairs, posted at once (no
//    step needs another's data, so none waits for the one before).
// Lower ranks' data are always the left operand: user-defined operations
// that do not commute get MPI's rank order.
#include <cstring>
#include <string>

#include "mpi/coll_sched.hpp"

namespace weft::mpi::coll {

int check_reduction(const Ctx &cx, Schedule &s, int count, MPI_Datatype th, MPI_Op op, Reducer **red)
{
    int rc = 0;
    const Datatype *t = check_type(cx, th, count, &rc);
    if (!t)
        return rc;
    *red = &s.reducer();
    return (*red)->init(cx, s.keep(*t), th, count, op);
}

namespace {

// The binomial tree of a reduction toward `root` in virtual ranks
// (rank - root): acc (loaded) ends holding the subtree's result; the root's
// is the whole reduction.
void reduce_tree(Schedule &s, const Reducer &red, std::byte *acc, int root)
{
    const int p = s.size(), vr = (s.rank() - root + p) % p;
    std::vector<std::byte *> kids;
    int mask = 1;
    for (; mask < p && !(vr & mask); mask <<= 1)
        if (vr + mask < p) {
            kids.push_back(s.scratch(red.bytes()));
            s.recv(kids.back(), red.bytes(), (vr + mask + root) % p);
        }
    s.wait();
    if (!kids.empty())
        s.local([&red, acc, kids] {
            for (std::byte *k : kids)   // each child's block follows what acc holds
                red.combine(acc, k, acc);
        });
    if (vr != 0) {
        s.send(acc, red.bytes(), (vr - mask + root) % p);
        s.wait();
    }
}

// Few ranks and little data: an allreduce in one round. Every rank sends
// its data to every other at once and combines all p in rank order, so
// nothing waits on an earlier round: a nonblocking one's data all moves
// while the program computes (recursive doubling's later rounds can only
// start inside an MPI call), and every rank computes the same left fold.
constexpr int kDirectRanks = 8;
constexpr size_t kDirectBytes = 2048;

void direct_allreduce(Schedule &s, const Reducer &red, std::byte *acc, void *recvbuf)
{
    const int p = s.size(), me = s.rank();
    const size_t bytes = red.bytes();
    std::vector<std::byte *> parts(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r)
        parts[r] = r == me ? acc : s.scratch(bytes);
    for (int k = 1; k < p; ++k) {
        const int to = (me + k) % p, from = (me - k + p) % p;
        s.send(acc, bytes, to);
        s.recv(parts[from], bytes, from);
    }
    s.wait();   // acc has left too: it may be overwritten now
    s.local([&red, parts, recvbuf] {
        for (size_t r = 1; r < parts.size(); ++r)
            red.combine(parts[0], parts[r], parts[0]);
        red.store(parts[0], recvbuf);
    });
}

} // namespace

int build_barrier(Schedule &s)
{
    const int p = s.size(), me = s.rank();
    for (int dist = 1; dist < p; dist <<= 1) {
        s.send(nullptr, 0, (me + dist) % p);
        s.recv(nullptr, 0, (me - dist + p) % p);
        s.wait();
    }
    return MPI_SUCCESS;
}

int build_bcast(const Ctx &cx, Schedule &s, void *buf, int count, MPI_Datatype th, int root)
{
    int rc = 0;
    const Datatype *t = check_type(cx, th, count, &rc);
    if (!t)
        return rc;
    if ((rc = check_root(cx, root)))
        return rc;
    const int p = s.size(), me = s.rank();
    if (p == 1 || count == 0 || t->size == 0)
        return MPI_SUCCESS;
    const size_t bytes = t->size * static_cast<size_t>(count);
    const Datatype *kt = &s.keep(*t);
    std::byte *wire;
    if (t->contiguous(count)) {
        wire = static_cast<std::byte *>(buf) + t->data_offset;
    } else {
        wire = s.scratch(bytes);
        if (me == root)
            s.local([=] { pack(buf, count, *kt, wire); });
    }
    const int vr = (me - root + p) % p;
    int mask = 1;
    for (; mask < p; mask <<= 1)
        if (vr & mask) {
            s.recv(wire, bytes, (vr - mask + root) % p);
            s.wait();
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            s.send(wire, bytes, (vr + mask + root) % p);
    s.wait();
    if (!t->contiguous(count) && me != root)
        s.local([=] { unpack(wire, bytes, buf, count, *kt); });
    return MPI_SUCCESS;
}

int build_reduce(const Ctx &cx, Schedule &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op,
                 int root)
{
    int rc = check_root(cx, root);
    if (rc)
        return rc;
    const int me = s.rank();
    Reducer *red = nullptr;
    if ((rc = check_reduction(cx, s, count, th, op, &red)))
        return rc;
    if (count == 0)
        return MPI_SUCCESS;
    const void *in = sendbuf == MPI_IN_PLACE && me == root ? recvbuf : sendbuf;
    std::byte *acc = s.scratch(red->bytes());
    s.local([=] { red->load(in, acc); });
    const int tree_root = red->commutative() ? root : 0;
    reduce_tree(s, *red, acc, tree_root);
    if (tree_root != root) {
        if (me == tree_root)
            s.send(acc, red->bytes(), root);
        else if (me == root)
            s.recv(acc, red->bytes(), tree_root);
        s.wait();
    }
    if (me == root)
        s.local([=] { red->store(acc, recvbuf); });
    return MPI_SUCCESS;
}

int build_allreduce(const Ctx &cx, Schedule &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th,
                    MPI_Op op)
{
    Reducer *red = nullptr;
    if (int rc = check_reduction(cx, s, count, th, op, &red))
        return rc;
    if (count == 0)
        return MPI_SUCCESS;
    const size_t bytes = red->bytes();
    std::byte *acc = s.scratch(bytes);
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    s.local([=] { red->load(in, acc); });
    const int p = s.size(), me = s.rank();
    if (p <= kDirectRanks && bytes <= kDirectBytes) {
        direct_allreduce(s, *red, acc, recvbuf);
        return MPI_SUCCESS;
    }
    std::byte *tmp = s.scratch(bytes);
    int p2 = 1;
    while (p2 * 2 <= p)
        p2 *= 2;
    const int extra = p - p2;
    int vr;
    if (me < 2 * extra) {   // fold: the even ones of the first 2*extra hand their data to the odd ones
        if (me % 2 == 0) {
            s.send(acc, bytes, me + 1);
            vr = -1;
        } else {
            s.recv(tmp, bytes, me - 1);
            s.wait();
            s.local([=] { red->combine(tmp, acc, acc); });
            vr = me / 2;
        }
        s.wait();
    } else {
        vr = me - extra;
    }
    if (vr >= 0)
        for (int mask = 1; mask < p2; mask <<= 1) {
            const int pv = vr ^ mask;
            const int partner = pv < extra ? pv * 2 + 1 : pv + extra;
            s.send(acc, bytes, partner);
            s.recv(tmp, bytes, partner);
            s.wait();
            if (partner < me)
                s.local([=] { red->combine(tmp, acc, acc); });
            else
                s.local([=] { red->combine(acc, tmp, acc); });
        }
    if (me < 2 * extra) {
        if (me % 2 == 1)
            s.send(acc, bytes, me - 1);
        else
            s.recv(acc, bytes, me + 1);
        s.wait();
    }
    s.local([=] { red->store(acc, recvbuf); });
    return MPI_SUCCESS;
}

int build_reduce_scatter(const Ctx &cx, Schedule &s, const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype th, MPI_Op op)
{
    const int p = s.size(), me = s.rank();
    if (!recvcounts)
        return raise(cx.c, MPI_ERR_ARG, cx.fn, "recvcounts is NULL");
    std::vector<int> displs(static_cast<size_t>(p));
    long total = 0;
    for (int r = 0; r < p; ++r) {
        if (recvcounts[r] < 0)
            return raise(cx.c, MPI_ERR_COUNT, cx.fn,
                         "recvcounts[" + std::to_string(r) + "] = " + std::to_string(recvcounts[r]) + " is negative");
        displs[static_cast<size_t>(r)] = static_cast<int>(total);
        total += recvcounts[r];
    }
    if (total > INT32_MAX)
        return raise(cx.c, MPI_ERR_COUNT, cx.fn, "the counts add up to more than INT_MAX elements");
    Reducer *red = nullptr;
    if (int rc = check_reduction(cx, s, static_cast<int>(total), th, op, &red))
        return rc;
    if (total == 0)
        return MPI_SUCCESS;
    std::byte *acc = s.scratch(red->bytes());
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    s.local([=] { red->load(in, acc); });
    reduce_tree(s, *red, acc, 0);   // rooted at rank 0: rank order for every operation
    const int mine = recvcounts[me];
    if (me == 0) {
        for (int r = 1; r < p; ++r)
            s.send(acc + red->offset_of(displs[static_cast<size_t>(r)]), red->bytes_for(recvcounts[r]), r);
        s.local([=] { red->store(acc, recvbuf, mine); });
    } else {
        s.recv(acc, red->bytes_for(mine), 0);
        s.wait();
        s.local([=] { red->store(acc, recvbuf, mine); });
    }
    s.wait();
    return MPI_SUCCESS;
}

int build_scan(const Ctx &cx, Schedule &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op,
               bool exclusive)
{
    Reducer *red = nullptr;
    if (int rc = check_reduction(cx, s, count, th, op, &red))
        return rc;
    if (count == 0)
        return MPI_SUCCESS;
    const size_t bytes = red->bytes();
    // partial: the reduction over the block of ranks exchanged so far;
    // result: over the ranks below (exclusive) or up to (inclusive) me.
    std::byte *partial = s.scratch(bytes), *tmp = s.scratch(bytes), *result = s.scratch(bytes);
    bool *have = reinterpret_cast<bool *>(s.scratch(sizeof(bool)));
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    s.local([=] {
        red->load(in, partial);
        if (!exclusive)
            std::memcpy(result, partial, bytes);
        *have = !exclusive;
    });
    const int p = s.size(), me = s.rank();
    for (int mask = 1; mask < p; mask <<= 1) {
        const int partner = me ^ mask;
        if (partner >= p)
            continue;
        s.send(partial, bytes, partner);
        s.recv(tmp, bytes, partner);
        s.wait();
        if (partner < me)
            s.local([=] {
                if (*have) {
                    red->apply(tmp, result);
                } else {
                    std::memcpy(result, tmp, bytes);
                    *have = true;
                }
                red->combine(tmp, partial, partial);
            });
        else
            s.local([=] { red->combine(partial, tmp, partial); });
    }
    if (!exclusive || me > 0)
        s.local([=] { red->store(result, recvbuf); });
    return MPI_SUCCESS;
}

int build_gatherv(const Ctx &cx, Schedule &s, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root)
{
    int rc = check_root(cx, root);
    if (rc)
        return rc;
    const int me = s.rank();
    const bool in_place = me == root && sendbuf == MPI_IN_PLACE;
    const Datatype *st = nullptr;
    if (!in_place && !(st = check_type(cx, sendtype, sendcount, &rc, "sendtype")))
        return rc;
    if (me != root) {
        s.send_typed(sendbuf, sendcount, *st, root);
        s.wait();
        return MPI_SUCCESS;
    }
    const Datatype *rt = check_type(cx, recvtype, 0, &rc, "recvtype");
    if (!rt)
        return rc;
    if ((rc = check_counts(cx, recvcounts, displs, "recv")))
        return rc;
    if (!in_place)
        s.copy_typed(sendbuf, sendcount, *st, at(recvbuf, displs[root], *rt), recvcounts[root], *rt);
    for (int r = 0; r < s.size(); ++r)
        if (r != root)
            s.recv_typed(at(recvbuf, displs[r], *rt), recvcounts[r], *rt, r);
    s.wait();
    return MPI_SUCCESS;
}

int build_scatterv(const Ctx &cx, Schedule &s, const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
{
    int rc = check_root(cx, root);
    if (rc)
        return rc;
    const int me = s.rank();
    const bool in_place = me == root && recvbuf == MPI_IN_PLACE;
    const Datatype *rt = nullptr;
    if (!in_place && !(rt = check_type(cx, recvtype, recvcount, &rc, "recvtype")))
        return rc;
    if (me != root) {
        s.recv_typed(recvbuf, recvcount, *rt, root);
        s.wait();
        return MPI_SUCCESS;
    }
    const Datatype *st = check_type(cx, sendtype, 0, &rc, "sendtype");
    if (!st)
        return rc;
    if ((rc = check_counts(cx, sendcounts, displs, "send")))
        return rc;
    for (int r = 0; r < s.size(); ++r)
        if (r != root)
            s.send_typed(at(sendbuf, displs[r], *st), sendcounts[r], *st, r);
    if (!in_place)
        s.copy_typed(at(sendbuf, displs[root], *st), sendcounts[root], *st, recvbuf, recvcount, *rt);
    s.wait();
    return MPI_SUCCESS;
}

int build_allgatherv(const Ctx &cx, Schedule &s, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype)
{
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
    const int p = s.size(), me = s.rank();
    if (!in_place)
        s.copy_typed(sendbuf, sendcount, *st, at(recvbuf, displs[me], *rt), recvcounts[me], *rt);
    // Ring: in step k, pass block (me - k) right and take block (me - k - 1)
    // from the left. Blocks that are not contiguous travel packed: each is
    // packed once it is here (received or our own), unpacked at the end.
    const int right = (me + 1) % p, left = (me - 1 + p) % p;
    bool dense = true;
    for (int r = 0; r < p; ++r)
        dense = dense && rt->contiguous(recvcounts[r]);
    std::vector<std::byte *> wire(static_cast<size_t>(p));
    std::vector<size_t> bytes(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r) {
        bytes[r] = rt->size * static_cast<size_t>(recvcounts[r]);
        wire[r] = dense ? at(recvbuf, displs[r], *rt) + rt->data_offset : s.scratch(bytes[r]);
    }
    const Datatype *kt = &s.keep(*rt);
    if (!dense)
        s.local([=, own = wire[me], n = recvcounts[me], at_me = at(recvbuf, displs[me], *rt)] {
            pack(at_me, n, *kt, own);
        });
    for (int k = 0; k < p - 1; ++k) {
        const int sb = (me - k + p) % p, rb = (me - k - 1 + p) % p;
        s.send(wire[sb], bytes[sb], right);
        s.recv(wire[rb], bytes[rb], left);
        s.wait();
    }
    if (!dense)
        for (int r = 0; r < p; ++r)
            if (r != me)
                s.local([=, w = wire[r], b = bytes[r], n = recvcounts[r], to = at(recvbuf, displs[r], *rt)] {
                    unpack(w, b, to, n, *kt);
                });
    return MPI_SUCCESS;
}

int build_alltoallw(const Ctx &cx, Schedule &s, const void *sendbuf, const Blocks &out, void *recvbuf,
                    const Blocks &in)
{
    const int p = s.size(), me = s.rank();
    int rc = 0;
    std::vector<const Datatype *> rts(static_cast<size_t>(p)), sts(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r) {
        const std::string which = "recvtypes[" + std::to_string(r) + "]";
        if (!(rts[r] = check_type(cx, in.types[r], in.counts[r], &rc, which.c_str())))
            return rc;
    }
    auto block = [](void *base, std::ptrdiff_t displ) { return static_cast<std::byte *>(base) + displ; };
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (in_place) {
        // What goes out is recvbuf's blocks, packed before any arrives.
        std::vector<size_t> off(static_cast<size_t>(p) + 1, 0);
        for (int r = 0; r < p; ++r)
            off[r + 1] = off[r] + rts[r]->size * static_cast<size_t>(in.counts[r]);
        std::byte *saved = s.scratch(off[p]);
        for (int r = 0; r < p; ++r) {
            const Datatype *kt = &s.keep(*rts[r]);
            s.local([=, n = in.counts[r], from = block(recvbuf, in.displs[r])] { pack(from, n, *kt, saved + off[r]); });
        }
        for (int k = 1; k < p; ++k) {
            const int to = (me + k) % p, from = (me - k + p) % p;
            s.send(saved + off[to], off[to + 1] - off[to], to);
            s.recv_typed(block(recvbuf, in.displs[from]), in.counts[from], *rts[from], from);
        }
        s.wait();
        return MPI_SUCCESS;
    }
    for (int r = 0; r < p; ++r) {
        const std::string which = "sendtypes[" + std::to_string(r) + "]";
        if (!(sts[r] = check_type(cx, out.types[r], out.counts[r], &rc, which.c_str())))
            return rc;
    }
    void *sbuf = const_cast<void *>(sendbuf);
    s.copy_typed(block(sbuf, out.displs[me]), out.counts[me], *sts[me], block(recvbuf, in.displs[me]), in.counts[me],
                 *rts[me]);
    for (int k = 1; k < p; ++k) {
        const int to = (me + k) % p, from = (me - k + p) % p;
        s.send_typed(block(sbuf, out.displs[to]), out.counts[to], *sts[to], to);
        s.recv_typed(block(recvbuf, in.displs[from]), in.counts[from], *rts[from], from);
    }
    s.wait();
    return MPI_SUCCESS;
}

} // namespace weft::mpi::coll
