/* SPDX-License-Identifier: BSD-3-Clause */
/* datatypes: sizes of the predefined types, the type constructors with
 * their extents, derived types on the wire (matrix column <-> contiguous,
 * an array of structs), addresses, names, Pack/Unpack, Get_elements. Any
 * number of ranks (each sends to its right neighbour). */
#include "mtest.h"
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

static int right, left;

static void check_size_extent(MPI_Datatype t, const char *name, int size, MPI_Aint lb, MPI_Aint extent)
{
    int s = -1;
    MPI_Aint l = -99, e = -99;
    MPI_OK(MPI_Type_size(t, &s));
    MPI_OK(MPI_Type_get_extent(t, &l, &e));
    CHECK(s == size, "%s: Type_size %d, expected %d", name, s, size);
    CHECK(l == lb && e == extent, "%s: extent (lb %ld, extent %ld), expected (%ld, %ld)", name, (long)l, (long)e,
          (long)lb, (long)extent);
}

static void check_true_extent(MPI_Datatype t, const char *name, MPI_Aint tlb, MPI_Aint textent)
{
    MPI_Aint l = -99, e = -99;
    MPI_OK(MPI_Type_get_true_extent(t, &l, &e));
    CHECK(l == tlb && e == textent, "%s: true extent (lb %ld, extent %ld), expected (%ld, %ld)", name, (long)l,
          (long)e, (long)tlb, (long)textent);
}

