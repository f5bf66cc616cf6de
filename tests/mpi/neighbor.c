/* SPDX-License-Identifier: BSD-3-Clause */
/* neighbor: the neighbourhood collectives, blocking and nonblocking, on a
 * periodic and a non-periodic ring (Cartesian), a 2-D grid, a graph and a
 * distributed graph. Every value says who sent it to which slot, so the
 * check computes by hand what each slot must hold (at 1 and 2 ranks both
 * neighbours of a ring are the same process: the slots must still differ).
 * Any number of ranks. */
#include "mtest.h"

#define SENTINEL (-7)

/* What rank r sends in its block k (alltoall kinds). */
static int val(int r, int k) { return 1000 * r + k; }

static MPI_Comm ring(int periodic)
{
    int dims[1] = {mtest_size}, periods[1] = {periodic};
    MPI_Comm c;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c));
    return c;
}

static void check_ring_alltoall(const int *got, int periodic, const char *what)
{
    const int n = mtest_size, r = mtest_rank;
    /* Slot 0 is from my -1 neighbour, which sent me its block 1 (its +1 side). */
    const int left = r - 1 >= 0 || periodic ? (r - 1 + n) % n : -1, right = r + 1 < n || periodic ? (r + 1) % n : -1;
    const int e0 = left < 0 ? SENTINEL : val(left, 1), e1 = right < 0 ? SENTINEL : val(right, 0);
    CHECK(got[0] == e0 && got[1] == e1, "%s: slots %d %d, expected %d %d", what, got[0], got[1], e0, e1);
}

static void rings(void)
{
    for (int periodic = 1; periodic >= 0; periodic--) {
        MPI_Comm c = ring(periodic);
        const char *kind = periodic ? "periodic ring" : "open ring";
        char what[80];
        int send[2] = {val(mtest_rank, 0), val(mtest_rank, 1)}, got[2] = {SENTINEL, SENTINEL};
        MPI_OK(MPI_Neighbor_alltoall(send, 1, MPI_INT, got, 1, MPI_INT, c));
        snprintf(what, sizeof what, "Neighbor_alltoall on a %s", kind);
        check_ring_alltoall(got, periodic, what);

        got[0] = got[1] = SENTINEL;
        MPI_Request rq;
        MPI_OK(MPI_Ineighbor_alltoall(send, 1, MPI_INT, got, 1, MPI_INT, c, &rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(rq == MPI_REQUEST_NULL, "Wait left request %d", rq);
        snprintf(what, sizeof what, "Ineighbor_alltoall on a %s", kind);
        check_ring_alltoall(got, periodic, what);

        /* Allgather: the same value to both sides. */
        const int n = mtest_size, r = mtest_rank;
        int mine = val(r, 9);
        got[0] = got[1] = SENTINEL;
        MPI_OK(MPI_Ineighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, c, &rq));
        int done = 0;
        for (long spins = 0; !done && spins < 100000000L; spins++)
            MPI_OK(MPI_Test(&rq, &done, MPI_STATUS_IGNORE));
        CHECK(done, "Ineighbor_allgather never completed under MPI_Test");
        const int left = r > 0 || periodic ? (r - 1 + n) % n : -1, right = r + 1 < n || periodic ? (r + 1) % n : -1;
        CHECK(got[0] == (left < 0 ? SENTINEL : val(left, 9)) && got[1] == (right < 0 ? SENTINEL : val(right, 9)),
              "Ineighbor_allgather on a %s: %d %d", kind, got[0], got[1]);
        MPI_Comm_free(&c);
    }
}

/* A 2-D periodic grid, alltoallv with block k holding k+1 ints at a gap. */
static void grid(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(mtest_size, 2, dims);
    MPI_Comm c;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
    int scounts[4], sdispls[4], rcounts[4], rdispls[4], send[40], got[40];
    for (int k = 0; k < 4; k++) {
        scounts[k] = k + 1;
        sdispls[k] = 10 * k;
        /* Slot k receives what the neighbour sent as its block k^1. */
        rcounts[k] = (k ^ 1) + 1;
        rdispls[k] = 10 * k + 1;
        for (int j = 0; j < k + 1; j++)
            send[10 * k + j] = val(mtest_rank, 10 * k + j);
    }
    for (int i = 0; i < 40; i++)
        got[i] = SENTINEL;
    MPI_OK(MPI_Neighbor_alltoallv(send, scounts, sdispls, MPI_INT, got, rcounts, rdispls, MPI_INT, c));
    for (int k = 0; k < 4; k++) {
        int src, dst, from;
        MPI_Cart_shift(c, k / 2, 1, &src, &dst);
        from = k % 2 == 0 ? src : dst;
        for (int j = 0; j < rcounts[k]; j++) {
            const int e = val(from, 10 * (k ^ 1) + j);
            CHECK(got[10 * k + 1 + j] == e, "grid alltoallv slot %d[%d]: %d, expected %d (from %d)", k, j,
                  got[10 * k + 1 + j], e, from);
        }
        CHECK(got[10 * k] == SENTINEL, "grid alltoallv wrote before slot %d", k);
    }
    MPI_Comm_free(&c);
}

/* A ring graph (node i's neighbours are i-1 and i+1): allgatherv. */
static void graph_allgatherv(void)
{
    const int n = mtest_size, r = mtest_rank;
    int *index = malloc(sizeof(int) * (size_t)n), *edges = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i - 1 + n) % n;
        edges[2 * i + 1] = (i + 1) % n;
    }
    MPI_Comm g;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    /* Everyone sends 2 ints; slot k takes them at displacement 5k. */
    int send[2] = {val(r, 0), val(r, 1)}, got[10], counts[2] = {2, 2}, displs[2] = {0, 5};
    for (int i = 0; i < 10; i++)
        got[i] = SENTINEL;
    MPI_OK(MPI_Neighbor_allgatherv(send, 2, MPI_INT, got, counts, displs, MPI_INT, g));
    for (int k = 0; k < 2; k++) {
        const int from = edges[2 * r + k];
        CHECK(got[5 * k] == val(from, 0) && got[5 * k + 1] == val(from, 1) && got[5 * k + 2] == SENTINEL,
              "graph allgatherv slot %d: %d %d %d, expected %d %d from %d", k, got[5 * k], got[5 * k + 1],
              got[5 * k + 2], val(from, 0), val(from, 1), from);
    }
    MPI_Comm_free(&g);
    free(index), free(edges);
}

