/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_scratch: MPI_Allreduce and MPI_Reduce keep their working memory per
 * communicator from call to call (mpi/coll.cc) and work in the user's
 * receive buffer where they can. Checked against a serial reference:
 *  - sizes on both sides of the eager limit and the rendezvous chunk (4 B
 *    to 1 MiB), growing and shrinking, so scratch memory is reused at
 *    another size than it was made for;
 *  - three communicators used in turn (MPI_COMM_WORLD, a duplicate, a split
 *    with the order reversed), one freed and made again in between;
 *  - separate and MPI_IN_PLACE buffers, roots 0 and size-1, a strided
 *    (non-contiguous) datatype; the send buffer is never written;
 *  - after warm-up, ten 1 MiB allreduces take fewer minor page faults than
 *    the pages of one buffer: fresh buffers per call took 2 per page each
 *    call. Any number of ranks. */
#include <sys/resource.h>

#include "mtest.h"

#define MAX_N (1 << 18) /* ints: 1 MiB */

static int gen(int rank, int i) { return (rank * 31 + i * 7) % 1000 - 500; }

static long want_sum(int csize, int i)
{
    long s = 0;
    for (int r = 0; r < csize; r++)
        s += gen(r, i);
    return s;
}

static int *sbuf, *rbuf;

static void fill(int crank, int n)
{
    for (int i = 0; i < n; i++)
        sbuf[i] = gen(crank, i);
}

/* The send buffer still holds what this rank put there. */
static void check_send_intact(const char *what, const char *cname, int crank, int n)
{
    for (int i = 0; i < n; i++)
        if (sbuf[i] != gen(crank, i)) {
            CHECK(0, "%s on %s, n=%d: send buffer changed at [%d]: %d, was %d", what, cname, n, i, sbuf[i],
                  gen(crank, i));
            return;
        }
}

static void check_sum(const char *what, const char *cname, int csize, int n)
{
    for (int i = 0; i < n; i++)
        if (rbuf[i] != want_sum(csize, i)) {
            CHECK(0, "%s on %s, n=%d: [%d] = %d, expected %ld", what, cname, n, i, rbuf[i], want_sum(csize, i));
            return;
        }
}

static void one_size(MPI_Comm comm, const char *cname, int n)
{
    int crank, csize;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);

    fill(crank, n);
    memset(rbuf, 0x5a, (size_t)n * sizeof(int));
    MPI_OK(MPI_Allreduce(sbuf, rbuf, n, MPI_INT, MPI_SUM, comm));
    check_sum("Allreduce", cname, csize, n);
    check_send_intact("Allreduce", cname, crank, n);

    for (int i = 0; i < n; i++)
        rbuf[i] = gen(crank, i);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, rbuf, n, MPI_INT, MPI_SUM, comm));
    check_sum("Allreduce(MPI_IN_PLACE)", cname, csize, n);

    const int roots[2] = {0, csize - 1};
    for (int k = 0; k < 2; k++) {
        const int root = roots[k];
        memset(rbuf, 0x5a, (size_t)n * sizeof(int));
        MPI_OK(MPI_Reduce(sbuf, crank == root ? rbuf : NULL, n, MPI_INT, MPI_SUM, root, comm));
        if (crank == root)
            check_sum("Reduce", cname, csize, n);
        check_send_intact("Reduce", cname, crank, n);

        if (crank == root) {
            for (int i = 0; i < n; i++)
                rbuf[i] = gen(crank, i);
            MPI_OK(MPI_Reduce(MPI_IN_PLACE, rbuf, n, MPI_INT, MPI_SUM, root, comm));
            check_sum("Reduce(MPI_IN_PLACE)", cname, csize, n);
        } else {
            MPI_OK(MPI_Reduce(sbuf, NULL, n, MPI_INT, MPI_SUM, root, comm));
        }
    }
}

/* Every other int of a 2n array: the reductions work on a packed copy. */
static void strided(MPI_Comm comm, const char *cname, int n)
{
    int crank, csize;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    for (int i = 0; i < 2 * n; i++) {
        sbuf[i] = i % 2 ? -7 : gen(crank, i / 2);
        rbuf[i] = -9;
    }
    MPI_OK(MPI_Allreduce(sbuf, rbuf, 1, every_other, MPI_MAX, comm));
    for (int i = 0; i < 2 * n; i++) {
        int want = -9;
        if (i % 2 == 0) {
            want = gen(0, i / 2);
            for (int r = 1; r < csize; r++)
                want = gen(r, i / 2) > want ? gen(r, i / 2) : want;
        }
        if (rbuf[i] != want) {
            CHECK(0, "Allreduce(strided MAX) on %s, n=%d: [%d] = %d, expected %d (odd slots untouched)", cname, n,
                  i, rbuf[i], want);
            break;
        }
    }
    for (int i = 0; i < 2 * n; i++)
        rbuf[i] = -9;
    MPI_OK(MPI_Reduce(sbuf, rbuf, 1, every_other, MPI_MAX, csize - 1, comm));
    if (crank == csize - 1)
        for (int i = 0; i < 2 * n; i += 2) {
            int want = -1000;
            for (int r = 0; r < csize; r++)
                want = gen(r, i / 2) > want ? gen(r, i / 2) : want;
            if (rbuf[i] != want) {
                CHECK(0, "Reduce(strided MAX) on %s, n=%d: [%d] = %d, expected %d", cname, n, i, rbuf[i], want);
                break;
            }
        }
    MPI_OK(MPI_Type_free(&every_other));
}

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    sbuf = (int *)malloc(2 * sizeof(int) * MAX_N);
    rbuf = (int *)malloc(2 * sizeof(int) * MAX_N);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "coll_scratch: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    MPI_Comm dup, rev;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, mtest_size - mtest_rank, &rev));
    MPI_Comm comms[3] = {MPI_COMM_WORLD, dup, rev};
    const char *names[3] = {"MPI_COMM_WORLD", "a duplicate", "a reversed split"};
    /* Across the eager limit (64 KiB) and the rendezvous chunk (512 KiB),
     * up and down again. */
    const int sizes[] = {1, 1000, 16383, 16384, 16385, 20000, MAX_N, 3, 131072 + 5, 16, MAX_N, 1};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    for (int s = 0; s < nsizes; s++) {
        for (int k = 0; k < 3; k++)
            one_size(comms[k], names[k], sizes[s]);
        if (s == nsizes / 2) { /* a new communicator that starts without scratch */
            MPI_OK(MPI_Comm_free(&dup));
            MPI_OK(MPI_Comm_dup(rev, &dup));
            comms[1] = dup;
        }
    }
    const int strided_sizes[] = {5, 3000, 20000, 3};
    for (int s = 0; s < 4; s++)
        for (int k = 0; k < 3; k++)
            strided(comms[k], names[k], strided_sizes[s]);

    /* Page faults: warm up once, then count. */
    fill(mtest_rank, MAX_N);
    MPI_OK(MPI_Allreduce(sbuf, rbuf, MAX_N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    const long before = minor_faults();
    for (int i = 0; i < 10; i++)
        MPI_OK(MPI_Allreduce(sbuf, rbuf, MAX_N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    const long faults = minor_faults() - before;
    const long pages = (long)(MAX_N * sizeof(int)) / 4096;
    CHECK(faults < pages, "ten 1 MiB allreduces took %ld minor page faults, expected fewer than %ld (scratch memory "
                          "is not reused)", faults, pages);
    check_sum("Allreduce (page faults)", "MPI_COMM_WORLD", mtest_size, MAX_N);

    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&rev));
    free(sbuf);
    free(rbuf);
    return mtest_finish();
}
