/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_basic: the send modes, nonblocking send/recv, Sendrecv(_replace),
 * MPI_PROC_NULL and MPI_Get_count. Any number of ranks (1 talks to itself). */
#include "mtest.h"

static const size_t sizes[] = {0, 1, 8, 1000, 65536, 1u << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static int right, left;

static void check_msg(const unsigned char *buf, size_t n, const MPI_Status *st, int src, int tag,
                      const char *what)
{
    long bad = mtest_verify(buf, n, src, tag);
    CHECK(bad < 0, "%s %zu bytes from %d: byte %ld is %u, expected %u", what, n, src, bad,
          bad < 0 ? 0u : buf[bad], bad < 0 ? 0u : mtest_pat(src, tag, (size_t)bad));
    if (st) {
        int count = -1;
        MPI_Get_count(st, MPI_BYTE, &count);
        CHECK(st->MPI_SOURCE == src, "%s %zu bytes: status source %d, expected %d", what, n,
              st->MPI_SOURCE, src);
        CHECK(st->MPI_TAG == tag, "%s %zu bytes: status tag %d, expected %d", what, n, st->MPI_TAG, tag);
        CHECK(count == (int)n, "%s: Get_count(MPI_BYTE) %d, expected %zu", what, count, n);
    }
}

/* Blocking sends of one mode in a ring: rank 0 sends first, the others
 * receive first, so any send mode completes; one rank talks to itself with a
 * nonblocking receive posted first. */
typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);

static void ring_blocking(send_fn fn, const char *name, int tag)
{
    unsigned char *sbuf = malloc(sizes[NSIZES - 1] + 1), *rbuf = malloc(sizes[NSIZES - 1] + 1);
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k];
        MPI_Status st;
        mtest_fill(sbuf, n, mtest_rank, tag + (int)k);
        memset(rbuf, 0xEE, n + 1);
        if (mtest_size == 1) {
            MPI_Request r;
            MPI_OK(MPI_Irecv(rbuf, (int)n, MPI_BYTE, 0, tag + (int)k, MPI_COMM_WORLD, &r));
            MPI_OK(fn(sbuf, (int)n, MPI_BYTE, 0, tag + (int)k, MPI_COMM_WORLD));
            MPI_OK(MPI_Wait(&r, &st));
        } else if (mtest_rank == 0) {
            MPI_OK(fn(sbuf, (int)n, MPI_BYTE, right, tag + (int)k, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(rbuf, (int)n, MPI_BYTE, left, tag + (int)k, MPI_COMM_WORLD, &st));
        } else {
            MPI_OK(MPI_Recv(rbuf, (int)n, MPI_BYTE, left, tag + (int)k, MPI_COMM_WORLD, &st));
            MPI_OK(fn(sbuf, (int)n, MPI_BYTE, right, tag + (int)k, MPI_COMM_WORLD));
        }
        check_msg(rbuf, n, &st, left, tag + (int)k, name);
        CHECK(rbuf[n] == 0xEE, "%s %zu bytes: byte past the message was overwritten", name, n);
    }
    free(sbuf);
    free(rbuf);
}

/* Rsend: the receiver posts, a barrier says so, then the ready send. */
static void ring_rsend(int tag)
{
    size_t n = 4096;
    unsigned char *sbuf = malloc(n), *rbuf = malloc(n);
    for (int rep = 0; rep < 2; rep++) {
        size_t len = rep ? n : 3;
        MPI_Request r;
        MPI_Status st;
        mtest_fill(sbuf, len, mtest_rank, tag);
        MPI_OK(MPI_Irecv(rbuf, (int)len, MPI_BYTE, left, tag, MPI_COMM_WORLD, &r));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rep == 0) {
            MPI_OK(MPI_Rsend(sbuf, (int)len, MPI_BYTE, right, tag, MPI_COMM_WORLD));
        } else {
            MPI_Request s;
            MPI_OK(MPI_Irsend(sbuf, (int)len, MPI_BYTE, right, tag, MPI_COMM_WORLD, &s));
            MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Wait(&r, &st));
        check_msg(rbuf, len, &st, left, tag, rep ? "Irsend" : "Rsend");
    }
    free(sbuf);
    free(rbuf);
}

/* Issend cannot complete before the receive is posted: the receiver posts
 * only after a barrier that the sender enters after testing. */
static void issend_sync(int tag)
{
    if (mtest_size < 2)
        return;
    int payload = 4242 + mtest_rank, got = -1, flag = 1;
    MPI_Request s, r;
    MPI_OK(MPI_Issend(&payload, 1, MPI_INT, right, tag, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "Issend completed before the matching receive was posted");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, left, tag, MPI_COMM_WORLD, &r));
    if (!flag)
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(got == 4242 + left, "Issend payload %d, expected %d", got, 4242 + left);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Bsend / Ibsend with an attached buffer sized by MPI_Pack_size. All ranks
 * send before anyone receives: buffered sends must not wait for receivers. */
