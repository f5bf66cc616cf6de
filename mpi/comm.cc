// SPDX-License-Identifier: BSD-3-Clause
// Communicators and groups. A communicator is a list of job ranks and a
// context pair (point-to-point, collectives) that all its members agreed
// on, so its traffic never matches another communicator's. New contexts
// come from a per-process counter that only grows: its members take the
// largest of their counters (an allreduce over the parent), which none of
// them has used.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

Table<Group> g_groups(MPI_GROUP_EMPTY + 1);
Group g_empty_group;
uint32_t g_next_context = WEFT_CONTEXT_FIRST_FREE + 4;   // after world's and self's pairs

int comm_error(Comm *c, int cls, const char *fn, const std::string &why) { return raise(c, cls, fn, why); }

#define COMM_OR_RETURN(fn, h, p)                                                                   \
    MPI_NEED_INIT(fn);                                                                             \
    Comm *p = comm(h);                                                                             \
    if (!p)                                                                                        \
        return comm_error(nullptr, MPI_ERR_COMM, fn, "communicator " + std::to_string(h) + " is not valid")

#define GROUP_OR_RETURN(fn, h, p)                                                                  \
    MPI_NEED_INIT(fn);                                                                             \
    Group *p = group(h);                                                                           \
    if (!p)                                                                                        \
        return comm_error(nullptr, MPI_ERR_GROUP, fn, "group " + std::to_string(h) + " is not valid")

} // namespace

// Allgather of fixed-size records over c (for split): ring-free, simple:
// everyone sends its record to everyone (communicator creation is rare).
int allgather_bytes(const Comm &c, const void *mine, size_t n, std::byte *all, int tag)
{
    std::memcpy(all + static_cast<size_t>(c.rank) * n, mine, n);
    std::vector<weft_request_t> reqs;
    for (int r = 0; r < c.size; ++r) {
        if (r == c.rank)
            continue;
        weft_request_t q;
        if (int rc = coll_irecv(c, all + static_cast<size_t>(r) * n, n, r, tag, &q))
            return rc;
        reqs.push_back(q);
    }
    for (int r = 0; r < c.size; ++r)
        if (r != c.rank)
            if (int rc = coll_send(c, mine, n, r, tag))
                return rc;
    return coll_waitall(reqs);
}

Group *group(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &g_empty_group;
    return g_groups.get(h);
}

int Group::rank_of_world(uint32_t w) const
{
    for (size_t i = 0; i < world.size(); ++i)
        if (world[i] == w)
            return static_cast<int>(i);
    return MPI_UNDEFINED;
}

int Group::my_rank() const { return rank_of_world(static_cast<uint32_t>(weft_rank())); }

Table<Comm> g_comms(MPI_COMM_WORLD);

MPI_Group make_group(std::vector<uint32_t> world)
{
    if (world.empty())
        return MPI_GROUP_EMPTY;
    auto g = std::make_unique<Group>();
    g->world = std::move(world);
    return g_groups.add(std::move(g));
}

MPI_Comm make_comm(std::vector<uint32_t> world, uint32_t context, const Comm *parent, const std::string &name)
{
    auto c = std::make_unique<Comm>();
    c->context = context;
    c->size = static_cast<int>(world.size());
    const uint32_t me = static_cast<uint32_t>(weft_rank());
    bool identity = true;
    for (size_t i = 0; i < world.size(); ++i) {
        if (world[i] == me)
            c->rank = static_cast<int>(i);
        identity = identity && world[i] == i;
    }
    if (!identity || world.size() != static_cast<size_t>(weft_size())) {
        c->local.assign(static_cast<size_t>(weft_size()), -1);
        for (size_t i = 0; i < world.size(); ++i)
            c->local[world[i]] = static_cast<int>(i);
    }
    c->world = std::move(world);
    c->errhandler = parent ? parent->errhandler : MPI_ERRORS_ARE_FATAL;
    c->name = name;
    const MPI_Comm h = g_comms.add(std::move(c));
    g_comms.get(h)->handle = h;
    return h;
}

int agree_context(Comm &c, uint32_t *context) { return agree_context_tagged(c, context, kTagContext); }

void reserve_context(uint32_t context) { g_next_context = std::max(g_next_context, context + 2); }

int agree_context_tagged(Comm &c, uint32_t *context, int tag)
{
    // An allreduce(max) by gathering everyone's counter (rare, small).
    std::vector<uint32_t> all(static_cast<size_t>(c.size));
    if (int rc = allgather_bytes(c, &g_next_context, sizeof g_next_context,
                                 reinterpret_cast<std::byte *>(all.data()), tag))
        return rc;
    const uint32_t ctx = *std::max_element(all.begin(), all.end());
    g_next_context = ctx + 2;
    *context = ctx;
    return WEFT_SUCCESS;
}

