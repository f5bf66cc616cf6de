/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_ops: MPI-3.1's other blocking collectives (Reduce_scatter,
 * Reduce_scatter_block, Scan, Exscan, Alltoallw) and user-defined
 * operations, against references computed here:
 *  - a non-commutative operation (2x2 matrix product mod a prime) in
 *    Reduce (root 0 and the last rank), Allreduce, Reduce_scatter, Scan,
 *    Exscan: MPI's rank order, M_0 * M_1 * ... ;
 *  - a commutative one on a datatype with holes (the holes of the receive
 *    buffer stay as they were);
 *  - every predefined operation on every predefined type it is defined for,
 *    Allreduce against a fold of MPI_Reduce_local;
 *  - MPI_IN_PLACE in each call that allows it;
 *  - errors: MPI_Op_free of a predefined operation, MPI_MINLOC on MPI_INT.
 * Any number of ranks. */
#include "mtest.h"

#define PRIME 1000003LL

typedef struct {
    long long a, b, c, d;
} mat;

static mat mat_mul(mat x, mat y)
{
    mat r = {(x.a * y.a + x.b * y.c) % PRIME, (x.a * y.b + x.b * y.d) % PRIME, (x.c * y.a + x.d * y.c) % PRIME,
             (x.c * y.b + x.d * y.d) % PRIME};
    return r;
}

/* The matrix rank r contributes at index i. */
static mat mat_of(int r, int i)
{
    mat m = {r + 2 + i, 1 + i, r, 1};
    return m;
}

static int mat_eq(mat x, mat y)
{
    return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}

static int user_calls = 0;

/* inout = in * inout: MPI's order (in holds the lower ranks). */
static void mat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat *x = (mat *)in, *y = (mat *)inout;
    for (int i = 0; i < *len; i++)
        y[i] = mat_mul(x[i], y[i]);
    user_calls++;
}

/* Sums the two ints of a {int, hole, int} element. */
typedef struct {
    int x, hole, y;
} holey;

static void holey_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    holey *a = (holey *)in, *b = (holey *)inout;
    for (int i = 0; i < *len; i++) {
        b[i].x += a[i].x;
        b[i].y += a[i].y;
    }
}

/* Product of ranks lo..hi-1's matrices at index i (identity when empty). */
static mat mat_range(int lo, int hi, int i)
{
    mat acc = {1, 0, 0, 1};
    for (int r = lo; r < hi; r++)
        acc = mat_mul(acc, mat_of(r, i));
    return acc;
}

#define N 5

