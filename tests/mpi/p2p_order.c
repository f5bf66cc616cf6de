/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_order: non-overtaking between one sender and one receiver (same tag,
 * sizes mixed so eager and rendezvous protocols interleave), receives posted
 * before and after the sends, wildcards and the status fields they fill in,
 * and selection by tag. Any number of ranks. */
#include "mtest.h"

/* Sizes in bytes, cycling; each message carries its sequence number. */
static const int mix[] = {4, 0, 100, 8000, 70000, 16, 300000, 4, 1 << 20, 64, 32768, 12};
#define NMIX ((int)(sizeof mix / sizeof mix[0]))
#define NMSG 36
#define MAXB (1 << 20)

static int right, left;

static int msg_size(int seq) { return mix[seq % NMIX]; }

static void fill_seq(unsigned char *buf, int n, int src, int seq)
{
    mtest_fill(buf, (size_t)n, src, seq);
    if (n >= 4)
        memcpy(buf, &seq, sizeof seq);
}

static void check_seq(const unsigned char *buf, int n, const MPI_Status *st, int src, int seq, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(count == n, "%s: message %d from %d has %d bytes, expected %d (out of order?)", what, seq, src, count, n);
    if (count != n)
        return;
    if (n >= 4) {
        int got;
        memcpy(&got, buf, sizeof got);
        CHECK(got == seq, "%s: message %d from %d carries sequence %d", what, seq, src, got);
        long i;
        for (i = 4; i < n; i++)
            if (buf[i] != mtest_pat(src, seq, (size_t)i))
                break;
        CHECK(i == n, "%s: message %d from %d: byte %ld differs from what was sent", what, seq, src, i);
    } else {
        long bad = mtest_verify(buf, (size_t)n, src, seq);
        CHECK(bad < 0, "%s: message %d from %d: byte %ld differs from what was sent", what, seq, src, bad);
    }
    CHECK(st->MPI_SOURCE == src, "%s: status source %d, expected %d", what, st->MPI_SOURCE, src);
}

/* mode 0: receiver posts all receives, barrier, then the sends start.
 * mode 1: sends start, barrier, then the receives are posted (unexpected).
 * mode 2: sends and blocking receives one at a time, no barrier. */
static void same_tag_order(int mode, int tag)
{
    static const char *names[] = {"posted-before-send", "send-before-post", "blocking-recv"};
    unsigned char **sbuf = malloc(NMSG * sizeof *sbuf), **rbuf = malloc(NMSG * sizeof *rbuf);
    MPI_Request sreq[NMSG], rreq[NMSG];
    MPI_Status st[NMSG];
    for (int i = 0; i < NMSG; i++) {
        sbuf[i] = malloc((size_t)msg_size(i) + 1);
        rbuf[i] = malloc(MAXB);
        fill_seq(sbuf[i], msg_size(i), mtest_rank, i);
    }
    if (mode == 0) {
        /* Each receive accepts up to the largest size: only order decides. */
        for (int i = 0; i < NMSG; i++)
            MPI_OK(MPI_Irecv(rbuf[i], MAXB, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rreq[i]));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int i = 0; i < NMSG; i++)
        MPI_OK(MPI_Isend(sbuf[i], msg_size(i), MPI_BYTE, right, tag, MPI_COMM_WORLD, &sreq[i]));
    if (mode == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < NMSG; i++)
            MPI_OK(MPI_Irecv(rbuf[i], MAXB, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rreq[i]));
    }
    if (mode == 2) {
        for (int i = 0; i < NMSG; i++)
            MPI_OK(MPI_Recv(rbuf[i], MAXB, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st[i]));
    } else {
        MPI_OK(MPI_Waitall(NMSG, rreq, st));
    }
    MPI_OK(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NMSG; i++) {
        check_seq(rbuf[i], msg_size(i), &st[i], left, i, names[mode]);
        free(sbuf[i]);
        free(rbuf[i]);
    }
    free(sbuf);
    free(rbuf);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank sends M messages to rank 0 with tags 10+k; rank 0 receives them
 * all with MPI_ANY_SOURCE / MPI_ANY_TAG. The payload says who sent it with
 * which tag; per source the sequence must increase. */
