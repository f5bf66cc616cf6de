/* SPDX-License-Identifier: BSD-3-Clause */
/* env_info: the environment calls of MPI-3.1 that programs and mpi4py use.
 * - MPI_Info_*: set/get/valuelen/get_string/nkeys/nthkey (insertion order),
 *   overwrite, delete, dup (independent copy), free; key and value limits
 *   and a missing key give MPI_ERR_INFO_KEY / _VALUE / _NOKEY; MPI_INFO_ENV
 *   holds "command" and "maxprocs" and cannot be freed.
 * - MPI_Comm_set_info / get_info keep the hints.
 * - MPI_Alloc_mem / Free_mem; MPI_Get_library_version names weft.
 * - MPI-1 names (Errhandler_set/get, Address, Type_extent/lb/ub, Type_hvector,
 *   Type_hindexed, Type_struct) agree with their MPI-2 replacements;
 *   MPI_Pcontrol; MPI_Type_match_size; MPI_Type_size_x.
 * - MPI_Type_get_envelope / get_contents for vector, struct (with a freed
 *   member), subarray and a predefined type.
 * - MPI_Type_create_subarray (C and Fortran order) sent to the next rank and
 *   received as contiguous ints, checked against the serial extraction.
 * - MPI_X_c2f / f2c: converted handles still work, null handles stay null,
 *   a status keeps its fields through MPI_Status_c2f / f2c.
 * Any number of ranks. */
#include <string.h>

#include "mtest.h"

static int cls_of(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static void info_tests(void)
{
    MPI_Info info, dup;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "zeta", "1"));
    MPI_OK(MPI_Info_set(info, "alpha", "two"));
    MPI_OK(MPI_Info_set(info, "mid", "three3"));
    MPI_OK(MPI_Info_set(info, "zeta", "one"));   /* overwrite keeps its place */
    int n = -1;
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 3, "nkeys %d, expected 3", n);
    static const char *order[] = {"zeta", "alpha", "mid"};
    for (int i = 0; i < 3 && n == 3; i++) {
        char key[MPI_MAX_INFO_KEY];
        MPI_OK(MPI_Info_get_nthkey(info, i, key));
        CHECK(strcmp(key, order[i]) == 0, "nthkey %d is \"%s\", expected \"%s\"", i, key, order[i]);
    }
    char val[MPI_MAX_INFO_VAL];
    int flag = 0, len = -1;
    MPI_OK(MPI_Info_get(info, "zeta", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strcmp(val, "one") == 0, "get zeta: flag %d value \"%s\", expected \"one\"", flag, val);
    MPI_OK(MPI_Info_get(info, "mid", 3, val, &flag));
    CHECK(flag && strcmp(val, "thr") == 0, "get with valuelen 3: \"%s\", expected \"thr\"", val);
    MPI_OK(MPI_Info_get_valuelen(info, "mid", &len, &flag));
    CHECK(flag && len == 6, "valuelen of mid: flag %d len %d, expected 6", flag, len);
    MPI_OK(MPI_Info_get(info, "absent", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(!flag, "get of an absent key set flag");
    int buflen = 4;
    MPI_OK(MPI_Info_get_string(info, "mid", &buflen, val, &flag));
    CHECK(flag && buflen == 7 && strcmp(val, "thr") == 0,
          "get_string with buflen 4: flag %d buflen %d value \"%s\", expected 1, 7, \"thr\"", flag, buflen, val);
    buflen = 0;
    MPI_OK(MPI_Info_get_string(info, "alpha", &buflen, NULL, &flag));
    CHECK(flag && buflen == 4, "get_string with buflen 0: buflen %d, expected 4", buflen);

    MPI_OK(MPI_Info_dup(info, &dup));
    MPI_OK(MPI_Info_delete(info, "alpha"));
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "nkeys after delete %d, expected 2", n);
    MPI_OK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 3, "the dup has %d keys after the original lost one, expected 3", n);
    MPI_OK(MPI_Info_get(dup, "alpha", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strcmp(val, "two") == 0, "dup's alpha: flag %d \"%s\"", flag, val);

    /* Errors (MPI_ERRORS_RETURN is set by the caller). */
    char longkey[MPI_MAX_INFO_KEY + 10];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    CHECK(cls_of(MPI_Info_set(info, longkey, "v")) == MPI_ERR_INFO_KEY, "a key of %d chars: not MPI_ERR_INFO_KEY",
          (int)strlen(longkey));
    CHECK(cls_of(MPI_Info_set(info, "", "v")) == MPI_ERR_INFO_KEY, "an empty key: not MPI_ERR_INFO_KEY");
    CHECK(cls_of(MPI_Info_set(info, "k", "")) == MPI_ERR_INFO_VALUE, "an empty value: not MPI_ERR_INFO_VALUE");
    CHECK(cls_of(MPI_Info_delete(info, "alpha")) == MPI_ERR_INFO_NOKEY,
          "deleting an absent key: not MPI_ERR_INFO_NOKEY");
    CHECK(cls_of(MPI_Info_get_nthkey(info, 5, val)) == MPI_ERR_ARG, "nthkey past the end: not MPI_ERR_ARG");

    /* Communicator hints. */
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_OK(MPI_Comm_set_info(c, dup));
    MPI_Info used;
    MPI_OK(MPI_Comm_get_info(c, &used));
    MPI_OK(MPI_Info_get(used, "mid", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strcmp(val, "three3") == 0, "Comm_get_info: mid flag %d \"%s\"", flag, val);
    MPI_OK(MPI_Info_free(&used));
    MPI_Comm_free(&c);

    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Info_free(&dup));
    CHECK(info == MPI_INFO_NULL && dup == MPI_INFO_NULL, "Info_free did not set MPI_INFO_NULL");
    CHECK(cls_of(MPI_Info_get_nkeys(info, &n)) == MPI_ERR_INFO, "nkeys of MPI_INFO_NULL: not MPI_ERR_INFO");

    /* MPI_INFO_ENV. */
    MPI_OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && atoi(val) == mtest_size, "MPI_INFO_ENV maxprocs: flag %d \"%s\", expected %d", flag, val,
          mtest_size);
    MPI_OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strstr(val, "env_info") != NULL, "MPI_INFO_ENV command: flag %d \"%s\"", flag, val);
    MPI_Info env = MPI_INFO_ENV;
    CHECK(cls_of(MPI_Info_free(&env)) == MPI_ERR_INFO, "freeing MPI_INFO_ENV: not MPI_ERR_INFO");
}