static void test_noncommutative(int rank, int size)
{
    MPI_Datatype mt;
    MPI_OK(MPI_Type_contiguous(4, MPI_LONG_LONG, &mt));
    MPI_OK(MPI_Type_commit(&mt));
    MPI_Op op;
    MPI_OK(MPI_Op_create(mat_op, 0, &op));
    int commute = -1;
    MPI_OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0, "MPI_Op_commutative of a non-commutative op gave %d", commute);
    MPI_OK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1, "MPI_Op_commutative(MPI_SUM) gave %d", commute);

    mat in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = mat_of(rank, i);
    int roots[2] = {0, size - 1};
    for (int k = 0; k < 2; k++) {
        memset(out, 0, sizeof out);
        MPI_OK(MPI_Reduce(in, out, N, mt, op, roots[k], MPI_COMM_WORLD));
        if (rank == roots[k])
            for (int i = 0; i < N; i++)
                CHECK(mat_eq(out[i], mat_range(0, size, i)), "Reduce(root %d)[%d]: not M_0 * ... * M_%d", roots[k], i,
                      size - 1);
    }
    memset(out, 0, sizeof out);
    MPI_OK(MPI_Allreduce(in, out, N, mt, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(mat_eq(out[i], mat_range(0, size, i)), "Allreduce[%d]: not the rank-ordered product", i);
    memcpy(out, in, sizeof in);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, out, N, mt, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(mat_eq(out[i], mat_range(0, size, i)), "Allreduce(MPI_IN_PLACE)[%d]: not the rank-ordered product", i);

    memset(out, 0, sizeof out);
    MPI_OK(MPI_Scan(in, out, N, mt, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(mat_eq(out[i], mat_range(0, rank + 1, i)), "Scan[%d]: not M_0 * ... * M_%d", i, rank);
    memcpy(out, in, sizeof in);
    MPI_OK(MPI_Scan(MPI_IN_PLACE, out, N, mt, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(mat_eq(out[i], mat_range(0, rank + 1, i)), "Scan(MPI_IN_PLACE)[%d] wrong", i);

    mat sentinel = {-7, -7, -7, -7};
    for (int i = 0; i < N; i++)
        out[i] = sentinel;
    MPI_OK(MPI_Exscan(in, out, N, mt, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        if (rank == 0)
            CHECK(mat_eq(out[i], sentinel), "Exscan on rank 0 wrote its receive buffer");
        else
            CHECK(mat_eq(out[i], mat_range(0, rank, i)), "Exscan[%d]: not M_0 * ... * M_%d", i, rank - 1);
    }
    memcpy(out, in, sizeof in);
    MPI_OK(MPI_Exscan(MPI_IN_PLACE, out, N, mt, op, MPI_COMM_WORLD));
    if (rank > 0)
        for (int i = 0; i < N; i++)
            CHECK(mat_eq(out[i], mat_range(0, rank, i)), "Exscan(MPI_IN_PLACE)[%d] wrong", i);

    /* Reduce_scatter: rank r gets r + 1 elements. */
    int *counts = malloc(sizeof(int) * (size_t)size), total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r + 1;
        total += r + 1;
    }
    mat *big = malloc(sizeof(mat) * (size_t)total), *mine = malloc(sizeof(mat) * (size_t)total);
    for (int i = 0; i < total; i++)
        big[i] = mat_of(rank, i);
    int first = rank * (rank + 1) / 2;
    MPI_OK(MPI_Reduce_scatter(big, mine, counts, mt, op, MPI_COMM_WORLD));
    for (int i = 0; i < rank + 1; i++)
        CHECK(mat_eq(mine[i], mat_range(0, size, first + i)), "Reduce_scatter[%d]: not the rank-ordered product", i);
    MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, big, counts, mt, op, MPI_COMM_WORLD));
    for (int i = 0; i < rank + 1; i++)
        CHECK(mat_eq(big[i], mat_range(0, size, first + i)), "Reduce_scatter(MPI_IN_PLACE)[%d] wrong", i);
    free(big);
    free(mine);
    free(counts);

    int before = user_calls;
    MPI_OK(MPI_Reduce_local(in, out, N, mt, op));
    CHECK(user_calls == before + 1, "MPI_Reduce_local did not call the user's function once");
    MPI_OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "MPI_Op_free did not set the handle to MPI_OP_NULL");
    MPI_OK(MPI_Type_free(&mt));
}

static void test_holes(int rank, int size)
{
    /* {x, hole, y}: a vector of 2 ints with stride 2, resized to 3 ints. */
    MPI_Datatype v, ht;
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    MPI_OK(MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(holey), &ht));
    MPI_OK(MPI_Type_commit(&ht));
    MPI_Op op;
    MPI_OK(MPI_Op_create(holey_sum, 1, &op));
    holey in[3], out[3];
    for (int i = 0; i < 3; i++) {
        in[i].x = rank + i;
        in[i].y = 10 * rank - i;
        in[i].hole = -1;
        out[i].x = out[i].y = 0;
        out[i].hole = 4242;
    }
    MPI_OK(MPI_Allreduce(in, out, 3, ht, op, MPI_COMM_WORLD));
    int s = size * (size - 1) / 2;
    for (int i = 0; i < 3; i++) {
        CHECK(out[i].x == s + size * i && out[i].y == 10 * s - size * i, "Allreduce(holey)[%d] = {%d, %d}", i,
              out[i].x, out[i].y);
        CHECK(out[i].hole == 4242, "Allreduce(holey) overwrote a hole of the receive buffer (%d)", out[i].hole);
    }
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&ht));
    MPI_OK(MPI_Type_free(&v));
}

/* ---- every predefined operation on every type it is defined for ---- */

typedef struct { short s; int i; } short_int;
typedef struct { long l; int i; } long_int;
typedef struct { float f; int i; } float_int;
typedef struct { double d; int i; } double_int;
typedef struct { long double d; int i; } ldouble_int;

