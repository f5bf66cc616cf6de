/* SPDX-License-Identifier: BSD-3-Clause */
/* attr: attribute caching on communicators, windows and datatypes (MPI-3.1
 * 6.7), the predefined attributes, and the MPI-1 names. Every callback
 * counts its calls, so each check compares against what the standard says
 * must have been called. The verdict is printed from the delete callback
 * of an attribute on MPI_COMM_SELF, which MPI_Finalize must call while MPI
 * still works: without it there is no "No Errors". Any number of ranks. */
#include <stdint.h>

#include "mtest.h"

static int copies, deletes;
static void *last_deleted;

/* Copies the value plus one, so a copy is told from the original. */
static int copy_plus_one(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv;
    CHECK(extra == (void *)&copies, "copy callback: extra_state %p, expected %p", extra, (void *)&copies);
    copies++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm c, int kv, void *value, void *extra)
{
    (void)c, (void)kv, (void)extra;
    deletes++;
    last_deleted = value;
    return MPI_SUCCESS;
}

static int refuse_delete(MPI_Comm c, int kv, void *value, void *extra)
{
    (void)c, (void)kv, (void)value, (void)extra;
    return MPI_ERR_OTHER;
}

static int refuse_copy(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)extra, (void)in, (void)out, (void)flag;
    return MPI_ERR_ARG;
}

static void *get(MPI_Comm c, int kv, int *flag)
{
    void *v = NULL;
    *flag = -1;
    MPI_OK(MPI_Comm_get_attr(c, kv, &v, flag));
    return v;
}

static void predefined(void)
{
    int flag, *p;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
    CHECK(flag && *p >= 32767, "MPI_TAG_UB: flag %d value %d, expected at least 32767", flag, flag ? *p : 0);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag));
    CHECK(flag && *p == mtest_size, "MPI_UNIVERSE_SIZE: flag %d value %d, expected %d", flag, flag ? *p : 0,
          mtest_size);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag));
    CHECK(flag && *p == 0, "MPI_APPNUM: flag %d value %d, expected 0", flag, flag ? *p : -1);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag));
    CHECK(flag && *p >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE: flag %d value %d, expected >= %d", flag,
          flag ? *p : 0, MPI_ERR_LASTCODE);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag));
    CHECK(flag && *p == MPI_PROC_NULL, "MPI_HOST: flag %d value %d, expected MPI_PROC_NULL", flag, flag ? *p : 0);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag));
    CHECK(flag && (*p == 0 || *p == 1), "MPI_WTIME_IS_GLOBAL: flag %d value %d", flag, flag ? *p : -1);
    MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
    CHECK(flag && *p >= 32767, "MPI_Attr_get(MPI_TAG_UB): flag %d", flag);
}

