// SPDX-License-Identifier: BSD-3-Clause
// Process topologies (MPI-3.1 chapter 7): Cartesian grids, graphs and
// distributed graphs. A topology communicator is a new communicator (made
// by MPI_Comm_split, so it has its own context and no attributes) with a
// Topology attached; weft does not reorder ranks (reorder is a hint), so
// rank i of the new communicator is rank i of the old one.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi/topo.hpp"

namespace weft::mpi {

namespace {

// Tags on the parent's collective context while MPI_Dist_graph_create
// hands each process the edges that touch it; and the neighbourhood
// collectives' base tag (Cartesian: plus the neighbour's slot).
enum TopoTag : int { kTagDistCount = 2201, kTagDistEdges = 2202, kTagNeighbour = 3000 };

int topo_error(Comm *c, int cls, const char *fn, const std::string &why) { return raise(c, cls, fn, why); }

#define COMM_OK(fn, h, p) COMM_OF_KIND_OR_RETURN(fn, h, p, false)

// The communicator's topology of kind (MPI_UNDEFINED: any), or the error raised.
const Topology *topology_of(Comm *c, int kind, const char *fn, int *rc)
{
    const Topology *t = c->topo.get();
    if (t && (kind == MPI_UNDEFINED || t->kind == kind))
        return t;
    static const char *names[] = {"", "a graph", "a Cartesian", "a distributed graph"};
    *rc = topo_error(c, MPI_ERR_TOPOLOGY, fn,
                     std::string("the communicator has no ") +
                         (kind == MPI_UNDEFINED ? "process" : names[kind]) + " topology");
    return nullptr;
}

#define TOPO_OR_RETURN(fn, c, kind, t)                                                             \
    int t##_rc = MPI_SUCCESS;                                                                      \
    const Topology *t = topology_of(c, kind, fn, &t##_rc);                                        \
    if (!t)                                                                                        \
    return t##_rc

// The members of h that take part (rank < n) in a new communicator with
// topology t; the others get MPI_COMM_NULL.
int attach(MPI_Comm h, int n, std::shared_ptr<Topology> t, MPI_Comm *out)
{
    const Comm *c = comm(h);
    if (int rc = PMPI_Comm_split(h, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, out))
        return rc;
    if (*out != MPI_COMM_NULL)
        comm(*out)->topo = std::move(t);
    return MPI_SUCCESS;
}

int product(const std::vector<int> &dims)
{
    long p = 1;
    for (int d : dims)
        p *= d;
    return static_cast<int>(std::min<long>(p, 1L << 30));
}

// The prime factors of n, largest first.
std::vector<int> prime_factors(int n)
{
    std::vector<int> f;
    for (int p = 2; static_cast<long>(p) * p <= n; ++p)
        while (n % p == 0) {
            f.push_back(p);
            n /= p;
        }
    if (n > 1)
        f.push_back(n);
    std::sort(f.rbegin(), f.rend());
    return f;
}

bool is_weights_array(const int *w) { return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY; }

int check_ranks_in(Comm *c, int n, const int *ranks, const char *what, const char *fn)
{
    for (int i = 0; i < n; ++i)
        if (ranks[i] < 0 || ranks[i] >= c->size)
            return topo_error(c, MPI_ERR_RANK, fn,
                              std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(ranks[i]) +
                                  " is not a rank of the communicator (size " + std::to_string(c->size) + ")");
    return MPI_SUCCESS;
}

} // namespace

std::vector<int> cart_coords(const Topology &t, int rank)
{
    std::vector<int> coords(t.dims.size());
    for (size_t i = t.dims.size(); i-- > 0;) {
        coords[i] = rank % t.dims[i];
        rank /= t.dims[i];
    }
    return coords;
}

int cart_rank(const Topology &t, std::vector<int> coords)
{
    int rank = 0;
    for (size_t i = 0; i < t.dims.size(); ++i) {
        int x = coords[i];
        if (x < 0 || x >= t.dims[i]) {
            if (!t.periods[i])
                return MPI_PROC_NULL;
            x = ((x % t.dims[i]) + t.dims[i]) % t.dims[i];
        }
        rank = rank * t.dims[i] + x;
    }
    return rank;
}

Neighbours neighbours(const Comm &c)
{
    Neighbours n;
    const Topology &t = *c.topo;
    switch (t.kind) {
    case MPI_CART: {
        // A message to my -1 neighbour arrives in its +1 slot and the
        // other way round: the tag names the receiver's slot.
        const std::vector<int> me = cart_coords(t, c.rank);
        for (size_t d = 0; d < t.dims.size(); ++d) {
            for (int dir : {-1, +1}) {
                std::vector<int> x = me;
                x[d] += dir;
                const int r = cart_rank(t, x);
                const int slot = static_cast<int>(2 * d) + (dir > 0);
                n.in.push_back(r);
                n.out.push_back(r);
                n.in_tag.push_back(kTagNeighbour + slot);
                n.out_tag.push_back(kTagNeighbour + (slot ^ 1));
            }
        }
        break;
    }
    case MPI_GRAPH: {
        const int first = c.rank == 0 ? 0 : t.index[static_cast<size_t>(c.rank) - 1];
        n.in.assign(t.edges.begin() + first, t.edges.begin() + t.index[static_cast<size_t>(c.rank)]);
        n.out = n.in;
        break;
    }
    case MPI_DIST_GRAPH:
        n.in = t.sources;
        n.out = t.destinations;
        break;
    }
    if (n.in_tag.empty()) {
        n.in_tag.assign(n.in.size(), kTagNeighbour);
        n.out_tag.assign(n.out.size(), kTagNeighbour);
    }
    return n;
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

int weft_mpi_unweighted = 0, weft_mpi_weights_empty = 0;

WEFT_MPI_WEAK(Dims_create)
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Dims_create";
    MPI_NEED_INIT(fn);
    if (nnodes <= 0)
        return topo_error(nullptr, MPI_ERR_ARG, fn, "nnodes " + std::to_string(nnodes) + " is not positive");
    if (ndims < 0 || (ndims > 0 && !dims))
        return topo_error(nullptr, MPI_ERR_DIMS, fn, "ndims is negative or dims is NULL");
    long fixed = 1;
    int free_dims = 0;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] < 0)
            return topo_error(nullptr, MPI_ERR_DIMS, fn,
                              "dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) + " is negative");
        if (dims[i] == 0)
            ++free_dims;
        else
            fixed *= dims[i];
    }
    if (nnodes % fixed != 0 || (free_dims == 0 && fixed != nnodes))
        return topo_error(nullptr, MPI_ERR_DIMS, fn,
                          "the dimensions already set multiply to " + std::to_string(fixed) + ", which " +
                              (free_dims ? "does not divide " : "is not ") + "nnodes = " + std::to_string(nnodes));
    // Balanced: each prime factor, largest first, goes to the smallest
    // free dimension so far; the free dimensions then decrease.
    std::vector<int> free(static_cast<size_t>(free_dims), 1);
    if (free_dims > 0)
        for (int p : prime_factors(static_cast<int>(nnodes / fixed)))
            *std::min_element(free.begin(), free.end()) *= p;
    std::sort(free.rbegin(), free.rend());
    for (int i = 0, k = 0; i < ndims; ++i)
        if (dims[i] == 0)
            dims[i] = free[static_cast<size_t>(k++)];
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Cart_create)
int PMPI_Cart_create(MPI_Comm h, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Cart_create";
    COMM_OK(fn, h, c);
    (void)reorder;
    if (!out)
        return topo_error(c, MPI_ERR_ARG, fn, "comm_cart is NULL");
    if (ndims < 0 || (ndims > 0 && (!dims || !periods)))
        return topo_error(c, MPI_ERR_DIMS, fn, "ndims is negative, or dims or periods is NULL");
    auto t = std::make_shared<Topology>();
    t->kind = MPI_CART;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] <= 0)
            return topo_error(c, MPI_ERR_DIMS, fn,
                              "dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) + " is not positive");
        t->dims.push_back(dims[i]);
        t->periods.push_back(periods[i] != 0);
    }
    const int n = product(t->dims);
    if (n > c->size)
        return topo_error(c, MPI_ERR_TOPOLOGY, fn,
                          "the grid has " + std::to_string(n) + " places, more than the communicator's " +
                              std::to_string(c->size) + " processes");
    return attach(h, n, std::move(t), out);
}

