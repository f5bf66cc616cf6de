/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_persistent: persistent requests (MPI_Send_init, Ssend_init,
 * Rsend_init, Bsend_init, Recv_init, Start, Startall) over several rounds
 * around a ring, each round's data checked against what the sender put
 * there; an inactive request (before its first Start and after each
 * completion) that Wait, Test, Waitall, Waitany and Request_get_status
 * treat as the standard says; MPI_Request_free of an inactive one; a
 * derived datatype freed between Recv_init and Start; MPI_Start of an active
 * request and of a plain one refused with MPI_ERR_REQUEST. Any number of
 * ranks (also 1: the ring is then the rank itself). */
#include "mtest.h"

#define ROUNDS 5
#define N 1000

static int value(int src, int round, int i) { return src * 100000 + round * 1000 + i % 1000 + i / 1000; }

static void check_empty(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && st->MPI_ERROR == MPI_SUCCESS &&
              count == 0,
          "%s: status (source %d, tag %d, error %d, count %d), expected the empty one (%d, %d, 0, 0)", what,
          st->MPI_SOURCE, st->MPI_TAG, st->MPI_ERROR, count, MPI_ANY_SOURCE, MPI_ANY_TAG);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    static int sbuf[N], rbuf[N];

    /* Each send mode, several rounds through the same two requests. */
    static const char *names[] = {"Send_init", "Ssend_init", "Rsend_init", "Bsend_init"};
    char *bsend_buf = malloc(N * sizeof(int) + MPI_BSEND_OVERHEAD);
    MPI_OK(MPI_Buffer_attach(bsend_buf, N * (int)sizeof(int) + MPI_BSEND_OVERHEAD));
    for (int mode = 0; mode < 4; mode++) {
        MPI_Request send, recv;
        const int tag = 10 + mode;
        if (mode == 0)
            MPI_OK(MPI_Send_init(sbuf, N, MPI_INT, right, tag, MPI_COMM_WORLD, &send));
        else if (mode == 1)
            MPI_OK(MPI_Ssend_init(sbuf, N, MPI_INT, right, tag, MPI_COMM_WORLD, &send));
        else if (mode == 2)
            MPI_OK(MPI_Rsend_init(sbuf, N, MPI_INT, right, tag, MPI_COMM_WORLD, &send));
        else
            MPI_OK(MPI_Bsend_init(sbuf, N, MPI_INT, right, tag, MPI_COMM_WORLD, &send));
        MPI_OK(MPI_Recv_init(rbuf, N, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &recv));
        CHECK(send != MPI_REQUEST_NULL && recv != MPI_REQUEST_NULL, "%s gave MPI_REQUEST_NULL", names[mode]);

        /* Inactive before the first Start: Wait returns at once, empty. */
        MPI_Status st;
        MPI_OK(MPI_Wait(&recv, &st));
        check_empty(&st, "Wait on an inactive request");
        CHECK(recv != MPI_REQUEST_NULL, "Wait on an inactive persistent request set it to MPI_REQUEST_NULL");

        for (int round = 0; round < ROUNDS; round++) {
            for (int i = 0; i < N; i++) {
                sbuf[i] = value(mtest_rank, round, i);
                rbuf[i] = -1;
            }
            MPI_OK(MPI_Start(&recv));
            /* Ready mode: the receive is posted everywhere before any send. */
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_OK(MPI_Start(&send));
            MPI_Request both[2] = {recv, send};
            MPI_Status sts[2];
            MPI_OK(MPI_Waitall(2, both, sts));
            CHECK(both[0] == recv && both[1] == send, "%s round %d: Waitall changed the persistent handles",
                  names[mode], round);
            CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == tag,
                  "%s round %d: receive status (source %d, tag %d), expected (%d, %d)", names[mode], round,
                  sts[0].MPI_SOURCE, sts[0].MPI_TAG, left, tag);
            int count = -1;
            MPI_Get_count(&sts[0], MPI_INT, &count);
            CHECK(count == N, "%s round %d: count %d, expected %d", names[mode], round, count, N);
            for (int i = 0; i < N; i++)
                if (rbuf[i] != value(left, round, i)) {
                    CHECK(0, "%s round %d: element %d is %d, expected %d", names[mode], round, i, rbuf[i],
                          value(left, round, i));
                    break;
                }
            /* Inactive again: Test says done with an empty status. */
            int flag = 0;
            MPI_OK(MPI_Test(&recv, &flag, &st));
            CHECK(flag, "%s round %d: Test on an inactive request said not done", names[mode], round);
            check_empty(&st, "Test on an inactive request");
            MPI_Barrier(MPI_COMM_WORLD);   /* nobody sends the next round before every buffer is checked */
        }
        MPI_OK(MPI_Request_free(&send));
        MPI_OK(MPI_Request_free(&recv));
        CHECK(send == MPI_REQUEST_NULL && recv == MPI_REQUEST_NULL, "Request_free left a handle");
    }
    void *detached;
    int dsize;
    MPI_OK(MPI_Buffer_detach(&detached, &dsize));
    free(bsend_buf);

    /* Startall and Waitany / Testany over inactive requests; Request_get_status. */
    {
        MPI_Request reqs[2];
        MPI_OK(MPI_Recv_init(rbuf, N, MPI_INT, left, 20, MPI_COMM_WORLD, &reqs[0]));
        MPI_OK(MPI_Send_init(sbuf, N, MPI_INT, right, 20, MPI_COMM_WORLD, &reqs[1]));
        int idx = -5, flag = 0;
        MPI_Status st;
        MPI_OK(MPI_Waitany(2, reqs, &idx, &st));
        CHECK(idx == MPI_UNDEFINED, "Waitany over inactive requests gave index %d, expected MPI_UNDEFINED", idx);
        MPI_OK(MPI_Testany(2, reqs, &idx, &flag, &st));
        CHECK(flag && idx == MPI_UNDEFINED, "Testany over inactive requests: flag %d index %d", flag, idx);
        MPI_OK(MPI_Request_get_status(reqs[0], &flag, &st));
        CHECK(flag, "Request_get_status of an inactive request said not done");
        check_empty(&st, "Request_get_status of an inactive request");
        for (int round = 0; round < ROUNDS; round++) {
            for (int i = 0; i < N; i++)
                sbuf[i] = value(mtest_rank, 50 + round, i);
            MPI_OK(MPI_Startall(2, reqs));
            /* Request_get_status until done: the request stays, its status is the message's. */
            flag = 0;
            while (!flag)
                MPI_OK(MPI_Request_get_status(reqs[0], &flag, &st));
            CHECK(reqs[0] != MPI_REQUEST_NULL, "Request_get_status freed the request");
            CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 20, "Request_get_status: (source %d, tag %d)",
                  st.MPI_SOURCE, st.MPI_TAG);
            MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
            CHECK(rbuf[N - 1] == value(left, 50 + round, N - 1) && rbuf[0] == value(left, 50 + round, 0),
                  "Startall round %d: data %d..%d, expected %d..%d", round, rbuf[0], rbuf[N - 1],
                  value(left, 50 + round, 0), value(left, 50 + round, N - 1));
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_OK(MPI_Request_free(&reqs[0]));
        MPI_OK(MPI_Request_free(&reqs[1]));
    }

    /* A vector datatype freed between Recv_init and Start still describes
     * the receive; MPI_PROC_NULL rounds complete at once. */
    {
        MPI_Datatype every_other;
        MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other);
        MPI_Type_commit(&every_other);
        MPI_Request r, s, nul;
        MPI_OK(MPI_Recv_init(rbuf, 1, every_other, left, 30, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Send_init(sbuf, N / 2, MPI_INT, right, 30, MPI_COMM_WORLD, &s));
        MPI_OK(MPI_Send_init(sbuf, N, MPI_INT, MPI_PROC_NULL, 30, MPI_COMM_WORLD, &nul));
        MPI_Type_free(&every_other);
        for (int i = 0; i < N; i++) {
            sbuf[i] = value(mtest_rank, 90, i);
            rbuf[i] = -1;
        }
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Start(&s));
        MPI_OK(MPI_Start(&nul));
        MPI_OK(MPI_Wait(&nul, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int bad = 0;
        for (int i = 0; i < N && !bad; i++) {
            const int want = i % 2 ? -1 : value(left, 90, i / 2);
            if (rbuf[i] != want) {
                CHECK(0, "strided persistent receive: element %d is %d, expected %d", i, rbuf[i], want);
                bad = 1;
            }
        }

        /* Errors: Start of an active request, of a non-persistent one. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_OK(MPI_Start(&r));
        int rc = MPI_Start(&r);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_REQUEST, "MPI_Start of an active request gave class %d, expected MPI_ERR_REQUEST (%d)",
              cls, MPI_ERR_REQUEST);
        MPI_OK(MPI_Cancel(&r));
        MPI_Status st;
        MPI_OK(MPI_Wait(&r, &st));
        int cancelled = 0;
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled, "cancelling an unmatched persistent receive: Test_cancelled says false");
        MPI_Request plain;
        MPI_OK(MPI_Irecv(rbuf, 1, MPI_INT, left, 31, MPI_COMM_WORLD, &plain));
        rc = MPI_Start(&plain);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_REQUEST, "MPI_Start of an MPI_Irecv request gave class %d, expected MPI_ERR_REQUEST",
              cls);
        MPI_Cancel(&plain);
        MPI_Wait(&plain, MPI_STATUS_IGNORE);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_OK(MPI_Request_free(&r));
        MPI_OK(MPI_Request_free(&s));
        MPI_OK(MPI_Request_free(&nul));
    }
    return mtest_finish();
}
