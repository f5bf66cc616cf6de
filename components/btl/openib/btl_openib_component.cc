// btl/openib: RDMA RC over rdma-core verbs. This file holds the component
// entry points: open registers parameters, query finds devices with an
// ACTIVE port (limits come from the device, never from tables of device
// ids). Queue pairs, the cpc sub-framework and the data path arrive with the
// runtime's btl module interface.
#include <infiniband/verbs.h>

#include <memory>
#include <string>

#include <weft/btl.h>
#include <weft/component_util.hpp>

namespace {

int openib_open(const weft_host_t *host);
int openib_query(const weft_host_t *host, weft_query_result_t *result);
int openib_finalize(const weft_host_t *) { return WEFT_SUCCESS; }

int openib_init(const weft_host_t *, weft_btl_module **, int, int *num_modules)
{
    *num_modules = 0;   // modules arrive with the runtime's btl module interface
    return WEFT_SUCCESS;
}

int openib_start_connect(weft_btl_module *, const weft_btl_peer *, weft_btl_endpoint **)
{
    return WEFT_ERR_NOT_SUPPORTED;
}

} // namespace

extern "C" WEFT_EXPORT const weft_btl_component_t weft_btl_openib_component = {
    .base = {WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "openib", 0, 1, 0),
             .open = openib_open, .query = openib_query, .finalize = openib_finalize},
    .init = openib_init,
    .start_connect = openib_start_connect,
};

namespace {

const weft_component_t *self() { return &weft_btl_openib_component.base; }

const weft::cutil::ParamSpec kParams[] = {
    {"if_include", WEFT_PARAM_LIST, "", WEFT_LEVEL_USER_BASIC,
     "RDMA devices or device:port pairs to use (mlx5_0,mlx5_1:1); empty uses the devices "
     "nearest to the process."},
    {"if_exclude", WEFT_PARAM_LIST, "", WEFT_LEVEL_USER_BASIC,
     "RDMA devices or device:port pairs never to use."},
    {"priority", WEFT_PARAM_INT, "50", WEFT_LEVEL_TUNER_DETAIL,
     "Selection priority among transports that reach the same peer (higher wins)."},
};

int openib_open(const weft_host_t *host)
{
    return weft::cutil::register_params(host, self(), kParams);
}

struct DeviceList {
    ibv_device **list = nullptr;
    int count = 0;
    DeviceList() { list = ibv_get_device_list(&count); }
    ~DeviceList() { if (list) ibv_free_device_list(list); }
};

bool port_allowed(const weft_host_t *host, const char *dev, int port)
{
    std::string dp = std::string(dev) + ":" + std::to_string(port);
    if (host->param_is_set("btl_openib_if_include") == 1)
        return host->list_selects("btl_openib_if_include", dev, nullptr) == 1 ||
               host->list_contains("btl_openib_if_include", dp.c_str(), nullptr) == 1;
    return host->list_contains("btl_openib_if_exclude", dev, nullptr) == 0 &&
           host->list_contains("btl_openib_if_exclude", dp.c_str(), nullptr) == 0;
}

int openib_query(const weft_host_t *host, weft_query_result_t *result)
{
    int64_t priority = 50;
    host->param_get_int("btl_openib_priority", &priority);
    result->priority = static_cast<int>(priority);
    DeviceList devs;
    if (!devs.list || devs.count == 0) {
        weft::cutil::set_reason(result, "no RDMA device found (ibv_get_device_list: none; "
                                           "is an RDMA driver loaded?)");
        return WEFT_SUCCESS;
    }
    std::string active, inactive;
    for (int i = 0; i < devs.count; ++i) {
        const char *name = ibv_get_device_name(devs.list[i]);
        std::unique_ptr<ibv_context, decltype(&ibv_close_device)> ctx(
            ibv_open_device(devs.list[i]), ibv_close_device);
        ibv_device_attr attr{};
        if (!ctx || ibv_query_device(ctx.get(), &attr) != 0) {
            inactive += std::string(inactive.empty() ? "" : ", ") + name + " (cannot open)";
            continue;
        }
        for (int port = 1; port <= attr.phys_port_cnt; ++port) {
            ibv_port_attr pa{};
            std::string dp = std::string(name) + ":" + std::to_string(port);
            if (ibv_query_port(ctx.get(), static_cast<uint8_t>(port), &pa) != 0 ||
                pa.state != IBV_PORT_ACTIVE)
                inactive += (inactive.empty() ? "" : ", ") + dp + " (not active)";
            else if (!port_allowed(host, name, port))
                inactive += (inactive.empty() ? "" : ", ") + dp + " (excluded)";
            else
                active += (active.empty() ? "" : ",") + dp;
        }
    }
    if (!active.empty()) {
        result->available = 1;
        weft::cutil::set_reason(result, "active ports: %s", active.c_str());
    } else {
        weft::cutil::set_reason(result, "no usable RDMA port: %s", inactive.c_str());
    }
    return WEFT_SUCCESS;
}

} // namespace
