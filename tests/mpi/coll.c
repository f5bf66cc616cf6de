/* SPDX-License-Identifier: BSD-3-Clause */
/* coll: every collective of the subset against a reference computed
 * locally, on MPI_COMM_WORLD and on a split communicator (odd/even, order
 * reversed). Reductions use values whose results do not depend on the order
 * of evaluation (small integers, halves). Any number of ranks. */
#include "mtest.h"

static MPI_Comm comm;
static int crank, csize;
static const char *cname;

/* ---------- reductions ---------- */

static const MPI_Op int_ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,
                                 MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR};
static const char *int_op_names[] = {"MAX", "MIN", "SUM", "PROD", "LAND", "BAND", "LOR", "BOR", "LXOR", "BXOR"};
#define NINT_OPS 10
#define NFLT_OPS 4 /* the first four apply to floating point */

#define APPLY(T)                                                                                                       \
    static T apply_##T(int k, T a, T b)                                                                                \
    {                                                                                                                  \
        switch (k) {                                                                                                   \
        case 0: return a > b ? a : b;                                                                                  \
        case 1: return a < b ? a : b;                                                                                  \
        case 2: return (T)(a + b);                                                                                     \
        case 3: return (T)(a * b);                                                                                     \
        case 4: return (T)(a && b);                                                                                    \
        case 5: return (T)(a & b);                                                                                     \
        case 6: return (T)(a || b);                                                                                    \
        case 7: return (T)(a | b);                                                                                     \
        case 8: return (T)(!a != !b);                                                                                  \
        default: return (T)(a ^ b);                                                                                    \
        }                                                                                                              \
    }
typedef unsigned uint_t;
typedef long long ll_t;
APPLY(int)
APPLY(uint_t)
APPLY(ll_t)
static double apply_double(int k, double a, double b)
{
    switch (k) {
    case 0: return a > b ? a : b;
    case 1: return a < b ? a : b;
    case 2: return a + b;
    default: return a * b;
    }
}

/* Values: small enough that PROD over 4+ ranks does not overflow, with
 * zeros for the logical operators, and (for the wide types) large parts
 * where the operator is not PROD. */
static int gen_int(int r, int i, int k) { (void)k; return (r * 7 + i * 3) % 7 - 3; }
static uint_t gen_uint_t(int r, int i, int k)
{
    uint_t v = (uint_t)((r * 5 + i * 11) % 13);
    return k == 3 ? v % 4 : v | (i % 3 == 0 ? 0x80000000u : 0u);
}
static ll_t gen_ll_t(int r, int i, int k)
{
    ll_t v = (r * 3 + i) % 9 - 4;
    return k == 3 ? v % 3 : v * (1LL << 33) + (v & 1);
}
static double gen_double(int r, int i, int k) { (void)k; return ((r * 5 + i) % 11 - 5) * 0.5; }

