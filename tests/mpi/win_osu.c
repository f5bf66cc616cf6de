/* SPDX-License-Identifier: BSD-3-Clause */
/* The call patterns of the OSU one-sided benchmarks (osu_put_latency,
 * osu_get_latency, osu_put_bw, osu_put_bibw, osu_acc_latency,
 * osu_fop_latency, osu_cas_latency, osu_get_acc_latency), with every window
 * kind of their -w option (create, allocate, dynamic) and every
 * synchronization of -s (lock, flush, flush_local, lock_all, pscw,
 * fence): rank 0 is the origin, rank 1 the target (rank 0 itself at one
 * rank), as the benchmarks run at two ranks; further ranks wait (their
 * windows would only make the collective calls slower on a small host).
 * Unlike the benchmarks, every transfer's result is checked against a
 * serial reference. */
#include "mtest.h"

enum { CREATE, ALLOCATE, DYNAMIC, NKINDS };
enum { LOCK, FLUSH, FLUSH_LOCAL, LOCK_ALL, PSCW, FENCE, NSYNCS };
enum { PUT, GET, PUT_BW, PUT_BIBW, ACC, FOP, CAS, GET_ACC, NBENCH };
static const char *kind_name[] = {"create", "allocate", "dynamic"};
static const char *sync_name[] = {"lock", "flush", "flush_local", "lock_all", "pscw", "fence"};
static const char *bench_name[] = {"put_latency", "get_latency", "put_bw", "put_bibw",
                                   "acc_latency", "fop_latency", "cas_latency", "get_acc_latency"};

#define BYTES 4096
#define ITERS 2
#define WINDOW 4   /* put_bw: puts per synchronization */

static int target, peer_of_me;
static MPI_Group peer_group;
static MPI_Comm pair;   /* ranks 0 and 1 */

struct Win {
    MPI_Win win;
    unsigned char *mem;
    MPI_Aint disp;   /* the peer's window start (dynamic: its address) */
};

static void open_window(int kind, struct Win *w)
{
    w->disp = 0;
    if (kind == CREATE) {
        w->mem = malloc(BYTES);
        MPI_OK(MPI_Win_create(w->mem, BYTES, 1, MPI_INFO_NULL, pair, &w->win));
    } else if (kind == ALLOCATE) {
        MPI_OK(MPI_Win_allocate(BYTES, 1, MPI_INFO_NULL, pair, &w->mem, &w->win));
    } else {
        w->mem = malloc(BYTES);
        MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, pair, &w->win));
        MPI_OK(MPI_Win_attach(w->win, w->mem, BYTES));
        MPI_Aint mine, *all = malloc(sizeof(MPI_Aint) * (size_t)mtest_size);
        MPI_OK(MPI_Get_address(w->mem, &mine));
        MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, pair));
        w->disp = all[peer_of_me];
        free(all);
    }
    memset(w->mem, 0, BYTES);
}

static void close_window(int kind, struct Win *w)
{
    if (kind == DYNAMIC)
        MPI_OK(MPI_Win_detach(w->win, w->mem));
    MPI_OK(MPI_Win_free(&w->win));
    if (kind != ALLOCATE)
        free(w->mem);
}

/* Is this rank an origin of bench? */
static int origin(int bench) { return mtest_rank == 0 || (bench == PUT_BIBW && mtest_rank == target); }
static int exposed(int bench) { return mtest_rank == target || (bench == PUT_BIBW && mtest_rank == 0); }

static void epoch_begin(int sync, int bench, MPI_Win win)
{
    if (sync == FENCE) {
        MPI_OK(MPI_Win_fence(0, win));
        return;
    }
    if (sync == PSCW) {
        if (exposed(bench))
            MPI_OK(MPI_Win_post(peer_group, 0, win));
        if (origin(bench))
            MPI_OK(MPI_Win_start(peer_group, 0, win));
        return;
    }
    if (!origin(bench))
        return;
    if (sync == LOCK_ALL)
        MPI_OK(MPI_Win_lock_all(0, win));
    else if (sync == LOCK)
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer_of_me, 0, win));
}

static void epoch_end(int sync, int bench, MPI_Win win)
{
    if (sync == FENCE) {
        MPI_OK(MPI_Win_fence(0, win));
        return;
    }
    if (sync == PSCW) {
        if (origin(bench))
            MPI_OK(MPI_Win_complete(win));
        if (exposed(bench))
            MPI_OK(MPI_Win_wait(win));
        return;
    }
    if (!origin(bench))
        return;
    if (sync == LOCK_ALL)
        MPI_OK(MPI_Win_unlock_all(win));
    else if (sync == LOCK)
        MPI_OK(MPI_Win_unlock(peer_of_me, win));
    else if (sync == FLUSH)
        MPI_OK(MPI_Win_flush(peer_of_me, win));
    else
        MPI_OK(MPI_Win_flush_local(peer_of_me, win));
}

