// SPDX-License-Identifier: BSD-3-Clause
// The MPI tool information interface (MPI-3.1 chapter 14.3) on weft.h's
// observability API: control variables are weft's parameters (settable
// before MPI_Init: weft reads them there), performance variables its
// counters (continuous, read-only; per communicator rank where they are
// per peer, per module for the btl's), categories one per framework and
// one per component. It works before MPI_Init and after MPI_Finalize.
// Every call takes the MPI layer's guard (under MPI_THREAD_MULTIPLE the
// engine counts under it, so a pvar read never races a count), then
// MPI_T's own lock, which also covers the calls made before MPI_Init.
#include <mpi.h>
#include <weft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mpi/internal.hpp"

struct weft_mpi_t_cvar {
    int index;
    MPI_Datatype type;
    int count;
};
struct weft_mpi_t_pvar {
    int index;
    std::vector<uint32_t> which;    // the peer rank / module of each element
    std::vector<uint64_t> baseline; // a counter's value at the last reset
};
struct weft_mpi_t_session {
    std::vector<std::unique_ptr<weft_mpi_t_pvar>> handles;
};

namespace weft::mpi {
namespace {

struct Category {
    std::string name, desc;
    std::vector<int> cvars, pvars, children;
};

// Objects handed out as MPI_T handles: owned here, known by address, so
// a stale or foreign handle is refused rather than followed.
template <class T>
class Handles {
public:
    T *add(std::unique_ptr<T> p)
    {
        T *raw = p.get();
        owned_.emplace(raw, std::move(p));
        return raw;
    }
    bool contains(T *p) const { return owned_.contains(p); }
    // Frees *h and sets it to NULL (the MPI_T *_NULL handles); false when
    // *h is not one of these.
    bool release(T **h)
    {
        if (!h || !owned_.erase(*h))
            return false;
        *h = nullptr;
        return true;
    }
    void clear() { owned_.clear(); }

private:
    std::map<T *, std::unique_ptr<T>> owned_;
};

struct ToolState {
    std::mutex mutex;
    int users = 0;               // MPI_T_init_thread calls not yet finalized
    std::vector<Category> categories;
    Handles<weft_mpi_t_session> sessions;
    Handles<weft_mpi_t_cvar> cvar_handles;
};
ToolState &state()
{
    static ToolState s;
    return s;
}

// Strings out the MPI_T way: *len is the room on entry (0: only the
// length is asked), the length with its NUL on return.
void copy_out(const std::string &text, char *out, int *len)
{
    if (!len)
        return;
    if (out && *len > 0)
        std::snprintf(out, static_cast<size_t>(*len), "%s", text.c_str());
    *len = static_cast<int>(text.size()) + 1;
}

bool param_desc(int index, weft_param_desc_t *d)
{
    d->size = sizeof *d;
    return weft_param_describe(index, d) == WEFT_SUCCESS;
}

bool counter_desc(int index, weft_counter_desc_t *d)
{
    d->size = sizeof *d;
    return weft_counter_describe(index, d) == WEFT_SUCCESS;
}

MPI_Datatype cvar_type(weft_param_type_t t)
{
    switch (t) {
    case WEFT_PARAM_BOOL: return MPI_INT;
    case WEFT_PARAM_INT: return MPI_LONG_LONG;
    case WEFT_PARAM_SIZE: return MPI_UNSIGNED_LONG_LONG;
    case WEFT_PARAM_DOUBLE: return MPI_DOUBLE;
    default: return MPI_CHAR;
    }
}
// A string cvar's element count: its buffer's size.
constexpr int kCvarText = 1024;

int pvar_class(weft_counter_kind_t k)
{
    switch (k) {
    case WEFT_COUNTER_LEVEL: return MPI_T_PVAR_CLASS_LEVEL;
    case WEFT_COUNTER_HIGHWATER: return MPI_T_PVAR_CLASS_HIGHWATERMARK;
    case WEFT_COUNTER_COUNT: break;
    }
    return MPI_T_PVAR_CLASS_COUNTER;
}

// Categories: "<framework>" holding "<framework>_<component>" for every
// component with parameters; a framework's own parameters (its selection,
// base_verbose, ...) and its counters in the framework's category. The
// engine's counters are the "engine" framework's, the modules' the "btl"'s.
void build_categories(ToolState &s)
{
    s.categories.clear();
    std::map<std::string, int> by_name;
    auto category = [&](const std::string &name, const std::string &desc) -> Category & {
        auto [it, fresh] = by_name.emplace(name, static_cast<int>(s.categories.size()));
        if (fresh)
            s.categories.push_back({name, desc, {}, {}, {}});
        return s.categories[static_cast<size_t>(it->second)];
    };
    const int n = weft_param_count();
    for (int i = 0; i < n; ++i) {
        weft_param_desc_t d;
        if (!param_desc(i, &d))
            continue;
        const std::string fw = d.framework;
        category(fw, "weft's " + fw + " framework");
        const bool own = !*d.component || std::strcmp(d.component, "base") == 0;
        if (own) {
            category(fw, "").cvars.push_back(i);
            continue;
        }
        const std::string name = fw + "_" + d.component;
        const bool fresh = !by_name.contains(name);
        category(name, "the " + std::string(d.component) + " component of " + fw).cvars.push_back(i);
        if (fresh)
            category(fw, "").children.push_back(by_name[name]);
    }
    const int np = weft_counter_count();
    for (int i = 0; i < np; ++i) {
        weft_counter_desc_t d;
        if (!counter_desc(i, &d))
            continue;
        const char *fw = d.scope == WEFT_COUNTER_MODULE ? "btl" : "engine";
        category(fw, std::string("weft's ") + fw + " framework").pvars.push_back(i);
    }
}

// MPI_T's optional outputs: each pointer may be NULL.
template <class T, class V>
void set_if(T *out, V value)
{
    if (out)
        *out = static_cast<T>(value);
}

// The index of the item named name among count items (name_of(i) names
// item i, or nullptr), or -1.
template <class NameOf>
int index_named(int count, const char *name, NameOf &&name_of)
{
    for (int i = 0; i < count; ++i)
        if (const char *n = name_of(i); n && std::strcmp(n, name) == 0)
            return i;
    return -1;
}

bool tool_open() { return state().users > 0; }

int index_list(const std::vector<int> &from, int len, int indices[])
{
    if (len < 0 || (len > 0 && !indices))
        return MPI_ERR_ARG;
    for (int i = 0; i < len && static_cast<size_t>(i) < from.size(); ++i)
        indices[i] = from[static_cast<size_t>(i)];
    return MPI_SUCCESS;
}

int pvar_read_locked(weft_mpi_t_pvar *h, uint64_t *out)
{
    weft_counter_desc_t d;
    if (!counter_desc(h->index, &d))
        return MPI_T_ERR_INVALID_HANDLE;
    for (size_t k = 0; k < h->which.size(); ++k) {
        uint64_t v = 0;
        if (weft_counter_read(h->index, h->which[k], &v) != WEFT_SUCCESS)
            return MPI_T_ERR_INVALID;   // no runtime (outside MPI_Init .. MPI_Finalize)
        out[k] = d.kind == WEFT_COUNTER_COUNT ? v - h->baseline[k] : v;
    }
    return MPI_SUCCESS;
}

int pvar_reset_locked(weft_mpi_t_pvar *h)
{
    std::vector<uint64_t> now(h->which.size());
    std::fill(h->baseline.begin(), h->baseline.end(), 0);
    if (int rc = pvar_read_locked(h, now.data()); rc != MPI_SUCCESS)
        return rc;
    h->baseline = now;
    return MPI_SUCCESS;
}

// The session's handle, or null.
weft_mpi_t_pvar *find_handle(weft_mpi_t_session *s, MPI_T_pvar_handle h)
{
    for (auto &p : s->handles)
        if (p.get() == h)
            return p.get();
    return nullptr;
}

// The session's handle for a read, write or read-reset: the MPI_T error class
// when the session or the handle is not one.
int session_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle, weft_mpi_t_pvar **out)
{
    if (!state().sessions.contains(session))
        return MPI_T_ERR_INVALID_SESSION;
    *out = find_handle(session, handle);
    return *out ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

} // namespace
} // namespace weft::mpi