static void compat_tests(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_OK(MPI_Errhandler_get(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "Errhandler_get: %d, expected MPI_ERRORS_RETURN", eh);
    MPI_OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    double d[4];
    MPI_Aint a0 = 0, a1 = 0, g1 = 0;
    MPI_OK(MPI_Address(&d[0], &a0));
    MPI_OK(MPI_Address(&d[3], &a1));
    MPI_Get_address(&d[3], &g1);
    CHECK(a1 - a0 == 3 * (MPI_Aint)sizeof(double) && a1 == g1, "MPI_Address differences %ld", (long)(a1 - a0));

    MPI_Datatype hv, hi, st;
    MPI_OK(MPI_Type_hvector(3, 2, 16, MPI_INT, &hv));
    int bl[2] = {1, 2};
    MPI_Aint disp[2] = {4, 24};
    MPI_OK(MPI_Type_hindexed(2, bl, disp, MPI_INT, &hi));
    MPI_Datatype types[2] = {MPI_CHAR, MPI_DOUBLE};
    MPI_Aint sdisp[2] = {0, 8};
    MPI_OK(MPI_Type_struct(2, bl, sdisp, types, &st));
    MPI_Aint ext = -1, lb = -1, ub = -1, glb, gext;
    MPI_OK(MPI_Type_extent(hv, &ext));
    MPI_Type_get_extent(hv, &glb, &gext);
    CHECK(ext == gext && ext == 2 * 16 + 8, "Type_extent(hvector) %ld, get_extent %ld, expected 40", (long)ext,
          (long)gext);
    MPI_OK(MPI_Type_lb(hi, &lb));
    MPI_OK(MPI_Type_ub(hi, &ub));
    CHECK(lb == 4 && ub == 32, "hindexed lb %ld ub %ld, expected 4 and 32", (long)lb, (long)ub);
    int size = -1;
    MPI_Type_size(st, &size);
    MPI_Count size_x = -1;
    MPI_OK(MPI_Type_size_x(st, &size_x));
    CHECK(size == 1 + 16 && size_x == size, "Type_struct size %d, size_x %lld, expected 17", size,
          (long long)size_x);
    MPI_Type_free(&hv);
    MPI_Type_free(&hi);
    MPI_Type_free(&st);

    MPI_OK(MPI_Pcontrol(1));
    MPI_OK(MPI_Pcontrol(0, "extra", 3));

    MPI_Datatype m;
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    CHECK(m == MPI_INT32_T, "match_size(INTEGER, 4) = %d, expected MPI_INT32_T", m);
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    CHECK(m == MPI_DOUBLE, "match_size(REAL, 8) = %d, expected MPI_DOUBLE", m);
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 8, &m));
    CHECK(m == MPI_C_FLOAT_COMPLEX, "match_size(COMPLEX, 8) = %d", m);
    CHECK(cls_of(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m)) == MPI_ERR_ARG, "match_size(REAL, 3) not an error");

    void *mem = NULL;
    MPI_OK(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem));
    CHECK(mem != NULL, "Alloc_mem gave NULL");
    if (mem) {
        memset(mem, 0x5a, 1 << 20);
        MPI_OK(MPI_Free_mem(mem));
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen;
    MPI_Get_library_version(lib, &liblen);
    CHECK(strstr(lib, "weft") != NULL, "Get_library_version \"%s\" does not name weft", lib);
}

