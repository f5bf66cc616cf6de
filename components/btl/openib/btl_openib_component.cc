// SPDX-License-Identifier: BSD-3-Clause
// btl/openib: RDMA RC over rdma-core verbs. The component entry points:
// open registers the parameters (its own and every cpc's), query finds
// usable ports (and says why not, silently: a machine without RDMA is the
// common case), init opens one module per chosen port, start_connect hands
// the peer to that module's cpc.
#include <infiniband/verbs.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <weft/btl_base.hpp>

#include "btl_openib_device.hpp"
#include "btl_openib_module.hpp"
#include "cpc/cpc.hpp"

namespace {

using namespace weft::openib;

int openib_open(const weft_host_t *host);
int openib_query(const weft_host_t *host, weft_query_result_t *result);
int openib_init(const weft_host_t *host, weft_btl_module **modules, int max_modules, int *num_modules);
using Modules = weft::btl::Modules<Module>;

} // namespace

extern "C" WEFT_EXPORT const weft_btl_component_t weft_btl_openib_component = {
    .base = {WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "openib", 0, 1, 0),
             .open = openib_open, .query = openib_query, .finalize = Modules::finalize},
    .init = openib_init,
    .start_connect = Modules::start_connect,
};

namespace {

const weft_component_t *self() { return &weft_btl_openib_component.base; }

const weft::cutil::ParamSpec kParams[] = {
    {"if_include", WEFT_PARAM_LIST, "", WEFT_LEVEL_USER_BASIC,
     "RDMA devices or device:port pairs to use (mlx5_0,mlx5_1:1); empty uses the ports nearest to the process."},
    {"if_exclude", WEFT_PARAM_LIST, "", WEFT_LEVEL_USER_BASIC, "RDMA devices or device:port pairs never to use."},
    {"priority", WEFT_PARAM_INT, "50", WEFT_LEVEL_TUNER_DETAIL,
     "Selection priority among transports that reach the same peer (higher wins)."},
    {"cpc", WEFT_PARAM_LIST, "udcm,rdmacm", WEFT_LEVEL_USER_DETAIL,
     "Connection methods to run: udcm (IB CM handshake over UD), rdmacm (librdmacm, IP addressing), "
     "oob (every pair wired at weft_init from queue pair data in the PMIx modex; N-1 queue pairs per process); "
     "btl_openib_cpc_<name>_priority orders them (higher first)."},
    {"gid_index", WEFT_PARAM_INT, "-1", WEFT_LEVEL_USER_DETAIL,
     "GID table index to use; -1 picks on RoCE the RoCE v2 GID of the port's IPv4 address (ibv_devinfo -v lists "
     "them)."},
    {"eager_limit", WEFT_PARAM_SIZE, "12k", WEFT_LEVEL_TUNER_BASIC,
     "Largest message sent eagerly; larger ones use RDMA read/write (rendezvous)."},
    {"frame_size", WEFT_PARAM_SIZE, "16k", WEFT_LEVEL_TUNER_DETAIL,
     "Size of each registered send and receive buffer: a longer message travels as several frames. Each peer "
     "costs (recv_depth + 3) of them in registered memory (about 1 MiB by default)."},
    {"max_send", WEFT_PARAM_SIZE, "64m", WEFT_LEVEL_TUNER_DETAIL,
     "Largest single message the transport accepts (the runtime sends larger ones by RDMA)."},
    {"recv_depth", WEFT_PARAM_INT, "64", WEFT_LEVEL_TUNER_DETAIL,
     "Receive buffers posted per peer: the frames a peer may have in flight before it waits for credits."},
    {"send_bufs", WEFT_PARAM_INT, "256", WEFT_LEVEL_TUNER_DETAIL,
     "Registered send buffers per port, shared by all peers."},
    {"inline_max", WEFT_PARAM_INT, "128", WEFT_LEVEL_TUNER_DETAIL,
     "Inline data asked of each queue pair (small frames skip the copy to a send buffer); the device may grant "
     "less."},
    {"rdma_depth", WEFT_PARAM_INT, "64", WEFT_LEVEL_TUNER_DETAIL, "RDMA reads and writes in flight per peer."},
    {"timeout", WEFT_PARAM_INT, "20", WEFT_LEVEL_TUNER_DETAIL,
     "RC ack timeout exponent (4.096 us * 2^timeout, 1-31): how long before a lost packet is resent; with "
     "retry_count it bounds how long a dead peer takes to notice."},
    // Not 7: Soft-RoCE (rdma_rxe) takes a retry count of 7 as "retry forever"
    // (as the IB spec does only for the RNR retry count), so a dead peer
    // would never be noticed there. 6 costs one retransmission on hardware.
    {"retry_count", WEFT_PARAM_INT, "6", WEFT_LEVEL_TUNER_DETAIL,
     "RC retransmissions before a connection fails (0-7; 7 means forever on Soft-RoCE, where a dead peer "
     "is then never noticed)."},
    {"reg_limit", WEFT_PARAM_SIZE, "1g", WEFT_LEVEL_TUNER_DETAIL,
     "Bytes the registration cache keeps registered before it releases unused regions."},
    {"leave_pinned", WEFT_PARAM_BOOL, "false", WEFT_LEVEL_TUNER_DETAIL,
     "Keep user buffers registered after use (faster reuse; unsafe if the program frees and remaps them)."},
};

int openib_open(const weft_host_t *host)
{
    if (int rc = weft::cutil::register_params(host, self(), kParams); rc != WEFT_SUCCESS)
        return rc;
    for (const CpcComponent *cpc : all_cpcs()) {
        // Every cpc's priority, under one pattern: btl_openib_cpc_<name>_priority.
        const std::string name = std::string("cpc_") + cpc->name + "_priority";
        const std::string value = std::to_string(cpc->default_priority);
        const std::string help = std::string("Preference of the ") + cpc->name +
                                 " connection method among those btl_openib_cpc allows (higher first).";
        weft_param_def_t d{};
        d.size = sizeof d;
        d.name = name.c_str();
        d.type = WEFT_PARAM_INT;
        d.default_value = value.c_str();
        d.level = WEFT_LEVEL_TUNER_DETAIL;
        d.help = help.c_str();
        if (int rc = host->param_register(self(), &d); rc != WEFT_SUCCESS)
            return rc;
        if (cpc->open)
            if (int rc = cpc->open(host, self()); rc != WEFT_SUCCESS)
                return rc;
    }
    return WEFT_SUCCESS;
}

int openib_query(const weft_host_t *host, weft_query_result_t *result)
{
    int64_t priority = 50;
    host->param_get_int("btl_openib_priority", &priority);
    result->priority = static_cast<int>(priority);
    std::vector<std::string> skipped;
    std::string why;
    std::vector<Port> ports = find_ports(host, &skipped, &why);
    if (ports.empty()) {
        weft::cutil::set_reason(result, "%s", why.c_str());
        return WEFT_SUCCESS;
    }
    std::string names;
    for (const Port &p : ports)
        names += (names.empty() ? "" : ",") + p.info.name;
    result->available = 1;
    weft::cutil::set_reason(result, "ports: %s", names.c_str());
    return WEFT_SUCCESS;
}

// Reads one bounded integer parameter; false after saying what is wrong.
bool read_int(const weft_host_t *host, const char *name, int64_t lo, int64_t hi, unsigned *out)
{
    int64_t v = *out;
    host->param_get_int(name, &v);
    if (v < lo || v > hi) {
        host->log(self(), WEFT_LOG_ERROR, "%s=%lld is out of range: use %lld to %lld", name,
                  static_cast<long long>(v), static_cast<long long>(lo), static_cast<long long>(hi));
        return false;
    }
    *out = static_cast<unsigned>(v);
    return true;
}

int read_config(const weft_host_t *host, OpenibConfig *c)
{
    int64_t priority = c->priority;
    host->param_get_int("btl_openib_priority", &priority);
    c->priority = static_cast<int>(priority);
    uint64_t eager = c->eager_limit, frame = c->buf_size, max_send = c->max_send, reg_limit = c->reg_limit;
    host->param_get_size("btl_openib_eager_limit", &eager);
    host->param_get_size("btl_openib_frame_size", &frame);
    host->param_get_size("btl_openib_max_send", &max_send);
    host->param_get_size("btl_openib_reg_limit", &reg_limit);
    if (frame < 1024 || frame > (uint64_t{1} << 30)) {
        host->log(self(), WEFT_LOG_ERROR, "btl_openib_frame_size=%llu: use 1k to 1g",
                  static_cast<unsigned long long>(frame));
        return WEFT_ERR_BAD_VALUE;
    }
    if (eager > frame || max_send < frame) {
        host->log(self(), WEFT_LOG_ERROR,
                  "btl_openib_eager_limit=%llu, frame_size=%llu, max_send=%llu: need eager_limit <= frame_size <= "
                  "max_send", static_cast<unsigned long long>(eager), static_cast<unsigned long long>(frame),
                  static_cast<unsigned long long>(max_send));
        return WEFT_ERR_BAD_VALUE;
    }
    c->eager_limit = eager;
    c->buf_size = frame;
    c->max_send = max_send;
    c->reg_limit = reg_limit;
    int leave = 0;
    host->param_get_bool("btl_openib_leave_pinned", &leave);
    c->leave_pinned = leave != 0;
    if (!read_int(host, "btl_openib_recv_depth", 2, 1 << 16, &c->recv_depth) ||
        !read_int(host, "btl_openib_send_bufs", 4, 65535, &c->send_bufs) ||
        !read_int(host, "btl_openib_inline_max", 0, 4096, &c->inline_max) ||
        !read_int(host, "btl_openib_rdma_depth", 1, 4096, &c->rdma_depth) ||
        !read_int(host, "btl_openib_timeout", 1, 31, &c->timeout) ||
        !read_int(host, "btl_openib_retry_count", 0, 7, &c->retry_count))
        return WEFT_ERR_BAD_VALUE;
    const char *list = "udcm,rdmacm";
    host->param_get_string("btl_openib_cpc", &list);
    std::string text = list ? list : "";
    c->cpc_order.clear();
    for (size_t at = 0; at <= text.size();) {
        size_t comma = text.find(',', at);
        std::string name = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        at = comma == std::string::npos ? text.size() + 1 : comma + 1;
        if (name.empty())
            continue;
        bool known = false;
        std::string all;
        for (const CpcComponent *cpc : all_cpcs()) {
            known = known || name == cpc->name;
            all += (all.empty() ? "" : ", ") + std::string(cpc->name);
        }
        if (!known) {
            host->log(self(), WEFT_LOG_ERROR, "btl_openib_cpc: unknown connection method '%s' (known: %s)",
                      name.c_str(), all.c_str());
            return WEFT_ERR_NOT_FOUND;
        }
        c->cpc_order.push_back(name);
    }
    // The list says which; their priorities say in what order (a stable
    // sort keeps the list's order between equal priorities).
    auto cpc_priority = [&](const std::string &name) {
        int64_t p = 0;
        for (const CpcComponent *cpc : all_cpcs())
            if (name == cpc->name)
                p = cpc->default_priority;
        host->param_get_int(("btl_openib_cpc_" + name + "_priority").c_str(), &p);
        return p;
    };
    std::stable_sort(c->cpc_order.begin(), c->cpc_order.end(),
                     [&](const std::string &a, const std::string &b) { return cpc_priority(a) > cpc_priority(b); });
    if (c->cpc_order.empty()) {
        host->log(self(), WEFT_LOG_ERROR, "btl_openib_cpc is empty: name at least one connection method");
        return WEFT_ERR_BAD_VALUE;
    }
    return WEFT_SUCCESS;
}

int openib_init(const weft_host_t *host, weft_btl_module **out, int max_modules, int *num_modules)
{
    return Modules::init(host, self(), out, max_modules, num_modules, [&](auto &modules, int max) {
        OpenibConfig config;
        if (int rc = read_config(host, &config); rc != WEFT_SUCCESS)
            return rc;
        std::vector<std::string> skipped;
        std::string why;
        std::vector<Port> ports = find_ports(host, &skipped, &why);
        for (Port &port : ports) {
            if (static_cast<int>(modules.size()) >= max)
                break;
            const std::string name = port.info.name;
            auto m = std::make_unique<Module>(host, &weft_btl_openib_component, config, std::move(port));
            if (std::string err = m->open(); !err.empty()) {
                host->log(self(), WEFT_LOG_WARN, "%s cannot be used: %s", name.c_str(), err.c_str());
                continue;
            }
            modules.push_back(std::move(m));
        }
        if (modules.empty() && !ports.empty())
            return static_cast<int>(WEFT_ERR_NOT_AVAILABLE);
        return static_cast<int>(WEFT_SUCCESS);
    });
}

} // namespace