#define REDUCE_TEST(T, MPIT, NOPS, FMT)                                                                                \
    static void reduce_##T(void)                                                                                       \
    {                                                                                                                  \
        static const int counts[] = {1, 17, 1000};                                                                     \
        for (int k = 0; k < NOPS; k++)                                                                                 \
            for (int c = 0; c < 3; c++) {                                                                              \
                int n = counts[c];                                                                                     \
                T *s = malloc((size_t)n * sizeof(T)), *r = malloc((size_t)n * sizeof(T)),                              \
                  *ref = malloc((size_t)n * sizeof(T));                                                                \
                for (int i = 0; i < n; i++) {                                                                          \
                    s[i] = gen_##T(crank, i, k);                                                                       \
                    ref[i] = gen_##T(0, i, k);                                                                         \
                    for (int q = 1; q < csize; q++)                                                                    \
                        ref[i] = apply_##T(k, ref[i], gen_##T(q, i, k));                                               \
                }                                                                                                      \
                int root = (k + c) % csize;                                                                            \
                for (int i = 0; i < n; i++)                                                                            \
                    r[i] = (T)99;                                                                                      \
                MPI_OK(MPI_Reduce(s, r, n, MPIT, int_ops[k], root, comm));                                             \
                if (crank == root)                                                                                     \
                    for (int i = 0; i < n; i++)                                                                        \
                        if (r[i] != ref[i]) {                                                                          \
                            CHECK(0, "%s: Reduce(%s, %s, n=%d, root %d)[%d] = " FMT ", expected " FMT, cname, #MPIT,  \
                                  int_op_names[k], n, root, i, r[i], ref[i]);                                          \
                            break;                                                                                     \
                        }                                                                                              \
                for (int i = 0; i < n; i++)                                                                            \
                    r[i] = (T)99;                                                                                      \
                MPI_OK(MPI_Allreduce(s, r, n, MPIT, int_ops[k], comm));                                                \
                for (int i = 0; i < n; i++)                                                                            \
                    if (r[i] != ref[i]) {                                                                              \
                        CHECK(0, "%s: Allreduce(%s, %s, n=%d)[%d] = " FMT ", expected " FMT, cname, #MPIT,             \
                              int_op_names[k], n, i, r[i], ref[i]);                                                    \
                        break;                                                                                         \
                    }                                                                                                  \
                /* In place: Allreduce everywhere, Reduce at the root. */                                              \
                memcpy(r, s, (size_t)n * sizeof(T));                                                                   \
                MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r, n, MPIT, int_ops[k], comm));                                     \
                for (int i = 0; i < n; i++)                                                                            \
                    if (r[i] != ref[i]) {                                                                              \
                        CHECK(0, "%s: Allreduce(IN_PLACE, %s, %s, n=%d)[%d] = " FMT ", expected " FMT, cname, #MPIT,   \
                              int_op_names[k], n, i, r[i], ref[i]);                                                    \
                        break;                                                                                         \
                    }                                                                                                  \
                memcpy(r, s, (size_t)n * sizeof(T));                                                                   \
                if (crank == root)                                                                                     \
                    MPI_OK(MPI_Reduce(MPI_IN_PLACE, r, n, MPIT, int_ops[k], root, comm));                              \
                else                                                                                                   \
                    MPI_OK(MPI_Reduce(s, NULL, n, MPIT, int_ops[k], root, comm));                                      \
                if (crank == root)                                                                                     \
                    for (int i = 0; i < n; i++)                                                                        \
                        if (r[i] != ref[i]) {                                                                          \
                            CHECK(0, "%s: Reduce(IN_PLACE, %s, %s, n=%d, root %d)[%d] = " FMT ", expected " FMT,       \
                                  cname, #MPIT, int_op_names[k], n, root, i, r[i], ref[i]);                            \
                            break;                                                                                     \
                        }                                                                                              \
                /* Reduce_local: inout = in op inout. */                                                               \
                for (int i = 0; i < n; i++) {                                                                          \
                    r[i] = gen_##T(crank + 1, i, k);                                                                   \
                    ref[i] = apply_##T(k, s[i], r[i]);                                                                 \
                }                                                                                                      \
                MPI_OK(MPI_Reduce_local(s, r, n, MPIT, int_ops[k]));                                                   \
                for (int i = 0; i < n; i++)                                                                            \
                    if (r[i] != ref[i]) {                                                                              \
                        CHECK(0, "Reduce_local(%s, %s, n=%d)[%d] = " FMT ", expected " FMT, #MPIT, int_op_names[k], n, \
                              i, r[i], ref[i]);                                                                        \
                        break;                                                                                         \
                    }                                                                                                  \
                free(s);                                                                                               \
                free(r);                                                                                               \
                free(ref);                                                                                             \
            }                                                                                                          \
    }
REDUCE_TEST(int, MPI_INT, NINT_OPS, "%d")
REDUCE_TEST(uint_t, MPI_UNSIGNED, NINT_OPS, "%u")
REDUCE_TEST(ll_t, MPI_LONG_LONG, NINT_OPS, "%lld")
REDUCE_TEST(double, MPI_DOUBLE, NFLT_OPS, "%g")

/* A long vector: SUM of ints, segmented/pipelined algorithms. */
static void reduce_long(void)
{
    int n = 1 << 17;
    int *s = malloc((size_t)n * sizeof(int)), *r = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        s[i] = crank * 3 + i % 1000;
    MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < n; i++) {
        int want = 3 * csize * (csize - 1) / 2 + csize * (i % 1000);
        if (r[i] != want) {
            CHECK(0, "%s: Allreduce SUM of %d ints: [%d] = %d, expected %d", cname, n, i, r[i], want);
            break;
        }
    }
    free(s);
    free(r);
}

