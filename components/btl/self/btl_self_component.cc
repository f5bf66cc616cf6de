// SPDX-License-Identifier: BSD-3-Clause
// btl/self: delivers messages a process sends to itself. It is always
// available and reaches only the calling process. This file holds the
// component entry points and parameters; the module is btl_self_module.*.
#include <memory>
#include <new>
#include <string>

#include <weft/btl_base.hpp>

#include "btl_self_component.hpp"
#include "btl_self_module.hpp"

namespace {

using weft::btl_self::SelfConfig;
using weft::btl_self::SelfModule;
using Modules = weft::btl::Modules<SelfModule>;

int self_open(const weft_host_t *host);
int self_query(const weft_host_t *host, weft_query_result_t *result);
int self_init(const weft_host_t *host, weft_btl_module **modules, int max_modules,
              int *num_modules);

} // namespace

extern "C" WEFT_EXPORT const weft_btl_component_t weft_btl_self_component = {
    .base = {WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "self", 1, 0, 0),
             .open = self_open, .query = self_query, .finalize = Modules::finalize},
    .init = self_init,
    .start_connect = Modules::start_connect,
};

namespace {

const weft_component_t *self() { return &weft_btl_self_component.base; }

const weft::cutil::ParamSpec kParams[] = {
    {"priority", WEFT_PARAM_INT, "100", WEFT_LEVEL_TUNER_DETAIL,
     "Selection priority of btl/self among transports that reach the same peer (higher wins; "
     "self only ever reaches the calling process)."},
    {"eager_limit", WEFT_PARAM_SIZE, "64k", WEFT_LEVEL_TUNER_BASIC,
     "Largest message to self the runtime sends eagerly; larger ones go by get() from "
     "registered memory, which copies once instead of twice."},
    {"max_send", WEFT_PARAM_SIZE, "1G", WEFT_LEVEL_TUNER_DETAIL,
     "Largest payload of one send() to self (at least 256 bytes); the runtime splits larger "
     "messages."},
    {"max_queued", WEFT_PARAM_INT, "4096", WEFT_LEVEL_TUNER_DETAIL,
     "Messages and completions to self that may wait for progress before send(), sendi(), "
     "put() and get() answer WEFT_ERR_AGAIN (at least 1)."},
};

int self_open(const weft_host_t *host)
{
    return weft::cutil::register_params(host, self(), kParams);
}

int self_query(const weft_host_t *host, weft_query_result_t *result)
{
    int64_t priority = 100;
    host->param_get_int("btl_self_priority", &priority);
    result->available = 1;
    result->priority = static_cast<int>(priority);
    weft::cutil::set_reason(result, "loopback to the calling process");
    return WEFT_SUCCESS;
}

// Reports a limit below its minimum through the help catalog.
int refuse_limit(const weft_host_t *host, const char *name, uint64_t value, const char *minimum)
{
    const std::string text = std::to_string(value);
    const char *args[] = {"name", name, "value", text.c_str(), "minimum", minimum, nullptr};
    host->show_help(self(), "limit-too-small", args);
    return WEFT_ERR_BAD_VALUE;
}

int read_config(const weft_host_t *host, SelfConfig *config)
{
    int64_t priority = config->priority, max_queued = static_cast<int64_t>(config->max_queued);
    uint64_t eager = config->eager_limit, max_send = config->max_send;
    host->param_get_int("btl_self_priority", &priority);
    host->param_get_size("btl_self_eager_limit", &eager);
    host->param_get_size("btl_self_max_send", &max_send);
    host->param_get_int("btl_self_max_queued", &max_queued);
    if (max_send < weft::btl_self::kInlineBytes)
        return refuse_limit(host, "btl_self_max_send", max_send, "256");
    if (max_queued < 1)
        return refuse_limit(host, "btl_self_max_queued", static_cast<uint64_t>(max_queued), "1");
    config->priority = static_cast<int>(priority);
    config->eager_limit = static_cast<size_t>(eager);
    config->max_send = static_cast<size_t>(max_send);
    config->max_queued = static_cast<size_t>(max_queued);
    return WEFT_SUCCESS;
}

int self_init(const weft_host_t *host, weft_btl_module **modules, int max_modules,
              int *num_modules)
{
    return Modules::init_one(host, self(), modules, max_modules, num_modules,
                             [&](std::unique_ptr<SelfModule> &m) {
                                 SelfConfig config;
                                 if (int rc = read_config(host, &config); rc != WEFT_SUCCESS)
                                     return rc;
                                 m = std::make_unique<SelfModule>(host, &weft_btl_self_component, config);
                                 return static_cast<int>(WEFT_SUCCESS);
                             });
}

} // namespace