Comm *comm_of_kind(MPI_Comm h, bool inter, const char *fn, int *rc)
{
    Comm *c = comm(h);
    if (!c) {
        *rc = comm_error(nullptr, MPI_ERR_COMM, fn,
                         h == MPI_COMM_NULL ? std::string("the communicator is MPI_COMM_NULL")
                                            : "communicator " + std::to_string(h) + " is not valid (freed?)");
        return nullptr;
    }
    if (c->inter != inter) {
        *rc = comm_error(c, MPI_ERR_COMM, fn,
                         inter ? "the communicator is not an intercommunicator"
                               : "the communicator is an intercommunicator, and this call needs an intracommunicator");
        return nullptr;
    }
    return c;
}

int refuse_intercomm(Comm *c, const char *fn)
{
    return comm_error(c, MPI_ERR_NOT_SUPPORTED, fn,
                      std::string(fn) + " on an intercommunicator is not implemented in weft (MPI_Intercomm_merge "
                                        "gives an intracommunicator over both groups)");
}

void free_comm(MPI_Comm *h)
{
    // Operations still pending on it keep the context in their messages;
    // nothing else refers to the object.
    if (MPI_Comm local = comm(*h)->local_comm; local != MPI_COMM_NULL)
        g_comms.remove(local);
    g_comms.remove(*h);
    *h = MPI_COMM_NULL;
}

void comms_finalize()
{
    g_comms.clear();
    g_groups.clear();
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Comm_size)
int PMPI_Comm_size(MPI_Comm h, int *size)
{
    MPI_THREAD_GUARD;
    COMM_OR_RETURN("MPI_Comm_size", h, c);
    if (!size)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
    *size = c->inter ? static_cast<int>(c->local_world.size()) : c->size;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_rank)
int PMPI_Comm_rank(MPI_Comm h, int *rank)
{
    MPI_THREAD_GUARD;
    COMM_OR_RETURN("MPI_Comm_rank", h, c);
    if (!rank)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_dup)
int PMPI_Comm_dup(MPI_Comm h, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    COMM_OR_RETURN("MPI_Comm_dup", h, c);
    if (!out)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_dup", "newcomm is NULL");
    MPI_Comm dup = MPI_COMM_NULL;
    if (c->inter) {
        if (int rc = intercomm_dup(*c, &dup))
            return comm_error(c, class_of(rc), "MPI_Comm_dup", weft_why(rc));
    } else {
        uint32_t ctx;
        if (int rc = agree_context(*c, &ctx))
            return comm_error(c, class_of(rc), "MPI_Comm_dup", weft_why(rc));
        Comm *parent = comm(h);
        dup = make_comm(parent->world, ctx, parent, "");
    }
    Comm *parent = comm(h);
    comm(dup)->topo = parent->topo;
    if (int rc = attrs_copy(AttrKind::Comm, h, dup)) {
        MPI_Comm gone = dup;
        free_comm(&gone);
        return comm_error(parent, rc, "MPI_Comm_dup",
                          "an attribute's copy callback returned error " + std::to_string(rc));
    }
    *out = dup;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_split)