enum { INTEGER = 1, FLOATING = 2, COMPLEX = 4, LOGICAL = 8, BYTE = 16, PAIR = 32 };
static const struct {
    MPI_Datatype t;
    const char *name;
    int size, family;
} types[] = {
    {MPI_SIGNED_CHAR, "SIGNED_CHAR", 1, INTEGER},
    {MPI_UNSIGNED_CHAR, "UNSIGNED_CHAR", 1, INTEGER},
    {MPI_SHORT, "SHORT", 2, INTEGER},
    {MPI_UNSIGNED_SHORT, "UNSIGNED_SHORT", 2, INTEGER},
    {MPI_INT, "INT", 4, INTEGER},
    {MPI_UNSIGNED, "UNSIGNED", 4, INTEGER},
    {MPI_LONG, "LONG", sizeof(long), INTEGER},
    {MPI_UNSIGNED_LONG, "UNSIGNED_LONG", sizeof(long), INTEGER},
    {MPI_LONG_LONG, "LONG_LONG", 8, INTEGER},
    {MPI_UNSIGNED_LONG_LONG, "UNSIGNED_LONG_LONG", 8, INTEGER},
    {MPI_INT8_T, "INT8_T", 1, INTEGER},
    {MPI_INT16_T, "INT16_T", 2, INTEGER},
    {MPI_INT32_T, "INT32_T", 4, INTEGER},
    {MPI_INT64_T, "INT64_T", 8, INTEGER},
    {MPI_UINT8_T, "UINT8_T", 1, INTEGER},
    {MPI_UINT16_T, "UINT16_T", 2, INTEGER},
    {MPI_UINT32_T, "UINT32_T", 4, INTEGER},
    {MPI_UINT64_T, "UINT64_T", 8, INTEGER},
    {MPI_AINT, "AINT", sizeof(MPI_Aint), INTEGER},
    {MPI_OFFSET, "OFFSET", sizeof(MPI_Offset), INTEGER},
    {MPI_COUNT, "COUNT", sizeof(MPI_Count), INTEGER},
    {MPI_FLOAT, "FLOAT", sizeof(float), FLOATING},
    {MPI_DOUBLE, "DOUBLE", sizeof(double), FLOATING},
    {MPI_LONG_DOUBLE, "LONG_DOUBLE", sizeof(long double), FLOATING},
    {MPI_C_BOOL, "C_BOOL", 1, LOGICAL},
    {MPI_C_FLOAT_COMPLEX, "C_FLOAT_COMPLEX", 2 * sizeof(float), COMPLEX},
    {MPI_C_DOUBLE_COMPLEX, "C_DOUBLE_COMPLEX", 2 * sizeof(double), COMPLEX},
    {MPI_C_LONG_DOUBLE_COMPLEX, "C_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), COMPLEX},
    {MPI_BYTE, "BYTE", 1, BYTE},
    {MPI_2INT, "2INT", 2 * sizeof(int), PAIR},
    {MPI_SHORT_INT, "SHORT_INT", sizeof(short_int), PAIR},
    {MPI_LONG_INT, "LONG_INT", sizeof(long_int), PAIR},
    {MPI_FLOAT_INT, "FLOAT_INT", sizeof(float_int), PAIR},
    {MPI_DOUBLE_INT, "DOUBLE_INT", sizeof(double_int), PAIR},
    {MPI_LONG_DOUBLE_INT, "LONG_DOUBLE_INT", sizeof(ldouble_int), PAIR},
};
static const struct {
    MPI_Op op;
    const char *name;
    int families;
} ops[] = {
    {MPI_MAX, "MAX", INTEGER | FLOATING},
    {MPI_MIN, "MIN", INTEGER | FLOATING},
    {MPI_SUM, "SUM", INTEGER | FLOATING | COMPLEX},
    {MPI_PROD, "PROD", INTEGER | FLOATING | COMPLEX},
    {MPI_LAND, "LAND", INTEGER | LOGICAL},
    {MPI_LOR, "LOR", INTEGER | LOGICAL},
    {MPI_LXOR, "LXOR", INTEGER | LOGICAL},
    {MPI_BAND, "BAND", INTEGER | BYTE},
    {MPI_BOR, "BOR", INTEGER | BYTE},
    {MPI_BXOR, "BXOR", INTEGER | BYTE},
    {MPI_MINLOC, "MINLOC", PAIR},
    {MPI_MAXLOC, "MAXLOC", PAIR},
};

#define COUNT 3
#define MAXSZ 64

/* Rank r's element i of type k: small values, exact in every type. */
static void fill(int k, int r, unsigned char *buf)
{
    for (int i = 0; i < COUNT; i++) {
        unsigned char *e = buf + (size_t)i * (size_t)types[k].size;
        memset(e, 0, (size_t)types[k].size);
        int v = (r * 3 + i * 5) % 4 + 1 - (i == 2 && r % 2);   /* 0..4 */
        switch (types[k].t) {
        case MPI_FLOAT: *(float *)e = (float)v; break;
        case MPI_DOUBLE: *(double *)e = v; break;
        case MPI_LONG_DOUBLE: *(long double *)e = v; break;
        case MPI_C_FLOAT_COMPLEX: ((float *)e)[0] = (float)v, ((float *)e)[1] = (float)(v % 2); break;
        case MPI_C_DOUBLE_COMPLEX: ((double *)e)[0] = v, ((double *)e)[1] = v % 2; break;
        case MPI_C_LONG_DOUBLE_COMPLEX: ((long double *)e)[0] = v, ((long double *)e)[1] = v % 2; break;
        case MPI_C_BOOL: *(_Bool *)e = v % 2; break;
        case MPI_2INT: ((int *)e)[0] = v, ((int *)e)[1] = r; break;
        case MPI_SHORT_INT: ((short_int *)e)->s = (short)v, ((short_int *)e)->i = r; break;
        case MPI_LONG_INT: ((long_int *)e)->l = v, ((long_int *)e)->i = r; break;
        case MPI_FLOAT_INT: ((float_int *)e)->f = (float)v, ((float_int *)e)->i = r; break;
        case MPI_DOUBLE_INT: ((double_int *)e)->d = v, ((double_int *)e)->i = r; break;
        case MPI_LONG_DOUBLE_INT:
            ((ldouble_int *)e)->d = v, ((ldouble_int *)e)->i = r;
            break;
        default: memcpy(e, &(long long){v}, (size_t)types[k].size); break;   /* little-endian integers */
        }
    }
}

/* Compares the meaningful bytes (long double has padding). */
static int same(int k, const unsigned char *a, const unsigned char *b)
{
    for (int i = 0; i < COUNT; i++) {
        const unsigned char *x = a + (size_t)i * (size_t)types[k].size, *y = b + (size_t)i * (size_t)types[k].size;
        switch (types[k].t) {
        case MPI_LONG_DOUBLE: if (*(const long double *)x != *(const long double *)y) return 0; break;
        case MPI_C_LONG_DOUBLE_COMPLEX:
            if (((const long double *)x)[0] != ((const long double *)y)[0] ||
                ((const long double *)x)[1] != ((const long double *)y)[1])
                return 0;
            break;
        case MPI_LONG_DOUBLE_INT:
            if (((const ldouble_int *)x)->d != ((const ldouble_int *)y)->d ||
                ((const ldouble_int *)x)->i != ((const ldouble_int *)y)->i)
                return 0;
            break;
        case MPI_SHORT_INT:
            if (((const short_int *)x)->s != ((const short_int *)y)->s ||
                ((const short_int *)x)->i != ((const short_int *)y)->i)
                return 0;
            break;
        case MPI_LONG_INT: case MPI_FLOAT_INT: case MPI_DOUBLE_INT:
            /* value then int at its aligned place: compare as the struct's two members */
            if (memcmp(x, y, types[k].t == MPI_FLOAT_INT ? 8 : 12) != 0)
                return 0;
            break;
        default: if (memcmp(x, y, (size_t)types[k].size) != 0) return 0;
        }
    }
    return 1;
}

static void test_predefined(int rank, int size)
{
    unsigned char mine[COUNT * MAXSZ], got[COUNT * MAXSZ], want[COUNT * MAXSZ], other[COUNT * MAXSZ];
    int tried = 0;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            if (!(ops[o].families & types[k].family))
                continue;
            tried++;
            fill((int)k, rank, mine);
            memset(got, 0, sizeof got);
            MPI_OK(MPI_Allreduce(mine, got, COUNT, types[k].t, ops[o].op, MPI_COMM_WORLD));
            /* want = c_0 op (c_1 op (... c_{p-1})) */
            fill((int)k, size - 1, want);
            for (int r = size - 2; r >= 0; r--) {
                fill((int)k, r, other);
                MPI_OK(MPI_Reduce_local(other, want, COUNT, types[k].t, ops[o].op));
            }
            CHECK(same((int)k, got, want), "Allreduce(MPI_%s, MPI_%s) differs from the fold of MPI_Reduce_local",
                  ops[o].name, types[k].name);
        }
    CHECK(tried > 100, "only %d (type, op) pairs tried", tried);
}

