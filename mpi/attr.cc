// SPDX-License-Identifier: BSD-3-Clause
// Attribute caching (MPI-3.1 6.7): keyvals, the attributes set with them
// on communicators, windows and datatypes, and the predefined attributes
// (MPI_TAG_UB and the rest on communicators, MPI_WIN_BASE and the rest on
// windows).
//
// Attributes live here, beside the objects, keyed by (kind, handle), so
// the object structs do not change: duplicating an object calls
// attrs_copy, freeing one calls attrs_delete_all first. A keyval freed
// while attributes still use it lives on until the last of them is
// deleted, as the standard requires, but can no longer be named.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mpi/internal.hpp"
#include "mpi/win.hpp"

namespace weft::mpi {

namespace {

// Handles are all int, so one signature serves every kind's callbacks.
using CopyFn = int(int, int, void *, void *, void *, int *);
using DeleteFn = int(int, int, void *, void *);

struct Keyval {
    AttrKind kind;
    CopyFn *copy;          // null: copy nothing
    DeleteFn *del;         // null: nothing to do
    void *extra;
    int uses = 0;          // attributes set with it
    bool freed = false;    // MPI_*_free_keyval was called
};

// Predefined keyvals are mpi.h's small numbers; users' start here.
constexpr int kFirstUserKeyval = 64;
Table<Keyval> g_keyvals(kFirstUserKeyval);

struct Attr {
    int keyval;
    void *value;
};
// (kind, handle) -> its attributes, in the order they were set.
std::map<std::pair<AttrKind, int>, std::vector<Attr>> g_attrs;

const char *kind_name(AttrKind k)
{
    switch (k) {
    case AttrKind::Comm: return "communicators";
    case AttrKind::Win: return "windows";
    case AttrKind::Type: return "datatypes";
    }
    return "?";
}

bool predefined_keyval(AttrKind k, int kv)
{
    switch (k) {
    case AttrKind::Comm: return kv >= MPI_TAG_UB && kv <= MPI_LASTUSEDCODE;
    case AttrKind::Win: return kv >= MPI_WIN_BASE && kv <= MPI_WIN_MODEL;
    case AttrKind::Type: return false;
    }
    return false;
}

bool object_exists(AttrKind k, int h)
{
    switch (k) {
    case AttrKind::Comm: return comm(h) != nullptr;
    case AttrKind::Win: return win(h) != nullptr;
    case AttrKind::Type: return datatype(h) != nullptr;
    }
    return false;
}

// Raises on the object's own error handler (datatypes have none: world's).
int attr_error(AttrKind k, int h, int cls, const char *fn, const std::string &why)
{
    if (k == AttrKind::Win)
        if (Win *w = win(h))
            return win_error(*w, cls, fn, why);
    return raise(k == AttrKind::Comm ? comm(h) : nullptr, cls, fn, why);
}

int check_object(AttrKind k, int h, const char *fn)
{
    if (object_exists(k, h))
        return MPI_SUCCESS;
    static const int cls[] = {MPI_ERR_COMM, MPI_ERR_WIN, MPI_ERR_TYPE};
    static const char *what[] = {"communicator", "window", "datatype"};
    const int i = static_cast<int>(k);
    return raise(nullptr, cls[i], fn, std::string(what[i]) + " " + std::to_string(h) + " is not valid (freed?)");
}

// A user keyval of kind k that can still be named, or the error raised.
Keyval *user_keyval(AttrKind k, int h, int kv, const char *fn, int *rc)
{
    Keyval *key = g_keyvals.get(kv);
    if (!key || key->freed) {
        *rc = attr_error(k, h, MPI_ERR_KEYVAL, fn,
                         "keyval " + std::to_string(kv) +
                             (predefined_keyval(k, kv) ? " is predefined: it can be read, not set or deleted"
                                                       : " is not valid (never created, or freed)"));
        return nullptr;
    }
    if (key->kind != k) {
        *rc = attr_error(k, h, MPI_ERR_KEYVAL, fn,
                         "keyval " + std::to_string(kv) + " was created for " + kind_name(key->kind) +
                             ", not for " + kind_name(k));
        return nullptr;
    }
    return key;
}

void release(int kv)
{
    Keyval *key = g_keyvals.get(kv);
    if (key && --key->uses == 0 && key->freed)
        g_keyvals.remove(kv);
}

// A callback's error code as the class the caller reports.
int callback_class(int rc) { return rc > MPI_SUCCESS && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER; }

Attr *find_attr(AttrKind k, int h, int kv)
{
    auto it = g_attrs.find({k, h});
    if (it == g_attrs.end())
        return nullptr;
    for (Attr &a : it->second)
        if (a.keyval == kv)
            return &a;
    return nullptr;
}

void erase_attr(AttrKind k, int h, int kv)
{
    auto it = g_attrs.find({k, h});
    if (it == g_attrs.end())
        return;
    auto &v = it->second;
    for (size_t i = 0; i < v.size(); ++i)
        if (v[i].keyval == kv) {
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
            release(kv);
            break;
        }
    if (v.empty())
        g_attrs.erase(it);
}

// Calls kv's delete callback on value; MPI_SUCCESS or the raised error.
int call_delete(AttrKind k, int h, int kv, void *value, const char *fn)
{
    const Keyval *key = g_keyvals.get(kv);
    if (!key || !key->del)
        return MPI_SUCCESS;
    const int rc = key->del(h, kv, value, key->extra);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    return attr_error(k, h, callback_class(rc), fn,
                      "the delete callback of keyval " + std::to_string(kv) + " returned error " +
                          std::to_string(rc));
}

int create_keyval(AttrKind k, CopyFn *copy, DeleteFn *del, int *out, void *extra, const char *fn)
{
    MPI_NEED_INIT(fn);
    if (!out)
        return raise(nullptr, MPI_ERR_ARG, fn, "keyval is NULL");
    *out = g_keyvals.add(std::make_unique<Keyval>(Keyval{k, copy, del, extra}));
    return MPI_SUCCESS;
}

int free_keyval(AttrKind k, int *kv, const char *fn)
{
    MPI_NEED_INIT(fn);
    if (!kv)
        return raise(nullptr, MPI_ERR_ARG, fn, "keyval is NULL");
    Keyval *key = g_keyvals.get(*kv);
    if (!key || key->freed || key->kind != k)
        return raise(nullptr, MPI_ERR_KEYVAL, fn,
                     "keyval " + std::to_string(*kv) + " is not a keyval for " + kind_name(k) +
                         (predefined_keyval(k, *kv) ? " that can be freed (it is predefined)" : ""));
    key->freed = true;
    if (key->uses == 0)
        g_keyvals.remove(*kv);
    *kv = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int set_attr(AttrKind k, int h, int kv, void *value, const char *fn)
{
    MPI_NEED_INIT(fn);
    if (int rc = check_object(k, h, fn))
        return rc;
    int rc = MPI_SUCCESS;
    if (!user_keyval(k, h, kv, fn, &rc))
        return rc;
    if (Attr *a = find_attr(k, h, kv)) {
        // Replacing a value deletes the old one first (MPI-3.1 6.7.2).
        if (int drc = call_delete(k, h, kv, a->value, fn))
            return drc;
        if ((a = find_attr(k, h, kv))) {   // the callback may have changed the list
            a->value = value;
            return MPI_SUCCESS;
        }
    }
    g_attrs[{k, h}].push_back({kv, value});
    ++g_keyvals.get(kv)->uses;
    return MPI_SUCCESS;
}

int delete_attr(AttrKind k, int h, int kv, const char *fn)
{
    MPI_NEED_INIT(fn);
    if (int rc = check_object(k, h, fn))
        return rc;
    int rc = MPI_SUCCESS;
    if (!user_keyval(k, h, kv, fn, &rc))
        return rc;
    Attr *a = find_attr(k, h, kv);
    if (!a)
        return attr_error(k, h, MPI_ERR_KEYVAL, fn,
                          "no attribute is set with keyval " + std::to_string(kv) + " on this object");
    if (int drc = call_delete(k, h, kv, a->value, fn))
        return drc;
    erase_attr(k, h, kv);
    return MPI_SUCCESS;
}

// The predefined attributes: a pointer to the value (MPI_WIN_BASE: the
// base itself), as MPI_*_get_attr returns them.
void *predefined_comm_value(int kv)
{
    static int tag_ub = 0x7fffffff, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_is_global = 0;
    static int appnum = 0, universe_size = 0, last_used_code = MPI_ERR_LASTCODE;
    switch (kv) {
    case MPI_TAG_UB: return &tag_ub;
    case MPI_HOST: return &host;
    case MPI_IO: return &io;
    case MPI_WTIME_IS_GLOBAL: return &wtime_is_global;
    case MPI_APPNUM: return &appnum;
    case MPI_UNIVERSE_SIZE:
        universe_size = weft_size();   // no dynamic processes: the job is the universe
        return &universe_size;
    case MPI_LASTUSEDCODE: return &last_used_code;
    }
    return nullptr;
}

void *predefined_win_value(Win &w, int kv)
{
    // The window knows its flavor and model (win_info.cc).
    void *value = nullptr;
    int flag = 0;
    return win_predefined_attr(w.handle, kv, &value, &flag) ? value : nullptr;
}

int get_attr(AttrKind k, int h, int kv, void *value, int *flag, const char *fn)
{
    MPI_NEED_INIT(fn);
    if (int rc = check_object(k, h, fn))
        return rc;
    if (!value || !flag)
        return attr_error(k, h, MPI_ERR_ARG, fn, "attribute_val and flag must not be NULL");
    if (predefined_keyval(k, kv)) {
        *static_cast<void **>(value) =
            k == AttrKind::Comm ? predefined_comm_value(kv) : predefined_win_value(*win(h), kv);
        *flag = 1;
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    if (!user_keyval(k, h, kv, fn, &rc))
        return rc;
    const Attr *a = find_attr(k, h, kv);
    *flag = a != nullptr;
    if (a)
        *static_cast<void **>(value) = a->value;
    return MPI_SUCCESS;
}

} // namespace

int attrs_copy(AttrKind k, int from, int to)
{
    auto it = g_attrs.find({k, from});
    if (it == g_attrs.end())
        return MPI_SUCCESS;
    const std::vector<Attr> list = it->second;   // a callback may set attributes meanwhile
    for (const Attr &a : list) {
        Keyval *key = g_keyvals.get(a.keyval);
        if (!key || !key->copy)
            continue;
        void *out = nullptr;
        int flag = 0;
        if (int rc = key->copy(from, a.keyval, key->extra, a.value, &out, &flag)) {
            attrs_delete_all(k, to);
            return callback_class(rc);
        }
        if (flag) {
            g_attrs[{k, to}].push_back({a.keyval, out});
            ++key->uses;
        }
    }
    return MPI_SUCCESS;
}

int attrs_delete_all(AttrKind k, int h)
{
    // The last set is deleted first; a callback may touch the list, so
    // it is looked up again each time.
    for (;;) {
        auto it = g_attrs.find({k, h});
        if (it == g_attrs.end())
            return MPI_SUCCESS;
        const Attr a = it->second.back();
        const Keyval *key = g_keyvals.get(a.keyval);
        if (key && key->del)
            if (int rc = key->del(h, a.keyval, a.value, key->extra))
                return callback_class(rc);
        erase_attr(k, h, a.keyval);
    }
}

void attrs_at_finalize()
{
    attrs_delete_all(AttrKind::Comm, MPI_COMM_SELF);
    attrs_delete_all(AttrKind::Comm, MPI_COMM_WORLD);
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

int weft_mpi_null_copy_fn(int, int, void *, void *, void *, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int weft_mpi_dup_fn(int, int, void *, void *in, void *out, int *flag)
{
    *static_cast<void **>(out) = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int weft_mpi_null_delete_fn(int, int, void *, void *) { return MPI_SUCCESS; }

// ---- communicators

WEFT_MPI_WEAK(Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del, int *kv,
                            void *extra)
{
    MPI_THREAD_GUARD;
    return create_keyval(AttrKind::Comm, copy, del, kv, extra, "MPI_Comm_create_keyval");
}

WEFT_MPI_WEAK(Comm_free_keyval)
int PMPI_Comm_free_keyval(int *kv)
{
    MPI_THREAD_GUARD;
    return free_keyval(AttrKind::Comm, kv, "MPI_Comm_free_keyval");
}

WEFT_MPI_WEAK(Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm h, int kv, void *value)
{
    MPI_THREAD_GUARD;
    return set_attr(AttrKind::Comm, h, kv, value, "MPI_Comm_set_attr");
}

WEFT_MPI_WEAK(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm h, int kv, void *value, int *flag)
{
    MPI_THREAD_GUARD;
    return get_attr(AttrKind::Comm, h, kv, value, flag, "MPI_Comm_get_attr");
}

WEFT_MPI_WEAK(Comm_delete_attr)
int PMPI_Comm_delete_attr(MPI_Comm h, int kv)
{
    MPI_THREAD_GUARD;
    return delete_attr(AttrKind::Comm, h, kv, "MPI_Comm_delete_attr");
}

// ---- windows

WEFT_MPI_WEAK(Win_create_keyval)
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del, int *kv,
                           void *extra)
{
    MPI_THREAD_GUARD;
    return create_keyval(AttrKind::Win, copy, del, kv, extra, "MPI_Win_create_keyval");
}

WEFT_MPI_WEAK(Win_free_keyval)
int PMPI_Win_free_keyval(int *kv)
{
    MPI_THREAD_GUARD;
    return free_keyval(AttrKind::Win, kv, "MPI_Win_free_keyval");
}

WEFT_MPI_WEAK(Win_set_attr)
int PMPI_Win_set_attr(MPI_Win h, int kv, void *value)
{
    MPI_THREAD_GUARD;
    return set_attr(AttrKind::Win, h, kv, value, "MPI_Win_set_attr");
}

WEFT_MPI_WEAK(Win_get_attr)
int PMPI_Win_get_attr(MPI_Win h, int kv, void *value, int *flag)
{
    MPI_THREAD_GUARD;
    return get_attr(AttrKind::Win, h, kv, value, flag, "MPI_Win_get_attr");
}

WEFT_MPI_WEAK(Win_delete_attr)
int PMPI_Win_delete_attr(MPI_Win h, int kv)
{
    MPI_THREAD_GUARD;
    return delete_attr(AttrKind::Win, h, kv, "MPI_Win_delete_attr");
}

// ---- datatypes

WEFT_MPI_WEAK(Type_create_keyval)
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del, int *kv,
                            void *extra)
{
    MPI_THREAD_GUARD;
    return create_keyval(AttrKind::Type, copy, del, kv, extra, "MPI_Type_create_keyval");
}

WEFT_MPI_WEAK(Type_free_keyval)
int PMPI_Type_free_keyval(int *kv)
{
    MPI_THREAD_GUARD;
    return free_keyval(AttrKind::Type, kv, "MPI_Type_free_keyval");
}

WEFT_MPI_WEAK(Type_set_attr)
int PMPI_Type_set_attr(MPI_Datatype h, int kv, void *value)
{
    MPI_THREAD_GUARD;
    return set_attr(AttrKind::Type, h, kv, value, "MPI_Type_set_attr");
}

WEFT_MPI_WEAK(Type_get_attr)
int PMPI_Type_get_attr(MPI_Datatype h, int kv, void *value, int *flag)
{
    MPI_THREAD_GUARD;
    return get_attr(AttrKind::Type, h, kv, value, flag, "MPI_Type_get_attr");
}

WEFT_MPI_WEAK(Type_delete_attr)
int PMPI_Type_delete_attr(MPI_Datatype h, int kv)
{
    MPI_THREAD_GUARD;
    return delete_attr(AttrKind::Type, h, kv, "MPI_Type_delete_attr");
}

// ---- the MPI-1 names: communicator attributes under their old spelling

WEFT_MPI_WEAK(Keyval_create)
int PMPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *kv, void *extra)
{
    MPI_THREAD_GUARD;
    return create_keyval(AttrKind::Comm, copy, del, kv, extra, "MPI_Keyval_create");
}

WEFT_MPI_WEAK(Keyval_free)
int PMPI_Keyval_free(int *kv)
{
    MPI_THREAD_GUARD;
    return free_keyval(AttrKind::Comm, kv, "MPI_Keyval_free");
}

WEFT_MPI_WEAK(Attr_put)
int PMPI_Attr_put(MPI_Comm h, int kv, void *value)
{
    MPI_THREAD_GUARD;
    return set_attr(AttrKind::Comm, h, kv, value, "MPI_Attr_put");
}

WEFT_MPI_WEAK(Attr_get)
int PMPI_Attr_get(MPI_Comm h, int kv, void *value, int *flag)
{
    MPI_THREAD_GUARD;
    return get_attr(AttrKind::Comm, h, kv, value, flag, "MPI_Attr_get");
}

WEFT_MPI_WEAK(Attr_delete)
int PMPI_Attr_delete(MPI_Comm h, int kv)
{
    MPI_THREAD_GUARD;
    return delete_attr(AttrKind::Comm, h, kv, "MPI_Attr_delete");
}

} // extern "C"
