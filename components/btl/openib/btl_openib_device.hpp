// SPDX-License-Identifier: BSD-3-Clause
// btl/openib devices and ports: which RDMA ports this process uses, and the
// verbs objects a device shares between the modules of its ports.
//
// Choice: only ACTIVE ports that btl_openib_if_include/if_exclude allow,
// then only those nearest to the process's binding (hwloc distance of the
// device through host->device_distance), so a process on socket 1 uses the
// HCA on socket 1. Limits (queue depths, inline size, RDMA read depth) come
// from ibv_query_device, never from tables of device ids.
#pragma once

#include <infiniband/verbs.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <weft/host.h>

#include "cpc/cpc.hpp"

namespace weft::openib {

// An opened device: its context and protection domain, closed together.
class Device {
public:
    ~Device();
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;
    // nullptr with *why when the device cannot be opened.
    static std::shared_ptr<Device> open(ibv_device *dev, std::string *why);

    ibv_context *ctx() const { return ctx_; }
    ibv_pd *pd() const { return pd_; }
    const ibv_device_attr &attr() const { return attr_; }
    const std::string &name() const { return name_; }

private:
    Device() = default;
    ibv_context *ctx_ = nullptr;
    ibv_pd *pd_ = nullptr;
    ibv_device_attr attr_{};
    std::string name_;
};

// A port this process may use.
struct Port {
    std::shared_ptr<Device> device;
    PortInfo info;                   // what the cpcs see (ctx, pd, port, gid...)
    int distance = 0;                // WEFT_DISTANCE_*
};

// A candidate before opening anything: for the nearest-first choice.
struct PortCandidate {
    std::string device;
    int port = 0;
    int distance = 0;                // WEFT_DISTANCE_*, or negative when hwloc cannot tell
};

// Keeps the candidates at the smallest distance (an unknown distance counts
// as WEFT_DISTANCE_UNKNOWN), in their order.
std::vector<PortCandidate> nearest(const std::vector<PortCandidate> &all);

// The ports to use: active, allowed by the include/exclude lists, nearest.
// *skipped lists the others with why ("mlx5_1:1 (not active)"). An empty
// result with *why says why nothing is usable.
std::vector<Port> find_ports(const weft_host_t *host, std::vector<std::string> *skipped, std::string *why);

// The GID index to use on a port: btl_openib_gid_index if set (>= 0), else
// on RoCE the first RoCE v2 GID holding an IPv4 address, then any RoCE v2,
// then index 0. -1 with *why if the port has no usable GID.
int choose_gid(ibv_context *ctx, uint8_t port, const ibv_port_attr &attr, int forced, ibv_gid *gid,
               std::string *why);

} // namespace weft::openib
