// SPDX-License-Identifier: BSD-3-Clause
// Device discovery and port choice of btl/openib (see btl_openib_device.hpp).
#include "btl_openib_device.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include <weft/status.h>

namespace weft::openib {

Device::~Device()
{
    if (pd_)
        ibv_dealloc_pd(pd_);
    if (ctx_)
        ibv_close_device(ctx_);
}

std::shared_ptr<Device> Device::open(ibv_device *dev, std::string *why)
{
    std::shared_ptr<Device> d(new Device());
    d->name_ = ibv_get_device_name(dev);
    d->ctx_ = ibv_open_device(dev);
    if (!d->ctx_) {
        *why = d->name_ + ": ibv_open_device failed (" + std::strerror(errno) +
               "; is /dev/infiniband/uverbs* readable by this user?)";
        return nullptr;
    }
    if (ibv_query_device(d->ctx_, &d->attr_) != 0) {
        *why = d->name_ + ": ibv_query_device failed";
        return nullptr;
    }
    d->pd_ = ibv_alloc_pd(d->ctx_);
    if (!d->pd_) {
        *why = d->name_ + ": ibv_alloc_pd failed (" + std::strerror(errno) + ")";
        return nullptr;
    }
    return d;
}

std::vector<PortCandidate> nearest(const std::vector<PortCandidate> &all)
{
    auto dist = [](const PortCandidate &c) { return c.distance < 0 ? 3 : c.distance; };
    int best = 1 << 30;
    for (const auto &c : all)
        best = std::min(best, dist(c));
    std::vector<PortCandidate> out;
    for (const auto &c : all)
        if (dist(c) == best)
            out.push_back(c);
    return out;
}

namespace {

bool port_allowed(const weft_host_t *host, const std::string &dev, int port)
{
    const std::string dp = dev + ":" + std::to_string(port);
    if (host->param_is_set("btl_openib_if_include") == 1)
        return host->list_selects("btl_openib_if_include", dev.c_str(), nullptr) == 1 ||
               host->list_contains("btl_openib_if_include", dp.c_str(), nullptr) == 1;
    return host->list_contains("btl_openib_if_exclude", dev.c_str(), nullptr) == 0 &&
           host->list_contains("btl_openib_if_exclude", dp.c_str(), nullptr) == 0;
}

bool ipv4_mapped(const ibv_gid &g)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(g.raw, prefix, sizeof prefix) == 0;
}

struct DeviceList {
    ibv_device **list = nullptr;
    int count = 0;
    DeviceList() { list = ibv_get_device_list(&count); }
    ~DeviceList()
    {
        if (list)
            ibv_free_device_list(list);
    }
};

} // namespace

int choose_gid(ibv_context *ctx, uint8_t port, const ibv_port_attr &attr, int forced, ibv_gid *gid,
               std::string *why)
{
    if (forced >= 0) {
        if (forced >= attr.gid_tbl_len || ibv_query_gid(ctx, port, forced, gid) != 0) {
            *why = "btl_openib_gid_index=" + std::to_string(forced) + " is not in the port's GID table (" +
                   std::to_string(attr.gid_tbl_len) + " entries; see ibv_devinfo -v)";
            return -1;
        }
        return forced;
    }
    if (attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
        if (ibv_query_gid(ctx, port, 0, gid) != 0) {
            *why = "cannot read GID 0";
            return -1;
        }
        return 0;
    }
    int any_v2 = -1, first = -1;
    for (int i = 0; i < attr.gid_tbl_len; ++i) {
        ibv_gid_entry e{};
        if (ibv_query_gid_ex(ctx, port, static_cast<uint32_t>(i), &e, 0) != 0)
            continue;
        ibv_gid g;
        std::memcpy(g.raw, e.gid.raw, sizeof g.raw);
        static const ibv_gid zero{};
        if (std::memcmp(g.raw, zero.raw, sizeof g.raw) == 0)
            continue;
        if (first < 0)
            first = i;
        if (e.gid_type == IBV_GID_TYPE_ROCE_V2) {
            if (ipv4_mapped(g)) {
                *gid = g;
                return i;
            }
            if (any_v2 < 0)
                any_v2 = i;
        }
    }
    int pick = any_v2 >= 0 ? any_v2 : first;
    if (pick < 0 || ibv_query_gid(ctx, port, pick, gid) != 0) {
        *why = "the RoCE port has no GID (is an IP address configured on its network device?)";
        return -1;
    }
    return pick;
}

