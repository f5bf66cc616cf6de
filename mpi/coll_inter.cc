// SPDX-License-Identifier: BSD-3-Clause
// Intercommunicator collectives (coll_inter.hpp): schedules whose messages
// cross between the groups only; a schedule on an intercommunicator
// addresses the remote group (Comm::world is the remote group's).
#include <string>
#include <vector>

#include "mpi/coll_inter.hpp"
#include "mpi/coll_sched.hpp"

namespace weft::mpi::coll::inter {

namespace {

// root: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group.
int check_inter_root(const Ctx &cx, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < cx.c->size))
        return MPI_SUCCESS;
    return raise(cx.c, MPI_ERR_ROOT, cx.fn,
                 "root " + std::to_string(root) +
                     " is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (0.." +
                     std::to_string(cx.c->size - 1) + ")");
}

int refuse_in_place(const Ctx &cx, const void *sendbuf)
{
    if (sendbuf == MPI_IN_PLACE)
        return raise(cx.c, MPI_ERR_BUFFER, cx.fn, "MPI_IN_PLACE is not defined on an intercommunicator");
    return MPI_SUCCESS;
}

void *block(void *base, int displ, const Datatype &t)
{
    return static_cast<std::byte *>(base) + static_cast<std::ptrdiff_t>(displ) * t.extent();
}

// count, displacement and datatype checks of a v-collective's per-rank arrays.
int check_blocks(const Ctx &cx, const char *what, const int counts[], const int displs[])
{
    if (!counts || !displs)
        return raise(cx.c, MPI_ERR_ARG, cx.fn, std::string(what) + " counts or displacements are NULL");
    for (int r = 0; r < cx.c->size; ++r)
        if (counts[r] < 0)
            return raise(cx.c, MPI_ERR_COUNT, cx.fn,
                         std::string(what) + "counts[" + std::to_string(r) + "] " + std::to_string(counts[r]) +
                             " is negative");
    return MPI_SUCCESS;
}

// Every remote rank's reduction input, received and combined in rank order
// into acc (the remote group's result); red is initialized.
void combine_remote(Schedule &s, const Reducer &red, std::byte *acc)
{
    std::vector<std::byte *> parts;
    for (int r = 0; r < s.size(); ++r) {
        parts.push_back(r == 0 ? acc : s.scratch(red.bytes()));
        s.recv(parts.back(), red.bytes(), r);
    }
    s.wait();
    s.local([&red, acc, parts] {
        for (size_t i = 1; i < parts.size(); ++i)   // acc holds the lower ranks'
            red.combine(acc, parts[i], acc);
    });
}

} // namespace

int barrier(const Ctx &cx)
{
    return run_schedule(cx, kTagInter, [&](Schedule &s) {
        for (int r = 0; r < s.size(); ++r) {   // returns once every remote rank has entered
            s.send(nullptr, 0, r);
            s.recv(nullptr, 0, r);
        }
        return MPI_SUCCESS;
    });
}

int bcast(const Ctx &cx, void *buf, int count, MPI_Datatype th, int root)
{
    int rc = check_inter_root(cx, root);
    const Datatype *t = rc ? nullptr : check_type(cx, th, count, &rc);
    if (!t)
        return rc;
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    return run_schedule(cx, kTagInter, [&](Schedule &s) {
        if (root == MPI_ROOT)
            for (int r = 0; r < s.size(); ++r)
                s.send_typed(buf, count, *t, r);
        else
            s.recv_typed(buf, count, *t, root);
        return MPI_SUCCESS;
    });
}

int gatherv(const Ctx &cx, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root)
{
    int rc = check_inter_root(cx, root);
    if (rc || root == MPI_PROC_NULL)
        return rc;
    if (root == MPI_ROOT) {
        const Datatype *rt = nullptr;
        if ((rc = check_blocks(cx, "recv", recvcounts, displs)) || !(rt = check_type(cx, recvtype, 0, &rc, "recvtype")))
            return rc;
        return run_schedule(cx, kTagInter, [&](Schedule &s) {
            for (int r = 0; r < s.size(); ++r)
                s.recv_typed(block(recvbuf, displs[r], *rt), recvcounts[r], *rt, r);
            return MPI_SUCCESS;
        });
    }
    const Datatype *st = nullptr;
    if ((rc = refuse_in_place(cx, sendbuf)) || !(st = check_type(cx, sendtype, sendcount, &rc, "sendtype")))
        return rc;
    return run_schedule(cx, kTagInter, [&](Schedule &s) {
        s.send_typed(sendbuf, sendcount, *st, root);
        return MPI_SUCCESS;
    });
}