WEFT_MPI_WEAK(Cart_map)
int PMPI_Cart_map(MPI_Comm h, int ndims, const int dims[], const int periods[], int *newrank)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Cart_map";
    COMM_OK(fn, h, c);
    (void)periods;
    if (ndims < 0 || (ndims > 0 && !dims) || !newrank)
        return topo_error(c, MPI_ERR_ARG, fn, "ndims is negative, or dims or newrank is NULL");
    const int n = product(std::vector<int>(dims, dims + ndims));
    if (n > c->size)
        return topo_error(c, MPI_ERR_TOPOLOGY, fn, "the grid has more places than the communicator has processes");
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Cartdim_get)
int PMPI_Cartdim_get(MPI_Comm h, int *ndims)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Cartdim_get";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_CART, t);
    if (!ndims)
        return topo_error(c, MPI_ERR_ARG, fn, "ndims is NULL");
    *ndims = static_cast<int>(t->dims.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Cart_get)
int PMPI_Cart_get(MPI_Comm h, int maxdims, int dims[], int periods[], int coords[])
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Cart_get";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_CART, t);
    const int nd = static_cast<int>(t->dims.size());
    if (maxdims < nd || (nd > 0 && (!dims || !periods || !coords)))
        return topo_error(c, MPI_ERR_ARG, fn,
                          "maxdims " + std::to_string(maxdims) + " is below the grid's " + std::to_string(nd) +
                              " dimensions, or an array is NULL");
    const std::vector<int> me = cart_coords(*t, c->rank);
    for (int i = 0; i < nd; ++i) {
        dims[i] = t->dims[static_cast<size_t>(i)];
        periods[i] = t->periods[static_cast<size_t>(i)];
        coords[i] = me[static_cast<size_t>(i)];
    }
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Cart_coords)
int PMPI_Cart_coords(MPI_Comm h, int rank, int maxdims, int coords[])
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Cart_coords";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_CART, t);
    if (rank < 0 || rank >= c->size)
        return topo_error(c, MPI_ERR_RANK, fn,
                          "rank " + std::to_string(rank) + " is not in the grid (size " +
                              std::to_string(c->size) + ")");
    const int nd = static_cast<int>(t->dims.size());
    if (maxdims < nd || (nd > 0 && !coords))
        return topo_error(c, MPI_ERR_ARG, fn,
                          "maxdims " + std::to_string(maxdims) + " is below the grid's " + std::to_string(nd) +
                              " dimensions, or coords is NULL");
    const std::vector<int> x = cart_coords(*t, rank);
    std::copy(x.begin(), x.end(), coords);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Cart_rank)