#define PREDEF(t, ctype) {t, #t, (int)sizeof(ctype)}
static void predefined(void)
{
    struct {
        MPI_Datatype t;
        const char *name;
        int size;
    } types[] = {
        PREDEF(MPI_CHAR, char),
        PREDEF(MPI_SIGNED_CHAR, signed char),
        PREDEF(MPI_UNSIGNED_CHAR, unsigned char),
        PREDEF(MPI_BYTE, unsigned char),
        PREDEF(MPI_WCHAR, wchar_t),
        PREDEF(MPI_SHORT, short),
        PREDEF(MPI_UNSIGNED_SHORT, unsigned short),
        PREDEF(MPI_INT, int),
        PREDEF(MPI_UNSIGNED, unsigned),
        PREDEF(MPI_LONG, long),
        PREDEF(MPI_UNSIGNED_LONG, unsigned long),
        PREDEF(MPI_LONG_LONG_INT, long long),
        PREDEF(MPI_LONG_LONG, long long),
        PREDEF(MPI_UNSIGNED_LONG_LONG, unsigned long long),
        PREDEF(MPI_FLOAT, float),
        PREDEF(MPI_DOUBLE, double),
        PREDEF(MPI_LONG_DOUBLE, long double),
        PREDEF(MPI_INT8_T, int8_t),
        PREDEF(MPI_INT16_T, int16_t),
        PREDEF(MPI_INT32_T, int32_t),
        PREDEF(MPI_INT64_T, int64_t),
        PREDEF(MPI_UINT8_T, uint8_t),
        PREDEF(MPI_UINT16_T, uint16_t),
        PREDEF(MPI_UINT32_T, uint32_t),
        PREDEF(MPI_UINT64_T, uint64_t),
        PREDEF(MPI_C_BOOL, _Bool),
        PREDEF(MPI_C_FLOAT_COMPLEX, float _Complex),
        PREDEF(MPI_C_COMPLEX, float _Complex),
        PREDEF(MPI_C_DOUBLE_COMPLEX, double _Complex),
        PREDEF(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
        PREDEF(MPI_AINT, MPI_Aint),
        PREDEF(MPI_OFFSET, MPI_Offset),
        PREDEF(MPI_COUNT, MPI_Count),
        PREDEF(MPI_PACKED, char),
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        check_size_extent(types[i].t, types[i].name, types[i].size, 0, types[i].size);

    /* The pair types: size is the sum of the parts, extent the C struct's
     * (the standard defines them as such structs). */
    struct fi { float v; int i; };
    struct di { double v; int i; };
    struct li { long v; int i; };
    struct ii { int v; int i; };
    struct si { short v; int i; };
    struct ldi { long double v; int i; };
    check_size_extent(MPI_FLOAT_INT, "MPI_FLOAT_INT", (int)(sizeof(float) + sizeof(int)), 0, sizeof(struct fi));
    check_size_extent(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", (int)(sizeof(double) + sizeof(int)), 0, sizeof(struct di));
    check_size_extent(MPI_LONG_INT, "MPI_LONG_INT", (int)(sizeof(long) + sizeof(int)), 0, sizeof(struct li));
    check_size_extent(MPI_2INT, "MPI_2INT", 2 * (int)sizeof(int), 0, sizeof(struct ii));
    check_size_extent(MPI_SHORT_INT, "MPI_SHORT_INT", (int)(sizeof(short) + sizeof(int)), 0, sizeof(struct si));
    check_size_extent(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", (int)(sizeof(long double) + sizeof(int)), 0,
                      sizeof(struct ldi));

    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "Type_get_name(MPI_INT): \"%s\" (len %d), expected \"MPI_INT\"",
          name, len);
    MPI_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0, "Type_get_name(MPI_DOUBLE): \"%s\"", name);
}

static void constructors(void)
{
    const MPI_Aint ISZ = sizeof(int);
    MPI_Datatype t;

    MPI_OK(MPI_Type_contiguous(5, MPI_INT, &t));
    check_size_extent(t, "contiguous(5,INT)", 5 * (int)ISZ, 0, 5 * ISZ);
    MPI_OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "Type_free did not set the handle to MPI_DATATYPE_NULL");

    MPI_OK(MPI_Type_contiguous(0, MPI_INT, &t));
    check_size_extent(t, "contiguous(0,INT)", 0, 0, 0);
    MPI_OK(MPI_Type_free(&t));

    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    check_size_extent(t, "vector(3,2,4,INT)", 6 * (int)ISZ, 0, 10 * ISZ);
    check_true_extent(t, "vector(3,2,4,INT)", 0, 10 * ISZ);
    MPI_OK(MPI_Type_free(&t));

    MPI_OK(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t));
    check_size_extent(t, "hvector(3,2,20B,INT)", 6 * (int)ISZ, 0, 40 + 2 * ISZ);
    MPI_OK(MPI_Type_free(&t));

    int bl[3] = {2, 1, 3}, di[3] = {0, 5, 8};
    MPI_OK(MPI_Type_indexed(3, bl, di, MPI_INT, &t));
    check_size_extent(t, "indexed({2,1,3},{0,5,8},INT)", 6 * (int)ISZ, 0, 11 * ISZ);
    MPI_OK(MPI_Type_free(&t));

    MPI_Aint hd[3] = {4, 40, 24};
    MPI_OK(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &t));
    /* blocks [4,12) [40,44) [24,36): lb 4, ub 44 */
    check_size_extent(t, "hindexed({2,1,3},{4,40,24}B,INT)", 6 * (int)ISZ, 4, 40);
    check_true_extent(t, "hindexed", 4, 40);
    MPI_OK(MPI_Type_free(&t));

    int bd[3] = {1, 4, 9};
    MPI_OK(MPI_Type_create_indexed_block(3, 2, bd, MPI_INT, &t));
    check_size_extent(t, "indexed_block(3,2,{1,4,9},INT)", 6 * (int)ISZ, ISZ, 10 * ISZ);
    check_true_extent(t, "indexed_block", ISZ, 10 * ISZ);
    MPI_OK(MPI_Type_free(&t));

    MPI_Datatype r;
    MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 12, &r));
    check_size_extent(r, "resized(INT,-4,12)", (int)ISZ, -4, 12);
    check_true_extent(r, "resized(INT,-4,12)", 0, ISZ);
    MPI_Datatype d;
    MPI_OK(MPI_Type_dup(r, &d));
    check_size_extent(d, "dup(resized)", (int)ISZ, -4, 12);
    check_true_extent(d, "dup(resized)", 0, ISZ);
    /* A contiguous of the resized type steps by its extent. */
    MPI_OK(MPI_Type_contiguous(3, r, &t));
    check_size_extent(t, "contiguous(3,resized)", 3 * (int)ISZ, -4, 36);
    check_true_extent(t, "contiguous(3,resized)", 0, 24 + ISZ);
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_free(&d));
    MPI_OK(MPI_Type_free(&r));

    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &t));
    MPI_OK(MPI_Type_set_name(t, "weft column"));
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "weft column") == 0 && len == 11, "Type_get_name after set: \"%s\" (%d)", name, len);
    MPI_OK(MPI_Type_free(&t));
}

/* An R x C matrix of doubles; column j as vector(R,1,C). */
#define R 9
#define C 7
static double mval(int src, int i, int j) { return src * 1000.0 + i * 10.0 + j + 0.25; }

