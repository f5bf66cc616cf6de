/* SPDX-License-Identifier: BSD-3-Clause */
/* intercomm_coll: the collectives on an intercommunicator (MPI-3.1 5.2.3)
 * between the even and the odd world ranks, each checked against what the
 * other group contributed, computed here from world ranks: Barrier, Bcast
 * (MPI_ROOT / MPI_PROC_NULL / the remote root), Gather(v), Scatter(v),
 * Allgather(v), Alltoall(v), Reduce and Allreduce (SUM, and a
 * non-commutative user operation: the remote group's rank order), both
 * groups taking a turn as the root's. Needs 2 ranks (runs nothing at 1);
 * odd sizes give groups of different sizes. */
#include "mtest.h"

#define MAXP 64

static int wrank, wsize, even, lrank, lsize, rsize;

/* World rank of rank r of the even (which = 1) or odd group. */
static int world_of(int which_even, int r) { return which_even ? 2 * r : 2 * r + 1; }
static int remote_world(int r) { return world_of(!even, r); }

/* (a, b) -> 10 * a + b: not commutative; in rank order gives the remote
 * ranks' values as decimal digits. */
static void digits(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = 10 * ((int *)in)[i] + ((int *)inout)[i];
}

/* root's group (the one giving MPI_ROOT / MPI_PROC_NULL) is the evens
 * when root_even; its root is local rank 0. */
static int root_arg(int root_even)
{
    if (even == root_even)
        return lrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    return 0;
}