static void run(int kind, int sync, int bench)
{
    struct Win w;
    if (getenv("WIN_OSU_TRACE"))
        fprintf(stderr, "[%d] %s -w %s -s %s\n", mtest_rank, bench_name[bench], kind_name[kind], sync_name[sync]);
    open_window(kind, &w);
    unsigned char *src = malloc(BYTES), *dst = malloc(BYTES);
    mtest_fill(src, BYTES, mtest_rank, bench);
    memset(dst, 0, BYTES);
    if (bench == GET)
        mtest_fill(w.mem, BYTES, mtest_rank, 99);
    long *lmem = (long *)w.mem;
    MPI_OK(MPI_Barrier(pair));
    const int passive = sync != FENCE && sync != PSCW;
    if (passive && (sync == FLUSH || sync == FLUSH_LOCAL) && origin(bench))
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, peer_of_me, 0, w.win));
    long fetched[ITERS];
    const long one = 1;
    for (int size = 1, round = 0; size <= BYTES; size *= BYTES, ++round) {
        for (int i = 0; i < ITERS; ++i) {
            const int k = round * ITERS + i;   /* the k-th epoch */
            epoch_begin(sync, bench, w.win);
            if (origin(bench)) {
                switch (bench) {
                case PUT:
                case PUT_BW:
                case PUT_BIBW:
                    for (int j = 0; j < (bench == PUT ? 1 : WINDOW); ++j)
                        MPI_OK(MPI_Put(src, size, MPI_BYTE, peer_of_me, w.disp, size, MPI_BYTE, w.win));
                    break;
                case GET:
                    MPI_OK(MPI_Get(dst, size, MPI_BYTE, peer_of_me, w.disp, size, MPI_BYTE, w.win));
                    break;
                case ACC:
                    MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, peer_of_me, w.disp, 1, MPI_LONG, MPI_SUM, w.win));
                    break;
                case FOP:
                    MPI_OK(MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG, peer_of_me, w.disp, MPI_SUM, w.win));
                    break;
                case CAS: {
                    const long next = k + 1, expect = k;
                    MPI_OK(MPI_Compare_and_swap(&next, &expect, &fetched[i], MPI_LONG, peer_of_me, w.disp,
                                                w.win));
                    break;
                }
                case GET_ACC:
                    MPI_OK(MPI_Get_accumulate(&one, 1, MPI_LONG, &fetched[i], 1, MPI_LONG, peer_of_me, w.disp, 1,
                                              MPI_LONG, MPI_SUM, w.win));
                    break;
                }
            }
            epoch_end(sync, bench, w.win);
            if (mtest_rank == 0 && (bench == FOP || bench == CAS || bench == GET_ACC))
                CHECK(fetched[i] == k, "%s -w %s -s %s: epoch %d fetched %ld, expected %d", bench_name[bench],
                      kind_name[kind], sync_name[sync], k, fetched[i], k);
        }
        if (mtest_rank == 0 && bench == GET)
            CHECK(mtest_verify(dst, (size_t)size, peer_of_me, 99) < 0, "%s -w %s -s %s: %d bytes got wrong",
                  bench_name[bench], kind_name[kind], sync_name[sync], size);
    }
    if (passive && (sync == FLUSH || sync == FLUSH_LOCAL) && origin(bench))
        MPI_OK(MPI_Win_unlock(peer_of_me, w.win));
    MPI_OK(MPI_Barrier(pair));
    const int rounds = 1;   /* sizes 1 and BYTES */
    if (exposed(bench) && (bench == PUT || bench == PUT_BW || bench == PUT_BIBW))
        CHECK(mtest_verify(w.mem, BYTES, peer_of_me, bench) < 0, "%s -w %s -s %s: the target's bytes are wrong",
              bench_name[bench], kind_name[kind], sync_name[sync]);
    if (mtest_rank == target && (bench == ACC || bench == FOP || bench == CAS || bench == GET_ACC))
        CHECK(lmem[0] == (rounds + 1) * ITERS, "%s -w %s -s %s: the target holds %ld, expected %d",
              bench_name[bench], kind_name[kind], sync_name[sync], lmem[0], (rounds + 1) * ITERS);
    free(src);
    free(dst);
    close_window(kind, &w);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    target = mtest_size > 1 ? 1 : 0;
    peer_of_me = mtest_rank == 0 ? target : 0;
    MPI_Group world;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_incl(world, 1, &peer_of_me, &peer_group));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, mtest_rank < 2 ? 0 : MPI_UNDEFINED, mtest_rank, &pair));
    if (mtest_rank < 2) {
        for (int kind = 0; kind < NKINDS; ++kind)
            for (int sync = 0; sync < NSYNCS; ++sync)
                for (int bench = 0; bench < NBENCH; ++bench)
                    run(kind, sync, bench);
        MPI_OK(MPI_Comm_free(&pair));
    }
    MPI_OK(MPI_Group_free(&peer_group));
    return mtest_finish();
}
