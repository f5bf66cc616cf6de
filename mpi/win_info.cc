// SPDX-License-Identifier: BSD-3-Clause
// One-sided communication, part 3: what a window says about itself (its
// info keys, name and predefined attributes) and dynamic windows (create,
// attach, detach). See win.hpp for the design.
//
// MPI_Info objects belong to the environment part of the layer; this file
// reaches them through PMPI_Info_* only, declared weak so that the window
// code links (and answers without info) in a library built without them.
#include <algorithm>
#include <cstring>
#include <string>

#include "mpi/win.hpp"

extern "C" {
int PMPI_Info_create(MPI_Info *info) __attribute__((weak));
int PMPI_Info_set(MPI_Info info, const char *key, const char *value) __attribute__((weak));
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag) __attribute__((weak));
}

namespace weft::mpi {

namespace {

// The window info keys of MPI-3.1 (sec. 11.2.1) this layer knows, each
// with its values. The keys are hints: weft's windows behave the same
// whatever they say (accumulates are always applied in order, locks
// always work), so they are recorded and answered by MPI_Win_get_info.
struct KeyRule {
    const char *key;
    const char *values[5];   // the accepted values (null-terminated); none listed: any
};
constexpr KeyRule kKeys[] = {
    {"no_locks", {"true", "false", nullptr}},
    {"accumulate_ordering", {}},
    {"accumulate_ops", {"same_op", "same_op_no_op", nullptr}},
    {"same_size", {"true", "false", nullptr}},
    {"same_disp_unit", {"true", "false", nullptr}},
    {"alloc_shared_noncontig", {"true", "false", nullptr}},
};

bool accepted(const KeyRule &k, const std::string &v)
{
    MPI_THREAD_GUARD;
    if (!k.values[0])
        return !v.empty();
    for (const char *const *p = k.values; *p; ++p)
        if (v == *p)
            return true;
    return false;
}

} // namespace

void win_info_defaults(Win &w)
{
    w.info = {{"no_locks", "false"},
              {"accumulate_ordering", "rar,raw,war,waw"},
              {"accumulate_ops", "same_op_no_op"},
              {"same_size", "false"},
              {"same_disp_unit", "false"}};
    if (w.flavor == MPI_WIN_FLAVOR_SHARED)
        w.info["alloc_shared_noncontig"] = "false";
}

void win_info_apply(Win &w, MPI_Info info)
{
    if (info == MPI_INFO_NULL || !PMPI_Info_get)
        return;
    for (const KeyRule &k : kKeys) {
        char value[256] = {};
        int flag = 0;
        if (PMPI_Info_get(info, k.key, sizeof value - 1, value, &flag) != MPI_SUCCESS || !flag)
            continue;
        // Unknown values are ignored, as the standard asks of hints.
        if (accepted(k, value) && (w.info.count(k.key) || w.flavor == MPI_WIN_FLAVOR_SHARED))
            w.info[k.key] = value;
    }
}

bool win_predefined_attr(MPI_Win h, int keyval, void *attribute_val, int *flag)
{
    Win *w = win(h);
    if (!w || !attribute_val || !flag)
        return false;
    void *answer;
    switch (keyval) {
    case MPI_WIN_BASE:
        answer = w->base;
        break;
    case MPI_WIN_SIZE:
        answer = &w->attr_size;
        break;
    case MPI_WIN_DISP_UNIT:
        answer = &w->attr_disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        answer = &w->flavor;
        break;
    case MPI_WIN_MODEL:
        answer = &w->model;
        break;
    default:
        return false;
    }
    *static_cast<void **>(attribute_val) = answer;
    *flag = 1;
    return true;
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Win_set_info)
int PMPI_Win_set_info(MPI_Win h, MPI_Info info)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Win_set_info", h, w);
    win_info_apply(*w, info);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_get_info)
int PMPI_Win_get_info(MPI_Win h, MPI_Info *info_used)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_get_info";
    WIN_OR_RETURN(fn, h, w);
    if (!info_used)
        return win_error(*w, MPI_ERR_ARG, fn, "info_used is NULL");
    if (!PMPI_Info_create || !PMPI_Info_set)
        return win_error(*w, MPI_ERR_NOT_SUPPORTED, fn,
                         "this libweft_mpi was built without MPI_Info objects (MPI_Info_create)");
    MPI_Info out;
    if (int rc = PMPI_Info_create(&out))
        return win_error(*w, rc, fn, "creating the info object failed");
    for (const auto &[k, v] : w->info)
        if (int rc = PMPI_Info_set(out, k.c_str(), v.c_str()))
            return win_error(*w, rc, fn, "setting info key " + k + " failed");
    *info_used = out;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_set_name)
int PMPI_Win_set_name(MPI_Win h, const char *name)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Win_set_name", h, w);
    if (!name)
        return win_error(*w, MPI_ERR_ARG, "MPI_Win_set_name", "win_name is NULL");
    w->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_get_name)
int PMPI_Win_get_name(MPI_Win h, char *name, int *resultlen)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Win_get_name", h, w);
    if (!name || !resultlen)
        return win_error(*w, MPI_ERR_ARG, "MPI_Win_get_name", "win_name or resultlen is NULL");
    std::memcpy(name, w->name.c_str(), w->name.size() + 1);
    *resultlen = static_cast<int>(w->name.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_create_dynamic)
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm h, MPI_Win *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_create_dynamic";
    MPI_NEED_INIT(fn);
    Comm *c;
    if (int rc = win_check_args(fn, h, out ? nullptr : "win", 0, 1, &c))
        return rc;
    auto w = std::make_unique<Win>();
    w->flavor = MPI_WIN_FLAVOR_DYNAMIC;
    return win_make(fn, c, std::move(w), info, out);
}

WEFT_MPI_WEAK(Win_attach)
int PMPI_Win_attach(MPI_Win h, void *base, MPI_Aint size)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_attach";
    WIN_OR_RETURN(fn, h, w);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return win_error(*w, MPI_ERR_WIN, fn, "the window was not made by MPI_Win_create_dynamic");
    if (size < 0)
        return win_error(*w, MPI_ERR_SIZE, fn, "size " + std::to_string(size) + " is negative");
    if (!base && size > 0)
        return win_error(*w, MPI_ERR_BASE, fn, "base is NULL with size " + std::to_string(size));
    const uintptr_t b = reinterpret_cast<uintptr_t>(base);
    const size_t n = static_cast<size_t>(size);
    for (const Region &r : w->regions)
        if (b < r.base + r.size && r.base < b + n)
            return win_error(*w, MPI_ERR_RMA_CONFLICT, fn,
                             "the memory overlaps a region already attached to this window");
    w->regions.push_back({b, n});
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_detach)
int PMPI_Win_detach(MPI_Win h, const void *base)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_detach";
    WIN_OR_RETURN(fn, h, w);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return win_error(*w, MPI_ERR_WIN, fn, "the window was not made by MPI_Win_create_dynamic");
    const uintptr_t b = reinterpret_cast<uintptr_t>(base);
    auto it = std::find_if(w->regions.begin(), w->regions.end(), [&](const Region &r) { return r.base == b; });
    if (it == w->regions.end())
        return win_error(*w, MPI_ERR_BASE, fn, "no region attached to this window starts at that address");
    // Accumulates already arrived at this process are applied first.
    win_service();
    w->regions.erase(it);
    return MPI_SUCCESS;
}

} // extern "C"
