/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_mprobe: matched probes and generalized requests.
 * - MPI_Mprobe takes the message off the queue: a receive posted after it
 *   (MPI_ANY_SOURCE, MPI_ANY_TAG) gets the next message, MPI_Mrecv the
 *   probed one; MPI_Improbe + MPI_Imrecv; a derived receive type;
 *   MPI_MESSAGE_NO_PROC from MPI_PROC_NULL; truncation (MPI_ERR_TRUNCATE,
 *   the first elements delivered); MPI_MESSAGE_NULL refused.
 * - MPI_Grequest_start / complete: not done before complete, the query
 *   function's status after, the free function called once.
 * - MPI_Status_set_elements / set_cancelled read back by MPI_Get_count,
 *   MPI_Get_elements(_x), MPI_Test_cancelled.
 * Any number of ranks (1: the ring is the rank itself). */
#include "mtest.h"

static int value(int src, int tag, int i) { return src * 100000 + tag * 1000 + i; }

static int check_data(const int *buf, int n, int src, int tag, const char *what)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != value(src, tag, i)) {
            CHECK(0, "%s: element %d is %d, expected %d", what, i, buf[i], value(src, tag, i));
            return 1;
        }
    return 0;
}

struct greq_state {
    int queried, freed, free_after_query;
};