static void test_blocks(int rank, int size)
{
    /* Reduce_scatter_block with MPI_SUM, and in place. */
    int *in = malloc(sizeof(int) * 2 * (size_t)size), out[2];
    for (int i = 0; i < 2 * size; i++)
        in[i] = rank * 100 + i;
    MPI_OK(MPI_Reduce_scatter_block(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    int s = 100 * size * (size - 1) / 2;
    for (int i = 0; i < 2; i++)
        CHECK(out[i] == s + size * (2 * rank + i), "Reduce_scatter_block[%d] = %d, expected %d", i, out[i],
              s + size * (2 * rank + i));
    MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, in, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 2; i++)
        CHECK(in[i] == s + size * (2 * rank + i), "Reduce_scatter_block(MPI_IN_PLACE)[%d] = %d", i, in[i]);
    free(in);

    /* Alltoallw: to rank r, r + 1 ints sent as MPI_INT, received as one
     * contiguous(r + 1, MPI_INT) from each peer; byte displacements. */
    int *scounts = malloc(sizeof(int) * (size_t)size), *sdispls = malloc(sizeof(int) * (size_t)size);
    int *rcounts = malloc(sizeof(int) * (size_t)size), *rdispls = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *stypes = malloc(sizeof(MPI_Datatype) * (size_t)size), *rtypes = malloc(sizeof(MPI_Datatype) * (size_t)size);
    int stotal = 0;
    for (int r = 0; r < size; r++) {
        scounts[r] = r + 1;
        sdispls[r] = stotal * (int)sizeof(int);
        stypes[r] = MPI_INT;
        stotal += r + 1;
        rcounts[r] = 1;
        rdispls[r] = r * (rank + 1) * (int)sizeof(int);
    }
    MPI_Datatype block;
    MPI_OK(MPI_Type_contiguous(rank + 1, MPI_INT, &block));
    MPI_OK(MPI_Type_commit(&block));
    for (int r = 0; r < size; r++)
        rtypes[r] = block;
    int *sbuf = malloc(sizeof(int) * (size_t)stotal), *rbuf = malloc(sizeof(int) * (size_t)(size * (rank + 1)));
    for (int r = 0, at = 0; r < size; r++)
        for (int j = 0; j <= r; j++)
            sbuf[at++] = rank * 1000 + r * 10 + j;
    MPI_OK(MPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int j = 0; j <= rank; j++)
            CHECK(rbuf[r * (rank + 1) + j] == r * 1000 + rank * 10 + j, "Alltoallw from %d [%d] = %d", r, j,
                  rbuf[r * (rank + 1) + j]);
    /* In place (every rank's blocks alike: two ints as one contiguous type). */
    MPI_Datatype pair;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MPI_OK(MPI_Type_commit(&pair));
    int *pbuf = malloc(sizeof(int) * (size_t)(2 * size));
    for (int r = 0; r < size; r++) {
        rtypes[r] = pair;
        rdispls[r] = r * 2 * (int)sizeof(int);
        pbuf[2 * r] = rank * 1000 + r * 10;
        pbuf[2 * r + 1] = rank * 1000 + r * 10 + 1;
    }
    MPI_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, pbuf, rcounts, rdispls, rtypes, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int j = 0; j < 2; j++)
            CHECK(pbuf[2 * r + j] == r * 1000 + rank * 10 + j, "Alltoallw(MPI_IN_PLACE) from %d [%d] = %d", r, j,
                  pbuf[2 * r + j]);
    MPI_OK(MPI_Type_free(&pair));
    free(pbuf);
    MPI_OK(MPI_Type_free(&block));
    free(sbuf), free(rbuf), free(scounts), free(sdispls), free(rcounts), free(rdispls), free(stypes), free(rtypes);
}

static void test_errors(void)
{
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Op sum = MPI_SUM;
    int rc = MPI_Op_free(&sum), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_Op_free(MPI_SUM) gave class %d, expected MPI_ERR_OP", cls);
    int a = 1, b = 0;
    rc = MPI_Scan(&a, &b, 1, MPI_INT, MPI_MINLOC, c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_Scan(MPI_INT, MPI_MINLOC) gave class %d, expected MPI_ERR_OP", cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, "MPI_MINLOC") != NULL, "the message does not name the operation: \"%s\"", msg);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    test_noncommutative(mtest_rank, mtest_size);
    test_holes(mtest_rank, mtest_size);
    test_predefined(mtest_rank, mtest_size);
    test_blocks(mtest_rank, mtest_size);
    test_errors();
    return mtest_finish();
}
