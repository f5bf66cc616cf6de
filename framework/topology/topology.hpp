// SPDX-License-Identifier: BSD-3-Clause
// The topology service: hwloc loaded once per process with I/O objects kept
// under the "important" filter. Answers: where is this process bound, on
// which NUMA node(s), and which network / OpenFabrics devices exist and how
// far each is from the binding. An XML file (topology_base_xml_file, or
// hwloc's own HWLOC_XMLFILE) can stand in for the machine; then
// topology_base_binding stands in for the process binding.
//
// Everything is computed once in load(); the accessors only read cached
// data, so a loaded Topology can be shared by threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <hwloc.h>

#include "core/status.hpp"

namespace weft::topology {

enum class DeviceKind { Network, OpenFabrics };
const char *kind_name(DeviceKind k);   // "network", "openfabrics"

// Distance classes from the process binding to a device, nearest first.
// "Locality" is the cpuset of the device's first non-I/O ancestor. The class
// is the smallest object that holds both the whole binding and the whole
// locality, so it describes the binding's farthest PU (an unbound process on
// a two-socket machine is remote from every NIC, not local to all of them):
enum class Distance {
    SameNuma = 0,     // binding and locality lie within one NUMA node
    SamePackage = 1,  // ... within one package (socket), not one NUMA node
    SameMachine = 2,  // the locality is inside one package or NUMA node,
                      // but the binding reaches outside it (another package)
    Unknown = 3       // no locality (e.g. virtual devices), or a locality
                      // spanning several packages, so no side is nearer
};
const char *distance_name(Distance d); // "numa-local", "package-local", "remote-package", "unknown"

struct Device {
    std::string name;        // OS device name: eth0, mlx5_0, ib0
    DeviceKind kind;
    std::string pci_bus_id;  // "0000:81:00.0" or empty
    int package = -1;        // logical index of the package holding its locality, -1 unknown
    int numa_node = -1;      // logical index of the NUMA node holding its locality,
                             // -1 unknown or several (a device hanging off the package)
    std::string cpuset;      // locality as an hwloc list string ("0-15"), empty if none
    Distance distance = Distance::Unknown;
};

struct LoadOptions {
    std::string xml_file;    // empty: this machine (or HWLOC_XMLFILE if set)
    // empty: the process's real binding on this system, the whole machine
    // for an XML topology; else a cpuset list of OS PU numbers ("0-3",
    // "0,2,8-15", as taskset and hwloc-bind take them).
    std::string binding;
    // An XML export of this very machine made by the launcher (weftrun sets
    // WEFT_TOPOLOGY_XML), so ranks skip discovery. Unlike xml_file it is
    // loaded as "this system": the real binding applies. Ignored when
    // xml_file or HWLOC_XMLFILE chose a topology; an unreadable export falls
    // back to discovery, since it is only a shortcut.
    std::string launcher_xml;
    // Discover I/O devices (NICs, HCAs and their PCI parents) on this
    // machine. Off, discovery is CPUs, caches and NUMA nodes only: hwloc's
    // I/O discovery (PCI, and CUDA/NVML/OpenCL on hosts with GPUs) costs
    // hundreds of milliseconds there, and most questions never need it. An
    // XML file keeps whatever devices it describes either way.
    bool io_devices = true;
};

class Topology {
public:
    // Never aborts: a missing or malformed XML file, an XML file hwloc 2
    // cannot read (v3), or a bad binding string come back as a Status
    // naming the setting, what failed and how to fix it.
    static Result<std::unique_ptr<Topology>> load(const LoadOptions &opts);
    ~Topology();
    Topology(const Topology &) = delete;
    Topology &operator=(const Topology &) = delete;

    // "this system", "XML file <path>", "XML file <path> (HWLOC_XMLFILE)",
    // or the hwloc environment variable that chose another source.
    const std::string &source() const { return source_; }
    // hwloc_topology_is_thissystem(): false for XML unless HWLOC_THISSYSTEM=1.
    bool is_this_system() const { return this_system_; }
    // Loaded from the launcher's export (WEFT_TOPOLOGY_XML), which holds no
    // I/O devices: device questions need a discovered topology.
    bool from_launcher_export() const { return from_launcher_; }
    // The topology can answer device questions: loaded with io_devices,
    // or from an XML file (which describes its own devices).
    bool has_io_devices() const { return io_devices_; }

    std::string binding() const;          // cpuset list of the binding
    bool bound() const;                   // binding smaller than the whole machine
    std::vector<int> numa_nodes() const;  // NUMA nodes the binding touches (logical indexes)
    int num_packages() const;
    int num_numa_nodes() const;
    int num_cores() const;                // hwloc's count; 0 if it found no Core objects
    int num_pus() const;

    // Devices of this kind (or all), nearest to the binding first; ties keep
    // hwloc order.
    std::vector<Device> devices() const;
    std::vector<Device> devices(DeviceKind kind) const;
    // The device with this OS name, if hwloc reported it.
    std::optional<Device> device(const std::string &name) const;

    hwloc_topology_t raw() const { return topo_; }

private:
    Topology() = default;
    Status init_hwloc(const LoadOptions &opts);
    Status init_binding(const LoadOptions &opts);
    // Loads the launcher's export as this system; false (and a fresh,
    // empty topo_) when it cannot be read.
    bool load_launcher_export(const std::string &path);
    void init_devices();

    hwloc_topology_t topo_ = nullptr;
    hwloc_bitmap_t binding_ = nullptr;
    std::string source_;
    bool this_system_ = true;
    bool from_launcher_ = false;
    bool io_devices_ = false;
    std::vector<Device> devices_;         // sorted nearest first
};

} // namespace weft::topology
