/* SPDX-License-Identifier: BSD-3-Clause */
/* mtest.h: the tiny harness shared by weft's MPI test programs.
 *
 *   mtest_init(&argc, &argv);          MPI_Init + mtest_rank / mtest_size
 *   CHECK(cond, "fmt", ...);           counts a failure and records a line
 *   return mtest_finish();             reduce the count to rank 0, print the
 *                                      verdict, MPI_Finalize, 0 or 1
 *
 * Every rank keeps its own failure lines; mtest_finish gathers them to rank
 * 0, which prints exactly "No Errors" or " Found N errors" followed by one
 * line per failure ("[rank R] file:line: what was expected, what was seen").
 * Uses only functions of weft's MPI subset (mpi/include/mpi.h). */
#ifndef WEFT_MTEST_H
#define WEFT_MTEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MTEST_MAX_LINES 40
#define MTEST_LINE 240

static int mtest_rank = 0;
static int mtest_size = 1;
static int mtest_errs = 0;
static int mtest_nlines = 0;
static char mtest_lines[MTEST_MAX_LINES * MTEST_LINE];
static size_t mtest_used = 0;

static inline void mtest_record(const char *file, int line, const char *fmt, ...)
{
    mtest_errs++;
    if (mtest_nlines >= MTEST_MAX_LINES)
        return;
    char msg[MTEST_LINE];
    int n = snprintf(msg, sizeof msg, "[rank %d] %s:%d: ", mtest_rank, file, line);
    if (n < 0 || n >= (int)sizeof msg)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    size_t len = strlen(msg);
    memcpy(mtest_lines + mtest_used, msg, len);
    mtest_lines[mtest_used + len] = '\n';
    mtest_used += len + 1;
    mtest_nlines++;
}

/* CHECK(cond, fmt, ...): the message should say what was expected and what
 * was seen. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            mtest_record(__FILE__, __LINE__, __VA_ARGS__);                                         \
    } while (0)

/* An MPI call that must succeed (under the default handler a failure aborts
 * anyway; under MPI_ERRORS_RETURN it is counted). */
#define MPI_OK(call)                                                                               \
    do {                                                                                           \
        int mtest_rc_ = (call);                                                                    \
        CHECK(mtest_rc_ == MPI_SUCCESS, "%s returned %d, expected MPI_SUCCESS", #call, mtest_rc_); \
    } while (0)

static inline void mtest_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mtest_size);
}

/* Reduce the error count and gather every rank's lines to rank 0, which
 * prints the verdict. Returns the job's total (on every rank). Does not
 * finalize. */
static inline int mtest_verdict(void)
{
    int total = 0;
    MPI_Reduce(&mtest_errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(&total, 1, MPI_INT, 0, MPI_COMM_WORLD);

    int mylen = (int)mtest_used;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (mtest_rank == 0) {
        lens = (int *)calloc((size_t)mtest_size, sizeof(int));
        displs = (int *)calloc((size_t)mtest_size, sizeof(int));
    }
    MPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int sum = 0;
    if (mtest_rank == 0) {
        for (int i = 0; i < mtest_size; i++) {
            displs[i] = sum;
            sum += lens[i];
        }
        all = (char *)malloc((size_t)sum + 1);
    }
    MPI_Gatherv(mtest_lines, mylen, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (mtest_rank == 0) {
        if (total == 0) {
            printf("No Errors\n");
        } else {
            printf(" Found %d errors\n", total);
            all[sum] = '\0';
            fputs(all, stdout);
            if (sum == 0)
                printf("(no failure lines were recorded)\n");
        }
        fflush(stdout);
        free(all);
        free(lens);
        free(displs);
    }
    return total;
}

static inline int mtest_finish(void)
{
    int total = mtest_verdict();
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

/* A deterministic byte pattern: what rank `src` puts at index i of a
 * message with the given tag. */
static inline unsigned char mtest_pat(int src, int tag, size_t i)
{
    return (unsigned char)((size_t)src * 131u + (size_t)tag * 17u + i * 7u + (i >> 8) * 3u + 1u);
}

static inline void mtest_fill(unsigned char *buf, size_t n, int src, int tag)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = mtest_pat(src, tag, i);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long mtest_verify(const unsigned char *buf, size_t n, int src, int tag)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != mtest_pat(src, tag, i))
            return (long)i;
    return -1;
}

/* Every member of comm sends its rank round a ring and checks what came,
 * then sums the ranks with MPI_Allreduce: comm connects its members. */
static inline void mtest_ring(MPI_Comm comm, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int s = rank, r = -1;
    MPI_OK(MPI_Sendrecv(&s, 1, MPI_INT, (rank + 1) % size, 3, &r, 1, MPI_INT, (rank + size - 1) % size, 3, comm,
                        MPI_STATUS_IGNORE));
    CHECK(r == (rank + size - 1) % size, "ring in %s: got %d, expected %d", what, r, (rank + size - 1) % size);
    int sum = -1;
    MPI_OK(MPI_Allreduce(&s, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size - 1) / 2, "Allreduce of ranks in %s: %d, expected %d", what, sum, size * (size - 1) / 2);
}

#endif