static void check_rooted(MPI_Comm ic, int root_even)
{
    const int root = root_arg(root_even), at_root = root == MPI_ROOT, receiving_side = even != root_even;
    int v = -1, buf[MAXP], counts[MAXP], displs[MAXP];

    /* Bcast */
    v = at_root ? 4242 : -1;
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, root, ic));
    if (receiving_side || at_root)
        CHECK(v == 4242, "Bcast (root %s): %d", root_even ? "even" : "odd", v);
    else
        CHECK(v == -1, "Bcast touched a MPI_PROC_NULL rank's buffer: %d", v);

    /* Gather: the root gets every remote rank's world rank */
    v = wrank;
    for (int i = 0; i < MAXP; i++)
        buf[i] = -1;
    MPI_OK(MPI_Gather(&v, 1, MPI_INT, buf, 1, MPI_INT, root, ic));
    if (at_root)
        for (int r = 0; r < rsize; r++)
            CHECK(buf[r] == remote_world(r), "Gather at the root: [%d] = %d, expected %d", r, buf[r], remote_world(r));

    /* Gatherv: remote rank r sends r + 1 values, placed in reverse order */
    int mine[MAXP];
    for (int i = 0; i < lrank + 1; i++)
        mine[i] = 100 * wrank + i;
    int off = 0;
    for (int r = rsize - 1; r >= 0; r--) {
        counts[r] = r + 1;
        displs[r] = off;
        off += r + 1;
    }
    for (int i = 0; i < MAXP; i++)
        buf[i] = -1;
    MPI_OK(MPI_Gatherv(mine, lrank + 1, MPI_INT, buf, counts, displs, MPI_INT, root, ic));
    if (at_root)
        for (int r = 0; r < rsize; r++)
            for (int i = 0; i <= r; i++)
                CHECK(buf[displs[r] + i] == 100 * remote_world(r) + i, "Gatherv at the root: rank %d [%d] = %d", r, i,
                      buf[displs[r] + i]);

    /* Scatter: remote rank r gets 1000 + r from the root */
    for (int r = 0; r < MAXP; r++)
        buf[r] = 1000 + r;
    v = -1;
    MPI_OK(MPI_Scatter(buf, 1, MPI_INT, &v, 1, MPI_INT, root, ic));
    if (receiving_side)
        CHECK(v == 1000 + lrank, "Scatter: %d, expected %d", v, 1000 + lrank);

    /* Scatterv: remote rank r gets r + 1 values starting at 3 * r */
    for (int r = 0; r < rsize; r++) {
        counts[r] = r + 1;
        displs[r] = 3 * r;
    }
    int got[MAXP];
    for (int i = 0; i < MAXP; i++)
        got[i] = -1;
    MPI_OK(MPI_Scatterv(buf, counts, displs, MPI_INT, got, lrank + 1, MPI_INT, root, ic));
    if (receiving_side)
        for (int i = 0; i <= lrank; i++)
            CHECK(got[i] == 1000 + 3 * lrank + i, "Scatterv: [%d] = %d", i, got[i]);

    /* Reduce (SUM, and digits in rank order) at the root */
    int sum = -1, want = 0;
    v = wrank;
    MPI_OK(MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, root, ic));
    for (int r = 0; r < rsize; r++)
        want += remote_world(r);
    if (at_root)
        CHECK(sum == want, "Reduce(SUM) at the root: %d, expected %d", sum, want);
    MPI_Op op;
    MPI_OK(MPI_Op_create(digits, 0, &op));
    v = lrank % 10;
    int d = -1;
    MPI_OK(MPI_Reduce(&v, &d, 1, MPI_INT, op, root, ic));
    want = 0;
    for (int r = 0; r < rsize; r++)
        want = want * 10 + r % 10;
    if (at_root)
        CHECK(d == want, "Reduce(non-commutative) at the root: %d, expected %d (remote rank order)", d, want);
    MPI_OK(MPI_Op_free(&op));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    wrank = mtest_rank;
    wsize = mtest_size;
    if (wsize < 2 || wsize > MAXP)
        return mtest_finish();
    even = wrank % 2 == 0;
    MPI_Comm local, ic;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, !even, wrank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 78, &ic));
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);

    MPI_OK(MPI_Barrier(ic));
    check_rooted(ic, 1);
    check_rooted(ic, 0);

    /* Allgather / Allgatherv: the remote group's world ranks */
    int v = wrank, buf[MAXP], counts[MAXP], displs[MAXP];
    MPI_OK(MPI_Allgather(&v, 1, MPI_INT, buf, 1, MPI_INT, ic));
    for (int r = 0; r < rsize; r++)
        CHECK(buf[r] == remote_world(r), "Allgather: [%d] = %d, expected %d", r, buf[r], remote_world(r));
    for (int r = 0; r < rsize; r++) {
        counts[r] = 1;
        displs[r] = rsize - 1 - r;
    }
    MPI_OK(MPI_Allgatherv(&v, 1, MPI_INT, buf, counts, displs, MPI_INT, ic));
    for (int r = 0; r < rsize; r++)
        CHECK(buf[rsize - 1 - r] == remote_world(r), "Allgatherv (reversed): remote rank %d gave %d", r,
              buf[rsize - 1 - r]);

    /* Alltoall(v): block r goes to remote rank r */
    int out[MAXP], in[MAXP];
    for (int r = 0; r < rsize; r++)
        out[r] = 1000 * wrank + r;
    MPI_OK(MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ic));
    for (int r = 0; r < rsize; r++)
        CHECK(in[r] == 1000 * remote_world(r) + lrank, "Alltoall from remote %d: %d", r, in[r]);
    int sd[MAXP];
    for (int r = 0; r < rsize; r++) {
        counts[r] = 1;
        sd[r] = r;
        displs[r] = rsize - 1 - r;
    }
    MPI_OK(MPI_Alltoallv(out, counts, sd, MPI_INT, in, counts, displs, MPI_INT, ic));
    for (int r = 0; r < rsize; r++)
        CHECK(in[rsize - 1 - r] == 1000 * remote_world(r) + lrank, "Alltoallv from remote %d: %d", r,
              in[rsize - 1 - r]);

    /* Allreduce: each group gets the other's */
    int sum = -1, want = 0;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, ic));
    for (int r = 0; r < rsize; r++)
        want += remote_world(r);
    CHECK(sum == want, "Allreduce(SUM): %d, expected %d (the remote group's world ranks)", sum, want);
    MPI_Op op;
    MPI_OK(MPI_Op_create(digits, 0, &op));
    int digit = lrank % 10, dres = -1, dwant = 0;
    MPI_OK(MPI_Allreduce(&digit, &dres, 1, MPI_INT, op, ic));
    for (int r = 0; r < rsize; r++)
        dwant = dwant * 10 + r % 10;
    CHECK(dres == dwant, "Allreduce(non-commutative): %d, expected %d", dres, dwant);
    MPI_OK(MPI_Op_free(&op));

    /* A bad root is MPI_ERR_ROOT */
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    int cls = -1;
    MPI_Error_class(MPI_Bcast(&v, 1, MPI_INT, rsize + 5, ic), &cls);
    CHECK(cls == MPI_ERR_ROOT, "Bcast with root %d: class %d, expected MPI_ERR_ROOT", rsize + 5, cls);

    MPI_OK(MPI_Barrier(ic));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
    return mtest_finish();
}