int PMPI_Cart_rank(MPI_Comm h, const int coords[], int *rank)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Cart_rank";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_CART, t);
    const size_t nd = t->dims.size();
    if ((nd > 0 && !coords) || !rank)
        return topo_error(c, MPI_ERR_ARG, fn, "coords or rank is NULL");
    const std::vector<int> x(coords, coords + nd);
    const int r = cart_rank(*t, x);
    if (r == MPI_PROC_NULL)
        return topo_error(c, MPI_ERR_ARG, fn, "a coordinate is outside a non-periodic dimension");
    *rank = r;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Cart_shift)
int PMPI_Cart_shift(MPI_Comm h, int direction, int disp, int *source, int *dest)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Cart_shift";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_CART, t);
    if (direction < 0 || static_cast<size_t>(direction) >= t->dims.size())
        return topo_error(c, MPI_ERR_ARG, fn,
                          "direction " + std::to_string(direction) + " is not a dimension of the grid (it has " +
                              std::to_string(t->dims.size()) + ")");
    if (!source || !dest)
        return topo_error(c, MPI_ERR_ARG, fn, "rank_source or rank_dest is NULL");
    std::vector<int> x = cart_coords(*t, c->rank);
    x[static_cast<size_t>(direction)] += disp;
    *dest = cart_rank(*t, x);
    x[static_cast<size_t>(direction)] -= 2 * disp;
    *source = cart_rank(*t, x);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Cart_sub)
int PMPI_Cart_sub(MPI_Comm h, const int remain_dims[], MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Cart_sub";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_CART, t);
    const size_t nd = t->dims.size();
    if ((nd > 0 && !remain_dims) || !out)
        return topo_error(c, MPI_ERR_ARG, fn, "remain_dims or newcomm is NULL");
    // Processes that agree on the dropped coordinates form one subgrid;
    // the kept coordinates order them (as the old ranks do).
    const std::vector<int> x = cart_coords(*t, c->rank);
    auto sub = std::make_shared<Topology>();
    sub->kind = MPI_CART;
    int color = 0;
    for (size_t i = 0; i < nd; ++i) {
        if (remain_dims[i]) {
            sub->dims.push_back(t->dims[i]);
            sub->periods.push_back(t->periods[i]);
        } else {
            color = color * t->dims[i] + x[i];
        }
    }
    if (int rc = PMPI_Comm_split(h, color, c->rank, out))
        return rc;
    comm(*out)->topo = std::move(sub);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Graph_create)
