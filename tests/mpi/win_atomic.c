/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided atomics and request-based RMA (MPI-3): Fetch_and_op (SUM and
 * NO_OP) as a shared counter, Compare_and_swap claiming slots, Get_accumulate
 * (SUM, REPLACE, NO_OP), Accumulate with MPI_REPLACE and MPI_NO_OP,
 * Rput/Rget/Raccumulate/Rget_accumulate completed with MPI_Wait /
 * MPI_Waitall, Win_lock_all/unlock_all, Win_flush_local(_all), Win_sync,
 * and the errors of wrong arguments. Every result is checked against a
 * serial reference computed here. */
#include "mtest.h"

#define ROUNDS 16

/* Every rank adds 1 ROUNDS times to a counter at rank 0 with Fetch_and_op:
 * the values fetched, over all ranks, are 0 .. size*ROUNDS-1, each once. */
static void counter(MPI_Win win, long *base)
{
    const int n = mtest_size * ROUNDS;
    long mine[ROUNDS];
    const long one = 1;
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ROUNDS; ++i) {
        MPI_OK(MPI_Fetch_and_op(&one, &mine[i], MPI_LONG, 0, 0, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    long *all = malloc(sizeof(long) * (size_t)n);
    MPI_OK(MPI_Allgather(mine, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, MPI_COMM_WORLD));
    char *seen = calloc((size_t)n, 1);
    for (int i = 0; i < n; ++i) {
        CHECK(all[i] >= 0 && all[i] < n, "fetch_and_op fetched %ld, expected 0..%d", all[i], n - 1);
        if (all[i] >= 0 && all[i] < n) {
            CHECK(!seen[all[i]], "fetch_and_op fetched %ld twice (not atomic)", all[i]);
            seen[all[i]] = 1;
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    long final = -1;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_OK(MPI_Fetch_and_op(NULL, &final, MPI_LONG, 0, 0, MPI_NO_OP, win));
    MPI_OK(MPI_Win_unlock(0, win));
    CHECK(final == n, "the counter is %ld after every fetch_and_op, expected %d", final, n);
    if (mtest_rank == 0)
        CHECK(base[0] == n, "the counter's memory holds %ld, expected %d", base[0], n);
    free(all);
    free(seen);
}

/* Slots 1..size at rank 0 start at -1; every rank claims slot (rank+k)%size
 * + 1 for k = 0.. with Compare_and_swap(-1 -> rank) until one succeeds.
 * Every slot ends owned by exactly one rank, and the swaps that failed
 * fetched the owner. */
static void claim(MPI_Win win, long *base)
{
    if (mtest_rank == 0)
        for (int i = 1; i <= mtest_size; ++i)
            base[i] = -1;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    const long none = -1, me = mtest_rank;
    int mine = -1;
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < mtest_size && mine < 0; ++k) {
        const int slot = (mtest_rank + k) % mtest_size + 1;
        long old = -7;
        MPI_OK(MPI_Compare_and_swap(&me, &none, &old, MPI_LONG, 0, slot, win));
        MPI_OK(MPI_Win_flush(0, win));
        if (old == -1)
            mine = slot;
        else
            CHECK(old >= 0 && old < mtest_size, "a failed swap fetched %ld, expected an owner's rank", old);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    CHECK(mine > 0, "rank %d claimed no slot of %d", mtest_rank, mtest_size);
    int *owners = malloc(sizeof(int) * (size_t)mtest_size);
    MPI_OK(MPI_Allgather(&mine, 1, MPI_INT, owners, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < mtest_size; ++i)
        for (int j = i + 1; j < mtest_size; ++j)
            CHECK(owners[i] != owners[j], "ranks %d and %d both claimed slot %d", i, j, owners[i]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (mtest_rank == 0)
        for (int r = 0; r < mtest_size; ++r)
            CHECK(base[owners[r]] == r, "slot %d holds %ld, expected its owner %d", owners[r], base[owners[r]], r);
    free(owners);
}

/* Get_accumulate, Accumulate with REPLACE / NO_OP, fence epochs, and the
 * request-based calls, on a window of 8 ints per rank. Reference: the
 * same updates applied serially to a local copy. */
static void get_accumulate_and_requests(void)
{
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < 8; ++i)
        mem[i] = 100 * mtest_rank + i;
    MPI_OK(MPI_Win_fence(0, win));
    const int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    int add[4] = {1, 2, 3, 4}, old[4] = {0}, repl[2] = {-5, -6};
    MPI_OK(MPI_Get_accumulate(add, 4, MPI_INT, old, 4, MPI_INT, right, 0, 4, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(repl, 2, MPI_INT, right, 4, 2, MPI_INT, MPI_REPLACE, win));
    MPI_OK(MPI_Accumulate(repl, 2, MPI_INT, right, 6, 2, MPI_INT, MPI_NO_OP, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; ++i) {
        CHECK(old[i] == 100 * right + i, "get_accumulate fetched %d at %d, expected %d", old[i], i, 100 * right + i);
        CHECK(mem[i] == 100 * mtest_rank + i + i + 1, "sum: mem[%d] = %d, expected %d", i, mem[i],
              100 * mtest_rank + 2 * i + 1);
    }
    CHECK(mem[4] == -5 && mem[5] == -6, "replace: mem[4..5] = %d %d, expected -5 -6", mem[4], mem[5]);
    CHECK(mem[6] == 100 * mtest_rank + 6 && mem[7] == 100 * mtest_rank + 7, "no_op changed mem[6..7] to %d %d",
          mem[6], mem[7]);
    MPI_OK(MPI_Win_fence(0, win));

    /* Request-based, in a passive epoch: each rank writes to its right
     * neighbour and reads from its left one. */
    MPI_Request req[4];
    int put[2] = {mtest_rank * 7 + 1, mtest_rank * 7 + 2}, got[2] = {0, 0}, acc = 10, fetched[1] = {0};
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Rput(put, 2, MPI_INT, right, 0, 2, MPI_INT, win, &req[0]));
    MPI_OK(MPI_Raccumulate(&acc, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, win, &req[1]));
    MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    put[0] = put[1] = -99;   /* the origin buffers are free once the requests are done */
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Rget(got, 2, MPI_INT, left, 0, 2, MPI_INT, win, &req[2]));
    MPI_OK(MPI_Rget_accumulate(NULL, 0, MPI_INT, fetched, 1, MPI_INT, left, 2, 1, MPI_INT, MPI_NO_OP, win, &req[3]));
    MPI_Status st;
    MPI_OK(MPI_Wait(&req[2], &st));
    MPI_OK(MPI_Wait(&req[3], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Win_flush_local_all(win));
    MPI_OK(MPI_Win_flush_local(left, win));
    MPI_OK(MPI_Win_unlock_all(win));
    const int from = (mtest_rank + 2 * mtest_size - 2) % mtest_size;   /* left's left wrote left's memory */
    CHECK(got[0] == from * 7 + 1 && got[1] == from * 7 + 2, "rget: %d %d, expected %d %d", got[0], got[1],
          from * 7 + 1, from * 7 + 2);
    /* mem[2] was 100*rank + 2 + 3 after the sum above, then +10. */
    CHECK(fetched[0] == 100 * left + 5 + 10, "rget_accumulate fetched %d, expected %d", fetched[0],
          100 * left + 15);
    MPI_OK(MPI_Win_free(&win));
}

static void errors(MPI_Win win)
{
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    long v = 1, r = 0;
    int cls = -1;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_Error_class(MPI_Fetch_and_op(&v, &r, MPI_LONG, 0, 0, MPI_OP_NULL, win), &cls);
    CHECK(cls == MPI_ERR_OP, "fetch_and_op with MPI_OP_NULL: class %d, expected MPI_ERR_OP", cls);
    MPI_Error_class(MPI_Fetch_and_op(&v, &r, MPI_LONG, mtest_size, 0, MPI_SUM, win), &cls);
    CHECK(cls == MPI_ERR_RANK, "fetch_and_op to rank %d: class %d, expected MPI_ERR_RANK", mtest_size, cls);
    MPI_Error_class(MPI_Compare_and_swap(&v, &v, &r, MPI_LONG, 0, 1 << 20, win), &cls);
    CHECK(cls == MPI_ERR_DISP, "compare_and_swap outside the window: class %d, expected MPI_ERR_DISP", cls);
    MPI_Request req;
    MPI_Error_class(MPI_Rput(&v, 1, MPI_LONG, 0, -1, 1, MPI_LONG, win, &req), &cls);
    CHECK(cls == MPI_ERR_DISP, "rput at displacement -1: class %d, expected MPI_ERR_DISP", cls);
    MPI_OK(MPI_Win_unlock(0, win));
    MPI_Error_class(MPI_Win_unlock_all(win), &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "unlock_all without lock_all: class %d, expected MPI_ERR_RMA_SYNC", cls);
    MPI_Error_class(MPI_Win_flush_local(0, win), &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "flush_local without a lock: class %d, expected MPI_ERR_RMA_SYNC", cls);
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
}

/* What mpi4py's test_rma relies on, as Open MPI and MPICH behave: a
 * fetching atomic to this rank itself has its answer at once (the program
 * may read or free the result buffer before the epoch ends), and a
 * zero-count accumulate of MPI_BYTE with MPI_SUM is no error. */
static void fetch_to_self(void)
{
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    mem[0] = 40;
    MPI_OK(MPI_Win_fence(0, win));
    int one = 1, old = -1;
    MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, mtest_rank, 0, MPI_SUM, win));
    CHECK(old == 40, "Fetch_and_op to itself answered %d before the fence, expected 40", old);
    int compare = 41, swap = 7, was = -1;
    MPI_OK(MPI_Compare_and_swap(&swap, &compare, &was, MPI_INT, mtest_rank, 0, win));
    CHECK(was == 41, "Compare_and_swap to itself answered %d before the fence, expected 41", was);
    char byte = 0, got = 0;
    MPI_OK(MPI_Get_accumulate(&byte, 0, MPI_BYTE, &got, 0, MPI_BYTE, mtest_rank, 0, 0, MPI_BYTE, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[0] == 7, "after the fence the window holds %d, expected 7", mem[0]);
    MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    long *base;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(sizeof(long) * (size_t)(mtest_size + 1), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &base, &win));
    base[0] = 0;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    counter(win, base);
    claim(win, base);
    errors(win);
    MPI_OK(MPI_Win_free(&win));
    get_accumulate_and_requests();
    fetch_to_self();
    return mtest_finish();
}
