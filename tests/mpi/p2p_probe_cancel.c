/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_probe_cancel: Probe / Iprobe, cancelling a receive nothing matches,
 * the Wait and Test families over mixes including MPI_REQUEST_NULL, and
 * MPI_Request_free on a send, cancelling a send that already went out. Any
 * number of ranks. */
#include "mtest.h"

static int right, left;

static int value(int src, int k, int i) { return src * 1000000 + k * 10000 + i; }

static int check_ints(const int *buf, int n, int src, int k, const char *what)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != value(src, k, i)) {
            CHECK(0, "%s: element %d is %d, expected %d", what, i, buf[i], value(src, k, i));
            return 1;
        }
    return 0;
}

/* The status of a completed MPI_REQUEST_NULL is empty. */
static void check_empty(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: status (source %d, tag %d, count %d), expected the empty status (%d, %d, 0)", what, st->MPI_SOURCE,
          st->MPI_TAG, count, MPI_ANY_SOURCE, MPI_ANY_TAG);
}

static void probe(void)
{
    static const int counts[] = {0, 10, 5000, 300000};
    for (int k = 0; k < 4; k++) {
        int n = counts[k] + mtest_rank;
        int tag = 100 + 10 * k + mtest_rank % 7;
        int *sbuf = malloc((size_t)(n + 1) * sizeof(int));
        for (int i = 0; i < n; i++)
            sbuf[i] = value(mtest_rank, k, i);
        MPI_Request s;
        MPI_OK(MPI_Isend(sbuf, n, MPI_INT, right, tag, MPI_COMM_WORLD, &s));

        MPI_Status st;
        int exp_n = counts[k] + left, exp_tag = 100 + 10 * k + left % 7;
        if (k % 2 == 0) {
            MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        } else {
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Iprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        }
        int count = -1;
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(st.MPI_SOURCE == left, "probe %d: source %d, expected %d", k, st.MPI_SOURCE, left);
        CHECK(st.MPI_TAG == exp_tag, "probe %d: tag %d, expected %d", k, st.MPI_TAG, exp_tag);
        CHECK(count == exp_n, "probe %d: Get_count %d, expected %d", k, count, exp_n);
        /* A second probe sees the same message. */
        MPI_Status st2;
        MPI_OK(MPI_Probe(left, exp_tag, MPI_COMM_WORLD, &st2));
        int count2 = -1;
        MPI_Get_count(&st2, MPI_INT, &count2);
        CHECK(count2 == count && st2.MPI_TAG == st.MPI_TAG, "probe %d twice: (%d,%d) then (%d,%d)", k, st.MPI_TAG,
              count, st2.MPI_TAG, count2);
        if (count < 0 || st.MPI_SOURCE < 0 || st.MPI_TAG < 0) {
            /* Nothing sensible to receive with; take it by what we know. */
            count = exp_n;
            st.MPI_SOURCE = left;
            st.MPI_TAG = exp_tag;
        }
        int *rbuf = malloc((size_t)(count + 1) * sizeof(int));
        MPI_Status rs;
        MPI_OK(MPI_Recv(rbuf, count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &rs));
        check_ints(rbuf, count, left, k, "receive after probe");
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        free(sbuf);
        free(rbuf);
        /* Nothing is left to probe for with that tag. */
        MPI_Barrier(MPI_COMM_WORLD);
        int flag = 1;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, exp_tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "probe %d: Iprobe still finds a message with tag %d after it was received", k, exp_tag);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int flag = 1;
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "Iprobe for a tag nobody sent found a message");
    MPI_Status st;
    MPI_OK(MPI_Probe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Probe(MPI_PROC_NULL): source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
}