using namespace weft::mpi;

#define MPI_T_CHECK_INIT                                                                                       \
    std::lock_guard weft_mpi_t_lock(state().mutex);                                                          \
    if (!tool_open())                                                                                        \
    return MPI_T_ERR_NOT_INITIALIZED

extern "C" {

WEFT_MPI_WEAK(T_init_thread)
int PMPI_T_init_thread(int required, int *provided)
{
    MPI_THREAD_GUARD;
    ToolState &s = state();
    std::lock_guard lock(s.mutex);
    if (s.users == 0) {
        if (weft_params_open() != WEFT_SUCCESS)
            return MPI_T_ERR_CANNOT_INIT;
        build_categories(s);
    }
    ++s.users;
    set_if(provided, std::clamp(required, MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_finalize)
int PMPI_T_finalize(void)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    ToolState &s = state();
    if (--s.users == 0) {
        s.sessions.clear();
        s.cvar_handles.clear();
        s.categories.clear();
        weft_params_close();
    }
    return MPI_SUCCESS;
}

// weft has no enumerations among its variables (an enum parameter is a
// string cvar): every MPI_T_enum is invalid.
WEFT_MPI_WEAK(T_enum_get_info)
int PMPI_T_enum_get_info(MPI_T_enum, int *, char *, int *)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    return MPI_T_ERR_INVALID_HANDLE;
}

WEFT_MPI_WEAK(T_enum_get_item)
int PMPI_T_enum_get_item(MPI_T_enum, int, int *, char *, int *)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    return MPI_T_ERR_INVALID_HANDLE;
}

