// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/placement.hpp"

#include <hwloc/glibc-sched.h>

#include <cstdlib>

namespace weftrun {

weft::Result<std::unique_ptr<Placement>> Placement::discover()
{
    std::unique_ptr<Placement> p(new Placement());
    if (hwloc_topology_init(&p->topo_) != 0)
        return weft::Status(WEFT_ERR_NO_MEMORY, "hwloc_topology_init failed");
    // CPUs, caches and NUMA nodes only: I/O discovery (PCI, NICs) is more
    // than half of weftrun's start-up (18 of 33 ms measured here), and the
    // ranks need device locality only to choose among several NICs, which
    // then discover it themselves (Framework::io_topology).
    hwloc_topology_set_io_types_filter(p->topo_, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(p->topo_) != 0) {
        hwloc_topology_destroy(p->topo_);
        p->topo_ = nullptr;
        return weft::Status(WEFT_ERR_IO, "hwloc could not discover the topology of this machine"
                            " (hwloc_topology_load failed); if HWLOC_XMLFILE is set, check that file");
    }
    return p;
}

Placement::~Placement()
{
    if (topo_) hwloc_topology_destroy(topo_);
}

int Placement::slots() const
{
    int cores = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE);
    return cores > 0 ? cores : hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PU);
}

int Placement::numa_nodes() const
{
    return hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE);
}

BindTo Placement::effective_bind(BindTo requested, int n) const
{
    if (requested != BindTo::Default) return requested;
    // Open MPI's rule: bind to core unless that would put two ranks on one core.
    return n <= slots() ? BindTo::Core : BindTo::None;
}

// The i-th slot object: a core, or a PU on a machine without Core objects.
hwloc_obj_t Placement::slot_obj(int i) const
{
    hwloc_obj_type_t t = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    return hwloc_get_obj_by_type(topo_, t, static_cast<unsigned>(i));
}

namespace {
std::string list_of(hwloc_const_bitmap_t set)
{
    char *s = nullptr;
    hwloc_bitmap_list_asprintf(&s, set);
    std::string r = s ? s : "?";
    std::free(s);
    return r;
}
} // namespace

weft::Result<std::vector<RankPlacement>> Placement::place(int n, MapBy map, BindTo requested) const
{
    const BindTo bind = effective_bind(requested, n);
    std::vector<RankPlacement> out(static_cast<size_t>(n));
    const int nslots = slots();
    const int nnuma = numa_nodes();
    if (nslots <= 0) return weft::Status(WEFT_ERR_NOT_AVAILABLE, "hwloc found no cores or PUs on this machine");
    if ((map == MapBy::Numa || bind == BindTo::Numa) && nnuma <= 0)
        return weft::Status(WEFT_ERR_NOT_AVAILABLE, "hwloc found no NUMA node; use --map-by core and --bind-to core or none");

    for (int r = 0; r < n; ++r) {
        // Map: choose the slot (core) of rank r.
        hwloc_obj_t core = nullptr;
        if (map == MapBy::Numa) {
            // Round-robin over NUMA nodes, then over the cores inside each.
            hwloc_obj_t numa = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(r % nnuma));
            int k = r / nnuma;
            hwloc_obj_type_t t = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
            int inside = hwloc_get_nbobjs_inside_cpuset_by_type(topo_, numa->cpuset, t);
            if (inside > 0)
                core = hwloc_get_obj_inside_cpuset_by_type(topo_, numa->cpuset, t, static_cast<unsigned>(k % inside));
            if (!core) core = slot_obj(r % nslots);   // a CPU-less NUMA node: fall back to cores
        } else {
            // core and slot are the same thing on one node: one slot per core.
            core = slot_obj(r % nslots);
        }
        RankPlacement &p = out[static_cast<size_t>(r)];
        hwloc_const_cpuset_t set = nullptr;
        if (bind == BindTo::Core || bind == BindTo::Default) {
            set = core->cpuset;
            p.description = std::string(core->type == HWLOC_OBJ_CORE ? "core " : "PU ") +
                            std::to_string(core->logical_index) + " [PU " + list_of(set) + "]";
        } else if (bind == BindTo::Numa) {
            hwloc_obj_t numa = hwloc_get_obj_covering_cpuset(topo_, core->cpuset);
            while (numa && numa->memory_arity == 0) numa = numa->parent;
            // The NUMA node is a memory child of the first ancestor that has one.
            hwloc_obj_t node = numa ? numa->memory_first_child : nullptr;
            while (node && node->type != HWLOC_OBJ_NUMANODE) node = node->memory_first_child;
            if (!node) return weft::Status(WEFT_ERR_NOT_AVAILABLE, "hwloc found no NUMA node above core " +
                                           std::to_string(core->logical_index) + "; use --bind-to core");
            set = node->cpuset;
            p.description = "NUMA " + std::to_string(node->logical_index) + " [PU " + list_of(set) + "]";
        } else if (requested == BindTo::None) {
            p.description = "not bound (--bind-to none)";
        } else {
            p.description = "not bound (binding is off by default when oversubscribed: " +
                            std::to_string(n) + " ranks on " + std::to_string(nslots) +
                            " cores; --bind-to core binds anyway)";
        }
        if (set) {
            CPU_ZERO(&p.cpus);
            hwloc_cpuset_to_glibc_sched_affinity(topo_, set, &p.cpus, sizeof p.cpus);
            p.bound = true;
        }
    }
    return out;
}

weft::Status Placement::export_xml(const std::string &path) const
{
    if (hwloc_topology_export_xml(topo_, path.c_str(), 0) != 0)
        return weft::Status(WEFT_ERR_IO, "hwloc could not write the topology XML to " + path);
    return {};
}

} // namespace weftrun