struct ii { int v, loc; };
struct di { double v; int loc; };

static void minloc_maxloc(void)
{
    enum { N = 11 };
    struct ii si[N], ri[N], wi[2][N];
    struct di sd[N], rd[N], wd[2][N];
    for (int i = 0; i < N; i++) {
        si[i].v = (crank * 5 + i) % 3;
        si[i].loc = crank;
        sd[i].v = ((crank * 7 + i) % 4) * 0.5;
        sd[i].loc = crank;
        for (int m = 0; m < 2; m++) {
            wi[m][i].v = i % 3;
            wi[m][i].loc = 0;
            wd[m][i].v = (i % 4) * 0.5;
            wd[m][i].loc = 0;
            for (int q = 1; q < csize; q++) {
                int vi = (q * 5 + i) % 3;
                double vd = ((q * 7 + i) % 4) * 0.5;
                /* Ties keep the lower rank (already there). */
                if (m == 0 ? vi < wi[m][i].v : vi > wi[m][i].v) {
                    wi[m][i].v = vi;
                    wi[m][i].loc = q;
                }
                if (m == 0 ? vd < wd[m][i].v : vd > wd[m][i].v) {
                    wd[m][i].v = vd;
                    wd[m][i].loc = q;
                }
            }
        }
    }
    MPI_Op ops[2] = {MPI_MINLOC, MPI_MAXLOC};
    for (int m = 0; m < 2; m++) {
        MPI_OK(MPI_Allreduce(si, ri, N, MPI_2INT, ops[m], comm));
        for (int i = 0; i < N; i++)
            CHECK(ri[i].v == wi[m][i].v && ri[i].loc == wi[m][i].loc, "%s: %s MPI_2INT [%d] = (%d, %d), expected (%d, %d)",
                  cname, m ? "MAXLOC" : "MINLOC", i, ri[i].v, ri[i].loc, wi[m][i].v, wi[m][i].loc);
        int root = csize - 1;
        MPI_OK(MPI_Reduce(sd, rd, N, MPI_DOUBLE_INT, ops[m], root, comm));
        if (crank == root)
            for (int i = 0; i < N; i++)
                CHECK(rd[i].v == wd[m][i].v && rd[i].loc == wd[m][i].loc,
                      "%s: %s MPI_DOUBLE_INT [%d] = (%g, %d), expected (%g, %d)", cname, m ? "MAXLOC" : "MINLOC", i,
                      rd[i].v, rd[i].loc, wd[m][i].v, wd[m][i].loc);
        MPI_OK(MPI_Allreduce(sd, rd, N, MPI_DOUBLE_INT, ops[m], comm));
        for (int i = 0; i < N; i++)
            CHECK(rd[i].v == wd[m][i].v && rd[i].loc == wd[m][i].loc,
                  "%s: Allreduce %s MPI_DOUBLE_INT [%d] = (%g, %d), expected (%g, %d)", cname, m ? "MAXLOC" : "MINLOC",
                  i, rd[i].v, rd[i].loc, wd[m][i].v, wd[m][i].loc);
    }
}

/* ---------- data movement ---------- */

static int v3(int a, int b, int k) { return a * 1000000 + b * 1000 + k; }

static int first_bad(const int *buf, int n, int (*want)(int, void *), void *arg)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != want(i, arg))
            return i;
    return -1;
}

static int bcast_want(int i, void *arg) { return v3(*(int *)arg, 0, i % 997) + i / 997; }