int PMPI_Graph_create(MPI_Comm h, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Graph_create";
    COMM_OK(fn, h, c);
    (void)reorder;
    if (!out)
        return topo_error(c, MPI_ERR_ARG, fn, "comm_graph is NULL");
    if (nnodes < 0 || nnodes > c->size)
        return topo_error(c, MPI_ERR_ARG, fn,
                          "nnodes " + std::to_string(nnodes) + " is negative or more than the communicator's " +
                              std::to_string(c->size) + " processes");
    if (nnodes > 0 && (!index || (index[nnodes - 1] > 0 && !edges)))
        return topo_error(c, MPI_ERR_ARG, fn, "index or edges is NULL");
    auto t = std::make_shared<Topology>();
    t->kind = MPI_GRAPH;
    t->index.assign(index, index + nnodes);
    for (int i = 0; i < nnodes; ++i)
        if (index[i] < (i ? index[i - 1] : 0))
            return topo_error(c, MPI_ERR_ARG, fn,
                              "index[" + std::to_string(i) + "] = " + std::to_string(index[i]) +
                                  " is below the entry before it (index counts edges cumulatively)");
    const int nedges = nnodes ? index[nnodes - 1] : 0;
    t->edges.assign(edges, edges + nedges);
    for (int i = 0; i < nedges; ++i)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return topo_error(c, MPI_ERR_ARG, fn,
                              "edges[" + std::to_string(i) + "] = " + std::to_string(edges[i]) +
                                  " is not a node of the graph (nnodes " + std::to_string(nnodes) + ")");
    return attach(h, nnodes, std::move(t), out);
}

WEFT_MPI_WEAK(Graph_map)
int PMPI_Graph_map(MPI_Comm h, int nnodes, const int index[], const int edges[], int *newrank)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Graph_map";
    COMM_OK(fn, h, c);
    (void)index, (void)edges;
    if (!newrank || nnodes < 0 || nnodes > c->size)
        return topo_error(c, MPI_ERR_ARG, fn, "newrank is NULL, or nnodes is negative or above the size");
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Graphdims_get)
int PMPI_Graphdims_get(MPI_Comm h, int *nnodes, int *nedges)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Graphdims_get";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_GRAPH, t);
    if (!nnodes || !nedges)
        return topo_error(c, MPI_ERR_ARG, fn, "nnodes or nedges is NULL");
    *nnodes = static_cast<int>(t->index.size());
    *nedges = static_cast<int>(t->edges.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Graph_get)
int PMPI_Graph_get(MPI_Comm h, int maxindex, int maxedges, int index[], int edges[])
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Graph_get";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_GRAPH, t);
    if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && !index) || (maxedges > 0 && !edges))
        return topo_error(c, MPI_ERR_ARG, fn, "maxindex or maxedges is negative, or an array is NULL");
    const size_t ni = std::min(t->index.size(), static_cast<size_t>(maxindex));
    const size_t ne = std::min(t->edges.size(), static_cast<size_t>(maxedges));
    std::copy_n(t->index.begin(), ni, index);
    std::copy_n(t->edges.begin(), ne, edges);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Graph_neighbors_count)
int PMPI_Graph_neighbors_count(MPI_Comm h, int rank, int *n)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Graph_neighbors_count";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_GRAPH, t);
    if (rank < 0 || static_cast<size_t>(rank) >= t->index.size())
        return topo_error(c, MPI_ERR_RANK, fn, "rank " + std::to_string(rank) + " is not a node of the graph");
    if (!n)
        return topo_error(c, MPI_ERR_ARG, fn, "nneighbors is NULL");
    *n = t->index[static_cast<size_t>(rank)] - (rank ? t->index[static_cast<size_t>(rank) - 1] : 0);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Graph_neighbors)