static void buffered(int tag)
{
    enum { NMSG = 4, COUNT = 5000 };
    int psize = 0;
    MPI_OK(MPI_Pack_size(COUNT, MPI_INT, MPI_COMM_WORLD, &psize));
    CHECK(psize >= COUNT * (int)sizeof(int), "Pack_size(%d MPI_INT) %d, expected >= %d", COUNT, psize,
          COUNT * (int)sizeof(int));
    int bsize = NMSG * (psize + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc((size_t)bsize);
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));

    int *sbuf = malloc(NMSG * COUNT * sizeof(int)), *rbuf = malloc(COUNT * sizeof(int));
    for (int m = 0; m < NMSG; m++)
        for (int i = 0; i < COUNT; i++)
            sbuf[m * COUNT + i] = mtest_rank * 1000003 + m * 10007 + i;
    MPI_Request req[NMSG / 2];
    for (int m = 0; m < NMSG; m++) {
        if (m % 2 == 0)
            MPI_OK(MPI_Bsend(sbuf + m * COUNT, COUNT, MPI_INT, right, tag + m, MPI_COMM_WORLD));
        else
            MPI_OK(MPI_Ibsend(sbuf + m * COUNT, COUNT, MPI_INT, right, tag + m, MPI_COMM_WORLD, &req[m / 2]));
    }
    /* The user buffer of a buffered send is free once the call returns. */
    memset(sbuf, 0, NMSG * COUNT * sizeof(int));
    MPI_OK(MPI_Waitall(NMSG / 2, req, MPI_STATUSES_IGNORE));
    for (int m = NMSG - 1; m >= 0; m--) {
        MPI_Status st;
        MPI_OK(MPI_Recv(rbuf, COUNT, MPI_INT, left, tag + m, MPI_COMM_WORLD, &st));
        int bad = -1;
        for (int i = 0; i < COUNT && bad < 0; i++)
            if (rbuf[i] != left * 1000003 + m * 10007 + i)
                bad = i;
        CHECK(bad < 0, "Bsend message %d: element %d is %d, expected %d", m, bad, bad < 0 ? 0 : rbuf[bad],
              left * 1000003 + m * 10007 + (bad < 0 ? 0 : bad));
        int count = -1;
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == COUNT, "Bsend message %d: Get_count %d, expected %d", m, count, COUNT);
    }
    void *addr = NULL;
    int dsize = -1;
    MPI_OK(MPI_Buffer_detach(&addr, &dsize));
    CHECK(addr == (void *)bbuf, "Buffer_detach gave %p, expected the attached %p", addr, (void *)bbuf);
    CHECK(dsize == bsize, "Buffer_detach gave size %d, expected %d", dsize, bsize);
    free(bbuf);
    free(sbuf);
    free(rbuf);
}

/* Every rank exchanges with every rank (itself included), all nonblocking. */
static void all_pairs_nonblocking(int tag)
{
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k];
        int p = mtest_size;
        unsigned char *sbuf = malloc(n + 1), **rbuf = malloc((size_t)p * sizeof(*rbuf));
        MPI_Request *req = malloc(2 * (size_t)p * sizeof(MPI_Request));
        MPI_Status *st = malloc(2 * (size_t)p * sizeof(MPI_Status));
        mtest_fill(sbuf, n, mtest_rank, tag + (int)k);
        for (int i = 0; i < p; i++) {
            rbuf[i] = malloc(n + 1);
            MPI_OK(MPI_Irecv(rbuf[i], (int)n, MPI_BYTE, i, tag + (int)k, MPI_COMM_WORLD, &req[i]));
        }
        for (int i = 0; i < p; i++) {
            int dest = (mtest_rank + i) % p;
            if (i % 2)
                MPI_OK(MPI_Issend(sbuf, (int)n, MPI_BYTE, dest, tag + (int)k, MPI_COMM_WORLD, &req[p + i]));
            else
                MPI_OK(MPI_Isend(sbuf, (int)n, MPI_BYTE, dest, tag + (int)k, MPI_COMM_WORLD, &req[p + i]));
        }
        MPI_OK(MPI_Waitall(2 * p, req, st));
        for (int i = 0; i < p; i++) {
            check_msg(rbuf[i], n, &st[i], i, tag + (int)k, "Isend/Irecv");
            CHECK(req[i] == MPI_REQUEST_NULL, "Waitall left request %d non-null", i);
            free(rbuf[i]);
        }
        free(sbuf);
        free(rbuf);
        free(req);
        free(st);
    }
}