static int query_fn(void *extra, MPI_Status *st)
{
    struct greq_state *s = extra;
    s->queried++;
    st->MPI_SOURCE = 7;
    st->MPI_TAG = 42;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    struct greq_state *s = extra;
    s->freed++;
    s->free_after_query = s->queried > 0;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    enum { N1 = 10, N2 = 3000, N3 = 70000 };
    int *s1 = malloc(N1 * sizeof(int)), *s2 = malloc(N2 * sizeof(int)), *s3 = malloc(N3 * sizeof(int));
    int *r1 = malloc(N1 * sizeof(int)), *r2 = malloc(N2 * sizeof(int)), *r3 = malloc(2 * N3 * sizeof(int));
    for (int i = 0; i < N1; i++)
        s1[i] = value(mtest_rank, 1, i);
    for (int i = 0; i < N2; i++)
        s2[i] = value(mtest_rank, 2, i);
    for (int i = 0; i < N3; i++)
        s3[i] = value(mtest_rank, 3, i);

    /* Three messages in order; tags 1, 2, 3. */
    MPI_Request sends[3];
    MPI_OK(MPI_Isend(s1, N1, MPI_INT, right, 1, MPI_COMM_WORLD, &sends[0]));
    MPI_OK(MPI_Isend(s2, N2, MPI_INT, right, 2, MPI_COMM_WORLD, &sends[1]));
    MPI_OK(MPI_Isend(s3, N3, MPI_INT, right, 3, MPI_COMM_WORLD, &sends[2]));

    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "Mprobe gave message %d", msg);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 1 && count == N1,
          "Mprobe status (source %d, tag %d, count %d), expected (%d, 1, %d)", st.MPI_SOURCE, st.MPI_TAG, count, left,
          N1);
    /* A wildcard receive posted now must not take the probed message. */
    MPI_Request next;
    MPI_OK(MPI_Irecv(r2, N2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &next));
    MPI_Status nst;
    MPI_OK(MPI_Wait(&next, &nst));
    CHECK(nst.MPI_TAG == 2, "the receive posted after Mprobe got tag %d, expected 2 (the probed message was "
                            "not taken off the queue)", nst.MPI_TAG);
    check_data(r2, N2, left, 2, "receive after Mprobe");
    MPI_OK(MPI_Mrecv(r1, N1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv left message %d, expected MPI_MESSAGE_NULL", msg);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 1, "Mrecv status (source %d, tag %d)", st.MPI_SOURCE, st.MPI_TAG);
    check_data(r1, N1, left, 1, "Mrecv");

    /* Improbe + Imrecv of the large one, into a strided type (every other int). */
    int flag = 0;
    while (!flag)
        MPI_OK(MPI_Improbe(left, 3, MPI_COMM_WORLD, &flag, &msg, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N3, "Improbe count %d, expected %d", count, N3);
    MPI_Datatype strided;
    MPI_Type_vector(N3, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (int i = 0; i < 2 * N3; i++)
        r3[i] = -1;
    MPI_Request ir;
    MPI_OK(MPI_Imrecv(r3, 1, strided, &msg, &ir));
    MPI_Type_free(&strided);
    CHECK(msg == MPI_MESSAGE_NULL, "Imrecv left message %d", msg);
    MPI_OK(MPI_Wait(&ir, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 3 && count == N3, "Imrecv status (source %d, tag %d, count %d)",
          st.MPI_SOURCE, st.MPI_TAG, count);
    for (int i = 0; i < 2 * N3; i++) {
        const int want = i % 2 ? -1 : value(left, 3, i / 2);
        if (r3[i] != want) {
            CHECK(0, "Imrecv into a strided type: element %d is %d, expected %d", i, r3[i], want);
            break;
        }
    }
    MPI_OK(MPI_Waitall(3, sends, MPI_STATUSES_IGNORE));

    /* MPI_PROC_NULL. */
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL,
          "Mprobe(MPI_PROC_NULL): message %d source %d, expected MPI_MESSAGE_NO_PROC and MPI_PROC_NULL", msg,
          st.MPI_SOURCE);
    /* Bindings that keep handles as unsigned integers (mpi4py, ctypes) read a
     * negative one as another value: every handle is non-negative. */
    CHECK(msg >= 0 && MPI_MESSAGE_NO_PROC >= 0, "MPI_MESSAGE_NO_PROC is %d, a negative handle", MPI_MESSAGE_NO_PROC);
    MPI_OK(MPI_Mrecv(r1, N1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL,
          "Mrecv of MPI_MESSAGE_NO_PROC: message %d source %d", msg, st.MPI_SOURCE);

    /* Truncation, and the null message, under MPI_ERRORS_RETURN. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_OK(MPI_Send(s1, N1, MPI_INT, right, 9, MPI_COMM_WORLD));
    MPI_OK(MPI_Mprobe(left, 9, MPI_COMM_WORLD, &msg, &st));
    for (int i = 0; i < N1; i++)
        r1[i] = -1;
    int rc = MPI_Mrecv(r1, 4, MPI_INT, &msg, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "Mrecv of 10 ints into 4: class %d, expected MPI_ERR_TRUNCATE (%d)", cls,
          MPI_ERR_TRUNCATE);
    CHECK(r1[0] == value(left, 1, 0) && r1[3] == value(left, 1, 3) && r1[4] == -1,
          "truncated Mrecv: elements 0, 3, 4 are %d %d %d, expected %d %d -1", r1[0], r1[3], r1[4],
          value(left, 1, 0), value(left, 1, 3));
    msg = MPI_MESSAGE_NULL;
    rc = MPI_Mrecv(r1, N1, MPI_INT, &msg, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "Mrecv of MPI_MESSAGE_NULL: class %d, expected MPI_ERR_REQUEST (%d)", cls,
          MPI_ERR_REQUEST);

    /* Generalized requests. */
    struct greq_state gs = {0, 0, 0};
    MPI_Request g;
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &gs, &g));
    flag = 1;
    MPI_OK(MPI_Test(&g, &flag, &st));
    CHECK(!flag && g != MPI_REQUEST_NULL, "a generalized request not yet completed tested done");
    MPI_OK(MPI_Grequest_complete(g));
    MPI_OK(MPI_Wait(&g, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    MPI_Count elements = -1;
    MPI_OK(MPI_Get_elements_x(&st, MPI_INT, &elements));
    CHECK(g == MPI_REQUEST_NULL && st.MPI_SOURCE == 7 && st.MPI_TAG == 42 && count == 3 && elements == 3,
          "generalized request: handle %d, status (source %d, tag %d, count %d, elements %lld), expected "
          "(7, 42, 3, 3)", g, st.MPI_SOURCE, st.MPI_TAG, count, (long long)elements);
    CHECK(gs.queried == 1 && gs.freed == 1 && gs.free_after_query,
          "generalized request: query called %d times, free %d times (after the query: %d); expected once each, "
          "free last", gs.queried, gs.freed, gs.free_after_query);
    MPI_Request notg;
    MPI_OK(MPI_Irecv(r1, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &notg));
    rc = MPI_Grequest_complete(notg);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "Grequest_complete of an MPI_Irecv request: class %d, expected MPI_ERR_REQUEST",
          cls);
    MPI_Cancel(&notg);
    MPI_Wait(&notg, MPI_STATUS_IGNORE);

    /* Status setters on a struct type's elements. */
    {
        MPI_Datatype pair;
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, 8};
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct(2, bl, disp, types, &pair);
        MPI_Type_commit(&pair);
        MPI_Status s;
        MPI_OK(MPI_Status_set_elements(&s, pair, 5));   /* 2 pairs and an int */
        int elems = -1, cnt = -2;
        MPI_Get_elements(&s, pair, &elems);
        MPI_Get_count(&s, pair, &cnt);
        CHECK(elems == 5 && cnt == MPI_UNDEFINED, "set_elements(pair, 5): Get_elements %d, Get_count %d, expected 5 "
              "and MPI_UNDEFINED", elems, cnt);
        MPI_OK(MPI_Status_set_cancelled(&s, 1));
        int c = 0;
        MPI_Test_cancelled(&s, &c);
        CHECK(c, "Status_set_cancelled(1) then Test_cancelled gave false");
        MPI_Type_free(&pair);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(s1), free(s2), free(s3), free(r1), free(r2), free(r3);
    return mtest_finish();
}
