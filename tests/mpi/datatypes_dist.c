/* SPDX-License-Identifier: BSD-3-Clause */
/* datatypes_dist: the datatype constructors mpi4py's suite found missing,
 * each checked against a serial reference computed here:
 *  - MPI_Type_create_darray (BLOCK, CYCLIC with default and given dargs,
 *    NONE; C and Fortran order; 1-3 dimensions; every process of the grid):
 *    packing a global array whose elements hold their own index gives the
 *    indices that process owns, in memory order; extent is the whole array;
 *    the envelope says MPI_COMBINER_DARRAY with 4*ndims+4 integers;
 *  - MPI_Type_create_hindexed_block: the blocks at byte displacements, and
 *    MPI_COMBINER_HINDEXED_BLOCK's contents;
 *  - MPI_Type_set_name on a predefined datatype (allowed, as for
 *    MPI_COMM_WORLD), and bad darray arguments giving MPI_ERR_ARG. */
#include "mtest.h"

#define MAX_ELEMS 512

/* The grid coordinate of global index i in one dimension (MPI-3.1 4.1.4). */
static int owner(int i, int gsize, int distrib, int darg, int psize)
{
    if (distrib == MPI_DISTRIBUTE_NONE)
        return 0;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        if (darg == MPI_DISTRIBUTE_DFLT_DARG)
            darg = (gsize + psize - 1) / psize;
        return i / darg;
    }
    if (darg == MPI_DISTRIBUTE_DFLT_DARG)
        darg = 1;
    return (i / darg) % psize;
}

/* The serial reference: the memory indices process `rank` owns, in
 * increasing memory order. */
static int reference(int rank, int ndims, const int *gsizes, const int *distribs, const int *dargs,
                     const int *psizes, int order, int *out)
{
    int coord[3], rest = rank, total = 1, n = 0;
    for (int d = ndims - 1; d >= 0; d--) {   /* the grid is row-major */
        coord[d] = rest % psizes[d];
        rest /= psizes[d];
    }
    for (int d = 0; d < ndims; d++)
        total *= gsizes[d];
    for (int m = 0; m < total; m++) {
        /* memory index -> per-dimension index */
        int idx[3], r = m, held = 1;
        if (order == MPI_ORDER_C)
            for (int d = ndims - 1; d >= 0; d--) {
                idx[d] = r % gsizes[d];
                r /= gsizes[d];
            }
        else
            for (int d = 0; d < ndims; d++) {
                idx[d] = r % gsizes[d];
                r /= gsizes[d];
            }
        for (int d = 0; d < ndims; d++)
            if (owner(idx[d], gsizes[d], distribs[d], dargs[d], psizes[d]) != coord[d])
                held = 0;
        if (held)
            out[n++] = m;
    }
    return n;
}

static void check_darray(int ndims, const int *gsizes, const int *distribs, const int *dargs, const int *psizes)
{
    int grid = 1, total = 1;
    for (int d = 0; d < ndims; d++) {
        grid *= psizes[d];
        total *= gsizes[d];
    }
    static int global[MAX_ELEMS], want[MAX_ELEMS], got[MAX_ELEMS];
    for (int i = 0; i < total; i++)
        global[i] = i;
    for (int order = MPI_ORDER_C; order <= MPI_ORDER_FORTRAN; order++)
        for (int rank = 0; rank < grid; rank++) {
            MPI_Datatype t;
            int rc = MPI_Type_create_darray(grid, rank, ndims, gsizes, distribs, dargs, psizes, order, MPI_INT, &t);
            CHECK(rc == MPI_SUCCESS, "darray ndims %d rank %d order %d: rc %d", ndims, rank, order, rc);
            if (rc != MPI_SUCCESS)
                continue;
            MPI_Type_commit(&t);
            const int n = reference(rank, ndims, gsizes, distribs, dargs, psizes, order, want);
            int size = -1, pos = 0;
            MPI_Aint lb = -1, extent = -1;
            MPI_Type_size(t, &size);
            MPI_Type_get_extent(t, &lb, &extent);
            CHECK(size == n * (int)sizeof(int), "darray ndims %d rank %d order %d: size %d, expected %d", ndims, rank,
                  order, size, n * (int)sizeof(int));
            CHECK(lb == 0 && extent == (MPI_Aint)(total * sizeof(int)),
                  "darray ndims %d rank %d: lb %ld extent %ld, expected 0 and %ld", ndims, rank, (long)lb,
                  (long)extent, (long)(total * sizeof(int)));
            if (size == n * (int)sizeof(int)) {
                MPI_Pack(global, 1, t, got, (int)sizeof got, &pos, MPI_COMM_SELF);
                for (int i = 0; i < n; i++)
                    if (got[i] != want[i]) {
                        CHECK(0, "darray ndims %d rank %d order %d: element %d is %d, expected %d", ndims, rank,
                              order, i, got[i], want[i]);
                        break;
                    }
            }
            int ni, na, nt, comb;
            MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
            CHECK(comb == MPI_COMBINER_DARRAY && ni == 4 * ndims + 4 && na == 0 && nt == 1,
                  "darray envelope: combiner %d, %d ints %d aints %d types", comb, ni, na, nt);
            MPI_Type_free(&t);
        }
}