static void sendrecv_ring(int tag)
{
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k];
        unsigned char *sbuf = malloc(n + 1), *rbuf = malloc(n + 1);
        MPI_Status st;
        mtest_fill(sbuf, n, mtest_rank, tag);
        MPI_OK(MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, right, tag, rbuf, (int)n, MPI_BYTE, left, tag,
                            MPI_COMM_WORLD, &st));
        check_msg(rbuf, n, &st, left, tag, "Sendrecv");
        free(sbuf);
        free(rbuf);
    }
    /* Sendrecv_replace: shift an array round the ring size times; each step
     * holds the values of the rank `step` places to the left. */
    int count = 70000; /* large enough for a rendezvous on most transports */
    int *buf = malloc((size_t)count * sizeof(int));
    for (int i = 0; i < count; i++)
        buf[i] = mtest_rank * 100000 + i;
    for (int step = 1; step <= mtest_size; step++) {
        MPI_Status st;
        MPI_OK(MPI_Sendrecv_replace(buf, count, MPI_INT, right, tag + 1, left, tag + 1, MPI_COMM_WORLD, &st));
        int origin = ((mtest_rank - step) % mtest_size + mtest_size) % mtest_size;
        int bad = -1;
        for (int i = 0; i < count && bad < 0; i++)
            if (buf[i] != origin * 100000 + i)
                bad = i;
        CHECK(bad < 0, "Sendrecv_replace step %d: element %d is %d, expected %d", step, bad,
              bad < 0 ? 0 : buf[bad], origin * 100000 + (bad < 0 ? 0 : bad));
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag + 1, "Sendrecv_replace status (%d,%d), expected (%d,%d)",
              st.MPI_SOURCE, st.MPI_TAG, left, tag + 1);
    }
    free(buf);
}

static void check_proc_null_status(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: status source %d, expected MPI_PROC_NULL (%d)", what,
          st->MPI_SOURCE, MPI_PROC_NULL);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: status tag %d, expected MPI_ANY_TAG (%d)", what, st->MPI_TAG,
          MPI_ANY_TAG);
    CHECK(count == 0, "%s: Get_count %d, expected 0", what, count);
}

static void proc_null(void)
{
    int buf[4] = {1, 2, 3, 4};
    MPI_Status st;
    MPI_Request r;
    MPI_OK(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    memset(&st, 0x55, sizeof st);
    MPI_OK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_proc_null_status(&st, "Recv from MPI_PROC_NULL");
    CHECK(buf[0] == 1 && buf[3] == 4, "Recv from MPI_PROC_NULL modified the buffer");
    memset(&st, 0x55, sizeof st);
    MPI_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, &st));
    check_proc_null_status(&st, "Irecv from MPI_PROC_NULL");
    MPI_OK(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    memset(&st, 0x55, sizeof st);
    MPI_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD,
                        &st));
    check_proc_null_status(&st, "Sendrecv with MPI_PROC_NULL");
}

/* 7 bytes received as MPI_BYTE: Get_count in MPI_INT (or MPI_SHORT) is
 * MPI_UNDEFINED, in MPI_BYTE 7. */
static void get_count_undefined(int tag)
{
    unsigned char s[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r[16];
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(s, 7, MPI_BYTE, right, tag, r, 16, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st));
    int c = 0;
    MPI_Get_count(&st, MPI_BYTE, &c);
    CHECK(c == 7, "Get_count(MPI_BYTE) %d, expected 7", c);
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(c == MPI_UNDEFINED, "Get_count(MPI_INT) of 7 bytes %d, expected MPI_UNDEFINED", c);
    MPI_Get_count(&st, MPI_SHORT, &c);
    CHECK(c == MPI_UNDEFINED, "Get_count(MPI_SHORT) of 7 bytes %d, expected MPI_UNDEFINED", c);
    /* 8 bytes are exactly 2 ints. */
    MPI_OK(MPI_Sendrecv(s, 8 / 4, MPI_INT, right, tag, r, 4, MPI_INT, left, tag, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(c == 2, "Get_count(MPI_INT) of 2 ints %d, expected 2", c);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    right = (mtest_rank + 1) % mtest_size;
    left = (mtest_rank + mtest_size - 1) % mtest_size;

    ring_blocking(MPI_Send, "Send", 100);
    ring_blocking(MPI_Ssend, "Ssend", 200);
    ring_rsend(300);
    issend_sync(310);
    buffered(400);
    all_pairs_nonblocking(500);
    sendrecv_ring(600);
    proc_null();
    get_count_undefined(700);
    return mtest_finish();
}