static void cancel(void)
{
    int buf[8];
    MPI_Request r;
    MPI_Status st;
    int flag = 0;
    MPI_OK(MPI_Irecv(buf, 8, MPI_INT, MPI_ANY_SOURCE, 31337, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "a cancelled receive that nothing matched: Test_cancelled false");
    CHECK(r == MPI_REQUEST_NULL, "Wait on a cancelled receive left the request non-null");

    MPI_OK(MPI_Irecv(buf, 8, MPI_INT, left, 31338, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    flag = 0;
    while (!flag)
        MPI_OK(MPI_Test(&r, &flag, &st));
    int c = 0;
    MPI_OK(MPI_Test_cancelled(&st, &c));
    CHECK(c, "a cancelled receive completed by Test: Test_cancelled false");

    /* A receive that completed normally is not cancelled. */
    int x = mtest_rank, y = -1;
    MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, right, 5, &y, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Test_cancelled(&st, &c));
    CHECK(!c, "a completed receive: Test_cancelled true");
    /* Traffic still matches normally after the cancellations. */
    CHECK(y == left, "after cancel: got %d, expected %d", y, left);

    /* Small sends (they complete as they go out, so weft keeps no request
     * for them): a cancel fails quietly, Request_get_status says done and
     * keeps the request, and the messages arrive. */
    int out[2] = {mtest_rank * 10 + 1, mtest_rank * 10 + 2}, in[2] = {-1, -1};
    MPI_Request s[2];
    for (int k = 0; k < 2; k++)
        MPI_OK(MPI_Isend(&out[k], 1, MPI_INT, right, 31340 + k, MPI_COMM_WORLD, &s[k]));
    MPI_OK(MPI_Cancel(&s[0]));
    MPI_OK(MPI_Wait(&s[0], &st));
    MPI_OK(MPI_Test_cancelled(&st, &c));
    CHECK(!c, "a small send after MPI_Cancel: Test_cancelled true");
    flag = 0;
    while (!flag)
        MPI_OK(MPI_Request_get_status(s[1], &flag, &st));
    CHECK(s[1] != MPI_REQUEST_NULL, "Request_get_status freed the send request");
    MPI_OK(MPI_Test(&s[1], &flag, &st));
    CHECK(flag && s[1] == MPI_REQUEST_NULL, "Test after Request_get_status said done: flag %d", flag);
    for (int k = 1; k >= 0; k--)
        MPI_OK(MPI_Recv(&in[k], 1, MPI_INT, left, 31340 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[0] == left * 10 + 1 && in[1] == left * 10 + 2, "small sends: got %d, %d from rank %d", in[0], in[1],
          left);
}

/* Four messages from the left with tags 0..3; completion routines over a
 * request array where some entries are MPI_REQUEST_NULL. */
#define NR 6
static void post(int (*rbuf)[64], MPI_Request *rr, MPI_Request *sr, int (*sbuf)[64])
{
    for (int k = 0; k < NR; k++) {
        rr[k] = MPI_REQUEST_NULL;
        sr[k] = MPI_REQUEST_NULL;
    }
    /* Slots 1 and 4 stay null. */
    int slot[4] = {0, 2, 3, 5};
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 64; i++) {
            sbuf[k][i] = value(mtest_rank, k, i);
            rbuf[slot[k]][i] = -1;
        }
        MPI_OK(MPI_Irecv(rbuf[slot[k]], 64, MPI_INT, left, 40 + k, MPI_COMM_WORLD, &rr[slot[k]]));
    }
    for (int k = 3; k >= 0; k--)
        MPI_OK(MPI_Isend(sbuf[k], 64, MPI_INT, right, 40 + k, MPI_COMM_WORLD, &sr[k]));
}

static void verify(int (*rbuf)[64], const char *what)
{
    int slot[4] = {0, 2, 3, 5};
    for (int k = 0; k < 4; k++)
        check_ints(rbuf[slot[k]], 64, left, k, what);
}

static void wait_test_families(void)
{
    int rbuf[NR][64], sbuf[NR][64];
    MPI_Request rr[NR], sr[NR];
    MPI_Status st[NR], one;
    int idx[NR], outcount, flag, index;
    int slot_of_tag[4] = {0, 2, 3, 5};

    /* Single null requests. */
    MPI_Request nul = MPI_REQUEST_NULL;
    MPI_OK(MPI_Wait(&nul, &one));
    check_empty(&one, "Wait(MPI_REQUEST_NULL)");
    flag = 0;
    MPI_OK(MPI_Test(&nul, &flag, &one));
    CHECK(flag, "Test(MPI_REQUEST_NULL): flag false");
    check_empty(&one, "Test(MPI_REQUEST_NULL)");

    /* All-null arrays. */
    MPI_Request nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_OK(MPI_Waitall(3, nulls, st));
    for (int i = 0; i < 3; i++)
        check_empty(&st[i], "Waitall over nulls");
    MPI_OK(MPI_Waitany(3, nulls, &index, &one));
    CHECK(index == MPI_UNDEFINED, "Waitany over nulls: index %d, expected MPI_UNDEFINED", index);
    check_empty(&one, "Waitany over nulls");
    MPI_OK(MPI_Waitsome(3, nulls, &outcount, idx, st));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome over nulls: outcount %d, expected MPI_UNDEFINED", outcount);
    flag = 0;
    MPI_OK(MPI_Testall(3, nulls, &flag, st));
    CHECK(flag, "Testall over nulls: flag false");
    flag = 0;
    MPI_OK(MPI_Testany(3, nulls, &index, &flag, &one));
    CHECK(flag && index == MPI_UNDEFINED, "Testany over nulls: flag %d index %d, expected 1, MPI_UNDEFINED", flag,
          index);
    MPI_OK(MPI_Testsome(3, nulls, &outcount, idx, st));
    CHECK(outcount == MPI_UNDEFINED, "Testsome over nulls: outcount %d, expected MPI_UNDEFINED", outcount);
    MPI_OK(MPI_Waitall(0, nulls, st));

    /* Waitall over a mix. */
    post(rbuf, rr, sr, sbuf);
    MPI_OK(MPI_Waitall(NR, rr, st));
    for (int k = 0; k < 4; k++) {
        int s = slot_of_tag[k];
        CHECK(st[s].MPI_TAG == 40 + k && st[s].MPI_SOURCE == left, "Waitall slot %d: (source %d, tag %d)", s,
              st[s].MPI_SOURCE, st[s].MPI_TAG);
    }
    check_empty(&st[1], "Waitall: the null slot 1");
    check_empty(&st[4], "Waitall: the null slot 4");
    for (int k = 0; k < NR; k++)
        CHECK(rr[k] == MPI_REQUEST_NULL, "Waitall left slot %d non-null", k);
    verify(rbuf, "Waitall");
    MPI_OK(MPI_Waitall(NR, sr, MPI_STATUSES_IGNORE));

    /* Waitany until MPI_UNDEFINED: every real slot exactly once. */
    post(rbuf, rr, sr, sbuf);
    int seen[NR] = {0};
    for (int n = 0;; n++) {
        MPI_OK(MPI_Waitany(NR, rr, &index, &one));
        if (index == MPI_UNDEFINED) {
            CHECK(n == 4, "Waitany gave MPI_UNDEFINED after %d completions, expected 4", n);
            break;
        }
        CHECK(index >= 0 && index < NR && index != 1 && index != 4 && !seen[index],
              "Waitany returned index %d (already seen or a null slot)", index);
        if (index < 0 || index >= NR || n > NR)
            break;
        seen[index] = 1;
        CHECK(rr[index] == MPI_REQUEST_NULL, "Waitany left slot %d non-null", index);
        CHECK(one.MPI_SOURCE == left, "Waitany slot %d: source %d", index, one.MPI_SOURCE);
    }
    verify(rbuf, "Waitany");
    MPI_OK(MPI_Waitall(NR, sr, MPI_STATUSES_IGNORE));

    /* Waitsome until MPI_UNDEFINED. */
    post(rbuf, rr, sr, sbuf);
    int total = 0;
    for (int guard = 0; guard <= NR; guard++) {
        MPI_OK(MPI_Waitsome(NR, rr, &outcount, idx, st));
        if (outcount == MPI_UNDEFINED)
            break;
        CHECK(outcount >= 1, "Waitsome completed %d requests", outcount);
        for (int j = 0; j < outcount; j++) {
            CHECK(idx[j] != 1 && idx[j] != 4 && rr[idx[j]] == MPI_REQUEST_NULL, "Waitsome index %d", idx[j]);
            CHECK(st[j].MPI_TAG >= 40 && st[j].MPI_TAG < 44 && slot_of_tag[st[j].MPI_TAG - 40] == idx[j],
                  "Waitsome status %d (index %d) has tag %d", j, idx[j], st[j].MPI_TAG);
        }
        total += outcount;
    }
    CHECK(total == 4, "Waitsome completed %d requests in all, expected 4", total);
    verify(rbuf, "Waitsome");
    MPI_OK(MPI_Waitall(NR, sr, MPI_STATUSES_IGNORE));

    /* Testall polled until true. */
    post(rbuf, rr, sr, sbuf);
    flag = 0;
    while (!flag)
        MPI_OK(MPI_Testall(NR, rr, &flag, st));
    for (int k = 0; k < NR; k++)
        CHECK(rr[k] == MPI_REQUEST_NULL, "Testall left slot %d non-null", k);
    verify(rbuf, "Testall");
    flag = 0;
    while (!flag)
        MPI_OK(MPI_Testall(NR, sr, &flag, MPI_STATUSES_IGNORE));

    /* Testany polled until MPI_UNDEFINED. */
    post(rbuf, rr, sr, sbuf);
    int got = 0;
    for (;;) {
        flag = 0;
        MPI_OK(MPI_Testany(NR, rr, &index, &flag, &one));
        if (flag && index == MPI_UNDEFINED)
            break;
        if (flag) {
            CHECK(index >= 0 && index < NR && rr[index] == MPI_REQUEST_NULL, "Testany index %d", index);
            if (++got > 4)
                break;
        }
    }
    CHECK(got == 4, "Testany completed %d requests, expected 4", got);
    verify(rbuf, "Testany");
    MPI_OK(MPI_Waitall(NR, sr, MPI_STATUSES_IGNORE));

    /* Testsome polled until MPI_UNDEFINED. */
    post(rbuf, rr, sr, sbuf);
    total = 0;
    for (;;) {
        MPI_OK(MPI_Testsome(NR, rr, &outcount, idx, st));
        if (outcount == MPI_UNDEFINED)
            break;
        total += outcount;
        if (total > 4)
            break;
    }
    CHECK(total == 4, "Testsome completed %d requests, expected 4", total);
    verify(rbuf, "Testsome");
    MPI_OK(MPI_Waitall(NR, sr, MPI_STATUSES_IGNORE));
}

/* A freed send request still delivers its message (small and large). */
static void request_free(void)
{
    static int sbuf[2][100000];
    int n[2] = {10, 100000};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < n[k]; i++)
            sbuf[k][i] = value(mtest_rank, k + 7, i);
        MPI_Request s;
        MPI_OK(MPI_Isend(sbuf[k], n[k], MPI_INT, right, 60 + k, MPI_COMM_WORLD, &s));
        MPI_OK(MPI_Request_free(&s));
        CHECK(s == MPI_REQUEST_NULL, "Request_free left the handle non-null");
    }
    int *rbuf = malloc(100000 * sizeof(int));
    for (int k = 1; k >= 0; k--) {
        MPI_OK(MPI_Recv(rbuf, n[k], MPI_INT, left, 60 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check_ints(rbuf, n[k], left, k + 7, "send whose request was freed");
    }
    free(rbuf);
    /* The sender may reuse its buffer only once it knows the message
     * arrived: the barrier says so. */
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    right = (mtest_rank + 1) % mtest_size;
    left = (mtest_rank + mtest_size - 1) % mtest_size;
    probe();
    cancel();
    wait_test_families();
    request_free();
    return mtest_finish();
}
