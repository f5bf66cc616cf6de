/* SPDX-License-Identifier: BSD-3-Clause */
/* onesided: windows from Win_create and Win_allocate; fence epochs with
 * Put / Get / Accumulate (SUM, MAX, REPLACE) to every rank including self,
 * with disp_unit sizeof(int) and 1; a derived target datatype; passive
 * target with exclusive locks (a counter, read-modify-write through Get +
 * flush + Put) and shared locks (Gets); Win_get_group; Win_free. Any number
 * of ranks. */
#include "mtest.h"

static int p, me;

/* Window layout (ints), per rank, NSLOT slots of p ints each:
 *   0: Put target     1: Accumulate SUM   2: Accumulate MAX
 *   3: REPLACE        4: Get source       5: vector target (2p ints) */
#define NSLOT 7
static int put_val(int origin, int target) { return 1000 * origin + target + 1; }
static int get_val(int owner, int k) { return -(owner * 100 + k + 1); }

static void fence_epochs(int *base, MPI_Win win, int unit, const char *what)
{
    /* disp in window units for int index i. */
#define D(i) ((MPI_Aint)(i) * (MPI_Aint)sizeof(int) / unit)
    for (int k = 0; k < NSLOT * p; k++)
        base[k] = 0;
    for (int k = 0; k < p; k++)
        base[4 * p + k] = get_val(me, k);
    MPI_OK(MPI_Win_fence(0, win));

    int *got = malloc((size_t)p * sizeof(int)), *one = malloc((size_t)p * sizeof(int));
    int vsrc[2];
    MPI_Datatype every2;
    MPI_OK(MPI_Type_vector(2, 1, p, MPI_INT, &every2));
    MPI_OK(MPI_Type_commit(&every2));
    int maxv = 0;
    for (int t = 0; t < p; t++) {
        one[t] = put_val(me, t);
        MPI_OK(MPI_Put(&one[t], 1, MPI_INT, t, D(0 * p + me), 1, MPI_INT, win));
        MPI_OK(MPI_Accumulate(&one[t], 1, MPI_INT, t, D(1 * p + t % p), 1, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(&one[t], 1, MPI_INT, t, D(2 * p), 1, MPI_INT, MPI_MAX, win));
        MPI_OK(MPI_Accumulate(&one[t], 1, MPI_INT, t, D(3 * p + me), 1, MPI_INT, MPI_REPLACE, win));
        MPI_OK(MPI_Get(&got[t], 1, MPI_INT, t, D(4 * p + me), 1, MPI_INT, win));
        if (put_val(me, t) > maxv)
            maxv = put_val(me, t);
    }
    /* Two contiguous ints into a strided target: slot 5 holds (2p ints)
     * origin o's pair at [5p + o] and [6p + o]. */
    int t = (me + 1) % p;
    vsrc[0] = put_val(me, t) + 7;
    vsrc[1] = put_val(me, t) + 8;
    MPI_OK(MPI_Put(vsrc, 2, MPI_INT, t, D(5 * p + me), 1, every2, win));
    MPI_OK(MPI_Win_fence(0, win));

    int left = (me + p - 1) % p;
    int sum = 0, maxall = 0;
    for (int o = 0; o < p; o++) {
        sum += put_val(o, me);
        if (put_val(o, me) > maxall)
            maxall = put_val(o, me);
    }
    for (int o = 0; o < p; o++) {
        CHECK(base[o] == put_val(o, me), "%s: Put from %d left %d, expected %d", what, o, base[o], put_val(o, me));
        CHECK(base[3 * p + o] == put_val(o, me), "%s: REPLACE from %d left %d, expected %d", what, o, base[3 * p + o],
              put_val(o, me));
        CHECK(got[o] == get_val(o, me), "%s: Get from %d gave %d, expected %d", what, o, got[o], get_val(o, me));
    }
    CHECK(base[1 * p + me % p] == sum, "%s: Accumulate SUM gives %d, expected %d", what, base[p + me % p], sum);
    CHECK(base[2 * p] == maxall, "%s: Accumulate MAX gives %d, expected %d", what, base[2 * p], maxall);
    CHECK(base[5 * p + left] == put_val(left, me) + 7 && base[6 * p + left] == put_val(left, me) + 8,
          "%s: Put into a vector target: %d %d, expected %d %d", what, base[5 * p + left], base[6 * p + left],
          put_val(left, me) + 7, put_val(left, me) + 8);

    /* The reads above happen in the epoch after the fence: nobody may update
     * the window in it, so close it before the next updates. */
    MPI_OK(MPI_Win_fence(0, win));
    /* Another epoch: Accumulate on top of the first one's results, the same
     * location from all ranks with SUM (element-wise atomic). */
    for (int t2 = 0; t2 < p; t2++) {
        int inc = me + 1;
        MPI_OK(MPI_Accumulate(&inc, 1, MPI_INT, t2, D(1 * p + t2 % p), 1, MPI_INT, MPI_SUM, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(base[1 * p + me % p] == sum + p * (p + 1) / 2, "%s: second SUM epoch gives %d, expected %d", what,
          base[1 * p + me % p], sum + p * (p + 1) / 2);
    /* Contiguous Gets of p ints in an epoch of their own, reading
     * the whole of slot 4 of every rank. */
    int *all = malloc((size_t)p * (size_t)p * sizeof(int));
    MPI_OK(MPI_Win_fence(0, win));
    for (int t3 = 0; t3 < p; t3++)
        MPI_OK(MPI_Get(all + t3 * p, p, MPI_INT, t3, D(4 * p), p, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int t3 = 0; t3 < p; t3++)
        for (int k = 0; k < p; k++)
            CHECK(all[t3 * p + k] == get_val(t3, k), "%s: Get of slot 4 of %d: [%d] %d, expected %d", what, t3, k,
                  all[t3 * p + k], get_val(t3, k));
    free(all);
    free(got);
    free(one);
    MPI_OK(MPI_Type_free(&every2));
#undef D
}

static void big_put_get(void)
{
    int n = 1 << 18; /* 1 MiB of ints per window */
    int *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate((MPI_Aint)n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &win));
    int *src = malloc((size_t)n * sizeof(int)), *dst = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        src[i] = me * 7 + i;
        base[i] = 0;
    }
    MPI_OK(MPI_Win_fence(0, win));
    int t = (me + 1) % p;
    MPI_OK(MPI_Put(src, n, MPI_INT, t, 0, n, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    int left = (me + p - 1) % p, bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (base[i] != left * 7 + i)
            bad = i;
    CHECK(bad < 0, "1 MiB Put: [%d] = %d, expected %d", bad, bad < 0 ? 0 : base[bad], left * 7 + bad);
    MPI_OK(MPI_Get(dst, n, MPI_INT, t, 0, n, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (dst[i] != me * 7 + i) /* t's window holds what I put there */
            bad = i;
    CHECK(bad < 0, "1 MiB Get: [%d] = %d, expected %d", bad, bad < 0 ? 0 : dst[bad], me * 7 + bad);
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "Win_free did not set the handle to MPI_WIN_NULL");
    free(src);
    free(dst);
}

static void passive(void)
{
    enum { ITER = 10 };
    /* Rank 0 holds two counters; every rank adds to them ITER times. */
    int *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_OK(MPI_Win_fence(0, win));
    base[0] = base[1] = 0;
    base[2] = 4242 + me;
    base[3] = -me;
    MPI_OK(MPI_Win_fence(0, win));

    for (int it = 0; it < ITER; it++) {
        int one = 1, cur = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
        /* Read-modify-write that is only correct under exclusion. */
        MPI_OK(MPI_Get(&cur, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(0, win));
        cur += 1;
        MPI_OK(MPI_Put(&cur, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(0, win));
    }
    /* Shared locks: every rank reads every rank's [2], [3] concurrently. */
    int *vals = malloc(2 * (size_t)p * sizeof(int));
    for (int t = 0; t < p; t++) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MPI_OK(MPI_Get(&vals[2 * t], 2, MPI_INT, t, 2, 2, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(t, win));
        CHECK(vals[2 * t] == 4242 + t && vals[2 * t + 1] == -t, "shared-lock Get from %d: %d %d, expected %d %d", t,
              vals[2 * t], vals[2 * t + 1], 4242 + t, -t);
    }
    free(vals);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        int c[2] = {-1, -1};
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MPI_OK(MPI_Get(c, 2, MPI_INT, 0, 0, 2, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(0, win));
        CHECK(c[0] == p * ITER, "exclusive-lock Accumulate counter %d, expected %d", c[0], p * ITER);
        CHECK(c[1] == p * ITER, "exclusive-lock Get+flush+Put counter %d, expected %d (lost updates)", c[1], p * ITER);
    }
    /* Win_flush_all inside a lock epoch on every target. */
    for (int t = 0; t < p; t++) {
        int v = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MPI_OK(MPI_Get(&v, 1, MPI_INT, t, 2, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush_all(win));
        CHECK(v == 4242 + t, "Get then flush_all from %d: %d, expected %d", t, v, 4242 + t);
        MPI_OK(MPI_Win_unlock(t, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    p = mtest_size;
    me = mtest_rank;

    /* Win_create, disp_unit sizeof(int). */
    int *mem = malloc(NSLOT * (size_t)p * sizeof(int));
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, NSLOT * (MPI_Aint)p * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                          &win));
    MPI_Group wg, cg;
    int cmp = -1;
    MPI_OK(MPI_Win_get_group(win, &wg));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &cg));
    MPI_OK(MPI_Group_compare(wg, cg, &cmp));
    CHECK(cmp == MPI_IDENT, "Win_get_group compared with world's group: %d, expected MPI_IDENT", cmp);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    fence_epochs(mem, win, sizeof(int), "Win_create, disp_unit 4");
    MPI_OK(MPI_Win_free(&win));

    /* Win_create, disp_unit 1. */
    MPI_OK(MPI_Win_create(mem, NSLOT * (MPI_Aint)p * (MPI_Aint)sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    fence_epochs(mem, win, 1, "Win_create, disp_unit 1");
    MPI_OK(MPI_Win_free(&win));
    free(mem);

    /* Win_allocate. */
    int *abase = NULL;
    MPI_OK(MPI_Win_allocate(NSLOT * (MPI_Aint)p * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &abase, &win));
    CHECK(abase != NULL, "Win_allocate gave a NULL base");
    if (abase)
        fence_epochs(abase, win, sizeof(int), "Win_allocate");
    MPI_OK(MPI_Win_free(&win));

    /* A window on a split communicator (ranks renumbered). */
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half));
    MPI_Comm_size(half, &p);
    MPI_Comm_rank(half, &me);
    mem = malloc(NSLOT * (size_t)p * sizeof(int));
    MPI_OK(MPI_Win_create(mem, NSLOT * (MPI_Aint)p * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, half, &win));
    fence_epochs(mem, win, sizeof(int), "Win_create on a split communicator");
    MPI_OK(MPI_Win_free(&win));
    free(mem);
    MPI_OK(MPI_Comm_free(&half));
    p = mtest_size;
    me = mtest_rank;

    big_put_get();
    passive();
    return mtest_finish();
}