int PMPI_Graph_neighbors(MPI_Comm h, int rank, int maxneighbors, int neighbors[])
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Graph_neighbors";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_GRAPH, t);
    if (rank < 0 || static_cast<size_t>(rank) >= t->index.size())
        return topo_error(c, MPI_ERR_RANK, fn, "rank " + std::to_string(rank) + " is not a node of the graph");
    if (maxneighbors < 0 || (maxneighbors > 0 && !neighbors))
        return topo_error(c, MPI_ERR_ARG, fn, "maxneighbors is negative or neighbors is NULL");
    const int first = rank ? t->index[static_cast<size_t>(rank) - 1] : 0;
    const int n = std::min(maxneighbors, t->index[static_cast<size_t>(rank)] - first);
    std::copy_n(t->edges.begin() + first, n, neighbors);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Topo_test)
int PMPI_Topo_test(MPI_Comm h, int *status)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Topo_test";
    MPI_NEED_INIT(fn);
    Comm *c = comm(h);
    if (!c)
        return topo_error(nullptr, MPI_ERR_COMM, fn, "communicator " + std::to_string(h) + " is not valid");
    if (!status)
        return topo_error(c, MPI_ERR_ARG, fn, "status is NULL");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Dist_graph_create_adjacent)
int PMPI_Dist_graph_create_adjacent(MPI_Comm h, int indegree, const int sources[], const int sourceweights[],
                                    int outdegree, const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Dist_graph_create_adjacent";
    COMM_OK(fn, h, c);
    (void)info, (void)reorder;
    if (!out)
        return topo_error(c, MPI_ERR_ARG, fn, "comm_dist_graph is NULL");
    if (indegree < 0 || outdegree < 0 || (indegree > 0 && !sources) || (outdegree > 0 && !destinations))
        return topo_error(c, MPI_ERR_ARG, fn, "a degree is negative or sources / destinations is NULL");
    if (int rc = check_ranks_in(c, indegree, sources, "sources", fn))
        return rc;
    if (int rc = check_ranks_in(c, outdegree, destinations, "destinations", fn))
        return rc;
    auto t = std::make_shared<Topology>();
    t->kind = MPI_DIST_GRAPH;
    t->sources.assign(sources, sources + indegree);
    t->destinations.assign(destinations, destinations + outdegree);
    t->weighted = sourceweights != MPI_UNWEIGHTED;
    if (is_weights_array(sourceweights))
        t->source_weights.assign(sourceweights, sourceweights + indegree);
    if (is_weights_array(destweights))
        t->dest_weights.assign(destweights, destweights + outdegree);
    return attach(h, c->size, std::move(t), out);
}