/* A distributed graph (in from r-1 and r-2, out to r+1 and r+2), alltoallw
 * with a strided type on the receiving side. */
static void dist_alltoallw(void)
{
    const int n = mtest_size, r = mtest_rank;
    int srcs[2] = {(r - 1 + n) % n, (r - 2 + 2 * n) % n}, dsts[2] = {(r + 1) % n, (r + 2) % n};
    MPI_Comm g;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &g));
    MPI_Datatype every_other;
    MPI_Type_vector(3, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int send[6], got[20], scounts[2] = {3, 3}, rcounts[2] = {1, 1};
    MPI_Aint sdispls[2] = {0, 3 * sizeof(int)}, rdispls[2] = {0, 10 * sizeof(int)};
    MPI_Datatype stypes[2] = {MPI_INT, MPI_INT}, rtypes[2] = {every_other, every_other};
    for (int k = 0; k < 6; k++)
        send[k] = val(r, k);
    for (int i = 0; i < 20; i++)
        got[i] = SENTINEL;
    MPI_Request rq;
    MPI_OK(MPI_Ineighbor_alltoallw(send, scounts, sdispls, stypes, got, rcounts, rdispls, rtypes, g, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    /* In-slot k is from r-1-k, which sent me its out-block k (I am its r'+1+k). */
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 6; j++) {
            const int e = j % 2 ? SENTINEL : val(srcs[k], 3 * k + j / 2);
            CHECK(got[10 * k + j] == e, "dist alltoallw slot %d[%d]: %d, expected %d", k, j, got[10 * k + j], e);
        }
    MPI_Type_free(&every_other);
    MPI_Comm_free(&g);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, y[2], cls = -1;
    MPI_Error_class(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "Neighbor_allgather without a topology: class %d, expected MPI_ERR_TOPOLOGY", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rings();
    grid();
    graph_allgatherv();
    dist_alltoallw();
    errors();
    return mtest_finish();
}
