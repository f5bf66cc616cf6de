/* SPDX-License-Identifier: BSD-3-Clause */
/* comm_more: MPI_Comm_split_type (MPI_COMM_TYPE_SHARED checked against the
 * processes' host names, exchanged here), MPI_Comm_idup,
 * MPI_Comm_dup_with_info and MPI_Comm_create_group (called by the group's
 * members only, while the others do something else). Any number of ranks. */
#include "mtest.h"

static void split_type(void)
{
    /* The reference: who has my host name, in world order. */
    char names[64][MPI_MAX_PROCESSOR_NAME], mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(mine, &len);
    if (mtest_size > 64)
        return;
    MPI_OK(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                         MPI_COMM_WORLD));
    int expect_size = 0, expect_rank = 0;
    for (int r = 0; r < mtest_size; r++)
        if (strcmp(names[r], mine) == 0) {
            /* key = -rank: the order is reversed */
            if (r > mtest_rank)
                expect_rank++;
            expect_size++;
        }
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -mtest_rank, MPI_INFO_NULL, &node));
    int size = -1, rank = -1;
    MPI_Comm_size(node, &size);
    MPI_Comm_rank(node, &rank);
    CHECK(size == expect_size && rank == expect_rank, "split_type(SHARED): rank %d of %d, expected %d of %d", rank,
          size, expect_rank, expect_size);
    mtest_ring(node, "the node communicator");
    MPI_Comm_free(&node);

    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, mtest_rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    CHECK((node == MPI_COMM_NULL) == (mtest_rank % 2 == 1), "split_type(MPI_UNDEFINED) on odd ranks: got %d", node);
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls = -1;
    MPI_Error_class(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &node), &cls);
    CHECK(cls == MPI_ERR_ARG, "split_type 12345: class %d, expected MPI_ERR_ARG", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void idup(void)
{
    MPI_Comm d = MPI_COMM_NULL, e = MPI_COMM_NULL;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int cmp = -1;
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "idup compares %d to world, expected MPI_CONGRUENT", cmp);
    mtest_ring(d, "an idup");
    MPI_OK(MPI_Comm_dup_with_info(d, MPI_INFO_NULL, &e));
    MPI_OK(MPI_Comm_compare(e, d, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "dup_with_info compares %d, expected MPI_CONGRUENT", cmp);
    mtest_ring(e, "a dup_with_info");
    MPI_Comm_free(&e);
    MPI_Comm_free(&d);
}

static void create_group(void)
{
    /* The even ranks make a communicator among themselves; the odd ranks
     * meanwhile exchange on world, so only the group can have taken part. */
    MPI_Group world, evens;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    const int neven = (mtest_size + 1) / 2;
    int ranks[64];
    for (int i = 0; i < neven && i < 64; i++)
        ranks[i] = 2 * i;
    MPI_Group_incl(world, neven, ranks, &evens);
    if (mtest_rank % 2 == 0) {
        MPI_Comm c = MPI_COMM_NULL;
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 42, &c));
        int size = -1, rank = -1;
        MPI_Comm_size(c, &size);
        MPI_Comm_rank(c, &rank);
        CHECK(size == neven && rank == mtest_rank / 2, "create_group: rank %d of %d, expected %d of %d", rank, size,
              mtest_rank / 2, neven);
        mtest_ring(c, "the evens' communicator");
        int sum = -1;
        MPI_OK(MPI_Allreduce(&mtest_rank, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == neven * (neven - 1), "sum of the evens' world ranks: %d, expected %d", sum, neven * (neven - 1));
        MPI_Comm_free(&c);
    } else {
        int odds = mtest_size / 2, peer = mtest_rank + 2 < mtest_size ? mtest_rank + 2 : 1, from;
        from = mtest_rank - 2 >= 1 ? mtest_rank - 2 : 2 * (odds - 1) + 1;
        int got = -1;
        MPI_OK(MPI_Sendrecv(&mtest_rank, 1, MPI_INT, peer, 9, &got, 1, MPI_INT, from, 9, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        CHECK(got == from, "odd ranks' ring on world: got %d, expected %d", got, from);
    }
    MPI_Group_free(&evens);
    MPI_Group_free(&world);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    split_type();
    idup();
    create_group();
    return mtest_finish();
}
