/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_algos: every algorithm of the blocking reductions, allgather,
 * alltoall, bcast and barrier against a serial reference (the barrier:
 * nobody leaves it before the last rank has entered), at any size (coll_algos.sh runs it
 * at 1, 2, 3, 4, 5, 7 and 8 ranks with each algorithm forced by its
 * mpi_coll_*_algorithm parameter). Counts: 0, 1, a few, not divisible by
 * the size, and past the size thresholds; MPI_IN_PLACE; every root; a
 * user-defined operation that does not commute (reduced in rank order). */
#include "mtest.h"

static const int kCounts[] = {0, 1, 3, 17, 1001, 5003};
#define NCOUNTS ((int)(sizeof kCounts / sizeof kCounts[0]))

/* Rank r's element i: small, so sums stay exact in doubles. */
static int val(int r, int i) { return (r + 1) * 3 + (i % 97) - r * (i % 5); }

static void check_sum(const int *got, int count, int p, const char *what, int extra)
{
    int bad = 0;
    for (int i = 0; i < count && bad < 3; ++i) {
        long want = 0;
        for (int r = 0; r < p; ++r)
            want += val(r, i);
        if (got[i] != want) {
            CHECK(0, "%s (%d) count %d: element %d is %d, want %ld", what, extra, count, i, got[i], want);
            bad++;
        }
    }
}

static void reductions(int count)
{
    const int p = mtest_size, me = mtest_rank;
    int *in = malloc(sizeof(int) * (size_t)(count + 1));
    int *out = malloc(sizeof(int) * (size_t)(count + 1));
    double *din = malloc(sizeof(double) * (size_t)(count + 1));
    double *dout = malloc(sizeof(double) * (size_t)(count + 1));
    for (int i = 0; i < count; ++i) {
        in[i] = val(me, i);
        din[i] = (double)val(me, i);
    }
    MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check_sum(out, count, p, "Allreduce SUM", 0);
    memcpy(out, in, sizeof(int) * (size_t)count);
    MPI_Allreduce(MPI_IN_PLACE, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check_sum(out, count, p, "Allreduce SUM in place", 0);
    MPI_Allreduce(din, dout, count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < count; ++i) {
        int want = val(0, i);
        for (int r = 1; r < p; ++r)
            want = val(r, i) > want ? val(r, i) : want;
        if (dout[i] != (double)want) {
            CHECK(0, "Allreduce MAX count %d: element %d is %g, want %d", count, i, dout[i], want);
            break;
        }
    }
    for (int root = 0; root < p; root += (p > 2 ? p / 2 : 1)) {
        for (int i = 0; i < count; ++i)
            out[i] = -1;
        MPI_Reduce(in, out, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        if (me == root)
            check_sum(out, count, p, "Reduce SUM at root", root);
        memcpy(out, in, sizeof(int) * (size_t)count);
        MPI_Reduce(me == root ? MPI_IN_PLACE : in, me == root ? out : NULL, count, MPI_INT, MPI_SUM, root,
                   MPI_COMM_WORLD);
        if (me == root)
            check_sum(out, count, p, "Reduce SUM in place at root", root);
    }
    free(in);
    free(out);
    free(din);
    free(dout);
}

/* A non-commutative operation: intervals [lo, hi] of ranks joined in
 * order; a join of non-adjacent intervals (the wrong order) marks it bad. */
typedef struct {
    int lo, hi;
} Interval;
static void join(void *in_, void *io_, int *len, MPI_Datatype *t)
{
    (void)t;
    Interval *in = in_, *io = io_;
    for (int i = 0; i < *len; ++i) {
        if (in[i].lo < 0 || io[i].lo < 0 || in[i].hi + 1 != io[i].lo)
            io[i].lo = io[i].hi = -1;
        else
            io[i].lo = in[i].lo;
    }
}

static void noncommutative(int count)
{
    const int p = mtest_size, me = mtest_rank;
    MPI_Datatype pair;
    MPI_Op op;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op_create(join, 0, &op);
    Interval *in = malloc(sizeof(Interval) * (size_t)(count + 1));
    Interval *out = malloc(sizeof(Interval) * (size_t)(count + 1));
    for (int i = 0; i < count; ++i)
        in[i].lo = in[i].hi = me;
    MPI_Allreduce(in, out, count, pair, op, MPI_COMM_WORLD);
    for (int i = 0; i < count; ++i)
        if (out[i].lo != 0 || out[i].hi != p - 1) {
            CHECK(0, "Allreduce (non-commutative) count %d: element %d is [%d, %d], want [0, %d]", count, i,
                  out[i].lo, out[i].hi, p - 1);
            break;
        }
    const int root = p - 1;
    MPI_Reduce(in, out, count, pair, op, root, MPI_COMM_WORLD);
    if (me == root)
        for (int i = 0; i < count; ++i)
            if (out[i].lo != 0 || out[i].hi != p - 1) {
                CHECK(0, "Reduce (non-commutative) count %d: element %d is [%d, %d], want [0, %d]", count, i,
                      out[i].lo, out[i].hi, p - 1);
                break;
            }
    free(in);
    free(out);
    MPI_Op_free(&op);
    MPI_Type_free(&pair);
}

static void gathers(int count)
{
    const int p = mtest_size, me = mtest_rank;
    const size_t total = (size_t)p * (size_t)count;
    int *in = malloc(sizeof(int) * (size_t)(count + 1));
    int *out = malloc(sizeof(int) * (total + 1));
    for (int i = 0; i < count; ++i)
        in[i] = val(me, i);
    MPI_Allgather(in, count, MPI_INT, out, count, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < p; ++r)
        for (int i = 0; i < count; ++i)
            if (out[r * count + i] != val(r, i)) {
                CHECK(0, "Allgather count %d: block %d element %d is %d, want %d", count, r, i, out[r * count + i],
                      val(r, i));
                r = p;
                break;
            }
    for (size_t k = 0; k < total; ++k)
        out[k] = -1;
    memcpy(out + (size_t)me * (size_t)count, in, sizeof(int) * (size_t)count);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, count, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < p; ++r)
        for (int i = 0; i < count; ++i)
            if (out[r * count + i] != val(r, i)) {
                CHECK(0, "Allgather in place count %d: block %d element %d is %d", count, r, i, out[r * count + i]);
                r = p;
                break;
            }
    /* Allgatherv, rank r giving count + r elements, back to back. */
    int *counts = malloc(sizeof(int) * (size_t)p), *displs = malloc(sizeof(int) * (size_t)p);
    int sum = 0;
    for (int r = 0; r < p; ++r) {
        counts[r] = count ? count + r : 0;
        displs[r] = sum;
        sum += counts[r];
    }
    int *vin = malloc(sizeof(int) * (size_t)(counts[me] + 1)), *vout = malloc(sizeof(int) * (size_t)(sum + 1));
    for (int i = 0; i < counts[me]; ++i)
        vin[i] = val(me, i);
    MPI_Allgatherv(vin, counts[me], MPI_INT, vout, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < p; ++r)
        for (int i = 0; i < counts[r]; ++i)
            if (vout[displs[r] + i] != val(r, i)) {
                CHECK(0, "Allgatherv count %d: block %d element %d is %d, want %d", count, r, i, vout[displs[r] + i],
                      val(r, i));
                r = p;
                break;
            }
    free(vin);
    free(vout);
    free(counts);
    free(displs);
    free(in);
    free(out);
}

static int a2a(int from, int to, int i) { return from * 100000 + to * 1000 + i % 1000; }

static void alltoalls(int count)
{
    const int p = mtest_size, me = mtest_rank;
    const size_t total = (size_t)p * (size_t)count;
    int *in = malloc(sizeof(int) * (total + 1)), *out = malloc(sizeof(int) * (total + 1));
    for (int r = 0; r < p; ++r)
        for (int i = 0; i < count; ++i)
            in[r * count + i] = a2a(me, r, i);
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 0) {
            MPI_Alltoall(in, count, MPI_INT, out, count, MPI_INT, MPI_COMM_WORLD);
        } else {
            memcpy(out, in, sizeof(int) * total);
            MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, count, MPI_INT, MPI_COMM_WORLD);
        }
        for (int r = 0; r < p; ++r)
            for (int i = 0; i < count; ++i)
                if (out[r * count + i] != a2a(r, me, i)) {
                    CHECK(0, "Alltoall%s count %d: block %d element %d is %d, want %d", pass ? " in place" : "",
                          count, r, i, out[r * count + i], a2a(r, me, i));
                    r = p;
                    break;
                }
    }
    free(in);
    free(out);
}