WEFT_MPI_WEAK(T_cvar_get_num)
int PMPI_T_cvar_get_num(int *num_cvar)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!num_cvar)
        return MPI_ERR_ARG;
    *num_cvar = weft_param_count();
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_cvar_get_info)
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    weft_param_desc_t d;
    if (!param_desc(cvar_index, &d))
        return MPI_T_ERR_INVALID_INDEX;
    const char *source = "";
    weft_param_get(cvar_index, nullptr, 0, &source);
    copy_out(d.name, name, name_len);
    // The description says where the value came from (MPI_T has no field for it).
    copy_out(std::string(d.help) + " [value from: " + source + "]", desc, desc_len);
    set_if(verbosity, d.level);
    set_if(datatype, cvar_type(d.type));
    set_if(enumtype, MPI_T_ENUM_NULL);
    set_if(bind, MPI_T_BIND_NO_OBJECT);
    // Settable until MPI_Init reads them; then constant for the run.
    set_if(scope, d.settable ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_READONLY);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_cvar_get_index)
int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!name || !cvar_index)
        return MPI_ERR_ARG;
    const int i = index_named(weft_param_count(), name, [](int k) {
        weft_param_desc_t d;
        return param_desc(k, &d) ? d.name : nullptr;
    });
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *cvar_index = i;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_cvar_handle_alloc)
int PMPI_T_cvar_handle_alloc(int cvar_index, void *, MPI_T_cvar_handle *handle, int *count)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    weft_param_desc_t d;
    if (!param_desc(cvar_index, &d))
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_ERR_ARG;
    const MPI_Datatype t = cvar_type(d.type);
    *count = t == MPI_CHAR ? kCvarText : 1;
    *handle = state().cvar_handles.add(std::make_unique<weft_mpi_t_cvar>(weft_mpi_t_cvar{cvar_index, t, *count}));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_cvar_handle_free)
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    return state().cvar_handles.release(handle) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

WEFT_MPI_WEAK(T_cvar_read)
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!state().cvar_handles.contains(handle))
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_ERR_BUFFER;
    char text[kCvarText];
    const int rc = weft_param_get(handle->index, text, sizeof text, nullptr);
    if (rc != WEFT_SUCCESS && rc != WEFT_ERR_TRUNCATED)
        return MPI_T_ERR_INVALID_HANDLE;
    if (handle->type == MPI_CHAR)
        std::memcpy(buf, text, sizeof text);
    else if (handle->type == MPI_INT)
        *static_cast<int *>(buf) = std::strcmp(text, "true") == 0 || std::strcmp(text, "1") == 0;
    else if (handle->type == MPI_LONG_LONG)
        *static_cast<long long *>(buf) = std::strtoll(text, nullptr, 0);
    else if (handle->type == MPI_UNSIGNED_LONG_LONG)
        *static_cast<unsigned long long *>(buf) = std::strtoull(text, nullptr, 0);
    else
        *static_cast<double *>(buf) = std::strtod(text, nullptr);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_cvar_write)
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!state().cvar_handles.contains(handle))
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_ERR_BUFFER;
    weft_param_desc_t d;
    if (!param_desc(handle->index, &d))
        return MPI_T_ERR_INVALID_HANDLE;
    if (!d.settable)
        return MPI_T_ERR_CVAR_SET_NOT_NOW;
    std::string text;
    if (handle->type == MPI_CHAR)
        text.assign(static_cast<const char *>(buf), strnlen(static_cast<const char *>(buf), kCvarText));
    else if (handle->type == MPI_INT)
        text = *static_cast<const int *>(buf) ? "true" : "false";
    else if (handle->type == MPI_LONG_LONG)
        text = std::to_string(*static_cast<const long long *>(buf));
    else if (handle->type == MPI_UNSIGNED_LONG_LONG)
        text = std::to_string(*static_cast<const unsigned long long *>(buf));
    else {
        char num[64];
        std::snprintf(num, sizeof num, "%.17g", *static_cast<const double *>(buf));
        text = num;
    }
    return weft_param_set(handle->index, text.c_str()) == WEFT_SUCCESS ? MPI_SUCCESS : MPI_ERR_ARG;
}