static void bcast(void)
{
    static const int sizes[] = {1, 3, 1000, 65536, 1 << 18};
    int *buf = malloc(sizeof(int) << 18);
    for (int root = 0; root < csize; root++)
        for (int s = 0; s < 5; s++) {
            int n = sizes[s];
            for (int i = 0; i < n; i++)
                buf[i] = crank == root ? bcast_want(i, &root) : -1;
            MPI_OK(MPI_Bcast(buf, n, MPI_INT, root, comm));
            int bad = first_bad(buf, n, bcast_want, &root);
            CHECK(bad < 0, "%s: Bcast of %d ints from root %d: [%d] = %d, expected %d", cname, n, root, bad,
                  bad < 0 ? 0 : buf[bad], bad < 0 ? 0 : bcast_want(bad, &root));
        }
    /* A derived type: every third int. */
    MPI_Datatype every3;
    MPI_OK(MPI_Type_vector(100, 1, 3, MPI_INT, &every3));
    MPI_OK(MPI_Type_commit(&every3));
    int root = csize / 2;
    for (int i = 0; i < 300; i++)
        buf[i] = crank == root ? i : -1;
    MPI_OK(MPI_Bcast(buf, 1, every3, root, comm));
    for (int i = 0; i < 300; i++) {
        int want = crank == root || i % 3 == 0 ? (crank == root || i % 3 == 0 ? i : -1) : -1;
        if (buf[i] != want) {
            CHECK(0, "%s: Bcast of a vector type: [%d] = %d, expected %d", cname, i, buf[i], want);
            break;
        }
    }
    MPI_OK(MPI_Type_free(&every3));
    free(buf);
}

#define SENT (-77777)

static void gather_scatter(void)
{
    int p = csize, r = crank;
    for (int root = 0; root < p; root++) {
        /* Gather n from each. */
        for (int n = 1; n <= 20001; n += 20000) {
            int *s = malloc((size_t)n * sizeof(int)), *g = malloc((size_t)n * (size_t)p * sizeof(int));
            for (int k = 0; k < n; k++)
                s[k] = v3(r, root, k);
            for (int k = 0; k < n * p; k++)
                g[k] = SENT;
            MPI_OK(MPI_Gather(s, n, MPI_INT, g, n, MPI_INT, root, comm));
            if (r == root)
                for (int q = 0; q < p; q++)
                    for (int k = 0; k < n; k++)
                        if (g[q * n + k] != v3(q, root, k)) {
                            CHECK(0, "%s: Gather n=%d root %d: from %d [%d] = %d, expected %d", cname, n, root, q, k,
                                  g[q * n + k], v3(q, root, k));
                            q = p;
                            break;
                        }
            /* In place at the root. */
            if (r == root) {
                for (int k = 0; k < n * p; k++)
                    g[k] = SENT;
                memcpy(g + (size_t)root * (size_t)n, s, (size_t)n * sizeof(int));
                MPI_OK(MPI_Gather(MPI_IN_PLACE, n, MPI_INT, g, n, MPI_INT, root, comm));
                for (int q = 0; q < p; q++)
                    for (int k = 0; k < n; k++)
                        if (g[q * n + k] != v3(q, root, k)) {
                            CHECK(0, "%s: Gather(IN_PLACE) n=%d root %d: from %d [%d] = %d", cname, n, root, q, k,
                                  g[q * n + k]);
                            q = p;
                            break;
                        }
            } else {
                MPI_OK(MPI_Gather(s, n, MPI_INT, NULL, 0, MPI_INT, root, comm));
            }
            /* Scatter n to each: the inverse. */
            if (r == root)
                for (int q = 0; q < p; q++)
                    for (int k = 0; k < n; k++)
                        g[q * n + k] = v3(root, q, k);
            for (int k = 0; k < n; k++)
                s[k] = SENT;
            MPI_OK(MPI_Scatter(g, n, MPI_INT, s, n, MPI_INT, root, comm));
            for (int k = 0; k < n; k++)
                if (s[k] != v3(root, r, k)) {
                    CHECK(0, "%s: Scatter n=%d root %d: [%d] = %d, expected %d", cname, n, root, k, s[k], v3(root, r, k));
                    break;
                }
            free(s);
            free(g);
        }

        /* Gatherv / Scatterv: rank q contributes (q*3)%4 + (q==root) elements
         * (zeros allowed), placed in reverse rank order with 2-int gaps. */
        int *cnt = malloc((size_t)p * sizeof(int)), *dsp = malloc((size_t)p * sizeof(int));
        int total = 0;
        for (int q = p - 1; q >= 0; q--) {
            cnt[q] = (q * 3) % 4 + (q == root);
            dsp[q] = total + 2;
            total += cnt[q] + 2;
        }
        total += 2;
        int *big = malloc((size_t)total * sizeof(int)), mine[8];
        for (int k = 0; k < total; k++)
            big[k] = SENT;
        for (int k = 0; k < cnt[r]; k++)
            mine[k] = v3(r, root, k + 500);
        MPI_OK(MPI_Gatherv(mine, cnt[r], MPI_INT, big, cnt, dsp, MPI_INT, root, comm));
        if (r == root) {
            int bad = 0;
            for (int q = 0; q < p; q++)
                for (int k = 0; k < cnt[q]; k++)
                    if (big[dsp[q] + k] != v3(q, root, k + 500) && !bad++)
                        CHECK(0, "%s: Gatherv root %d: from %d [%d] = %d, expected %d", cname, root, q, k,
                              big[dsp[q] + k], v3(q, root, k + 500));
            int filled = 0;
            for (int q = 0; q < p; q++)
                filled += cnt[q];
            int untouched = 0;
            for (int k = 0; k < total; k++)
                untouched += big[k] == SENT;
            CHECK(untouched == total - filled, "%s: Gatherv root %d wrote outside the displacements (%d gaps intact, "
                  "expected %d)", cname, root, untouched, total - filled);
            for (int q = 0; q < p; q++)
                for (int k = 0; k < cnt[q]; k++)
                    big[dsp[q] + k] = v3(root, q, k + 700);
        }
        for (int k = 0; k < 8; k++)
            mine[k] = SENT;
        MPI_OK(MPI_Scatterv(big, cnt, dsp, MPI_INT, mine, cnt[r], MPI_INT, root, comm));
        for (int k = 0; k < cnt[r]; k++)
            CHECK(mine[k] == v3(root, r, k + 700), "%s: Scatterv root %d: [%d] = %d, expected %d", cname, root, k,
                  mine[k], v3(root, r, k + 700));
        CHECK(mine[cnt[r]] == SENT, "%s: Scatterv root %d wrote past the %d elements", cname, root, cnt[r]);
        free(big);
        free(cnt);
        free(dsp);
    }
}