/* A 3-d array of ints, dims sizes[], value of element (i,j,k) = its
 * row-major index * 10 + rank; the subarray goes to the next rank. */
static void subarray_tests(void)
{
    const int sizes[3] = {4, 5, 6}, subsizes[3] = {2, 3, 4}, starts[3] = {1, 2, 1};
    int full[4 * 5 * 6], got[2 * 3 * 4];
    const int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    for (int order = 0; order < 2; order++) {
        const int ord = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        for (int i = 0; i < 4 * 5 * 6; i++)
            full[i] = i * 10 + mtest_rank;
        MPI_Datatype sub;
        MPI_OK(MPI_Type_create_subarray(3, sizes, subsizes, starts, ord, MPI_INT, &sub));
        MPI_Type_commit(&sub);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(sub, &lb, &ext);
        CHECK(lb == 0 && ext == (MPI_Aint)sizeof full, "subarray extent (lb %ld, %ld), expected (0, %zu)", (long)lb,
              (long)ext, sizeof full);
        MPI_Sendrecv(full, 1, sub, right, 5, got, 24, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* The serial reference: dimension 0 is the slowest in C order, the fastest in Fortran order. */
        int k = 0, bad = 0;
        for (int a = 0; a < subsizes[order ? 2 : 0] && !bad; a++)
            for (int b = 0; b < subsizes[1] && !bad; b++)
                for (int c = 0; c < subsizes[order ? 0 : 2] && !bad; c++, k++) {
                    int idx;
                    if (!order)   /* (a,b,c) = (i0,i1,i2), i2 fastest, linear = (i0*5 + i1)*6 + i2 */
                        idx = ((a + starts[0]) * sizes[1] + (b + starts[1])) * sizes[2] + (c + starts[2]);
                    else   /* (a,b,c) = (i2,i1,i0), i0 fastest, linear = (i2*5 + i1)*4 + i0 */
                        idx = ((a + starts[2]) * sizes[1] + (b + starts[1])) * sizes[0] + (c + starts[0]);
                    if (got[k] != idx * 10 + left) {
                        CHECK(0, "subarray (%s order) element %d is %d, expected %d", order ? "Fortran" : "C", k,
                              got[k], idx * 10 + left);
                        bad = 1;
                    }
                }
        MPI_Type_free(&sub);
    }
    const int bad_sub[3] = {5, 1, 1};
    MPI_Datatype t;
    CHECK(cls_of(MPI_Type_create_subarray(3, sizes, bad_sub, starts, MPI_ORDER_C, MPI_INT, &t)) == MPI_ERR_ARG,
          "a subsize larger than the size is not MPI_ERR_ARG");
}

/* MPI_Type_get_envelope / get_contents give back each constructor's
 * arguments; a derived datatype it was made of comes back as a new
 * datatype (equivalent, to be freed), even after the program freed it. */
static void contents_tests(void)
{
    int ni, na, nd, comb;
    MPI_OK(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "envelope(MPI_DOUBLE): combiner %d (%d %d %d)",
          comb, ni, na, nd);
    MPI_Datatype vec, st, sub;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    MPI_OK(MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1,
          "envelope(vector): combiner %d (%d %d %d), expected VECTOR (3 0 1)", comb, ni, na, nd);
    int ints[16];
    MPI_Aint aints[4];
    MPI_Datatype types[4];
    MPI_OK(MPI_Type_get_contents(vec, 16, 4, 4, ints, aints, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_INT, "contents(vector): %d %d %d type %d",
          ints[0], ints[1], ints[2], types[0]);
    int bl[2] = {1, 2};
    MPI_Aint disp[2] = {0, 16};
    MPI_Datatype parts[2] = {MPI_CHAR, vec};
    MPI_Type_create_struct(2, bl, disp, parts, &st);
    MPI_Type_free(&vec);
    MPI_OK(MPI_Type_get_envelope(st, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2, "envelope(struct): combiner %d (%d %d %d)",
          comb, ni, na, nd);
    MPI_OK(MPI_Type_get_contents(st, 16, 4, 4, ints, aints, types));
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && aints[1] == 16 && types[0] == MPI_CHAR,
          "contents(struct): ints %d %d %d aints[1] %ld types[0] %d", ints[0], ints[1], ints[2], (long)aints[1],
          types[0]);
    int vsize = -1;
    MPI_Type_size(types[1], &vsize);
    MPI_OK(MPI_Type_get_envelope(types[1], &ni, &na, &nd, &comb));
    CHECK(vsize == 6 * (int)sizeof(int) && comb == MPI_COMBINER_VECTOR,
          "the struct's freed vector member came back with size %d, combiner %d", vsize, comb);
    MPI_Type_free(&types[1]);
    MPI_Type_free(&st);
    const int sizes[2] = {4, 6}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_OK(MPI_Type_get_envelope(sub, &ni, &na, &nd, &comb));
    MPI_OK(MPI_Type_get_contents(sub, 16, 4, 4, ints, aints, types));
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && ints[0] == 2 && ints[3] == 2 && ints[6] == 2 &&
              ints[7] == MPI_ORDER_C && types[0] == MPI_INT,
          "subarray envelope/contents: combiner %d, %d ints (ndims %d, subsize0 %d, start1 %d, order %d)", comb, ni,
          ints[0], ints[3], ints[6], ints[7]);
    MPI_Type_free(&sub);
    CHECK(cls_of(MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, aints, types)) == MPI_ERR_TYPE,
          "get_contents of a predefined type is not MPI_ERR_TYPE");
}