WEFT_MPI_WEAK(T_pvar_get_num)
int PMPI_T_pvar_get_num(int *num_pvar)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!num_pvar)
        return MPI_ERR_ARG;
    *num_pvar = weft_counter_count();
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_pvar_get_info)
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                         int *readonly, int *continuous, int *atomic)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    weft_counter_desc_t d;
    if (!counter_desc(pvar_index, &d))
        return MPI_T_ERR_INVALID_INDEX;
    copy_out(d.name, name, name_len);
    const char *per = d.scope == WEFT_COUNTER_PEER     ? ", per communicator rank"
                      : d.scope == WEFT_COUNTER_MODULE ? ", per btl module"
                                                       : "";
    copy_out(std::string(d.description) + " (" + d.unit + per + ")", desc, desc_len);
    set_if(verbosity, MPI_T_VERBOSITY_USER_DETAIL);
    set_if(var_class, pvar_class(d.kind));
    set_if(datatype, MPI_UNSIGNED_LONG_LONG);
    set_if(enumtype, MPI_T_ENUM_NULL);
    set_if(bind, d.scope == WEFT_COUNTER_PEER ? MPI_T_BIND_MPI_COMM : MPI_T_BIND_NO_OBJECT);
    set_if(readonly, 1);
    set_if(continuous, 1);
    set_if(atomic, 0);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_pvar_get_index)
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!name || !pvar_index)
        return MPI_ERR_ARG;
    const int i = index_named(weft_counter_count(), name, [var_class](int k) {
        weft_counter_desc_t d;
        return counter_desc(k, &d) && pvar_class(d.kind) == var_class ? d.name : nullptr;
    });
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *pvar_index = i;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_pvar_session_create)
int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!session)
        return MPI_ERR_ARG;
    *session = state().sessions.add(std::make_unique<weft_mpi_t_session>());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_pvar_session_free)
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    return state().sessions.release(session) ? MPI_SUCCESS : MPI_T_ERR_INVALID_SESSION;
}

WEFT_MPI_WEAK(T_pvar_handle_alloc)
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle,
                             int *count)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!state().sessions.contains(session))
        return MPI_T_ERR_INVALID_SESSION;
    weft_counter_desc_t d;
    if (!counter_desc(pvar_index, &d))
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_ERR_ARG;
    auto h = std::make_unique<weft_mpi_t_pvar>();
    h->index = pvar_index;
    if (d.scope == WEFT_COUNTER_PEER) {
        // One element per rank of the communicator, in its order.
        const Comm *c = obj_handle ? comm(*static_cast<const MPI_Comm *>(obj_handle)) : nullptr;
        if (!c)
            return MPI_ERR_COMM;
        for (int r = 0; r < c->size; ++r)
            h->which.push_back(c->to_world(r));
    } else if (d.scope == WEFT_COUNTER_MODULE) {
        const int n = weft_counter_modules();
        if (n <= 0)
            return MPI_T_ERR_INVALID;   // the modules exist from MPI_Init on
        for (int m = 0; m < n; ++m)
            h->which.push_back(static_cast<uint32_t>(m));
    } else
        h->which.push_back(0);
    h->baseline.assign(h->which.size(), 0);
    *count = static_cast<int>(h->which.size());
    *handle = h.get();
    session->handles.push_back(std::move(h));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_pvar_handle_free)
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!state().sessions.contains(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (!handle || !find_handle(session, *handle))
        return MPI_T_ERR_INVALID_HANDLE;
    std::erase_if(session->handles, [&](const auto &p) { return p.get() == *handle; });
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

// Every counter runs from MPI_Init to MPI_Finalize: nothing starts or stops.
WEFT_MPI_WEAK(T_pvar_start)
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!state().sessions.contains(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (handle != MPI_T_PVAR_ALL_HANDLES && !find_handle(session, handle))
        return MPI_T_ERR_INVALID_HANDLE;
    return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_STARTSTOP;
}

WEFT_MPI_WEAK(T_pvar_stop)
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPI_THREAD_GUARD;
    return PMPI_T_pvar_start(session, handle);
}

