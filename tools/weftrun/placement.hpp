// SPDX-License-Identifier: BSD-3-Clause
// Where each rank runs: hwloc discovers the machine once here, ranks are
// mapped round-robin over cores / NUMA nodes and bound to a core, a NUMA node
// or nothing. The topology is exported as XML so ranks need not rediscover it.
#pragma once

#include <sched.h>

#include <memory>
#include <string>
#include <vector>

#include <hwloc.h>

#include "core/status.hpp"
#include "weftrun/options.hpp"

namespace weftrun {

struct RankPlacement {
    bool bound = false;
    cpu_set_t cpus;            // valid when bound; applied in the child with sched_setaffinity
    std::string description;   // "core 0 [PU 0]", "NUMA 1 [PU 8-15]", "not bound (why)"
};

class Placement {
public:
    // Loads this machine's topology (or HWLOC_XMLFILE's, as hwloc decides).
    static weft::Result<std::unique_ptr<Placement>> discover();
    ~Placement();
    Placement(const Placement &) = delete;
    Placement &operator=(const Placement &) = delete;

    // Slots: one per core, PUs when hwloc found no cores. Hardware threads
    // are not slots, as in Open MPI's default.
    int slots() const;
    int numa_nodes() const;

    // The binding actually used for N ranks when the user said "default".
    BindTo effective_bind(BindTo requested, int n) const;

    // One placement per rank, binding as effective_bind(requested, n) says.
    // Errors when binding is impossible (e.g. the topology has no NUMA node
    // for --bind-to numa).
    weft::Result<std::vector<RankPlacement>> place(int n, MapBy map, BindTo requested) const;

    // Writes hwloc v2 XML of the topology to path.
    weft::Status export_xml(const std::string &path) const;

    // The loaded topology (CPUs, caches, NUMA nodes; no I/O objects), for
    // the PMIx server to use instead of discovering the machine again.
    hwloc_topology_t topology() const { return topo_; }

private:
    Placement() = default;
    hwloc_obj_t slot_obj(int i) const;
    hwloc_topology_t topo_ = nullptr;
};

} // namespace weftrun