static int bval(int root, int i) { return root * 7919 + i * 3 + 1; }

static void bcasts(int count)
{
    const int p = mtest_size, me = mtest_rank;
    int *buf = malloc(sizeof(int) * (size_t)(count + 1));
    for (int root = 0; root < p; ++root) {
        for (int i = 0; i < count; ++i)
            buf[i] = me == root ? bval(root, i) : -1;
        MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < count; ++i)
            if (buf[i] != bval(root, i)) {
                CHECK(0, "Bcast count %d root %d: element %d is %d, want %d", count, root, i, buf[i], bval(root, i));
                break;
            }
    }
    free(buf);
}

/* Each rank in turn is the last to enter: the others tell it they are
 * about to enter ("before"), enter, and once out tell it so ("after"). The
 * late rank waits for every "before", then probes a while for an "after":
 * one that arrives before the late rank has entered means a rank left the
 * barrier early. */
enum { kTagBefore = 901, kTagAfter = 902 };
static void barriers(void)
{
    const int p = mtest_size, me = mtest_rank;
    for (int late = 0; late < p; ++late) {
        int token = me;
        if (me != late) {
            MPI_Send(&token, 1, MPI_INT, late, kTagBefore, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Send(&token, 1, MPI_INT, late, kTagAfter, MPI_COMM_WORLD);
            continue;
        }
        for (int r = 0; r < p - 1; ++r)
            MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, kTagBefore, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int probe = 0; probe < 2000; ++probe) {
            int early = 0;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, kTagAfter, MPI_COMM_WORLD, &early, &st);
            if (early) {
                CHECK(0, "Barrier: rank %d left it before rank %d (the last) entered", st.MPI_SOURCE, late);
                break;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = 0; r < p - 1; ++r)
            MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, kTagAfter, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    barriers();
    for (int k = 0; k < NCOUNTS; ++k) {
        bcasts(kCounts[k]);
        reductions(kCounts[k]);
        noncommutative(kCounts[k]);
        gathers(kCounts[k]);
        alltoalls(kCounts[k]);
    }
    return mtest_finish();
}