WEFT_MPI_WEAK(Dist_graph_create)
int PMPI_Dist_graph_create(MPI_Comm h, int n, const int sources[], const int degrees[], const int destinations[],
                           const int weights[], MPI_Info info, int reorder, MPI_Comm *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Dist_graph_create";
    COMM_OK(fn, h, c);
    (void)info, (void)reorder;
    if (!out)
        return topo_error(c, MPI_ERR_ARG, fn, "comm_dist_graph is NULL");
    if (n < 0 || (n > 0 && (!sources || !degrees)))
        return topo_error(c, MPI_ERR_ARG, fn, "n is negative, or sources or degrees is NULL");
    if (int rc = check_ranks_in(c, n, sources, "sources", fn))
        return rc;
    // Each edge this process names goes to both of its ends, as a
    // (source, destination, weight) triple, in the order given.
    const bool weighted = weights != MPI_UNWEIGHTED;
    std::vector<std::vector<int>> to(static_cast<size_t>(c->size));
    for (int i = 0, k = 0; i < n; ++i) {
        if (degrees[i] < 0)
            return topo_error(c, MPI_ERR_ARG, fn, "degrees[" + std::to_string(i) + "] is negative");
        if (degrees[i] > 0 && !destinations)
            return topo_error(c, MPI_ERR_ARG, fn, "destinations is NULL");
        if (int rc = check_ranks_in(c, degrees[i], destinations + k, "destinations", fn))
            return rc;
        for (int j = 0; j < degrees[i]; ++j, ++k) {
            const int edge[3] = {sources[i], destinations[k], is_weights_array(weights) ? weights[k] : 1};
            to[static_cast<size_t>(edge[0])].insert(to[static_cast<size_t>(edge[0])].end(), edge, edge + 3);
            if (edge[1] != edge[0])
                to[static_cast<size_t>(edge[1])].insert(to[static_cast<size_t>(edge[1])].end(), edge, edge + 3);
        }
    }
    // Counts, then the triples, from everyone to everyone (rare, small).
    std::vector<int> counts(static_cast<size_t>(c->size));
    std::vector<std::vector<int>> from(static_cast<size_t>(c->size));
    std::vector<weft_request_t> reqs;
    auto exchange = [&](auto recv_buf, auto recv_bytes, auto send_buf, auto send_bytes, int tag) -> int {
        reqs.clear();
        for (int r = 0; r < c->size; ++r) {
            weft_request_t q;
            if (int rc = coll_irecv(*c, recv_buf(r), recv_bytes(r), r, tag, &q))
                return rc;
            reqs.push_back(q);
        }
        for (int r = 0; r < c->size; ++r) {
            weft_request_t q;
            if (int rc = coll_isend(*c, send_buf(r), send_bytes(r), r, tag, &q))
                return rc;
            reqs.push_back(q);
        }
        return coll_waitall(reqs);
    };
    std::vector<int> my_counts(static_cast<size_t>(c->size));
    for (size_t r = 0; r < to.size(); ++r)
        my_counts[r] = static_cast<int>(to[r].size());
    int rc = exchange([&](int r) { return &counts[static_cast<size_t>(r)]; }, [](int) { return sizeof(int); },
                      [&](int r) { return &my_counts[static_cast<size_t>(r)]; }, [](int) { return sizeof(int); },
                      kTagDistCount);
    if (rc == WEFT_SUCCESS) {
        for (size_t r = 0; r < from.size(); ++r)
            from[r].resize(static_cast<size_t>(counts[r]));
        rc = exchange([&](int r) { return from[static_cast<size_t>(r)].data(); },
                      [&](int r) { return from[static_cast<size_t>(r)].size() * sizeof(int); },
                      [&](int r) { return to[static_cast<size_t>(r)].data(); },
                      [&](int r) { return to[static_cast<size_t>(r)].size() * sizeof(int); }, kTagDistEdges);
    }
    if (rc != WEFT_SUCCESS)
        return topo_error(c, fail_class(rc), fn, weft_why(rc));
    auto t = std::make_shared<Topology>();
    t->kind = MPI_DIST_GRAPH;
    t->weighted = weighted;
    for (const std::vector<int> &edges : from)
        for (size_t i = 0; i + 2 < edges.size(); i += 3) {
            if (edges[i + 1] == c->rank) {
                t->sources.push_back(edges[i]);
                t->source_weights.push_back(edges[i + 2]);
            }
            if (edges[i] == c->rank) {
                t->destinations.push_back(edges[i + 1]);
                t->dest_weights.push_back(edges[i + 2]);
            }
        }
    return attach(h, c->size, std::move(t), out);
}

WEFT_MPI_WEAK(Dist_graph_neighbors_count)
int PMPI_Dist_graph_neighbors_count(MPI_Comm h, int *indegree, int *outdegree, int *weighted)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Dist_graph_neighbors_count";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_DIST_GRAPH, t);
    if (!indegree || !outdegree || !weighted)
        return topo_error(c, MPI_ERR_ARG, fn, "indegree, outdegree or weighted is NULL");
    *indegree = static_cast<int>(t->sources.size());
    *outdegree = static_cast<int>(t->destinations.size());
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Dist_graph_neighbors)
int PMPI_Dist_graph_neighbors(MPI_Comm h, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[])
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Dist_graph_neighbors";
    COMM_OK(fn, h, c);
    TOPO_OR_RETURN(fn, c, MPI_DIST_GRAPH, t);
    if (maxindegree < 0 || maxoutdegree < 0 || (maxindegree > 0 && !sources) ||
        (maxoutdegree > 0 && !destinations))
        return topo_error(c, MPI_ERR_ARG, fn, "a max degree is negative or an array is NULL");
    auto copy = [](const std::vector<int> &from, int max, int *to) {
        std::copy_n(from.begin(), std::min(from.size(), static_cast<size_t>(max)), to);
    };
    copy(t->sources, maxindegree, sources);
    copy(t->destinations, maxoutdegree, destinations);
    if (t->weighted && is_weights_array(sourceweights))
        copy(t->source_weights, maxindegree, sourceweights);
    if (t->weighted && is_weights_array(destweights))
        copy(t->dest_weights, maxoutdegree, destweights);
    return MPI_SUCCESS;
}

} // extern "C"