int scatterv(const Ctx &cx, const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
{
    int rc = check_inter_root(cx, root);
    if (rc || root == MPI_PROC_NULL)
        return rc;
    if (root == MPI_ROOT) {
        const Datatype *st = nullptr;
        if ((rc = check_blocks(cx, "send", sendcounts, displs)) || !(st = check_type(cx, sendtype, 0, &rc, "sendtype")))
            return rc;
        return run_schedule(cx, kTagInter, [&](Schedule &s) {
            for (int r = 0; r < s.size(); ++r)
                s.send_typed(block(const_cast<void *>(sendbuf), displs[r], *st), sendcounts[r], *st, r);
            return MPI_SUCCESS;
        });
    }
    const Datatype *rt = check_type(cx, recvtype, recvcount, &rc, "recvtype");
    if (!rt)
        return rc;
    return run_schedule(cx, kTagInter, [&](Schedule &s) {
        s.recv_typed(recvbuf, recvcount, *rt, root);
        return MPI_SUCCESS;
    });
}

int allgatherv(const Ctx &cx, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype)
{
    int rc = refuse_in_place(cx, sendbuf);
    const Datatype *st = nullptr, *rt = nullptr;
    if (rc || (rc = check_blocks(cx, "recv", recvcounts, displs)) ||
        !(st = check_type(cx, sendtype, sendcount, &rc, "sendtype")) ||
        !(rt = check_type(cx, recvtype, 0, &rc, "recvtype")))
        return rc;
    return run_schedule(cx, kTagInter, [&](Schedule &s) {
        for (int r = 0; r < s.size(); ++r) {
            s.send_typed(sendbuf, sendcount, *st, r);
            s.recv_typed(block(recvbuf, displs[r], *rt), recvcounts[r], *rt, r);
        }
        return MPI_SUCCESS;
    });
}

int alltoallv(const Ctx &cx, const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
              void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype)
{
    int rc = refuse_in_place(cx, sendbuf);
    const Datatype *st = nullptr, *rt = nullptr;
    if (rc || (rc = check_blocks(cx, "send", sendcounts, sdispls)) ||
        (rc = check_blocks(cx, "recv", recvcounts, rdispls)) || !(st = check_type(cx, sendtype, 0, &rc, "sendtype")) ||
        !(rt = check_type(cx, recvtype, 0, &rc, "recvtype")))
        return rc;
    return run_schedule(cx, kTagInter, [&](Schedule &s) {
        for (int r = 0; r < s.size(); ++r) {
            s.send_typed(block(const_cast<void *>(sendbuf), sdispls[r], *st), sendcounts[r], *st, r);
            s.recv_typed(block(recvbuf, rdispls[r], *rt), recvcounts[r], *rt, r);
        }
        return MPI_SUCCESS;
    });
}

int reduce(const Ctx &cx, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, int root)
{
    int rc = check_inter_root(cx, root);
    if (rc || root == MPI_PROC_NULL)
        return rc;
    if (root != MPI_ROOT && (rc = refuse_in_place(cx, sendbuf)))
        return rc;
    return run_schedule(cx, kTagInter, [&](Schedule &s) {
        Reducer *red = nullptr;
        if (int irc = check_reduction(cx, s, count, th, op, &red))
            return irc;
        if (count == 0)
            return MPI_SUCCESS;
        std::byte *acc = s.scratch(red->bytes());
        if (root == MPI_ROOT) {
            combine_remote(s, *red, acc);
            s.local([=] { red->store(acc, recvbuf); });
        } else {
            s.local([=] { red->load(sendbuf, acc); });
            s.send(acc, red->bytes(), root);
        }
        return MPI_SUCCESS;
    });
}

int allreduce(const Ctx &cx, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op)
{
    if (int rc = refuse_in_place(cx, sendbuf))
        return rc;
    return run_schedule(cx, kTagInter, [&](Schedule &s) {
        Reducer *red = nullptr;
        if (int irc = check_reduction(cx, s, count, th, op, &red))
            return irc;
        if (count == 0)
            return MPI_SUCCESS;
        std::byte *mine = s.scratch(red->bytes()), *acc = s.scratch(red->bytes());
        s.local([=] { red->load(sendbuf, mine); });
        for (int r = 0; r < s.size(); ++r)
            s.send(mine, red->bytes(), r);
        combine_remote(s, *red, acc);
        s.local([=] { red->store(acc, recvbuf); });
        return MPI_SUCCESS;
    });
}

} // namespace weft::mpi::coll::inter