static void comm_attrs(void)
{
    int kv_plus = MPI_KEYVAL_INVALID, kv_dup, kv_none, flag;
    MPI_OK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &kv_plus, &copies));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv_dup, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kv_none, NULL));
    CHECK(kv_plus != MPI_KEYVAL_INVALID && kv_plus != kv_dup && kv_dup != kv_none, "keyvals %d %d %d not distinct",
          kv_plus, kv_dup, kv_none);

    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    get(c, kv_plus, &flag);
    CHECK(flag == 0, "unset attribute: flag %d, expected 0", flag);
    MPI_OK(MPI_Comm_set_attr(c, kv_plus, (void *)100));
    MPI_OK(MPI_Comm_set_attr(c, kv_dup, (void *)200));
    MPI_OK(MPI_Comm_set_attr(c, kv_none, (void *)300));
    void *v = get(c, kv_plus, &flag);
    CHECK(flag == 1 && v == (void *)100, "get after set: flag %d value %p, expected 1 and 0x64", flag, v);

    /* Setting again deletes the old value first. */
    deletes = 0;
    MPI_OK(MPI_Comm_set_attr(c, kv_plus, (void *)101));
    CHECK(deletes == 1 && last_deleted == (void *)100, "replacing: %d deletes of %p, expected 1 of 0x64", deletes,
          last_deleted);

    /* Dup: plus-one copies 101 -> 102, DUP_FN copies 200, NULL_COPY_FN drops 300. */
    copies = 0;
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(c, &d));
    CHECK(copies == 1, "Comm_dup called the copy callback %d times, expected 1", copies);
    v = get(d, kv_plus, &flag);
    CHECK(flag == 1 && v == (void *)102, "dup's kv_plus: flag %d value %p, expected 0x66", flag, v);
    v = get(d, kv_dup, &flag);
    CHECK(flag == 1 && v == (void *)200, "dup's kv_dup: flag %d value %p, expected 0xc8", flag, v);
    get(d, kv_none, &flag);
    CHECK(flag == 0, "dup's kv_none: flag %d, expected 0 (MPI_COMM_NULL_COPY_FN)", flag);

    /* Delete_attr calls the callback and unsets. */
    deletes = 0;
    MPI_OK(MPI_Comm_delete_attr(c, kv_none));
    CHECK(deletes == 1 && last_deleted == (void *)300, "delete_attr: %d deletes of %p, expected 1 of 0x12c",
          deletes, last_deleted);
    get(c, kv_none, &flag);
    CHECK(flag == 0, "after delete_attr: flag %d, expected 0", flag);

    /* A keyval freed while in use still has its callbacks called. */
    const int kv_plus_saved = kv_plus;
    MPI_OK(MPI_Comm_free_keyval(&kv_plus));
    CHECK(kv_plus == MPI_KEYVAL_INVALID, "free_keyval left %d, expected MPI_KEYVAL_INVALID", kv_plus);
    deletes = 0;
    MPI_OK(MPI_Comm_free(&d));
    CHECK(deletes == 1 && last_deleted == (void *)102, "Comm_free(dup): %d deletes of %p, expected 1 of 0x66",
          deletes, last_deleted);
    deletes = 0;
    MPI_OK(MPI_Comm_free(&c));
    CHECK(deletes == 1 && last_deleted == (void *)101, "Comm_free: %d deletes of %p, expected 1 of 0x65", deletes,
          last_deleted);

    /* Errors: a freed keyval, a predefined one, another kind's. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls = -1, rc = MPI_Comm_set_attr(MPI_COMM_WORLD, kv_plus_saved, (void *)1);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "set_attr with a freed keyval: class %d, expected MPI_ERR_KEYVAL", cls);
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, (void *)1);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "set_attr(MPI_TAG_UB): class %d, expected MPI_ERR_KEYVAL", cls);
    rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, kv_dup);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "delete_attr of an unset attribute: class %d, expected MPI_ERR_KEYVAL", cls);
    int kv_type;
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &kv_type, NULL));
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, kv_type, (void *)1);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "a datatype keyval on a communicator: class %d, expected MPI_ERR_KEYVAL", cls);
    rc = MPI_Comm_get_attr(MPI_COMM_NULL, kv_dup, &v, &flag);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "get_attr on MPI_COMM_NULL: class %d, expected MPI_ERR_COMM", cls);

    /* A refusing delete callback keeps the communicator; a refusing copy fails the dup. */
    int kv_refuse, kv_nocopy;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, refuse_delete, &kv_refuse, NULL));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Comm_set_attr(c, kv_refuse, (void *)7));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm keep = c;
    rc = MPI_Comm_free(&c);
    CHECK(rc != MPI_SUCCESS && c == keep, "Comm_free with a refusing delete callback: rc %d, comm %d", rc, c);
    MPI_OK(MPI_Comm_create_keyval(refuse_copy, MPI_COMM_NULL_DELETE_FN, &kv_nocopy, NULL));
    MPI_OK(MPI_Comm_set_attr(c, kv_nocopy, (void *)8));
    MPI_Comm d2 = 12345;
    rc = MPI_Comm_dup(c, &d2);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "Comm_dup with a refusing copy callback: class %d, expected MPI_ERR_ARG", cls);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_OK(MPI_Comm_delete_attr(c, kv_nocopy));

    MPI_OK(MPI_Comm_free_keyval(&kv_dup));
    MPI_OK(MPI_Comm_free_keyval(&kv_none));
    MPI_OK(MPI_Comm_free_keyval(&kv_nocopy));
    MPI_OK(MPI_Type_free_keyval(&kv_type));
    (void)kv_refuse;   /* c stays (its attribute refuses to go), as the standard allows */
}

