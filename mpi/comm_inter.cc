// SPDX-License-Identifier: BSD-3-Clause
// Intercommunicators (MPI-3.1 6.6): two disjoint groups that talk to each
// other. The Comm object describes the remote group in world / size /
// local, which is exactly what point-to-point addresses, so MPI_Send and
// MPI_Recv work on an intercommunicator unchanged; rank and local_world
// are the local group's, and local_comm (a hidden intracommunicator over
// the local group) carries the agreements.
//
// Contexts: each group agrees on its largest counter, the two leaders
// (local rank 0, or the leaders named to MPI_Intercomm_create) exchange
// theirs, and both groups take the larger. An intercommunicator uses two
// context pairs from there: ctx for itself, ctx + 2 for its local_comm.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

// Tags on collective contexts, far from the CollTag values.
enum InterTag : int { kTagInterCtx = 2101, kTagInterInfo = 2102, kTagInterWorld = 2103, kTagInterMerge = 2104 };

// root's n bytes at buf to every member of c (a small, rare message).
int local_bcast(const Comm &c, int root, void *buf, size_t n, int tag)
{
    if (c.rank != root)
        return coll_recv(c, buf, n, root, tag);
    for (int r = 0; r < c.size; ++r)
        if (r != root)
            if (int rc = coll_send(c, buf, n, r, tag))
                return rc;
    return WEFT_SUCCESS;
}

// The intercommunicator over these groups on context pairs ctx (itself)
// and ctx + 2 (its local group), which every member of both has reserved.
MPI_Comm make_intercomm(const std::vector<uint32_t> &local_world, std::vector<uint32_t> remote_world, uint32_t ctx,
                        const Comm *parent)
{
    reserve_context(ctx + 2);
    const MPI_Comm local = make_comm(local_world, ctx + 2, parent, "");
    const MPI_Comm h = make_comm(std::move(remote_world), ctx, parent, "");
    Comm *c = comm(h);
    c->inter = true;
    c->local_world = local_world;
    c->local_comm = local;
    c->rank = comm(local)->rank;
    return h;
}

// Both groups' agreement on a context: the local one over local, the
// leaders' exchange over the intercommunicator ic, the local leader's
// answer to its group. *theirs (n bytes) is what the remote leader sent
// along (mine: what this leader sends).
int agree_across(Comm &ic, uint32_t *ctx, const void *mine, void *theirs, size_t n)
{
    Comm &local = *comm(ic.local_comm);
    if (int rc = agree_context(local, ctx))
        return rc;
    struct Msg {
        uint32_t ctx;
        std::byte extra[16];
    } out{*ctx, {}}, in{};
    std::memcpy(out.extra, mine, n);
    if (ic.rank == 0)
        if (int rc = coll_sendrecv(ic, &out, sizeof out, 0, &in, sizeof in, 0, kTagInterCtx))
            return rc;
    if (int rc = local_bcast(local, 0, &in, sizeof in, kTagInterCtx))
        return rc;
    *ctx = std::max(*ctx, in.ctx);
    std::memcpy(theirs, in.extra, n);
    return WEFT_SUCCESS;
}

int inter_error(Comm *c, int cls, const char *fn, const std::string &why) { return raise(c, cls, fn, why); }

#define INTER_OR_RETURN(fn, h, p) COMM_OF_KIND_OR_RETURN(fn, h, p, true)

} // namespace