std::vector<Port> find_ports(const weft_host_t *host, std::vector<std::string> *skipped, std::string *why)
{
    DeviceList devs;
    if (!devs.list || devs.count == 0) {
        *why = "no RDMA device found (ibv_get_device_list: none; is an RDMA driver loaded? see rdma link show)";
        return {};
    }
    int64_t forced_gid = -1;
    host->param_get_int("btl_openib_gid_index", &forced_gid);
    std::vector<Port> ports;
    for (int i = 0; i < devs.count; ++i) {
        std::string err;
        std::shared_ptr<Device> dev = Device::open(devs.list[i], &err);
        if (!dev) {
            skipped->push_back(err);
            continue;
        }
        for (int p = 1; p <= dev->attr().phys_port_cnt; ++p) {
            const std::string dp = dev->name() + ":" + std::to_string(p);
            Port port;
            port.device = dev;
            PortInfo &pi = port.info;
            pi.ctx = dev->ctx();
            pi.pd = dev->pd();
            pi.port_num = static_cast<uint8_t>(p);
            pi.name = dp;
            if (ibv_query_port(dev->ctx(), pi.port_num, &pi.attr) != 0 || pi.attr.state != IBV_PORT_ACTIVE) {
                skipped->push_back(dp + " (not active)");
                continue;
            }
            if (!port_allowed(host, dev->name(), p)) {
                skipped->push_back(dp + " (excluded by btl_openib_if_include/if_exclude)");
                continue;
            }
            pi.roce = pi.attr.link_layer == IBV_LINK_LAYER_ETHERNET;
            pi.gid_index = choose_gid(dev->ctx(), pi.port_num, pi.attr, static_cast<int>(forced_gid), &pi.gid, &err);
            if (pi.gid_index < 0) {
                skipped->push_back(dp + " (" + err + ")");
                continue;
            }
            if (ipv4_mapped(pi.gid)) {
                char text[INET_ADDRSTRLEN] = {};
                inet_ntop(AF_INET, pi.gid.raw + 12, text, sizeof text);
                pi.ipv4 = text;
            }
            int d = WEFT_DISTANCE_UNKNOWN;
            if (WEFT_HAS_MEMBER(host, weft_host_t, device_distance) && host->device_distance)
                d = host->device_distance(dev->name().c_str());
            port.distance = d < 0 ? WEFT_DISTANCE_UNKNOWN : d;
            ports.push_back(std::move(port));
        }
    }
    if (ports.empty()) {
        *why = "no usable RDMA port";
        for (size_t i = 0; i < skipped->size(); ++i)
            *why += (i ? ", " : ": ") + (*skipped)[i];
        return {};
    }
    std::vector<PortCandidate> cands;
    for (const Port &p : ports)
        cands.push_back({p.device->name(), p.info.port_num, p.distance});
    std::vector<PortCandidate> keep = nearest(cands);
    std::vector<Port> out;
    for (Port &p : ports) {
        bool near = std::any_of(keep.begin(), keep.end(), [&](const PortCandidate &c) {
            return c.device == p.device->name() && c.port == p.info.port_num;
        });
        if (near)
            out.push_back(std::move(p));
        else
            skipped->push_back(p.info.name + " (farther from this process's binding than another port)");
    }
    return out;
}

} // namespace weft::openib
