// SPDX-License-Identifier: BSD-3-Clause
// The C host table: what components call back into. Each function converts
// C arguments to the framework's C++ objects and never lets an exception
// escape (none are thrown here; allocation failure terminates as anywhere).
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "core/framework.hpp"

namespace weft {
namespace {

std::vector<std::string> strings(const char *const *list)
{
    std::vector<std::string> out;
    for (; list && *list; ++list)
        out.emplace_back(*list);
    return out;
}

// Members of weft_param_def_t after `size` may be absent in an older
// component's struct; read only what its size covers.
template <class T>
T member_or(const weft_param_def_t *d, T weft_param_def_t::*m, size_t offset, T fallback)
{
    return d->size >= offset + sizeof(T) ? d->*m : fallback;
}

const params::Param *lookup(const char *name, params::Type want_a, params::Type want_b)
{
    Framework *fw = Framework::current();
    if (!fw || !name)
        return nullptr;
    const params::Param *p = fw->params().find(name);
    if (!p || (p->type() != want_a && p->type() != want_b))
        return nullptr;
    return p;
}

int host_param_register(const weft_component_t *owner, const weft_param_def_t *d)
{
    Framework *fw = Framework::current();
    if (!fw || !owner || !d || d->size < offsetof(weft_param_def_t, help) || !d->name)
        return WEFT_ERR_BAD_PARAM;
    params::Definition def;
    def.framework = owner->framework;
    def.component = owner->name;
    def.name = d->name;
    def.type = params::type_from_c(d->type);
    def.default_text = d->default_value ? d->default_value : "";
    def.level = d->level;
    if (const char *h = member_or(d, &weft_param_def_t::help, offsetof(weft_param_def_t, help),
                                  static_cast<const char *>(nullptr)))
        def.help = h;
    def.enumerators = strings(member_or(d, &weft_param_def_t::enumerators,
                                        offsetof(weft_param_def_t, enumerators),
                                        static_cast<const char *const *>(nullptr)));
    def.synonyms = strings(member_or(d, &weft_param_def_t::synonyms,
                                     offsetof(weft_param_def_t, synonyms),
                                     static_cast<const char *const *>(nullptr)));
    def.deprecated = strings(member_or(d, &weft_param_def_t::deprecated,
                                       offsetof(weft_param_def_t, deprecated),
                                       static_cast<const char *const *>(nullptr)));
    Status st = fw->params().add(std::move(def));
    if (!st.ok())
        fw->logger().write(owner->framework, owner->name, WEFT_LOG_ERROR, st.message());
    return st.code();
}

int host_get_bool(const char *name, int *value)
{
    const params::Param *p = lookup(name, params::Type::Bool, params::Type::Bool);
    if (!p || !value)
        return WEFT_ERR_NOT_FOUND;
    *value = p->as_bool() ? 1 : 0;
    return WEFT_SUCCESS;
}

int host_get_int(const char *name, int64_t *value)
{
    const params::Param *p = lookup(name, params::Type::Int, params::Type::Int);
    if (!p || !value)
        return WEFT_ERR_NOT_FOUND;
    *value = p->as_int();
    return WEFT_SUCCESS;
}

int host_get_size(const char *name, uint64_t *value)
{
    const params::Param *p = lookup(name, params::Type::Size, params::Type::Size);
    if (!p || !value)
        return WEFT_ERR_NOT_FOUND;
    *value = p->as_size();
    return WEFT_SUCCESS;
}

int host_get_double(const char *name, double *value)
{
    const params::Param *p = lookup(name, params::Type::Double, params::Type::Double);
    if (!p || !value)
        return WEFT_ERR_NOT_FOUND;
    *value = p->as_double();
    return WEFT_SUCCESS;
}

int host_get_string(const char *name, const char **value)
{
    Framework *fw = Framework::current();
    const params::Param *p = fw && name ? fw->params().find(name) : nullptr;
    if (!p || !value)
        return WEFT_ERR_NOT_FOUND;
    *value = p->text().c_str();
    return WEFT_SUCCESS;
}

int host_log_enabled(const weft_component_t *owner, int level)
{
    Framework *fw = Framework::current();
    return fw && owner && fw->logger().enabled(owner->framework, level);
}

void host_log(const weft_component_t *owner, int level, const char *fmt, ...)
{
    Framework *fw = Framework::current();
    if (!fw || !owner || !fmt || !fw->logger().enabled(owner->framework, level))
        return;
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fw->logger().write(owner->framework, owner->name, level, buf);
}

void host_show_help(const weft_component_t *owner, const char *topic, const char *const *kv)
{
    Framework *fw = Framework::current();
    if (!fw || !owner || !topic)
        return;
    log::HelpArgs args;
    for (; kv && kv[0] && kv[1]; kv += 2)
        args.emplace_back(kv[0], kv[1]);
    fw->help().show(std::string("help-") + owner->framework + "-" + owner->name + ".txt", topic,
                    args);
}

bool list_member(const params::ListSpec &l, const char *name, const struct sockaddr *addr)
{
    return (name && l.contains_name(name)) || (addr && l.contains_address(addr));
}

int host_list_selects(const char *param, const char *name, const struct sockaddr *addr)
{
    const params::Param *p = lookup(param, params::Type::List, params::Type::List);
    if (!p)
        return WEFT_ERR_NOT_FOUND;
    const params::ListSpec &l = p->as_list();
    return l.empty() || list_member(l, name, addr) != l.exclude ? 1 : 0;
}

int host_list_contains(const char *param, const char *name, const struct sockaddr *addr)
{
    const params::Param *p = lookup(param, params::Type::List, params::Type::List);
    if (!p)
        return WEFT_ERR_NOT_FOUND;
    return list_member(p->as_list(), name, addr) ? 1 : 0;
}

int host_param_is_set(const char *name)
{
    Framework *fw = Framework::current();
    const params::Param *p = fw && name ? fw->params().find(name) : nullptr;
    if (!p)
        return WEFT_ERR_NOT_FOUND;
    return p->origin().source != params::Source::Default ? 1 : 0;
}

int host_device_distance(const char *os_device_name)
{
    Framework *fw = Framework::current();
    if (!fw || !os_device_name)
        return WEFT_ERR_BAD_PARAM;
    auto topo = fw->io_topology();
    if (!topo.ok())
        return WEFT_ERR_NOT_AVAILABLE;
    auto dev = topo.value()->device(os_device_name);
    if (!dev)
        return WEFT_ERR_NOT_FOUND;
    // topology::Distance has the same order and values as WEFT_DISTANCE_*.
    return static_cast<int>(dev->distance);
}

int host_speaks_for_job()
{
    Framework *fw = Framework::current();
    return fw && fw->speaks_for_job() ? 1 : 0;
}

const weft_host_t kHost = {
    .size = sizeof(weft_host_t),
    .param_register = host_param_register,
    .param_get_bool = host_get_bool,
    .param_get_int = host_get_int,
    .param_get_size = host_get_size,
    .param_get_double = host_get_double,
    .param_get_string = host_get_string,
    .log_enabled = host_log_enabled,
    .log = host_log,
    .show_help = host_show_help,
    .list_selects = host_list_selects,
    .list_contains = host_list_contains,
    .param_is_set = host_param_is_set,
    .device_distance = host_device_distance,
    .speaks_for_job = host_speaks_for_job,
};

} // namespace

const weft_host_t *Framework::host() const { return &kHost; }

} // namespace weft