int intercomm_dup(Comm &ic, MPI_Comm *out)
{
    uint32_t ctx;
    char none = 0, ignored;
    if (int rc = agree_across(ic, &ctx, &none, &ignored, 1))
        return rc;
    *out = make_intercomm(ic.local_world, ic.world, ctx, &ic);
    return WEFT_SUCCESS;
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Intercomm_create)
int PMPI_Intercomm_create(MPI_Comm local_h, int local_leader, MPI_Comm peer_h, int remote_leader, int tag,
                          MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Intercomm_create";
    MPI_NEED_INIT(fn);
    Comm *local = comm(local_h);
    if (!local || local->inter)
        return inter_error(local, MPI_ERR_COMM, fn,
                           local ? "local_comm is an intercommunicator (it must be an intracommunicator)"
                                 : "local_comm " + std::to_string(local_h) + " is not valid");
    if (!out)
        return inter_error(local, MPI_ERR_ARG, fn, "newintercomm is NULL");
    if (local_leader < 0 || local_leader >= local->size)
        return inter_error(local, MPI_ERR_RANK, fn,
                           "local_leader " + std::to_string(local_leader) + " is not a rank of local_comm (size " +
                               std::to_string(local->size) + ")");
    if (tag < 0)
        return inter_error(local, MPI_ERR_TAG, fn, "tag " + std::to_string(tag) + " is negative");
    uint32_t ctx;
    if (int rc = agree_context(*local, &ctx))
        return inter_error(local, fail_class(rc), fn, weft_why(rc));
    // The leaders swap their context and group over peer_comm (with the
    // caller's tag), then tell their groups.
    uint32_t info[2] = {ctx, static_cast<uint32_t>(local->size)}, theirs[2] = {0, 0};
    std::vector<uint32_t> remote;
    if (local->rank == local_leader) {
        Comm *peer = comm(peer_h);
        if (!peer)
            return inter_error(local, MPI_ERR_COMM, fn, "peer_comm " + std::to_string(peer_h) + " is not valid");
        if (remote_leader < 0 || remote_leader >= peer->size || remote_leader == peer->rank)
            return inter_error(local, MPI_ERR_RANK, fn,
                               "remote_leader " + std::to_string(remote_leader) +
                                   " is not another rank of peer_comm (size " + std::to_string(peer->size) + ")");
        if (int rc = PMPI_Sendrecv(info, 2, MPI_UINT32_T, remote_leader, tag, theirs, 2, MPI_UINT32_T,
                                   remote_leader, tag, peer_h, MPI_STATUS_IGNORE))
            return rc;
        remote.resize(theirs[1]);
        if (int rc = PMPI_Sendrecv(local->world.data(), local->size, MPI_UINT32_T, remote_leader, tag,
                                   remote.data(), static_cast<int>(theirs[1]), MPI_UINT32_T, remote_leader, tag,
                                   peer_h, MPI_STATUS_IGNORE))
            return rc;
    }
    if (int rc = local_bcast(*local, local_leader, theirs, sizeof theirs, kTagInterInfo))
        return inter_error(local, fail_class(rc), fn, weft_why(rc));
    remote.resize(theirs[1]);
    if (int rc = local_bcast(*local, local_leader, remote.data(), remote.size() * sizeof(uint32_t), kTagInterWorld))
        return inter_error(local, fail_class(rc), fn, weft_why(rc));
    for (uint32_t w : remote)
        if (std::find(local->world.begin(), local->world.end(), w) != local->world.end())
            return inter_error(local, MPI_ERR_COMM, fn,
                               "job rank " + std::to_string(w) + " is in both groups (they must be disjoint)");
    *out = make_intercomm(local->world, std::move(remote), std::max(ctx, theirs[0]), local);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Intercomm_merge)
int PMPI_Intercomm_merge(MPI_Comm h, int high, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Intercomm_merge";
    INTER_OR_RETURN(fn, h, ic);
    if (!out)
        return inter_error(ic, MPI_ERR_ARG, fn, "newintracomm is NULL");
    const int32_t mine = high ? 1 : 0;
    int32_t theirs = 0;
    uint32_t ctx;
    if (int rc = agree_across(*ic, &ctx, &mine, &theirs, sizeof mine))
        return inter_error(ic, fail_class(rc), fn, weft_why(rc));
    reserve_context(ctx);
    // The group that said high = false comes first; when both said the
    // same, the one whose first member has the lower job rank.
    const bool local_first = mine != theirs ? !mine : ic->local_world[0] < ic->world[0];
    std::vector<uint32_t> world = local_first ? ic->local_world : ic->world;
    const std::vector<uint32_t> &second = local_first ? ic->world : ic->local_world;
    world.insert(world.end(), second.begin(), second.end());
    *out = make_comm(std::move(world), ctx, ic, "");
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_remote_size)
int PMPI_Comm_remote_size(MPI_Comm h, int *size)
{
    MPI_THREAD_GUARD;
    INTER_OR_RETURN("MPI_Comm_remote_size", h, c);
    if (!size)
        return inter_error(c, MPI_ERR_ARG, "MPI_Comm_remote_size", "size is NULL");
    *size = c->size;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_remote_group)
int PMPI_Comm_remote_group(MPI_Comm h, MPI_Group *g)
{
    MPI_THREAD_GUARD;
    INTER_OR_RETURN("MPI_Comm_remote_group", h, c);
    if (!g)
        return inter_error(c, MPI_ERR_ARG, "MPI_Comm_remote_group", "group is NULL");
    *g = make_group(c->world);
    return MPI_SUCCESS;
}

} // extern "C"