static void check_hindexed_block(void)
{
    int global[16], got[6];
    for (int i = 0; i < 16; i++)
        global[i] = i;
    const MPI_Aint displs[3] = {6 * sizeof(int), 0, 3 * sizeof(int)};
    const int want[6] = {6, 7, 0, 1, 3, 4};
    MPI_Datatype t;
    int rc = MPI_Type_create_hindexed_block(3, 2, displs, MPI_INT, &t);
    CHECK(rc == MPI_SUCCESS, "hindexed_block: rc %d", rc);
    if (rc != MPI_SUCCESS)
        return;
    MPI_Type_commit(&t);
    int pos = 0, size = 0;
    MPI_Type_size(t, &size);
    CHECK(size == 6 * (int)sizeof(int), "hindexed_block: size %d, expected %d", size, 6 * (int)sizeof(int));
    MPI_Pack(global, 1, t, got, (int)sizeof got, &pos, MPI_COMM_SELF);
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == want[i], "hindexed_block: element %d is %d, expected %d", i, got[i], want[i]);
    int ni, na, nt, comb, ints[2];
    MPI_Aint aints[3];
    MPI_Datatype types[1];
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_HINDEXED_BLOCK && ni == 2 && na == 3 && nt == 1,
          "hindexed_block envelope: combiner %d (expected %d), %d ints %d aints %d types", comb,
          MPI_COMBINER_HINDEXED_BLOCK, ni, na, nt);
    if (ni == 2 && na == 3 && nt == 1) {
        MPI_Type_get_contents(t, 2, 3, 1, ints, aints, types);
        CHECK(ints[0] == 3 && ints[1] == 2 && aints[0] == displs[0] && aints[2] == displs[2] && types[0] == MPI_INT,
              "hindexed_block contents: count %d blocklength %d", ints[0], ints[1]);
    }
    MPI_Type_free(&t);
}

static void check_names_and_errors(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    CHECK(MPI_Type_set_name(MPI_INT, "counter") == MPI_SUCCESS, "MPI_Type_set_name(MPI_INT) refused");
    MPI_Type_get_name(MPI_INT, name, &len);
    CHECK(strcmp(name, "counter") == 0 && len == 7, "MPI_INT's name is \"%s\" (%d), expected \"counter\"", name, len);
    MPI_Type_set_name(MPI_INT, "MPI_INT");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int g[2] = {4, 4}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE},
              darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p_bad[2] = {1, 2}, p_ok[2] = {2, 1};
    MPI_Datatype t;
    int cls = -1;
    MPI_Error_class(MPI_Type_create_darray(2, 0, 2, g, dist, darg, p_bad, MPI_ORDER_C, MPI_INT, &t), &cls);
    CHECK(cls == MPI_ERR_ARG, "darray with NONE over 2 processes: class %d, expected MPI_ERR_ARG", cls);
    MPI_Error_class(MPI_Type_create_darray(3, 0, 2, g, dist, darg, p_ok, MPI_ORDER_C, MPI_INT, &t), &cls);
    CHECK(cls == MPI_ERR_ARG, "darray with size 3 for a grid of 2: class %d, expected MPI_ERR_ARG", cls);
    const int small_darg[2] = {1, MPI_DISTRIBUTE_DFLT_DARG};
    MPI_Error_class(MPI_Type_create_darray(2, 0, 2, g, dist, small_darg, p_ok, MPI_ORDER_C, MPI_INT, &t), &cls);
    CHECK(cls == MPI_ERR_ARG, "darray with blocks too small to cover: class %d, expected MPI_ERR_ARG", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE,
              D = MPI_DISTRIBUTE_DFLT_DARG;
    {   /* one dimension: block, cyclic, cyclic(2), block(3) */
        const int g[1] = {10}, p[1] = {3};
        const int dists[4] = {B, C, C, B}, dargs[4] = {D, D, 2, 4};
        for (int k = 0; k < 4; k++)
            check_darray(1, g, &dists[k], &dargs[k], p);
    }
    {   /* two dimensions, odd sizes, a NONE dimension */
        const int g[2] = {5, 7}, p[2] = {2, 3}, dist[2] = {B, C}, darg[2] = {D, 2};
        check_darray(2, g, dist, darg, p);
        const int p1[2] = {3, 1}, dist1[2] = {C, N}, darg1[2] = {D, D};
        check_darray(2, g, dist1, darg1, p1);
    }
    {   /* three dimensions, as mpi4py's suite */
        const int g[3] = {6, 5, 4}, p[3] = {3, 1, 2}, dist[3] = {C, B, B}, darg[3] = {D, D, D};
        check_darray(3, g, dist, darg, p);
    }
    check_hindexed_block();
    check_names_and_errors();
    return mtest_finish();
}