static void allgather_alltoall(void)
{
    int p = csize, r = crank;
    /* Allgather, plain and in place. */
    for (int n = 1; n <= 4001; n += 4000) {
        int *s = malloc((size_t)n * sizeof(int)), *g = malloc((size_t)n * (size_t)p * sizeof(int));
        for (int k = 0; k < n; k++)
            s[k] = v3(r, 1, k);
        for (int pass = 0; pass < 2; pass++) {
            for (int k = 0; k < n * p; k++)
                g[k] = SENT;
            if (pass == 0) {
                MPI_OK(MPI_Allgather(s, n, MPI_INT, g, n, MPI_INT, comm));
            } else {
                memcpy(g + (size_t)r * (size_t)n, s, (size_t)n * sizeof(int));
                MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, n, MPI_INT, comm));
            }
            int bad = 0;
            for (int q = 0; q < p; q++)
                for (int k = 0; k < n; k++)
                    if (g[q * n + k] != v3(q, 1, k) && !bad++)
                        CHECK(0, "%s: Allgather%s n=%d: from %d [%d] = %d, expected %d", cname, pass ? "(IN_PLACE)" : "",
                              n, q, k, g[q * n + k], v3(q, 1, k));
        }
        free(s);
        free(g);
    }

    /* Allgatherv: rank q gives q%3 elements (zeros allowed), gaps of 1. */
    int *cnt = malloc((size_t)p * sizeof(int)), *dsp = malloc((size_t)p * sizeof(int));
    int total = 0;
    for (int q = 0; q < p; q++) {
        cnt[q] = q % 3;
        dsp[q] = total + 1;
        total += cnt[q] + 1;
    }
    int *g = malloc((size_t)(total + 1) * sizeof(int)), mine[3];
    for (int k = 0; k < total + 1; k++)
        g[k] = SENT;
    for (int k = 0; k < cnt[r]; k++)
        mine[k] = v3(r, 2, k);
    MPI_OK(MPI_Allgatherv(mine, cnt[r], MPI_INT, g, cnt, dsp, MPI_INT, comm));
    int bad = 0, filled = 0, untouched = 0;
    for (int q = 0; q < p; q++) {
        filled += cnt[q];
        for (int k = 0; k < cnt[q]; k++)
            if (g[dsp[q] + k] != v3(q, 2, k) && !bad++)
                CHECK(0, "%s: Allgatherv: from %d [%d] = %d, expected %d", cname, q, k, g[dsp[q] + k], v3(q, 2, k));
    }
    for (int k = 0; k < total + 1; k++)
        untouched += g[k] == SENT;
    CHECK(untouched == total + 1 - filled, "%s: Allgatherv wrote outside the displacements", cname);
    free(g);

    /* Alltoall: 3 ints per pair, and a large one. */
    for (int n = 3; n <= 3003; n += 3000) {
        int *s = malloc((size_t)n * (size_t)p * sizeof(int)), *a = malloc((size_t)n * (size_t)p * sizeof(int));
        for (int q = 0; q < p; q++)
            for (int k = 0; k < n; k++) {
                s[q * n + k] = v3(r, q, k);
                a[q * n + k] = SENT;
            }
        MPI_OK(MPI_Alltoall(s, n, MPI_INT, a, n, MPI_INT, comm));
        bad = 0;
        for (int q = 0; q < p; q++)
            for (int k = 0; k < n; k++)
                if (a[q * n + k] != v3(q, r, k) && !bad++)
                    CHECK(0, "%s: Alltoall n=%d: from %d [%d] = %d, expected %d", cname, n, q, k, a[q * n + k],
                          v3(q, r, k));
        free(s);
        free(a);
    }

    /* Alltoallv: c(s,d) = (s + 2d) % 4 elements from s to d; the send side
     * packed in reverse destination order, the receive side with gaps. */
    int *sc = malloc((size_t)p * sizeof(int)), *sd = malloc((size_t)p * sizeof(int));
    int *rc = malloc((size_t)p * sizeof(int)), *rd = malloc((size_t)p * sizeof(int));
    int stot = 0, rtot = 0;
    for (int q = p - 1; q >= 0; q--) {
        sc[q] = (r + 2 * q) % 4;
        sd[q] = stot;
        stot += sc[q];
    }
    for (int q = 0; q < p; q++) {
        rc[q] = (q + 2 * r) % 4;
        rd[q] = rtot + 1;
        rtot += rc[q] + 1;
    }
    int *s = malloc((size_t)(stot + 1) * sizeof(int)), *a = malloc((size_t)(rtot + 1) * sizeof(int));
    for (int q = 0; q < p; q++)
        for (int k = 0; k < sc[q]; k++)
            s[sd[q] + k] = v3(r, q, k + 900);
    for (int k = 0; k <= rtot; k++)
        a[k] = SENT;
    MPI_OK(MPI_Alltoallv(s, sc, sd, MPI_INT, a, rc, rd, MPI_INT, comm));
    bad = 0;
    filled = 0;
    untouched = 0;
    for (int q = 0; q < p; q++) {
        filled += rc[q];
        for (int k = 0; k < rc[q]; k++)
            if (a[rd[q] + k] != v3(q, r, k + 900) && !bad++)
                CHECK(0, "%s: Alltoallv: from %d [%d] = %d, expected %d", cname, q, k, a[rd[q] + k], v3(q, r, k + 900));
    }
    for (int k = 0; k <= rtot; k++)
        untouched += a[k] == SENT;
    CHECK(untouched == rtot + 1 - filled, "%s: Alltoallv wrote outside the displacements", cname);
    free(s);
    free(a);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(cnt);
    free(dsp);
}

static void run_all(MPI_Comm c, const char *name)
{
    comm = c;
    cname = name;
    MPI_Comm_rank(c, &crank);
    MPI_Comm_size(c, &csize);
    for (int i = 0; i < 5; i++)
        MPI_OK(MPI_Barrier(c));
    bcast();
    reduce_int();
    reduce_uint_t();
    reduce_ll_t();
    reduce_double();
    reduce_long();
    minloc_maxloc();
    gather_scatter();
    allgather_alltoall();
    MPI_OK(MPI_Barrier(c));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    run_all(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    MPI_Comm split;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, mtest_rank % 2, -mtest_rank, &split));
    run_all(split, "the parity split (reversed)");
    MPI_OK(MPI_Comm_free(&split));
    run_all(MPI_COMM_SELF, "MPI_COMM_SELF");
    return mtest_finish();
}