int PMPI_Comm_split(MPI_Comm h, int color, int key, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    COMM_OR_RETURN("MPI_Comm_split", h, c);
    if (c->inter)
        return refuse_intercomm(c, "MPI_Comm_split");
    if (!out)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_split", "newcomm is NULL");
    if (color < 0 && color != MPI_UNDEFINED)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_split",
                          "color " + std::to_string(color) + " is negative (and not MPI_UNDEFINED)");
    struct Entry {
        int color, key;
    } mine{color, key};
    std::vector<Entry> all(static_cast<size_t>(c->size));
    if (int rc = allgather_bytes(*c, &mine, sizeof mine, reinterpret_cast<std::byte *>(all.data()), kTagSplit))
        return comm_error(c, class_of(rc), "MPI_Comm_split", weft_why(rc));
    // Everyone agrees on one context: groups of different colors share no
    // member, so their traffic cannot meet.
    uint32_t ctx;
    if (int rc = agree_context(*c, &ctx))
        return comm_error(c, class_of(rc), "MPI_Comm_split", weft_why(rc));
    if (color == MPI_UNDEFINED) {
        *out = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    std::vector<int> members;
    for (int r = 0; r < c->size; ++r)
        if (all[r].color == color)
            members.push_back(r);
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return all[a].key < all[b].key; });
    std::vector<uint32_t> world;
    for (int r : members)
        world.push_back(c->world[r]);
    Comm *parent = comm(h);
    *out = make_comm(std::move(world), ctx, parent, "");
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_create)
int PMPI_Comm_create(MPI_Comm h, MPI_Group gh, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    COMM_OR_RETURN("MPI_Comm_create", h, c);
    if (c->inter)
        return refuse_intercomm(c, "MPI_Comm_create");
    Group *g = group(gh);
    if (!g)
        return comm_error(c, MPI_ERR_GROUP, "MPI_Comm_create", "not a group");
    if (!out)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_create", "newcomm is NULL");
    for (uint32_t w : g->world)
        if (c->from_world(w) < 0)
            return comm_error(c, MPI_ERR_GROUP, "MPI_Comm_create",
                              "the group holds job rank " + std::to_string(w) + ", which is not in the communicator");
    std::vector<uint32_t> world = g->world;
    uint32_t ctx;
    if (int rc = agree_context(*c, &ctx))
        return comm_error(c, class_of(rc), "MPI_Comm_create", weft_why(rc));
    if (std::find(world.begin(), world.end(), static_cast<uint32_t>(weft_rank())) == world.end()) {
        *out = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    *out = make_comm(std::move(world), ctx, comm(h), "");
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_free)
int PMPI_Comm_free(MPI_Comm *h)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Comm_free");
    if (!h)
        return comm_error(nullptr, MPI_ERR_ARG, "MPI_Comm_free", "comm is NULL");
    if (*h == MPI_COMM_WORLD || *h == MPI_COMM_SELF)
        return comm_error(comm(*h), MPI_ERR_COMM, "MPI_Comm_free",
                          "MPI_COMM_WORLD and MPI_COMM_SELF are predefined and cannot be freed");
    if (!comm(*h))
        return comm_error(nullptr, MPI_ERR_COMM, "MPI_Comm_free", "not a communicator");
    if (int rc = attrs_delete_all(AttrKind::Comm, *h))
        return comm_error(comm(*h), rc, "MPI_Comm_free",
                          "an attribute's delete callback returned error " + std::to_string(rc) +
                              " (the communicator is not freed)");
    free_comm(h);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_compare)
int PMPI_Comm_compare(MPI_Comm h1, MPI_Comm h2, int *result)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Comm_compare");
    Comm *a = comm(h1), *b = comm(h2);
    if (!a || !b)
        return comm_error(nullptr, MPI_ERR_COMM, "MPI_Comm_compare", "not a communicator");
    if (!result)
        return comm_error(a, MPI_ERR_ARG, "MPI_Comm_compare", "result is NULL");
    if (h1 == h2)
        *result = MPI_IDENT;
    else if (a->world == b->world)
        *result = MPI_CONGRUENT;
    else if (std::is_permutation(a->world.begin(), a->world.end(), b->world.begin(), b->world.end()))
        *result = MPI_SIMILAR;
    else
        *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_group)
int PMPI_Comm_group(MPI_Comm h, MPI_Group *g)
{
    MPI_THREAD_GUARD;
    COMM_OR_RETURN("MPI_Comm_group", h, c);
    if (!g)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_group", "group is NULL");
    *g = make_group(c->inter ? c->local_world : c->world);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_test_inter)
