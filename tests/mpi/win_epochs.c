/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided windows and epochs of MPI-3: general active-target
 * synchronization (post/start/complete/wait and Win_test) in a ring and
 * with every rank at once; dynamic windows (create_dynamic, attach,
 * detach, Put/Get/Accumulate/Fetch_and_op by address); shared windows
 * (Win_allocate_shared, Win_shared_query, load/store into the neighbours'
 * segments, nothing in /dev/shm); the window flavors, names and info
 * keys. Each result is checked against a serial reference. */
#include <dirent.h>

#include "mtest.h"

static int right, left;

/* PSCW in a ring: post to the left neighbour (it puts into us), start on
 * the right one. Then everyone at once, Win_test polled until done. */
static void pscw(void)
{
    int *mem;
    MPI_Win win;
    const int n = 4 + mtest_size;
    MPI_OK(MPI_Win_allocate(sizeof(int) * (size_t)n, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < n; ++i)
        mem[i] = -1;
    MPI_Group world, lg, rg;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_incl(world, 1, &left, &lg));
    MPI_OK(MPI_Group_incl(world, 1, &right, &rg));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int round = 0; round < 3; ++round) {
        MPI_OK(MPI_Win_post(lg, 0, win));
        MPI_OK(MPI_Win_start(rg, 0, win));
        const int v[2] = {mtest_rank * 10 + round, round};
        MPI_OK(MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        MPI_OK(MPI_Accumulate(&v[1], 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Win_complete(win));
        MPI_OK(MPI_Win_wait(win));
        CHECK(mem[0] == left * 10 + round, "pscw round %d: mem[0] = %d, expected %d", round, mem[0],
              left * 10 + round);
        /* -1 + 0 + 1 + 2 ... */
        const int sum = -1 + round * (round + 1) / 2;
        CHECK(mem[1] == sum, "pscw round %d: mem[1] = %d, expected %d", round, mem[1], sum);
    }
    /* Everyone to everyone, the target polling Win_test. */
    MPI_OK(MPI_Win_post(world, 0, win));
    MPI_OK(MPI_Win_start(world, 0, win));
    for (int t = 0; t < mtest_size; ++t) {
        const int v = 1000 + mtest_rank;
        MPI_OK(MPI_Put(&v, 1, MPI_INT, t, 4 + mtest_rank, 1, MPI_INT, win));
        MPI_OK(MPI_Accumulate(&v, 1, MPI_INT, t, 2, 1, MPI_INT, MPI_MAX, win));
    }
    MPI_OK(MPI_Win_complete(win));
    int flag = 0;
    for (long spins = 0; !flag && spins < 100000000L; ++spins)
        MPI_OK(MPI_Win_test(win, &flag));
    CHECK(flag, "Win_test never said the exposure epoch was complete");
    for (int r = 0; r < mtest_size; ++r)
        CHECK(mem[4 + r] == 1000 + r, "pscw all: mem[%d] = %d, expected %d", 4 + r, mem[4 + r], 1000 + r);
    CHECK(mem[2] == 1000 + mtest_size - 1, "pscw all: max = %d, expected %d", mem[2], 1000 + mtest_size - 1);
    int cls = -1;
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Error_class(MPI_Win_complete(win), &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "complete without start: class %d, expected MPI_ERR_RMA_SYNC", cls);
    MPI_Error_class(MPI_Win_wait(win), &cls);
    CHECK(cls == MPI_ERR_RMA_SYNC, "wait without post: class %d, expected MPI_ERR_RMA_SYNC", cls);
    MPI_OK(MPI_Group_free(&lg));
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Win_free(&win));
}

/* A dynamic window: each rank attaches an array of 16 ints and tells the
 * others its address; the right neighbour puts, accumulates and fetches. */