static void columns(void)
{
    double a[R][C], col[R], b[R][C];
    MPI_Datatype column;
    MPI_OK(MPI_Type_vector(R, 1, C, MPI_DOUBLE, &column));
    MPI_OK(MPI_Type_commit(&column));
    check_size_extent(column, "column", R * (int)sizeof(double), 0, (MPI_Aint)(((R - 1) * C + 1) * sizeof(double)));
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            a[i][j] = mval(mtest_rank, i, j);

    /* Column 3 out as a vector, in as R contiguous doubles. */
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&a[0][3], 1, column, right, 1, col, R, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &st));
    for (int i = 0; i < R; i++)
        CHECK(col[i] == mval(left, i, 3), "column->contiguous: element %d is %g, expected %g", i, col[i],
              mval(left, i, 3));
    int count = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == R, "column->contiguous: Get_count(MPI_DOUBLE) %d, expected %d", count, R);

    /* And back: R contiguous doubles into column 5 of b. */
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            b[i][j] = -1.0;
    for (int i = 0; i < R; i++)
        col[i] = mval(mtest_rank, i, 5);
    MPI_OK(MPI_Sendrecv(col, R, MPI_DOUBLE, right, 2, &b[0][5], 1, column, left, 2, MPI_COMM_WORLD, &st));
    int bad = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            double want = j == 5 ? mval(left, i, 5) : -1.0;
            if (b[i][j] != want && !bad++)
                CHECK(0, "contiguous->column: b[%d][%d] is %g, expected %g", i, j, b[i][j], want);
        }
    MPI_Get_count(&st, column, &count);
    CHECK(count == 1, "contiguous->column: Get_count(column) %d, expected 1", count);
    MPI_Get_elements(&st, column, &count);
    CHECK(count == R, "contiguous->column: Get_elements(column) %d, expected %d", count, R);

    /* Two whole columns in one send: count 2 of a resized column type. */
    MPI_Datatype col1;
    MPI_OK(MPI_Type_create_resized(column, 0, sizeof(double), &col1));
    MPI_OK(MPI_Type_commit(&col1));
    double two[2][R];
    MPI_OK(MPI_Sendrecv(&a[0][1], 2, col1, right, 3, two, 2 * R, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &st));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < R; i++)
            CHECK(two[k][i] == mval(left, i, 1 + k), "2 resized columns: [%d][%d] is %g, expected %g", k, i, two[k][i],
                  mval(left, i, 1 + k));
    MPI_OK(MPI_Type_free(&col1));
    MPI_OK(MPI_Type_free(&column));
}

struct rec {
    int i;
    double d;
    char c[3];
};

static void fill_rec(struct rec *r, int n, int src)
{
    for (int k = 0; k < n; k++) {
        r[k].i = src * 100 + k;
        r[k].d = src + k * 0.5;
        r[k].c[0] = (char)('a' + k % 26);
        r[k].c[1] = (char)('A' + src % 26);
        r[k].c[2] = (char)k;
    }
}

