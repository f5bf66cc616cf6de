/* SPDX-License-Identifier: BSD-3-Clause */
/* intercomm: intercommunicators between the even and the odd ranks of
 * MPI_COMM_WORLD: sizes and groups, point-to-point to the remote group
 * (specific and any source), MPI_Comm_dup of one, MPI_Intercomm_merge in
 * both orders, and attributes on one. World rank w is rank w/2 of its
 * group, so every answer is computed here by hand. Needs 2 ranks; at 1 it
 * checks only that an intracommunicator is not taken for one. */
#include "mtest.h"

static int remote_world(int r) { return 2 * r + (mtest_rank % 2 == 0); }   /* remote rank r's world rank */

static void p2p(MPI_Comm ic, const char *what)
{
    int lsize, rsize, lrank;
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &lrank);
    /* Each local rank i below the smaller size swaps world ranks with remote rank i. */
    const int pairs = lsize < rsize ? lsize : rsize;
    if (lrank < pairs) {
        int got = -1;
        MPI_Status st;
        MPI_OK(MPI_Sendrecv(&mtest_rank, 1, MPI_INT, lrank, 3, &got, 1, MPI_INT, lrank, 3, ic, &st));
        CHECK(got == remote_world(lrank) && st.MPI_SOURCE == lrank,
              "%s: swap with remote %d got %d from %d, expected %d", what, lrank, got, st.MPI_SOURCE,
              remote_world(lrank));
    }
    /* Every local rank sends to remote rank 0; remote 0 takes them from any source. */
    MPI_Request rq;
    MPI_OK(MPI_Isend(&mtest_rank, 1, MPI_INT, 0, 4, ic, &rq));
    if (lrank == 0) {
        int seen = 0;
        for (int i = 0; i < rsize; i++) {
            int got = -1;
            MPI_Status st;
            MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 4, ic, &st));
            CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && got == remote_world(st.MPI_SOURCE),
                  "%s: any-source message %d from remote %d", what, got, st.MPI_SOURCE);
            if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < 31)
                seen |= 1 << st.MPI_SOURCE;
        }
        CHECK(rsize > 30 || seen == (1 << rsize) - 1, "%s: remote ranks seen %#x", what, seen);
    }
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

static void check_merge(MPI_Comm ic, int high, int evens_first)
{
    MPI_Comm m;
    MPI_OK(MPI_Intercomm_merge(ic, high, &m));
    int size, rank, flag = -1;
    MPI_Comm_size(m, &size);
    MPI_Comm_rank(m, &rank);
    MPI_Comm_test_inter(m, &flag);
    const int neven = (mtest_size + 1) / 2, nodd = mtest_size / 2;
    const int even = mtest_rank % 2 == 0;
    const int expect = even ? (evens_first ? 0 : nodd) + mtest_rank / 2 : (evens_first ? neven : 0) + mtest_rank / 2;
    CHECK(size == mtest_size && rank == expect && flag == 0,
          "merge(high=%d): rank %d of %d inter %d, expected %d of %d", high, rank, size, flag, expect, mtest_size);
    int sum = -1;
    MPI_OK(MPI_Allreduce(&mtest_rank, &sum, 1, MPI_INT, MPI_SUM, m));
    CHECK(sum == mtest_size * (mtest_size - 1) / 2, "allreduce on the merged communicator: %d", sum);
    MPI_Comm_free(&m);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int flag = -1;
    MPI_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0, "MPI_COMM_WORLD tested as an intercommunicator");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rs, cls = -1;
    MPI_Error_class(MPI_Comm_remote_size(MPI_COMM_WORLD, &rs), &cls);
    CHECK(cls == MPI_ERR_COMM, "Comm_remote_size(MPI_COMM_WORLD): class %d, expected MPI_ERR_COMM", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (mtest_size < 2)
        return mtest_finish();

    const int even = mtest_rank % 2 == 0;
    MPI_Comm local, ic;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, !even, mtest_rank, &local));
    /* Leaders: world 0 for the evens, world 1 for the odds. */
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 77, &ic));
    const int neven = (mtest_size + 1) / 2, nodd = mtest_size / 2;
    int lsize, rsize, lrank;
    MPI_OK(MPI_Comm_test_inter(ic, &flag));
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &lrank);
    CHECK(flag == 1, "test_inter on an intercommunicator: %d", flag);
    CHECK(lsize == (even ? neven : nodd) && rsize == (even ? nodd : neven) && lrank == mtest_rank / 2,
          "sizes: local %d remote %d rank %d", lsize, rsize, lrank);
    MPI_Group rg, wg;
    MPI_OK(MPI_Comm_remote_group(ic, &rg));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int r0 = 0, w0 = -1;
    MPI_Group_translate_ranks(rg, 1, &r0, wg, &w0);
    CHECK(w0 == remote_world(0), "remote group's rank 0 is world %d, expected %d", w0, remote_world(0));
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);

    p2p(ic, "intercomm");
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(ic, &dup));
    MPI_OK(MPI_Comm_test_inter(dup, &flag));
    CHECK(flag == 1, "a dup of an intercommunicator is not one");
    p2p(dup, "dup of the intercomm");

    /* Evens say low: they come first; then the other way round. */
    check_merge(ic, !even, 1);
    check_merge(ic, even, 0);
    /* Both say the same: the group holding world rank 0 first. */
    check_merge(ic, 0, 1);

    /* What weft does not do on an intercommunicator says so. */
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    MPI_Comm split = MPI_COMM_NULL;
    /* (the blocking collectives work on one: intercomm_coll) */
    MPI_Request ireq = MPI_REQUEST_NULL;
    MPI_Error_class(MPI_Ibarrier(ic, &ireq), &cls);
    CHECK(cls == MPI_ERR_NOT_SUPPORTED, "MPI_Ibarrier on an intercommunicator: class %d, expected MPI_ERR_NOT_SUPPORTED",
          cls);
    MPI_Error_class(MPI_Comm_split(ic, 0, 0, &split), &cls);
    CHECK(cls == MPI_ERR_NOT_SUPPORTED,
          "MPI_Comm_split of an intercommunicator: class %d, expected MPI_ERR_NOT_SUPPORTED",
          cls);

    MPI_Comm_free(&dup);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    return mtest_finish();
}
