/* SPDX-License-Identifier: BSD-3-Clause */
/* thread_multiple: MPI_THREAD_MULTIPLE, in the spirit of osu_latency_mt.
 * MPI_Init_thread(MULTIPLE) provides MULTIPLE and prints no notice. Then,
 * with two threads on every rank at once:
 * 1. ping-pong: rank r's pinger thread sends to its partner's ponger thread
 *    (r^1, or r itself when it has none: then both ends are in one process
 *    and a blocked receive must let the other thread in), each message's
 *    data checked;
 * 2. matched probes: both threads MPI_Mprobe / MPI_Mrecv messages of one
 *    tag from a shared stream; every message is received exactly once;
 * 3. collectives: each thread runs MPI_Allreduce on its own duplicate of
 *    MPI_COMM_WORLD, results checked against the serial sum.
 *   thread_multiple [--bench SIZE ITERS]: also prints rank 0's one-way
 *   latency of the ping-pong ("mt_latency_us SIZE VALUE"); no check uses it.
 * Any number of ranks. */
#include "mtest.h"

#include <pthread.h>

#define ITERS 300
#define STREAM 64   /* messages per rank in the matched-probe stream */

static int partner, bench_size = 64, bench_iters = 0;
static MPI_Comm thread_comm[2];
static int thread_errs[2];
static char thread_why[2][200];
static int seen[2][STREAM];

static void fail(int t, const char *why)
{
    if (!thread_errs[t]++)
        snprintf(thread_why[t], sizeof thread_why[t], "%s", why);
}

static unsigned char pat(int src, int it, int i) { return (unsigned char)(src * 31 + it * 7 + i); }

static double pingpong(int t, int size, int iters)
{
    unsigned char *buf = malloc((size_t)size + 1);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        if (t == 0) {   /* the pinger */
            for (int i = 0; i < size; i++)
                buf[i] = pat(mtest_rank, it, i);
            MPI_Send(buf, size, MPI_BYTE, partner, 100 + mtest_rank, MPI_COMM_WORLD);
            memset(buf, 0, (size_t)size & 0x7fffffffu);
            MPI_Recv(buf, size, MPI_BYTE, partner, 200 + mtest_rank, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < size; i++)
                if (buf[i] != (unsigned char)~pat(mtest_rank, it, i)) {
                    fail(t, "a pong's data differs from the complement of the ping");
                    break;
                }
        } else {   /* the ponger: answers the partner's pinger with the complement */
            MPI_Status st;
            MPI_Recv(buf, size, MPI_BYTE, partner, 100 + partner, MPI_COMM_WORLD, &st);
            for (int i = 0; i < size; i++) {
                if (buf[i] != pat(partner, it, i)) {
                    fail(t, "a ping's data differs from what the pinger sent");
                    break;
                }
            }
            for (int i = 0; i < size; i++)
                buf[i] = (unsigned char)~buf[i];
            MPI_Send(buf, size, MPI_BYTE, partner, 200 + partner, MPI_COMM_WORLD);
        }
    }
    double dt = MPI_Wtime() - t0;
    free(buf);
    return dt;
}

static void *thread_main(void *arg)
{
    const int t = (int)(size_t)arg;
    pingpong(t, 1000, ITERS);

    /* Matched probes: half the stream each, whichever messages come. */
    for (int k = 0; k < STREAM / 2; k++) {
        MPI_Message m;
        MPI_Status st;
        MPI_Mprobe(partner, 300, MPI_COMM_WORLD, &m, &st);
        int v[2] = {-1, -1};
        MPI_Mrecv(v, 2, MPI_INT, &m, MPI_STATUS_IGNORE);
        if (v[0] != partner || v[1] < 0 || v[1] >= STREAM)
            fail(t, "a matched-probe message holds the wrong sender or sequence number");
        else
            seen[t][v[1]]++;
    }

    /* Collectives on this thread's own communicator. */
    for (int k = 0; k < 50; k++) {
        long in = (long)mtest_rank * 1000 + k * 10 + t, out = -1, want = 0;
        for (int r = 0; r < mtest_size; r++)
            want += (long)r * 1000 + k * 10 + t;
        MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, thread_comm[t]);
        if (out != want)
            fail(t, "an Allreduce on the thread's communicator gave the wrong sum");
    }
    return NULL;
}

static double bench_time;

static void *bench_main(void *arg)
{
    const int t = (int)(size_t)arg;
    pingpong(t, bench_size, 100);   /* warm-up */
    const double dt = pingpong(t, bench_size, bench_iters);
    if (t == 0)
        bench_time = dt;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mtest_size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "Init_thread(MULTIPLE) provided %d, expected %d", provided,
          MPI_THREAD_MULTIPLE);
    int q = -1;
    MPI_Query_thread(&q);
    CHECK(q == MPI_THREAD_MULTIPLE, "Query_thread %d after Init_thread(MULTIPLE)", q);
    if (argc >= 4 && strcmp(argv[1], "--bench") == 0) {
        bench_size = atoi(argv[2]);
        bench_iters = atoi(argv[3]);
    }
    partner = (mtest_rank ^ 1) < mtest_size ? mtest_rank ^ 1 : mtest_rank;
    MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm[1]);

    /* The stream for the matched probes, sent before the threads start. */
    MPI_Request sends[STREAM];
    int payload[STREAM][2];
    for (int k = 0; k < STREAM; k++) {
        payload[k][0] = mtest_rank;
        payload[k][1] = k;
        MPI_Isend(payload[k], 2, MPI_INT, partner, 300, MPI_COMM_WORLD, &sends[k]);
    }

    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(size_t)t);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    MPI_Waitall(STREAM, sends, MPI_STATUSES_IGNORE);

    for (int t = 0; t < 2; t++)
        CHECK(thread_errs[t] == 0, "thread %d: %d errors, the first: %s", t, thread_errs[t], thread_why[t]);
    for (int k = 0; k < STREAM; k++)
        CHECK(seen[0][k] + seen[1][k] == 1, "matched-probe message %d was received %d times, expected once", k,
              seen[0][k] + seen[1][k]);

    if (bench_iters > 0) {   /* timing only: both threads ping-pong, rank 0 reports */
        MPI_Barrier(MPI_COMM_WORLD);
        pthread_t b[2];
        for (int t = 0; t < 2; t++)
            pthread_create(&b[t], NULL, bench_main, (void *)(size_t)t);
        for (int t = 0; t < 2; t++)
            pthread_join(b[t], NULL);
        if (mtest_rank == 0)
            printf("mt_latency_us %d %.3f\n", bench_size, bench_time * 1e6 / (2.0 * bench_iters));
    }
    MPI_Comm_free(&thread_comm[0]);
    MPI_Comm_free(&thread_comm[1]);
    return mtest_finish();
}
