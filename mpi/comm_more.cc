// SPDX-License-Identifier: BSD-3-Clause
// The MPI-3 communicator constructors beyond dup / split / create:
// MPI_Comm_split_type, MPI_Comm_idup, MPI_Comm_dup_with_info and
// MPI_Comm_create_group (collective over the group only).
#include <string>
#include <vector>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

// MPI_Comm_create_group's messages travel on the parent's collective
// context under a tag made from the caller's, above every fixed tag.
constexpr int kTagCreateGroupBase = 0x10000000;

int more_error(Comm *c, int cls, const char *fn, const std::string &why) { return raise(c, cls, fn, why); }

#define INTRA_OR_RETURN(fn, h, p) COMM_OF_KIND_OR_RETURN(fn, h, p, false)

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Comm_split_type)
int PMPI_Comm_split_type(MPI_Comm h, int split_type, int key, MPI_Info info, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Comm_split_type";
    INTRA_OR_RETURN(fn, h, c);
    (void)info;   // no hints for the only type there is
    if (!out)
        return more_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (split_type == MPI_UNDEFINED)
        return PMPI_Comm_split(h, MPI_UNDEFINED, key, out);
    if (split_type != MPI_COMM_TYPE_SHARED)
        return more_error(c, MPI_ERR_ARG, fn,
                          "split_type " + std::to_string(split_type) +
                              " is not MPI_COMM_TYPE_SHARED or MPI_UNDEFINED");
    // The processes that share memory are those on one node: the runtime
    // knows each one's PMIx node id.
    weft_job_info_t job{};
    job.size = sizeof job;
    if (int rc = weft_job_info(&job))
        return more_error(c, fail_class(rc), fn, "cannot read this process's node: " + weft_why(rc));
    return PMPI_Comm_split(h, static_cast<int>(job.node_id), key, out);
}

WEFT_MPI_WEAK(Comm_dup_with_info)
int PMPI_Comm_dup_with_info(MPI_Comm h, MPI_Info info, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    (void)info;   // weft takes no communicator hints: the duplicate is a plain MPI_Comm_dup
    return PMPI_Comm_dup(h, out);
}

WEFT_MPI_WEAK(Comm_idup)
int PMPI_Comm_idup(MPI_Comm h, MPI_Comm *out, MPI_Request *request)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Comm_idup";
    MPI_NEED_INIT(fn);
    Comm *c = comm(h);
    if (c && !request)
        return more_error(c, MPI_ERR_ARG, fn, "request is NULL");
    // The duplicate is made at once (a short agreement among the members),
    // so the request is already complete.
    if (int rc = PMPI_Comm_dup(h, out))
        return rc;
    Request *r;
    *request = new_request(&r);
    r->kind = Request::Kind::Done;
    r->comm = h;
    empty_status(&r->done_status);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_create_group)
int PMPI_Comm_create_group(MPI_Comm h, MPI_Group gh, int tag, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Comm_create_group";
    INTRA_OR_RETURN(fn, h, c);
    const Group *g = group(gh);
    if (!g)
        return more_error(c, MPI_ERR_GROUP, fn, "group " + std::to_string(gh) + " is not valid");
    if (!out)
        return more_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (tag < 0)
        return more_error(c, MPI_ERR_TAG, fn, "tag " + std::to_string(tag) + " is negative");
    for (uint32_t w : g->world)
        if (c->from_world(w) < 0 || c->from_world(w) >= c->size)
            return more_error(c, MPI_ERR_GROUP, fn,
                              "the group holds job rank " + std::to_string(w) + ", which is not in the communicator");
    const int me = g->my_rank();
    if (me == MPI_UNDEFINED) {   // not a member: nothing to agree on
        *out = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    // Only the group's members take part: they agree on a context among
    // themselves, over the parent's collective context.
    Comm members;
    members.world = g->world;
    members.size = static_cast<int>(g->world.size());
    members.rank = me;
    members.context = c->context;
    uint32_t ctx;
    if (int rc = agree_context_tagged(members, &ctx, kTagCreateGroupBase + tag % kTagCreateGroupBase))
        return more_error(c, fail_class(rc), fn, weft_why(rc));
    *out = make_comm(g->world, ctx, c, "");
    return MPI_SUCCESS;
}

} // extern "C"
