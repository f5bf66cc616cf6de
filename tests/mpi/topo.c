/* SPDX-License-Identifier: BSD-3-Clause */
/* topo: process topologies, each answer checked against one computed here
 * by hand: MPI_Dims_create against the standard's examples, a Cartesian
 * grid's coordinates (row-major), ranks, shifts and subgrids, a ring graph,
 * and distributed graphs made both ways. Any number of ranks. */
#include "mtest.h"

static void dims_case(int nnodes, int ndims, const int *in, const int *expected, const char *what)
{
    int dims[4];
    memcpy(dims, in, sizeof(int) * (size_t)ndims);
    MPI_OK(MPI_Dims_create(nnodes, ndims, dims));
    for (int i = 0; i < ndims; i++)
        CHECK(dims[i] == expected[i], "Dims_create %s: dims[%d] = %d, expected %d", what, i, dims[i], expected[i]);
}

static void dims_create(void)
{
    /* MPI-3.1 7.5.2's examples. */
    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2}, "(6, 2)");
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1}, "(7, 2)");
    dims_case(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1}, "(6, 3, {0,3,0})");
    dims_case(16, 2, (int[]){0, 0}, (int[]){4, 4}, "(16, 2)");
    dims_case(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2}, "(12, 3)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int dims[3] = {0, 3, 0}, cls = -1;
    MPI_Error_class(MPI_Dims_create(7, 3, dims), &cls);
    CHECK(cls == MPI_ERR_DIMS, "Dims_create(7, 3, {0,3,0}): class %d, expected MPI_ERR_DIMS", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void cartesian(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_OK(MPI_Dims_create(mtest_size, 2, dims));
    CHECK(dims[0] * dims[1] == mtest_size && dims[0] >= dims[1], "Dims_create(%d, 2) = {%d, %d}", mtest_size, dims[0],
          dims[1]);
    MPI_Comm cart;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    int status = -1, nd = -1, rank;
    MPI_OK(MPI_Topo_test(cart, &status));
    CHECK(status == MPI_CART, "Topo_test: %d, expected MPI_CART", status);
    MPI_OK(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2, "Cartdim_get: %d", nd);
    MPI_Comm_rank(cart, &rank);
    CHECK(rank == mtest_rank, "cart rank %d, expected %d (no reordering)", rank, mtest_rank);

    /* Row-major: the last dimension varies fastest. */
    for (int r = 0; r < mtest_size; r++) {
        int c[2] = {-1, -1}, back = -1;
        MPI_OK(MPI_Cart_coords(cart, r, 2, c));
        CHECK(c[0] == r / dims[1] && c[1] == r % dims[1], "Cart_coords(%d) = {%d, %d}, expected {%d, %d}", r, c[0],
              c[1], r / dims[1], r % dims[1]);
        MPI_OK(MPI_Cart_rank(cart, c, &back));
        CHECK(back == r, "Cart_rank(coords of %d) = %d", r, back);
    }
    int gd[2], gp[2], gc[2];
    MPI_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0 && gc[0] == mtest_rank / dims[1] &&
              gc[1] == mtest_rank % dims[1],
          "Cart_get: dims {%d,%d} periods {%d,%d} coords {%d,%d}", gd[0], gd[1], gp[0], gp[1], gc[0], gc[1]);
    /* A periodic coordinate wraps. */
    int wrapped[2] = {gc[0] + dims[0], gc[1]}, wr = -1;
    MPI_OK(MPI_Cart_rank(cart, wrapped, &wr));
    CHECK(wr == mtest_rank, "Cart_rank of a wrapped coordinate: %d, expected %d", wr, mtest_rank);

    /* Shifts, by hand: dimension 0 is periodic, dimension 1 is not. */
    const int x = mtest_rank / dims[1], y = mtest_rank % dims[1];
    int src, dst;
    MPI_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(dst == ((x + 1) % dims[0]) * dims[1] + y && src == ((x - 1 + dims[0]) % dims[0]) * dims[1] + y,
          "Cart_shift(0, 1): source %d dest %d", src, dst);
    MPI_OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    CHECK(dst == (y + 1 < dims[1] ? mtest_rank + 1 : MPI_PROC_NULL) && src == (y > 0 ? mtest_rank - 1 : MPI_PROC_NULL),
          "Cart_shift(1, 1): source %d dest %d", src, dst);
    MPI_OK(MPI_Cart_shift(cart, 1, -2, &src, &dst));
    CHECK(dst == (y - 2 >= 0 ? mtest_rank - 2 : MPI_PROC_NULL) &&
              src == (y + 2 < dims[1] ? mtest_rank + 2 : MPI_PROC_NULL),
          "Cart_shift(1, -2): source %d dest %d", src, dst);

    /* Subgrids: keeping dimension 1 gives the rows, keeping 0 the columns. */
    MPI_Comm row, col;
    MPI_OK(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
    MPI_OK(MPI_Cart_sub(cart, (int[]){1, 0}, &col));
    int rs, rr, cs, cr, rnd = -1;
    MPI_Comm_size(row, &rs);
    MPI_Comm_rank(row, &rr);
    MPI_Comm_size(col, &cs);
    MPI_Comm_rank(col, &cr);
    CHECK(rs == dims[1] && rr == y && cs == dims[0] && cr == x, "Cart_sub: row %d/%d col %d/%d, expected %d/%d %d/%d",
          rr, rs, cr, cs, y, dims[1], x, dims[0]);
    MPI_OK(MPI_Cartdim_get(row, &rnd));
    CHECK(rnd == 1, "a row's Cartdim_get: %d", rnd);
    /* The row really connects the row: sum of the row's ranks in cart. */
    int sum = -1;
    MPI_OK(MPI_Allreduce(&mtest_rank, &sum, 1, MPI_INT, MPI_SUM, row));
    CHECK(sum == x * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2, "sum over my row: %d", sum);

    /* Comm_dup keeps the topology. */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(cart, &dup));
    MPI_OK(MPI_Topo_test(dup, &status));
    CHECK(status == MPI_CART, "Topo_test of a dup: %d, expected MPI_CART", status);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    MPI_Comm_free(&cart);

    /* A grid smaller than the communicator: the others get MPI_COMM_NULL. */
    int one[1] = {1}, noper[1] = {0};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, one, noper, 1, &cart));
    CHECK((mtest_rank == 0) == (cart != MPI_COMM_NULL), "1-place grid: rank %d got %s", mtest_rank,
          cart == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    if (cart != MPI_COMM_NULL)
        MPI_Comm_free(&cart);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int too_big[1] = {mtest_size + 1}, cls = -1;
    MPI_Error_class(MPI_Cart_create(MPI_COMM_WORLD, 1, too_big, noper, 0, &cart), &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "a grid larger than the communicator: class %d, expected MPI_ERR_TOPOLOGY", cls);
    MPI_Error_class(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "Cart_shift on MPI_COMM_WORLD: class %d, expected MPI_ERR_TOPOLOGY", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED, "Topo_test(MPI_COMM_WORLD): %d, expected MPI_UNDEFINED", status);
}