static void wildcards(void)
{
    enum { M = 20 };
    int payload[M][3];
    MPI_Request req[M];
    for (int k = 0; k < M; k++) {
        payload[k][0] = mtest_rank;
        payload[k][1] = 10 + (k % 5);
        payload[k][2] = k;
        /* Some of them big enough for a rendezvous. */
        MPI_OK(MPI_Isend(payload[k], 3, MPI_INT, 0, 10 + (k % 5), MPI_COMM_WORLD, &req[k]));
    }
    if (mtest_rank == 0) {
        int *next = calloc((size_t)mtest_size, sizeof(int));
        for (int n = 0; n < M * mtest_size; n++) {
            int got[3] = {-1, -1, -1};
            MPI_Status st;
            MPI_OK(MPI_Recv(got, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == got[0], "ANY_SOURCE: status source %d, payload says %d", st.MPI_SOURCE, got[0]);
            CHECK(st.MPI_TAG == got[1], "ANY_TAG: status tag %d, payload says %d", st.MPI_TAG, got[1]);
            if (got[0] >= 0 && got[0] < mtest_size) {
                CHECK(got[2] == next[got[0]], "ANY_SOURCE: from %d got sequence %d, expected %d", got[0], got[2],
                      next[got[0]]);
                next[got[0]] = got[2] + 1;
            }
        }
        free(next);
    }
    MPI_OK(MPI_Waitall(M, req, MPI_STATUSES_IGNORE));
    /* Rank 0's ANY_TAG receives must not see the messages below. */
    MPI_Barrier(MPI_COMM_WORLD);

    /* ANY_TAG with a given source; ANY_SOURCE with a given tag. */
    int a = 1000 + mtest_rank, b = 2000 + mtest_rank, x = -1, y = -1;
    MPI_Request r2[2];
    MPI_Status st;
    MPI_OK(MPI_Isend(&a, 1, MPI_INT, right, 21, MPI_COMM_WORLD, &r2[0]));
    MPI_OK(MPI_Isend(&b, 1, MPI_INT, right, 22, MPI_COMM_WORLD, &r2[1]));
    MPI_OK(MPI_Recv(&x, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(x == 1000 + left && st.MPI_TAG == 21, "ANY_TAG from %d: got %d tag %d, expected %d tag 21", left, x,
          st.MPI_TAG, 1000 + left);
    MPI_OK(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &st));
    CHECK(y == 2000 + left && st.MPI_SOURCE == left, "ANY_SOURCE tag 22: got %d from %d, expected %d from %d", y,
          st.MPI_SOURCE, 2000 + left, left);
    MPI_OK(MPI_Waitall(2, r2, MPI_STATUSES_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Tags select: messages with tags 1, 2, 3 (small, then large, then small)
 * are received 3, 1, 2. */
static void tag_selection(void)
{
    int n[3] = {5, 100000, 7};
    int *s[3], *r[3];
    MPI_Request req[3];
    for (int k = 0; k < 3; k++) {
        s[k] = malloc((size_t)n[k] * sizeof(int));
        r[k] = malloc((size_t)n[k] * sizeof(int));
        for (int i = 0; i < n[k]; i++)
            s[k][i] = mtest_rank * 7 + k * 100003 + i;
        MPI_OK(MPI_Isend(s[k], n[k], MPI_INT, right, 31 + k, MPI_COMM_WORLD, &req[k]));
    }
    int order[3] = {2, 0, 1};
    for (int j = 0; j < 3; j++) {
        int k = order[j];
        MPI_Status st;
        MPI_OK(MPI_Recv(r[k], n[k], MPI_INT, left, 31 + k, MPI_COMM_WORLD, &st));
        int bad = -1;
        for (int i = 0; i < n[k] && bad < 0; i++)
            if (r[k][i] != left * 7 + k * 100003 + i)
                bad = i;
        CHECK(bad < 0, "tag %d received out of order: element %d wrong", 31 + k, bad);
        CHECK(st.MPI_TAG == 31 + k, "tag selection: status tag %d, expected %d", st.MPI_TAG, 31 + k);
    }
    MPI_OK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 3; k++) {
        free(s[k]);
        free(r[k]);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    right = (mtest_rank + 1) % mtest_size;
    left = (mtest_rank + mtest_size - 1) % mtest_size;
    for (int mode = 0; mode < 3; mode++)
        same_tag_order(mode, 50 + mode);
    wildcards();
    tag_selection();
    return mtest_finish();
}