static void structs(void)
{
    enum { N = 50 };
    struct rec s[N], r[N];
    memset(s, 0, sizeof s);
    MPI_Aint base, addr[3];
    MPI_OK(MPI_Get_address(&s[0], &base));
    MPI_OK(MPI_Get_address(&s[0].i, &addr[0]));
    MPI_OK(MPI_Get_address(&s[0].d, &addr[1]));
    MPI_OK(MPI_Get_address(&s[0].c[0], &addr[2]));
    MPI_Aint disp[3];
    for (int k = 0; k < 3; k++)
        disp[k] = MPI_Aint_diff(addr[k], base);
    CHECK(disp[0] == (MPI_Aint)offsetof(struct rec, i) && disp[1] == (MPI_Aint)offsetof(struct rec, d) &&
              disp[2] == (MPI_Aint)offsetof(struct rec, c),
          "Aint_diff of member addresses: %ld %ld %ld, expected offsetof %zu %zu %zu", (long)disp[0], (long)disp[1],
          (long)disp[2], offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, c));
    CHECK(MPI_Aint_add(base, disp[1]) == addr[1], "Aint_add(base, disp) != address of the member");
    MPI_Aint next;
    MPI_OK(MPI_Get_address(&s[1], &next));
    CHECK(MPI_Aint_diff(next, base) == (MPI_Aint)sizeof(struct rec), "Aint_diff(&s[1], &s[0]) %ld, expected %zu",
          (long)MPI_Aint_diff(next, base), sizeof(struct rec));

    int bl[3] = {1, 1, 3};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st0, st1;
    MPI_OK(MPI_Type_create_struct(3, bl, disp, types, &st0));
    int size = -1;
    MPI_OK(MPI_Type_size(st0, &size));
    CHECK(size == (int)(sizeof(int) + sizeof(double) + 3), "struct type size %d, expected %zu", size,
          sizeof(int) + sizeof(double) + 3);
    check_true_extent(st0, "struct{int;double;char[3]}", 0, (MPI_Aint)(offsetof(struct rec, c) + 3));
    /* The untouched extent's padding is the implementation's choice; resize
     * to the C struct's size for arrays. */
    MPI_OK(MPI_Type_create_resized(st0, 0, sizeof(struct rec), &st1));
    MPI_OK(MPI_Type_commit(&st1));
    check_size_extent(st1, "resized struct", size, 0, sizeof(struct rec));

    fill_rec(s, N, mtest_rank);
    memset(r, 0, sizeof r);
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(s, N, st1, right, 4, r, N, st1, left, 4, MPI_COMM_WORLD, &st));
    struct rec want[N];
    fill_rec(want, N, left);
    int bad = 0;
    for (int k = 0; k < N; k++)
        if ((r[k].i != want[k].i || r[k].d != want[k].d || memcmp(r[k].c, want[k].c, 3) != 0) && !bad++)
            CHECK(0, "struct array element %d: {%d, %g, %d %d %d}, expected {%d, %g, %d %d %d}", k, r[k].i, r[k].d,
                  r[k].c[0], r[k].c[1], r[k].c[2], want[k].i, want[k].d, want[k].c[0], want[k].c[1], want[k].c[2]);
    int count = -1, elems = -1;
    MPI_Get_count(&st, st1, &count);
    MPI_Get_elements(&st, st1, &elems);
    CHECK(count == N, "struct array: Get_count %d, expected %d", count, N);
    CHECK(elems == N * 5, "struct array: Get_elements %d, expected %d", elems, N * 5);

    /* Partial: 2.4 structs' worth arrives as 2 whole structs plus the int
     * and the double of the third: Get_count undefined, Get_elements 12. */
    int partial = 2 * size + (int)(sizeof(int) + sizeof(double));
    unsigned char raw[256];
    MPI_OK(MPI_Pack(s, 3, st1, raw, (int)sizeof raw, &(int){0}, MPI_COMM_WORLD));
    MPI_OK(MPI_Sendrecv(raw, partial, MPI_BYTE, right, 5, r, N, st1, left, 5, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, st1, &count);
    MPI_Get_elements(&st, st1, &elems);
    CHECK(count == MPI_UNDEFINED, "2 structs and a part: Get_count %d, expected MPI_UNDEFINED", count);
    CHECK(elems == 2 * 5 + 2, "2 structs and a part: Get_elements %d, expected 12", elems);

    /* 5 ints received with a contiguous(2, INT) type. */
    MPI_Datatype pair;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MPI_OK(MPI_Type_commit(&pair));
    int five[5] = {1, 2, 3, 4, 5}, got[6];
    MPI_OK(MPI_Sendrecv(five, 5, MPI_INT, right, 6, got, 3, pair, left, 6, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, pair, &count);
    MPI_Get_elements(&st, pair, &elems);
    CHECK(count == MPI_UNDEFINED, "5 ints as pairs: Get_count %d, expected MPI_UNDEFINED", count);
    CHECK(elems == 5, "5 ints as pairs: Get_elements %d, expected 5", elems);
    MPI_OK(MPI_Type_free(&pair));
    MPI_OK(MPI_Type_free(&st0));
    MPI_OK(MPI_Type_free(&st1));
}

static void pack_unpack(void)
{
    int n = 17, ints[17], ints2[17];
    double m[R][C], m2[R][C];
    MPI_Datatype column0, column;
    /* Resized to one double, so that count 2 means two adjacent columns. */
    MPI_OK(MPI_Type_vector(R, 1, C, MPI_DOUBLE, &column0));
    MPI_OK(MPI_Type_create_resized(column0, 0, sizeof(double), &column));
    MPI_OK(MPI_Type_commit(&column));
    MPI_OK(MPI_Type_free(&column0));
    for (int i = 0; i < n; i++)
        ints[i] = i * i - 7 + mtest_rank;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            m[i][j] = mval(mtest_rank, i, j);
            m2[i][j] = 0;
        }
    int s1, s2, s3;
    MPI_OK(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s1));
    MPI_OK(MPI_Pack_size(n, MPI_INT, MPI_COMM_WORLD, &s2));
    MPI_OK(MPI_Pack_size(2, column, MPI_COMM_WORLD, &s3));
    CHECK(s2 >= n * (int)sizeof(int), "Pack_size(17 INT) %d, expected >= %zu", s2, n * sizeof(int));
    CHECK(s3 >= 2 * R * (int)sizeof(double), "Pack_size(2 columns) %d, expected >= %zu", s3, 2 * R * sizeof(double));
    int total = s1 + s2 + s3;
    char *buf = malloc((size_t)total);
    int pos = 0;
    MPI_OK(MPI_Pack(&n, 1, MPI_INT, buf, total, &pos, MPI_COMM_WORLD));
    int p1 = pos;
    MPI_OK(MPI_Pack(ints, n, MPI_INT, buf, total, &pos, MPI_COMM_WORLD));
    MPI_OK(MPI_Pack(&m[0][2], 2, column, buf, total, &pos, MPI_COMM_WORLD));
    CHECK(p1 > 0 && p1 <= s1 && pos <= total, "Pack positions %d then %d of %d", p1, pos, total);
    int packed = pos;

    /* Local round trip. */
    int n2 = -1;
    pos = 0;
    MPI_OK(MPI_Unpack(buf, packed, &pos, &n2, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Unpack(buf, packed, &pos, ints2, n2 == n ? n : 0, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Unpack(buf, packed, &pos, &m2[0][2], 2, column, MPI_COMM_WORLD));
    CHECK(pos == packed, "Unpack consumed %d of %d packed bytes", pos, packed);
    CHECK(n2 == n && memcmp(ints, ints2, sizeof ints) == 0, "Pack/Unpack of ints differ");
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            double want = (j == 2 || j == 3) ? m[i][j] : 0.0;
            CHECK(m2[i][j] == want, "Unpack of 2 columns: [%d][%d] %g, expected %g", i, j, m2[i][j], want);
        }

    /* On the wire as MPI_PACKED, unpacked by the receiver. */
    char *rbuf = malloc((size_t)total);
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(buf, packed, MPI_PACKED, right, 7, rbuf, total, MPI_PACKED, left, 7, MPI_COMM_WORLD, &st));
    int got = -1;
    MPI_Get_count(&st, MPI_PACKED, &got);
    CHECK(got == packed, "MPI_PACKED message: Get_count %d, expected %d", got, packed);
    pos = 0;
    MPI_OK(MPI_Unpack(rbuf, got, &pos, &n2, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Unpack(rbuf, got, &pos, ints2, n, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        CHECK(ints2[i] == i * i - 7 + left, "MPI_PACKED ints[%d] %d, expected %d", i, ints2[i], i * i - 7 + left);
    /* And a packed message received as the typed data directly. */
    int direct[1 + 17];
    MPI_OK(MPI_Sendrecv(buf, p1 + n * (int)sizeof(int), MPI_PACKED, right, 8, direct, 1 + n, MPI_INT, left, 8,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(direct[0] == n && direct[1] == -7 + left, "packed ints received as MPI_INT: %d %d, expected %d %d",
          direct[0], direct[1], n, -7 + left);
    free(buf);
    free(rbuf);
    MPI_OK(MPI_Type_free(&column));
}

/* A derived type in a nonblocking send with many elements (large message). */
static void big_vector(void)
{
    int n = 100000;
    int *src = malloc(2 * (size_t)n * sizeof(int)), *dst = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < 2 * n; i++)
        src[i] = i % 2 ? -1 : mtest_rank * 7 + i / 2;
    MPI_Datatype ev;
    MPI_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &ev));
    MPI_OK(MPI_Type_commit(&ev));
    MPI_Request req[2];
    MPI_OK(MPI_Irecv(dst, n, MPI_INT, left, 9, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Isend(src, 1, ev, right, 9, MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (dst[i] != left * 7 + i)
            bad = i;
    CHECK(bad < 0, "strided 100000-int vector: element %d is %d, expected %d", bad, bad < 0 ? 0 : dst[bad],
          left * 7 + bad);
    MPI_OK(MPI_Type_free(&ev));
    free(src);
    free(dst);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    right = (mtest_rank + 1) % mtest_size;
    left = (mtest_rank + mtest_size - 1) % mtest_size;
    predefined();
    constructors();
    columns();
    structs();
    pack_unpack();
    big_vector();
    return mtest_finish();
}
