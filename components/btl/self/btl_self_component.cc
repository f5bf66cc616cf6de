// btl/self: delivers messages a process sends to itself. It is always
// available and reaches only the calling process; the data path arrives with
// the runtime's module interface.
#include <weft/btl.h>
#include <weft/component_util.hpp>

namespace {

int self_open(const weft_host_t *host);
int self_query(const weft_host_t *host, weft_query_result_t *result);
int self_finalize(const weft_host_t *) { return WEFT_SUCCESS; }

int self_init(const weft_host_t *, weft_btl_module **, int, int *num_modules)
{
    *num_modules = 0;   // modules arrive with the runtime's btl module interface
    return WEFT_SUCCESS;
}

int self_start_connect(weft_btl_module *, const weft_btl_peer *, weft_btl_endpoint **)
{
    return WEFT_ERR_NOT_SUPPORTED;
}

} // namespace

extern "C" WEFT_EXPORT const weft_btl_component_t weft_btl_self_component = {
    .base = {WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "self", 1, 0, 0),
             .open = self_open, .query = self_query, .finalize = self_finalize},
    .init = self_init,
    .start_connect = self_start_connect,
};

namespace {

const weft::cutil::ParamSpec kParams[] = {
    {"priority", WEFT_PARAM_INT, "100", WEFT_LEVEL_TUNER_DETAIL,
     "Selection priority of btl/self among transports that reach the same peer (higher wins; "
     "self only ever reaches the calling process)."},
};

int self_open(const weft_host_t *host)
{
    return weft::cutil::register_params(host, &weft_btl_self_component.base, kParams);
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

} // namespace