int PMPI_Comm_test_inter(MPI_Comm h, int *flag)
{
    MPI_THREAD_GUARD;
    COMM_OR_RETURN("MPI_Comm_test_inter", h, c);
    if (!flag)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag is NULL");
    *flag = c->inter;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm h, const char *name)
{
    MPI_THREAD_GUARD;
    COMM_OR_RETURN("MPI_Comm_set_name", h, c);
    if (!name)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_set_name", "name is NULL");
    c->name = std::string(name).substr(0, MPI_MAX_OBJECT_NAME - 1);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm h, char *name, int *len)
{
    MPI_THREAD_GUARD;
    COMM_OR_RETURN("MPI_Comm_get_name", h, c);
    if (!name || !len)
        return comm_error(c, MPI_ERR_ARG, "MPI_Comm_get_name", "name and resultlen must not be NULL");
    std::memcpy(name, c->name.c_str(), c->name.size() + 1);
    *len = static_cast<int>(c->name.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Group_size)
int PMPI_Group_size(MPI_Group h, int *size)
{
    MPI_THREAD_GUARD;
    GROUP_OR_RETURN("MPI_Group_size", h, g);
    if (!size)
        return comm_error(nullptr, MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
    *size = static_cast<int>(g->world.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Group_rank)
int PMPI_Group_rank(MPI_Group h, int *rank)
{
    MPI_THREAD_GUARD;
    GROUP_OR_RETURN("MPI_Group_rank", h, g);
    if (!rank)
        return comm_error(nullptr, MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
    *rank = g->my_rank();
    return MPI_SUCCESS;
}

namespace {

int check_ranks(const Group &g, int n, const int ranks[], const char *fn)
{
    if (n < 0 || (n > 0 && !ranks))
        return comm_error(nullptr, MPI_ERR_ARG, fn, "n is negative or ranks is NULL");
    std::vector<bool> seen(g.world.size());
    for (int i = 0; i < n; ++i) {
        if (ranks[i] < 0 || static_cast<size_t>(ranks[i]) >= g.world.size())
            return comm_error(nullptr, MPI_ERR_RANK, fn,
                              "ranks[" + std::to_string(i) + "] = " + std::to_string(ranks[i]) +
                                  " is not in the group (size " + std::to_string(g.world.size()) + ")");
        if (seen[ranks[i]])
            return comm_error(nullptr, MPI_ERR_RANK, fn, "rank " + std::to_string(ranks[i]) + " appears twice");
        seen[ranks[i]] = true;
    }
    return MPI_SUCCESS;
}

// The ranks that MPI_Group_range_incl/excl's triplets (first, last,
// stride) name, in order; an error class (raised) when a triplet is bad.
int expand_ranges(const Group &g, int n, int ranges[][3], const char *fn, std::vector<int> *out)
{
    if (n < 0 || (n > 0 && !ranges))
        return comm_error(nullptr, MPI_ERR_ARG, fn, "n is negative or ranges is NULL");
    const int size = static_cast<int>(g.world.size());
    for (int i = 0; i < n; ++i) {
        const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= size || last < 0 || last >= size ||
            (stride > 0 && first > last) || (stride < 0 && first < last))
            return comm_error(nullptr, MPI_ERR_RANK, fn,
                              "ranges[" + std::to_string(i) + "] = (" + std::to_string(first) + ", " +
                                  std::to_string(last) + ", " + std::to_string(stride) +
                                  ") is not a triplet of ranks of the group (size " + std::to_string(size) + ")");
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride)
            out->push_back(r);
    }
    return MPI_SUCCESS;
}

} // namespace

WEFT_MPI_WEAK(Group_incl)
int PMPI_Group_incl(MPI_Group h, int n, const int ranks[], MPI_Group *out)
{
    MPI_THREAD_GUARD;
    GROUP_OR_RETURN("MPI_Group_incl", h, g);
    if (int rc = check_ranks(*g, n, ranks, "MPI_Group_incl"))
        return rc;
    if (!out)
        return comm_error(nullptr, MPI_ERR_ARG, "MPI_Group_incl", "newgroup is NULL");
    std::vector<uint32_t> w;
    for (int i = 0; i < n; ++i)
        w.push_back(g->world[ranks[i]]);
    *out = make_group(std::move(w));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Group_excl)
int PMPI_Group_excl(MPI_Group h, int n, const int ranks[], MPI_Group *out)
{
    MPI_THREAD_GUARD;
    GROUP_OR_RETURN("MPI_Group_excl", h, g);
    if (int rc = check_ranks(*g, n, ranks, "MPI_Group_excl"))
        return rc;
    if (!out)
        return comm_error(nullptr, MPI_ERR_ARG, "MPI_Group_excl", "newgroup is NULL");
    std::vector<bool> drop(g->world.size());
    for (int i = 0; i < n; ++i)
        drop[ranks[i]] = true;
    std::vector<uint32_t> w;
    for (size_t i = 0; i < g->world.size(); ++i)
        if (!drop[i])
            w.push_back(g->world[i]);
    *out = make_group(std::move(w));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Group_range_incl)
int PMPI_Group_range_incl(MPI_Group h, int n, int ranges[][3], MPI_Group *out)
{
    MPI_THREAD_GUARD;
    GROUP_OR_RETURN("MPI_Group_range_incl", h, g);
    std::vector<int> ranks;
    if (int rc = expand_ranges(*g, n, ranges, "MPI_Group_range_incl", &ranks))
        return rc;
    return PMPI_Group_incl(h, static_cast<int>(ranks.size()), ranks.data(), out);
}

WEFT_MPI_WEAK(Group_range_excl)
int PMPI_Group_range_excl(MPI_Group h, int n, int ranges[][3], MPI_Group *out)
{
    MPI_THREAD_GUARD;
    GROUP_OR_RETURN("MPI_Group_range_excl", h, g);
    std::vector<int> ranks;
    if (int rc = expand_ranges(*g, n, ranges, "MPI_Group_range_excl", &ranks))
        return rc;
    return PMPI_Group_excl(h, static_cast<int>(ranks.size()), ranks.data(), out);
}

namespace {

// Union, intersection, difference: the order is group1's, then group2's.
int set_op(MPI_Group h1, MPI_Group h2, MPI_Group *out, const char *fn, int which)
{
    MPI_NEED_INIT(fn);
    Group *a = group(h1), *b = group(h2);
    if (!a || !b)
        return comm_error(nullptr, MPI_ERR_GROUP, fn, "not a group");
    if (!out)
        return comm_error(nullptr, MPI_ERR_ARG, fn, "newgroup is NULL");
    auto in_b = [&](uint32_t w) { return std::find(b->world.begin(), b->world.end(), w) != b->world.end(); };
    auto in_a = [&](uint32_t w) { return std::find(a->world.begin(), a->world.end(), w) != a->world.end(); };
    std::vector<uint32_t> w;
    for (uint32_t x : a->world)
        if (which == 0 || (which == 1 && in_b(x)) || (which == 2 && !in_b(x)))
            w.push_back(x);
    if (which == 0)
        for (uint32_t x : b->world)
            if (!in_a(x))
                w.push_back(x);
    *out = make_group(std::move(w));
    return MPI_SUCCESS;
}

} // namespace

WEFT_MPI_WEAK(Group_union)
int PMPI_Group_union(MPI_Group a, MPI_Group b, MPI_Group *out)
{
    MPI_THREAD_GUARD;
    return set_op(a, b, out, "MPI_Group_union", 0);
}
WEFT_MPI_WEAK(Group_intersection)
int PMPI_Group_intersection(MPI_Group a, MPI_Group b, MPI_Group *out)
{
    MPI_THREAD_GUARD;
    return set_op(a, b, out, "MPI_Group_intersection", 1);
}
WEFT_MPI_WEAK(Group_difference)
int PMPI_Group_difference(MPI_Group a, MPI_Group b, MPI_Group *out)
{
    MPI_THREAD_GUARD;
    return set_op(a, b, out, "MPI_Group_difference", 2);
}

WEFT_MPI_WEAK(Group_translate_ranks)
int PMPI_Group_translate_ranks(MPI_Group h1, int n, const int ranks1[], MPI_Group h2, int ranks2[])
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Group_translate_ranks");
    Group *a = group(h1), *b = group(h2);
    if (!a || !b)
        return comm_error(nullptr, MPI_ERR_GROUP, "MPI_Group_translate_ranks", "not a group");
    if (n < 0 || (n > 0 && (!ranks1 || !ranks2)))
        return comm_error(nullptr, MPI_ERR_ARG, "MPI_Group_translate_ranks", "n is negative or an array is NULL");
    for (int i = 0; i < n; ++i) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || static_cast<size_t>(ranks1[i]) >= a->world.size())
            return comm_error(nullptr, MPI_ERR_RANK, "MPI_Group_translate_ranks",
                              "ranks1[" + std::to_string(i) + "] = " + std::to_string(ranks1[i]) +
                                  " is not in group1");
        ranks2[i] = b->rank_of_world(a->world[ranks1[i]]);
    }
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Group_compare)
int PMPI_Group_compare(MPI_Group h1, MPI_Group h2, int *result)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Group_compare");
    Group *a = group(h1), *b = group(h2);
    if (!a || !b)
        return comm_error(nullptr, MPI_ERR_GROUP, "MPI_Group_compare", "not a group");
    if (!result)
        return comm_error(nullptr, MPI_ERR_ARG, "MPI_Group_compare", "result is NULL");
    if (a->world == b->world)
        *result = MPI_IDENT;
    else if (std::is_permutation(a->world.begin(), a->world.end(), b->world.begin(), b->world.end()))
        *result = MPI_SIMILAR;
    else
        *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Group_free)
int PMPI_Group_free(MPI_Group *h)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Group_free");
    if (!h)
        return comm_error(nullptr, MPI_ERR_ARG, "MPI_Group_free", "group is NULL");
    if (*h != MPI_GROUP_EMPTY) {
        if (!g_groups.get(*h))
            return comm_error(nullptr, MPI_ERR_GROUP, "MPI_Group_free", "not a group");
        g_groups.remove(*h);
    }
    *h = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

} // extern "C"