static void graph(void)
{
    /* A ring: node i's neighbours are i-1 and i+1. */
    const int n = mtest_size;
    int *index = malloc(sizeof(int) * (size_t)n), *edges = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i - 1 + n) % n;
        edges[2 * i + 1] = (i + 1) % n;
    }
    MPI_Comm g;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    int status, nn, ne, cnt, nb[2];
    MPI_OK(MPI_Topo_test(g, &status));
    CHECK(status == MPI_GRAPH, "graph Topo_test: %d", status);
    MPI_OK(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == n && ne == 2 * n, "Graphdims_get: %d nodes %d edges, expected %d and %d", nn, ne, n, 2 * n);
    for (int r = 0; r < n; r++) {
        MPI_OK(MPI_Graph_neighbors_count(g, r, &cnt));
        MPI_OK(MPI_Graph_neighbors(g, r, 2, nb));
        CHECK(cnt == 2 && nb[0] == (r - 1 + n) % n && nb[1] == (r + 1) % n, "Graph_neighbors(%d): %d: %d %d", r, cnt,
              nb[0], nb[1]);
    }
    int *gi = malloc(sizeof(int) * (size_t)n), *ge = malloc(sizeof(int) * 2 * (size_t)n);
    MPI_OK(MPI_Graph_get(g, n, 2 * n, gi, ge));
    CHECK(memcmp(gi, index, sizeof(int) * (size_t)n) == 0 && memcmp(ge, edges, sizeof(int) * 2 * (size_t)n) == 0,
          "Graph_get differs from what was given");
    MPI_Comm_free(&g);
    free(index), free(edges), free(gi), free(ge);
}

static void dist_graph(void)
{
    const int n = mtest_size, r = mtest_rank;
    /* Adjacent: in from r-1, out to r+1 and r+2, weighted. */
    int src[1] = {(r - 1 + n) % n}, sw[1] = {10 * r}, dst[2] = {(r + 1) % n, (r + 2) % n}, dw[2] = {r, r + 100};
    MPI_Comm g;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &g));
    int status, indeg, outdeg, weighted;
    MPI_OK(MPI_Topo_test(g, &status));
    CHECK(status == MPI_DIST_GRAPH, "dist graph Topo_test: %d", status);
    MPI_OK(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 2 && weighted, "adjacent counts: in %d out %d weighted %d", indeg, outdeg, weighted);
    int s[1], w[1], d[2], v[2];
    MPI_OK(MPI_Dist_graph_neighbors(g, 1, s, w, 2, d, v));
    CHECK(s[0] == src[0] && w[0] == sw[0] && d[0] == dst[0] && d[1] == dst[1] && v[0] == dw[0] && v[1] == dw[1],
          "adjacent neighbours: %d(%d) -> %d(%d) %d(%d)", s[0], w[0], d[0], v[0], d[1], v[1]);
    MPI_Comm_free(&g);

    /* General: rank 0 names every edge i -> i+1 (weight 7i); the others name none. */
    int *sources = malloc(sizeof(int) * (size_t)n), *degrees = malloc(sizeof(int) * (size_t)n);
    int *dests = malloc(sizeof(int) * (size_t)n), *weights = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        sources[i] = i;
        degrees[i] = 1;
        dests[i] = (i + 1) % n;
        weights[i] = 7 * i;
    }
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, r == 0 ? n : 0, sources, degrees, dests,
                                 r == 0 ? weights : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    MPI_OK(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted, "general counts: in %d out %d weighted %d, expected 1 1 1", indeg,
          outdeg, weighted);
    MPI_OK(MPI_Dist_graph_neighbors(g, 1, s, w, 1, d, v));
    const int prev = (r - 1 + n) % n;
    CHECK(s[0] == prev && w[0] == 7 * prev && d[0] == (r + 1) % n && v[0] == 7 * r,
          "general neighbours: in %d (weight %d) out %d (weight %d), expected %d (%d) %d (%d)", s[0], w[0], d[0], v[0],
          prev, 7 * prev, (r + 1) % n, 7 * r);
    MPI_Comm_free(&g);
    free(sources), free(degrees), free(dests), free(weights);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    dims_create();
    cartesian();
    graph();
    dist_graph();
    return mtest_finish();
}