/* Handle conversion: a handle survives the trip through a Fortran
 * integer and still works; a status keeps its fields. */
static void f2c_tests(void)
{
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm back = MPI_Comm_f2c(MPI_Comm_c2f(dup));
    int result = -1;
    MPI_OK(MPI_Comm_compare(back, dup, &result));
    CHECK(result == MPI_IDENT, "Comm_f2c(Comm_c2f(dup)) is not dup (compare: %d)", result);
    int sum = 0, one = 1;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_Type_f2c(MPI_Type_c2f(MPI_INT)), MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)), back));
    CHECK(sum == mtest_size, "an allreduce through converted handles gave %d, expected %d", sum, mtest_size);
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL, "MPI_COMM_NULL did not survive the trip");
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "MPI_REQUEST_NULL changed");
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "MPI_GROUP_EMPTY changed");
    CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL, "MPI_INFO_NULL changed");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "MPI_WIN_NULL changed");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN, "MPI_ERRORS_RETURN changed");
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL, "MPI_MESSAGE_NULL changed");
    MPI_OK(MPI_Comm_free(&dup));

    /* A received status, through MPI_F_STATUS_SIZE integers and back. */
    int v = mtest_rank, got = -1;
    MPI_Status st, again;
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, mtest_rank, 77, &got, 1, MPI_INT, mtest_rank, 77, MPI_COMM_WORLD, &st));
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_OK(MPI_Status_c2f(&st, f));
    memset(&again, 0xff, sizeof again);
    MPI_OK(MPI_Status_f2c(f, &again));
    int count = -1;
    MPI_OK(MPI_Get_count(&again, MPI_INT, &count));
    CHECK(again.MPI_SOURCE == mtest_rank && again.MPI_TAG == 77 && count == 1,
          "status after c2f/f2c: source %d tag %d count %d, expected %d 77 1", again.MPI_SOURCE, again.MPI_TAG,
          count, mtest_rank);
    CHECK(MPI_Status_c2f(MPI_STATUS_IGNORE, f) == MPI_ERR_ARG, "Status_c2f(MPI_STATUS_IGNORE) was not MPI_ERR_ARG");
    CHECK(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &again) == MPI_ERR_ARG,
          "Status_f2c(MPI_F_STATUS_IGNORE) was not MPI_ERR_ARG");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    info_tests();
    compat_tests();
    subarray_tests();
    contents_tests();
    f2c_tests();
    return mtest_finish();
}