WEFT_MPI_WEAK(T_pvar_read)
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    weft_mpi_t_pvar *h;
    if (int rc = session_handle(session, handle, &h); rc != MPI_SUCCESS)
        return rc;
    if (!buf)
        return MPI_ERR_BUFFER;
    return pvar_read_locked(h, static_cast<uint64_t *>(buf));
}

WEFT_MPI_WEAK(T_pvar_write)
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    weft_mpi_t_pvar *h;
    if (int rc = session_handle(session, handle, &h); rc != MPI_SUCCESS)
        return rc;
    return MPI_T_ERR_PVAR_NO_WRITE;
}

// Reset: a counter reads from 0 again in this handle (levels and
// high-water marks are what they are). The page itself is never reset.
WEFT_MPI_WEAK(T_pvar_reset)
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!state().sessions.contains(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (auto &h : session->handles)
            if (int rc = pvar_reset_locked(h.get()); rc != MPI_SUCCESS)
                return rc;
        return MPI_SUCCESS;
    }
    weft_mpi_t_pvar *h = find_handle(session, handle);
    return h ? pvar_reset_locked(h) : MPI_T_ERR_INVALID_HANDLE;
}

// Read, then reset: two steps, so not atomic (the page keeps counting).
WEFT_MPI_WEAK(T_pvar_readreset)
int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    weft_mpi_t_pvar *h;
    if (int rc = session_handle(session, handle, &h); rc != MPI_SUCCESS)
        return rc;
    if (!buf)
        return MPI_ERR_BUFFER;
    if (int rc = pvar_read_locked(h, static_cast<uint64_t *>(buf)); rc != MPI_SUCCESS)
        return rc;
    return pvar_reset_locked(h);
}

WEFT_MPI_WEAK(T_category_get_num)
int PMPI_T_category_get_num(int *num_cat)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!num_cat)
        return MPI_ERR_ARG;
    *num_cat = static_cast<int>(state().categories.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_category_get_info)
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                             int *num_pvars, int *num_categories)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    const auto &cats = state().categories;
    if (cat_index < 0 || static_cast<size_t>(cat_index) >= cats.size())
        return MPI_T_ERR_INVALID_INDEX;
    const Category &c = cats[static_cast<size_t>(cat_index)];
    copy_out(c.name, name, name_len);
    copy_out(c.desc, desc, desc_len);
    set_if(num_cvars, static_cast<int>(c.cvars.size()));
    set_if(num_pvars, static_cast<int>(c.pvars.size()));
    set_if(num_categories, static_cast<int>(c.children.size()));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(T_category_get_index)
int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!name || !cat_index)
        return MPI_ERR_ARG;
    const auto &cats = state().categories;
    const int i = index_named(static_cast<int>(cats.size()), name,
                              [&](int k) { return cats[static_cast<size_t>(k)].name.c_str(); });
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *cat_index = i;
    return MPI_SUCCESS;
}

#define WEFT_MPI_T_CATEGORY_LIST(fn, member)                                                               \
    WEFT_MPI_WEAK(T_category_get_##fn)                                                                     \
    int PMPI_T_category_get_##fn(int cat_index, int len, int indices[])                                    \
    {                                                                                                      \
        MPI_THREAD_GUARD;                                                                                  \
        MPI_T_CHECK_INIT;                                                                                  \
        const auto &cats = state().categories;                                                             \
        if (cat_index < 0 || static_cast<size_t>(cat_index) >= cats.size())                                \
            return MPI_T_ERR_INVALID_INDEX;                                                                \
        return index_list(cats[static_cast<size_t>(cat_index)].member, len, indices);                      \
    }
WEFT_MPI_T_CATEGORY_LIST(cvars, cvars)
WEFT_MPI_T_CATEGORY_LIST(pvars, pvars)
WEFT_MPI_T_CATEGORY_LIST(categories, children)
#undef WEFT_MPI_T_CATEGORY_LIST

// The categories are made once per MPI_T_init_thread from a framework that
// has all its components open: they never change while it runs.
WEFT_MPI_WEAK(T_category_changed)
int PMPI_T_category_changed(int *stamp)
{
    MPI_THREAD_GUARD;
    MPI_T_CHECK_INIT;
    if (!stamp)
        return MPI_ERR_ARG;
    *stamp = 0;
    return MPI_SUCCESS;
}

} // extern "C"
