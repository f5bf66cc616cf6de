/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided basics: windows made by MPI_Win_create and MPI_Win_allocate;
 * fence epochs with Put, Get and Accumulate (SUM, MAX, REPLACE) to every
 * rank including this one, with disp_unit 1 and sizeof(int); non-contiguous
 * origin and target datatypes; passive target (an exclusive counter, shared
 * reads, flush); MPI_Win_get_group; a target blocked in a large MPI_Send
 * still serving a lock; an out-of-range access reported through
 * MPI_ERRORS_RETURN. MPI only (also runs under other MPI libraries). Rank 0
 * prints "No Errors" when every rank passed; the exit status is non-zero
 * otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errs;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (++errs <= 20) {                                                                    \
                fprintf(stderr, "[rank %d] %s:%d: ", rank, __FILE__, __LINE__);                    \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

/* Put / Get / Accumulate in fence epochs, window of ints with disp_unit sizeof(int). */
static void fence_int_window(void)
{
    const int n = 4 * size + 8;
    int *buf = malloc(sizeof(int) * (size_t)n);
    int *got = malloc(sizeof(int) * (size_t)size);
    MPI_Win win;
    for (int i = 0; i < n; ++i)
        buf[i] = -1;
    for (int i = size; i < size + 2; ++i)
        buf[i] = 0;   /* SUM and MAX targets */
    OK(MPI_Win_create(buf, (MPI_Aint)(sizeof(int) * (size_t)n), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    const int pv = rank * 10 + 7;   /* untouched until the epoch ends */
    for (int t = 0; t < size; ++t)
        OK(MPI_Put(&pv, 1, MPI_INT, t, rank, 1, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < size; ++i)
        CHECK(buf[i] == i * 10 + 7, "put: buf[%d] = %d, expected %d", i, buf[i], i * 10 + 7);

    for (int t = 0; t < size; ++t)
        got[t] = -5;
    for (int t = 0; t < size; ++t)
        OK(MPI_Get(&got[t], 1, MPI_INT, t, (t + 1) % size, 1, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; ++t)
        CHECK(got[t] == ((t + 1) % size) * 10 + 7, "get from %d: %d, expected %d", t, got[t],
              ((t + 1) % size) * 10 + 7);

    const int one = rank + 1, mine = rank, repl = 1000 + rank;
    for (int t = 0; t < size; ++t) {
        OK(MPI_Accumulate(&one, 1, MPI_INT, t, size, 1, MPI_INT, MPI_SUM, win));
        OK(MPI_Accumulate(&mine, 1, MPI_INT, t, size + 1, 1, MPI_INT, MPI_MAX, win));
        OK(MPI_Accumulate(&repl, 1, MPI_INT, t, 2 * size + 2 + rank, 1, MPI_INT, MPI_REPLACE, win));
    }
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(buf[size] == size * (size + 1) / 2, "acc sum: %d, expected %d", buf[size], size * (size + 1) / 2);
    CHECK(buf[size + 1] == size - 1, "acc max: %d, expected %d", buf[size + 1], size - 1);
    for (int i = 0; i < size; ++i)
        CHECK(buf[2 * size + 2 + i] == 1000 + i, "acc replace: slot %d = %d, expected %d", i, buf[2 * size + 2 + i], 1000 + i);

    MPI_Group wg, cg;
    int cmp = MPI_UNEQUAL;
    OK(MPI_Win_get_group(win, &wg));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &cg));
    OK(MPI_Group_compare(wg, cg, &cmp));
    CHECK(cmp == MPI_IDENT, "the window's group is not MPI_COMM_WORLD's (compare: %d)", cmp);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);

    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");
    free(buf);
    free(got);
}

/* disp_unit 1: byte displacements, on memory from MPI_Win_allocate. */
static void fence_byte_window(void)
{
    int *mem = NULL;
    MPI_Win win;
    const MPI_Aint bytes = (MPI_Aint)(2 * sizeof(int) * (size_t)size + 3);
    OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    CHECK(mem != NULL, "MPI_Win_allocate returned no memory");
    if (!mem)
        return;
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 2 * size; ++i)
        mem[i] = 0;
    OK(MPI_Win_fence(0, win));
    const int pv = 5000 + rank, two = 2;
    for (int t = 0; t < size; ++t) {
        OK(MPI_Put(&pv, 1, MPI_INT, t, (MPI_Aint)(sizeof(int) * (size_t)rank), 1, MPI_INT, win));
        OK(MPI_Accumulate(&two, 1, MPI_INT, t, (MPI_Aint)(sizeof(int) * (size_t)(size + rank % 2)), 1, MPI_INT,
                          MPI_SUM, win));
    }
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < size; ++i)
        CHECK(mem[i] == 5000 + i, "byte window put: mem[%d] = %d, expected %d", i, mem[i], 5000 + i);
    const int evens = (size + 1) / 2, odds = size / 2;
    CHECK(mem[size] == 2 * evens, "byte window acc even: %d, expected %d", mem[size], 2 * evens);
    if (size > 1)
        CHECK(mem[size + 1] == 2 * odds, "byte window acc odd: %d, expected %d", mem[size + 1], 2 * odds);
    /* An int at an odd byte displacement (unaligned). */
    char *cmem = (char *)mem;
    int back = -1, val = 0x01020304 + rank;
    int last = size - 1;
    OK(MPI_Win_fence(0, win));
    if (rank == 0)
        OK(MPI_Put(&val, 1, MPI_INT, last, bytes - (MPI_Aint)sizeof(int) - 1, 1, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    if (rank == last) {
        int have;
        memcpy(&have, cmem + bytes - (MPI_Aint)sizeof(int) - 1, sizeof have);
        CHECK(have == 0x01020304, "unaligned put: %#x", (unsigned)have);
    }
    if (rank == 0)
        OK(MPI_Get(&back, 1, MPI_INT, last, bytes - (MPI_Aint)sizeof(int) - 1, 1, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    if (rank == 0)
        CHECK(back == 0x01020304, "unaligned get: %#x", (unsigned)back);
    OK(MPI_Win_free(&win));
}

/* Non-contiguous origin and target datatypes. */
static void fence_vector(void)
{
    int *mem = NULL;
    MPI_Win win;
    MPI_Datatype vec;
    OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Win_allocate((MPI_Aint)(sizeof(int) * 8 * (size_t)size + sizeof(int) * 4), sizeof(int), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < 8 * size + 4; ++i)
        mem[i] = -1;
    for (int i = 8 * size; i < 8 * size + 4; ++i)
        mem[i] = 0;
    int src[8], evens[4], dst[8], accv[8];
    for (int j = 0; j < 8; ++j) {
        src[j] = rank * 100 + j;
        accv[j] = (j % 2 == 0) ? 1 : 1000;   /* only the even ones are sent */
    }
    for (int j = 0; j < 4; ++j)
        evens[j] = src[2 * j];
    OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; ++t) {
        /* contiguous origin -> strided target, then strided origin -> strided target */
        OK(MPI_Put(evens, 4, MPI_INT, t, 8 * rank, 1, vec, win));
        OK(MPI_Put(&src[1], 1, vec, t, 8 * rank + 1, 1, vec, win));
        /* strided origin -> contiguous target, accumulated */
        OK(MPI_Accumulate(accv, 1, vec, t, 8 * size, 4, MPI_INT, MPI_SUM, win));
    }
    OK(MPI_Win_fence(0, win));
    for (int r = 0; r < size; ++r)
        for (int j = 0; j < 8; ++j)
            CHECK(mem[8 * r + j] == r * 100 + j, "vector put: slot of %d [%d] = %d, expected %d", r, j,
                  mem[8 * r + j], r * 100 + j);
    for (int j = 0; j < 4; ++j)
        CHECK(mem[8 * size + j] == size, "vector acc [%d] = %d, expected %d", j, mem[8 * size + j], size);
    /* strided target -> strided origin */
    for (int j = 0; j < 8; ++j)
        dst[j] = -1;
    const int from = (rank + 1) % size;
    OK(MPI_Get(dst, 1, vec, from, 8 * from + 1, 1, vec, win));
    /* strided target -> contiguous origin */
    int four[4] = {-1, -1, -1, -1};
    OK(MPI_Get(four, 4, MPI_INT, from, 8 * from, 1, vec, win));
    OK(MPI_Win_fence(0, win));
    for (int j = 0; j < 4; ++j)
        CHECK(four[j] == from * 100 + 2 * j, "vector get into contiguous: [%d] = %d, expected %d", j, four[j],
              from * 100 + 2 * j);
    for (int j = 0; j < 8; ++j) {
        const int want = j % 2 == 0 ? from * 100 + j + 1 : -1;
        CHECK(dst[j] == want, "vector get: dst[%d] = %d, expected %d", j, dst[j], want);
    }
    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&vec));
}

/* Passive target: an exclusive counter, shared reads, flush. */
static void passive(void)
{
    int *mem = NULL;
    MPI_Win win;
    const int iters = 100;
    OK(MPI_Win_allocate((MPI_Aint)(sizeof(int) * 2), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    mem[0] = mem[1] = 0;
    OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
    const int one = 1;
    for (int i = 0; i < iters; ++i) {
        /* slot 0: accumulate under an exclusive lock */
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
        OK(MPI_Win_unlock(0, win));
        /* slot 1: read, flush, modify, write - only correct if the lock excludes */
        int v = -1;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Get(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        OK(MPI_Win_flush(0, win));
        v += 1;
        OK(MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        OK(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int seen[2] = {-1, -1};
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Get(seen, 2, MPI_INT, 0, 0, 2, MPI_INT, win));
    OK(MPI_Win_flush_all(win));
    CHECK(seen[0] == iters * size, "exclusive accumulate counter: %d, expected %d", seen[0], iters * size);
    CHECK(seen[1] == iters * size, "exclusive get/put counter: %d, expected %d", seen[1], iters * size);
    /* a second shared lock on another rank at once */
    const int other = size - 1;
    if (other != 0) {
        int x = -1;
        OK(MPI_Win_lock(MPI_LOCK_SHARED, other, 0, win));
        OK(MPI_Get(&x, 1, MPI_INT, other, 0, 1, MPI_INT, win));
        OK(MPI_Win_unlock(other, win));
        CHECK(x == 0, "shared get at rank %d: %d, expected 0", other, x);
    }
    OK(MPI_Win_unlock(0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* MPI_MODE_NOCHECK: no lock traffic, but unlock still completes the accumulates */
    const int five = 5;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, MPI_MODE_NOCHECK, win));
    OK(MPI_Accumulate(&five, 1, MPI_INT, rank, 1, 1, MPI_INT, MPI_SUM, win));
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    const int want = rank == 0 ? iters * size + 5 : 5;
    CHECK(mem[1] == want, "accumulate under a NOCHECK lock: %d, expected %d", mem[1], want);
    OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
}

/* A target blocked in another MPI call (a large MPI_Send that is only
 * received once the lock was granted) still grants locks and applies
 * accumulates. */
static void progress_in_other_calls(void)
{
    if (size < 2)
        return;
    int *mem = NULL;
    MPI_Win win;
    const int big = 1 << 20;   /* ints: well past any eager limit */
    OK(MPI_Win_allocate((MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    mem[0] = 0;
    OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
    int *msg = calloc((size_t)big, sizeof(int));
    if (rank == 0) {
        msg[big - 1] = 42;
        OK(MPI_Send(msg, big, MPI_INT, 1, 7, MPI_COMM_WORLD));
    } else if (rank == 1) {
        const int three = 3;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Accumulate(&three, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
        OK(MPI_Win_unlock(0, win));
        OK(MPI_Recv(msg, big, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(msg[big - 1] == 42, "large message: last int %d, expected 42", msg[big - 1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(mem[0] == 3, "accumulate during a blocked send: %d, expected 3", mem[0]);
        OK(MPI_Win_unlock(0, win));
    }
    free(msg);
    OK(MPI_Win_free(&win));
}

static int error_class(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* Errors through MPI_ERRORS_RETURN on the window. */
static void errors(void)
{
    int buf[4] = {0, 0, 0, 0};
    MPI_Win win;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    OK(MPI_Win_create(buf, (MPI_Aint)sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "a new window's error handler is not MPI_ERRORS_ARE_FATAL");
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_Win_get_errhandler does not give MPI_ERRORS_RETURN back");
    OK(MPI_Win_fence(0, win));
    int v = 1, rc;
    const int t = (rank + 1) % size;
    rc = MPI_Put(&v, 1, MPI_INT, t, 1000, 1, MPI_INT, win);
    int cls = error_class(rc);
#ifdef MPI_ERR_RMA_RANGE
    CHECK(cls == MPI_ERR_DISP || cls == MPI_ERR_RMA_RANGE, "out-of-range put: class %d", cls);
#else
    CHECK(cls == MPI_ERR_DISP, "out-of-range put: class %d, expected MPI_ERR_DISP", cls);
#endif
    rc = MPI_Get(&v, 2, MPI_INT, t, 3, 2, MPI_INT, win);   /* straddles the end */
    cls = error_class(rc);
#ifdef MPI_ERR_RMA_RANGE
    CHECK(cls == MPI_ERR_DISP || cls == MPI_ERR_RMA_RANGE, "straddling get: class %d", cls);
#else
    CHECK(cls == MPI_ERR_DISP, "straddling get: class %d, expected MPI_ERR_DISP", cls);
#endif
    OK(MPI_Win_fence(0, win));
    rc = MPI_Win_unlock(t, win);
    CHECK(rc != MPI_SUCCESS, "MPI_Win_unlock without a lock succeeded");
    rc = MPI_Win_lock(12345, t, 0, win);
    CHECK(rc != MPI_SUCCESS, "MPI_Win_lock with a bad lock type succeeded");
    OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fence_int_window();
    fence_byte_window();
    fence_vector();
    passive();
    progress_in_other_calls();
    errors();
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all == 0)
            printf("No Errors\n");
        else
            printf("Found %d errors\n", all);
    }
    MPI_Finalize();
    return all != 0;
}