static void dynamic(void)
{
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *mem = malloc(16 * sizeof(int));
    for (int i = 0; i < 16; ++i)
        mem[i] = i;
    MPI_OK(MPI_Win_attach(win, mem, 16 * sizeof(int)));
    MPI_Aint mine, *addrs = malloc(sizeof(MPI_Aint) * (size_t)mtest_size);
    MPI_OK(MPI_Get_address(mem, &mine));
    MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    MPI_OK(MPI_Win_fence(0, win));
    /* A strided put: ints 8, 10, 12 of the right neighbour. */
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    const int v[3] = {mtest_rank + 100, mtest_rank + 200, mtest_rank + 300};
    MPI_OK(MPI_Put(v, 3, MPI_INT, right, addrs[right] + 8 * (MPI_Aint)sizeof(int), 1, every_other, win));
    const int one = 1;
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, right, addrs[right], 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[8] == left + 100 && mem[10] == left + 200 && mem[12] == left + 300 && mem[9] == 9,
          "dynamic put: %d %d %d %d, expected %d 9 %d %d", mem[8], mem[9], mem[10], mem[12], left + 100,
          left + 200, left + 300);
    CHECK(mem[0] == 1, "dynamic accumulate: mem[0] = %d, expected 1", mem[0]);
    int got[3] = {0, 0, 0}, old = -1;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, left, 0, win));
    MPI_OK(MPI_Get(got, 3, MPI_INT, left, addrs[left] + 8 * (MPI_Aint)sizeof(int), 1, every_other, win));
    MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, left, addrs[left] + 4 * (MPI_Aint)sizeof(int), MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(left, win));
    const int ll = (left + mtest_size - 1) % mtest_size;
    CHECK(got[0] == ll + 100 && got[1] == ll + 200 && got[2] == ll + 300, "dynamic get: %d %d %d, expected %d %d %d",
          got[0], got[1], got[2], ll + 100, ll + 200, ll + 300);
    CHECK(old == 4, "dynamic fetch_and_op fetched %d, expected 4", old);
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[4] == 5, "dynamic fetch_and_op: mem[4] = %d, expected 5", mem[4]);
    MPI_OK(MPI_Win_detach(win, mem));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int cls = -1;
    MPI_Error_class(MPI_Win_detach(win, mem), &cls);
    CHECK(cls == MPI_ERR_BASE, "detaching twice: class %d, expected MPI_ERR_BASE", cls);
    MPI_OK(MPI_Type_free(&every_other));
    MPI_OK(MPI_Win_free(&win));
    free(mem);
    free(addrs);
}

static int weft_shm_entries(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, "weft-win"))
            ++n;
    closedir(d);
    return n;
}

/* A shared window over this node's ranks (a shared window spans one node
 * only, so under srun -N 2 each node has its own): node rank r owns r+1
 * ints; each writes its node neighbours' segments by load/store through
 * Win_shared_query's pointers, then by MPI_Put. */
static void shared(void)
{
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mtest_rank, MPI_INFO_NULL, &node));
    int me, n;
    MPI_OK(MPI_Comm_rank(node, &me));
    MPI_OK(MPI_Comm_size(node, &n));
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    int *mine;
    MPI_Win win;
    const MPI_Aint bytes = (MPI_Aint)sizeof(int) * (me + 1);
    MPI_OK(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, node, &mine, &win));
    CHECK(weft_shm_entries() == 0, "a weft-win entry appeared in /dev/shm");
    MPI_Aint qsize;
    int qdisp;
    int *rp;
    MPI_OK(MPI_Win_shared_query(win, right, &qsize, &qdisp, &rp));
    CHECK(qsize == (MPI_Aint)sizeof(int) * (right + 1) && qdisp == (int)sizeof(int),
          "shared_query(%d): size %ld disp_unit %d, expected %ld %d", right, (long)qsize, qdisp,
          (long)(sizeof(int) * (size_t)(right + 1)), (int)sizeof(int));
    int *first;
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &qdisp, &first));
    CHECK(first + 1 == (int *)((char *)first + sizeof(int)) && qsize == (MPI_Aint)sizeof(int),
          "shared_query(MPI_PROC_NULL): size %ld, expected rank 0's", (long)qsize);
    /* Contiguous: rank r's segment starts after ranks 0..r-1's. */
    CHECK(mine == first + me * (me + 1) / 2, "node rank %d's segment is not where the default "
          "contiguous layout puts it", me);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i <= right; ++i)
        rp[i] = 1000 * me + i;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    for (int i = 0; i <= me; ++i)
        CHECK(mine[i] == 1000 * left + i, "shared store: mine[%d] = %d, expected %d", i, mine[i], 1000 * left + i);
    MPI_OK(MPI_Barrier(node));
    /* RMA on the shared window too. */
    const int v = -me - 1;
    MPI_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    CHECK(mine[0] == -left - 1, "put into a shared window: %d, expected %d", mine[0], -left - 1);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));
    CHECK(weft_shm_entries() == 0, "a weft-win entry is left in /dev/shm");
    MPI_OK(MPI_Comm_free(&node));
}

/* Names and info. */
static void names_and_info(void)
{
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == 0, "a new window's name is '%s', expected empty", name);
    MPI_OK(MPI_Win_set_name(win, "halo"));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 4 && strcmp(name, "halo") == 0, "the window's name is '%s' (%d), expected 'halo'", name, len);
    MPI_OK(MPI_Win_set_info(win, MPI_INFO_NULL));
    MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    right = (mtest_rank + 1) % mtest_size;
    left = (mtest_rank + mtest_size - 1) % mtest_size;
    pscw();
    dynamic();
    shared();
    names_and_info();
    return mtest_finish();
}
