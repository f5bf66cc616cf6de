// The topology service: hwloc loaded once per process with I/O objects kept
// under the "important" filter. Answers: where is this process bound, on
// which NUMA node(s), and which network / OpenFabrics devices exist and how
// far each is from the binding. An XML file (topology_base_xml_file, or
// hwloc's own HWLOC_XMLFILE) can stand in for the machine; then
// topology_base_binding stands in for the process binding.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <hwloc.h>

#include "core/status.hpp"

namespace weft::topology {

enum class DeviceKind { Network, OpenFabrics };
const char *kind_name(DeviceKind k);   // "network", "openfabrics"

// Distance classes from the process binding to a device, nearest first.
enum class Distance {
    SameNuma = 0,     // the device's locality is the binding's NUMA node
    SamePackage = 1,  // same package (socket), other NUMA node
    SameMachine = 2,  // another package
    Unknown = 3       // no locality information (e.g. virtual devices)
};
const char *distance_name(Distance d); // "numa-local", "package-local", "remote-package", "unknown"

struct Device {
    std::string name;        // OS device name: eth0, mlx5_0, ib0
    DeviceKind kind;
    std::string pci_bus_id;  // "0000:81:00.0" or empty
    int package = -1;        // logical index of the package it hangs off, -1 unknown
    int numa_node = -1;      // logical index of its NUMA node, -1 unknown
    std::string cpuset;      // locality as an hwloc list string ("0-15")
    Distance distance = Distance::Unknown;
};

struct LoadOptions {
    std::string xml_file;    // empty: this machine (or HWLOC_XMLFILE if set)
    std::string binding;     // empty: the process's real binding; else a cpuset list "0-3"
};

class Topology {
public:
    static Result<std::unique_ptr<Topology>> load(const LoadOptions &opts);
    ~Topology();
    Topology(const Topology &) = delete;
    Topology &operator=(const Topology &) = delete;

    // "this system" or "XML file <path>"
    const std::string &source() const { return source_; }
    bool is_this_system() const { return this_system_; }

    std::string binding() const;          // cpuset list of the binding
    bool bound() const;                   // binding smaller than the whole machine
    std::vector<int> numa_nodes() const;  // NUMA nodes the binding touches (logical indexes)
    int num_packages() const;
    int num_numa_nodes() const;
    int num_cores() const;
    int num_pus() const;

    // Devices of this kind (or all), nearest to the binding first; ties keep
    // hwloc order.
    std::vector<Device> devices() const;
    std::vector<Device> devices(DeviceKind kind) const;

    hwloc_topology_t raw() const { return topo_; }

private:
    Topology() = default;
    hwloc_topology_t topo_ = nullptr;
    hwloc_bitmap_t binding_ = nullptr;
    std::string source_;
    bool this_system_ = true;
};

} // namespace weft::topology
