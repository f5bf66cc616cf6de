// SPDX-License-Identifier: BSD-3-Clause
// Process topologies (MPI-3.1 chapter 7): what a communicator made by
// MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create(_adjacent)
// knows about its shape, and the neighbour lists the neighbourhood
// collectives exchange with.
#pragma once

#include <vector>

#include "mpi/internal.hpp"

namespace weft::mpi {

struct Topology {
    int kind = MPI_UNDEFINED;            // MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH
    // Cartesian: the grid, row-major (the last dimension varies fastest).
    std::vector<int> dims, periods;
    // Graph: MPI_Graph_create's arrays, for every node.
    std::vector<int> index, edges;
    // Distributed graph: this process's edges only.
    std::vector<int> sources, source_weights, destinations, dest_weights;
    bool weighted = false;
};

// This process's neighbours on c, in the order of the standard (Cartesian:
// for each dimension the -1 then the +1 neighbour, MPI_PROC_NULL off a
// non-periodic edge), with the tag each message to or from one travels
// under, so that two neighbours that are the same process stay apart.
struct Neighbours {
    std::vector<int> in, out;            // comm ranks (or MPI_PROC_NULL)
    std::vector<int> in_tag, out_tag;
};
Neighbours neighbours(const Comm &c);

// Cartesian helpers (also used by MPI_Cart_sub and the tests of shifts).
std::vector<int> cart_coords(const Topology &t, int rank);
// The rank at coords (wrapped on periodic dimensions); MPI_PROC_NULL when
// off a non-periodic edge.
int cart_rank(const Topology &t, std::vector<int> coords);

} // namespace weft::mpi