static void mpi1_names(void)
{
    int kv, flag;
    void *v;
    MPI_OK(MPI_Keyval_create(MPI_DUP_FN, count_delete, &kv, NULL));
    MPI_OK(MPI_Attr_put(MPI_COMM_SELF, kv, (void *)42));
    MPI_OK(MPI_Attr_get(MPI_COMM_SELF, kv, &v, &flag));
    CHECK(flag && v == (void *)42, "Attr_get: flag %d value %p, expected 0x2a", flag, v);
    deletes = 0;
    MPI_OK(MPI_Attr_delete(MPI_COMM_SELF, kv));
    CHECK(deletes == 1 && last_deleted == (void *)42, "Attr_delete: %d deletes of %p", deletes, last_deleted);
    MPI_OK(MPI_Keyval_free(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "Keyval_free left %d", kv);
}

static void win_attrs(void)
{
    int buf[16], flag, *ip;
    MPI_Aint *ap;
    void *base;
    MPI_Win w;
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    MPI_OK(MPI_Win_get_attr(w, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == (void *)buf, "MPI_WIN_BASE: flag %d %p, expected %p", flag, base, (void *)buf);
    MPI_OK(MPI_Win_get_attr(w, MPI_WIN_SIZE, &ap, &flag));
    CHECK(flag && *ap == (MPI_Aint)sizeof buf, "MPI_WIN_SIZE: flag %d %ld, expected %zu", flag,
          flag ? (long)*ap : 0L, sizeof buf);
    MPI_OK(MPI_Win_get_attr(w, MPI_WIN_DISP_UNIT, &ip, &flag));
    CHECK(flag && *ip == (int)sizeof(int), "MPI_WIN_DISP_UNIT: flag %d %d", flag, flag ? *ip : 0);
    MPI_OK(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &ip, &flag));
    CHECK(flag && *ip == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR: flag %d %d", flag, flag ? *ip : 0);
    MPI_OK(MPI_Win_get_attr(w, MPI_WIN_MODEL, &ip, &flag));
    CHECK(flag && (*ip == MPI_WIN_UNIFIED || *ip == MPI_WIN_SEPARATE), "MPI_WIN_MODEL: flag %d %d", flag,
          flag ? *ip : 0);

    int kv;
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &kv, NULL));
    MPI_OK(MPI_Win_set_attr(w, kv, (void *)9));
    void *v;
    MPI_OK(MPI_Win_get_attr(w, kv, &v, &flag));
    CHECK(flag && v == (void *)9, "Win_get_attr: flag %d %p", flag, v);
    deletes = 0;
    MPI_OK(MPI_Win_free(&w));
    CHECK(deletes == 1 && last_deleted == (void *)9, "Win_free: %d deletes of %p, expected 1 of 0x9", deletes,
          last_deleted);
    MPI_OK(MPI_Win_free_keyval(&kv));

    int *mem = NULL;
    MPI_OK(MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
    MPI_OK(MPI_Win_get_attr(w, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == (void *)mem, "allocated MPI_WIN_BASE: %p, expected %p", base, (void *)mem);
    MPI_OK(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &ip, &flag));
    CHECK(flag && *ip == MPI_WIN_FLAVOR_ALLOCATE, "allocated MPI_WIN_CREATE_FLAVOR: %d", flag ? *ip : 0);
    MPI_OK(MPI_Win_get_attr(w, MPI_WIN_DISP_UNIT, &ip, &flag));
    CHECK(flag && *ip == 8, "allocated MPI_WIN_DISP_UNIT: %d, expected 8", flag ? *ip : 0);
    MPI_OK(MPI_Win_free(&w));
}

static void type_attrs(void)
{
    int kv, flag;
    void *v;
    MPI_Datatype t, d;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &kv, NULL));
    MPI_OK(MPI_Type_set_attr(t, kv, (void *)5));
    MPI_OK(MPI_Type_dup(t, &d));
    MPI_OK(MPI_Type_get_attr(d, kv, &v, &flag));
    CHECK(flag && v == (void *)5, "Type_dup copied: flag %d %p, expected 0x5", flag, v);
    deletes = 0;
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_free(&d));
    CHECK(deletes == 2, "Type_free of both: %d deletes, expected 2", deletes);
    /* Predefined datatypes carry attributes too. */
    MPI_OK(MPI_Type_set_attr(MPI_INT, kv, (void *)6));
    MPI_OK(MPI_Type_get_attr(MPI_INT, kv, &v, &flag));
    CHECK(flag && v == (void *)6, "attribute on MPI_INT: flag %d %p", flag, v);
    MPI_OK(MPI_Type_delete_attr(MPI_INT, kv));
    MPI_OK(MPI_Type_free_keyval(&kv));
}

static int verdict_total = -1;

/* Called by MPI_Finalize, with MPI still working: the verdict. */
static int verdict_at_finalize(MPI_Comm c, int kv, void *value, void *extra)
{
    (void)kv, (void)value, (void)extra;
    int finalized = 1;
    MPI_Finalized(&finalized);
    CHECK(c == MPI_COMM_SELF && !finalized, "finalize's delete callback: comm %d finalized %d", c, finalized);
    verdict_total = mtest_verdict();
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    predefined();
    comm_attrs();
    mpi1_names();
    win_attrs();
    type_attrs();
    int kv;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, verdict_at_finalize, &kv, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL));
    MPI_Finalize();
    return verdict_total == 0 ? 0 : 1;
}
