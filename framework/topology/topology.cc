// SPDX-License-Identifier: BSD-3-Clause
#include "topology/topology.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <utility>

#include <dlfcn.h>

// AddressSanitizer (and with it LeakSanitizer): GCC defines the macro,
// clang answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define WEFT_TOPOLOGY_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_TOPOLOGY_LSAN 1
#endif
#endif

namespace weft::topology {

const char *kind_name(DeviceKind k)
{
    switch (k) {
    case DeviceKind::Network: return "network";
    case DeviceKind::OpenFabrics: return "openfabrics";
    }
    return "unknown";
}

const char *distance_name(Distance d)
{
    switch (d) {
    case Distance::SameNuma: return "numa-local";
    case Distance::SamePackage: return "package-local";
    case Distance::SameMachine: return "remote-package";
    case Distance::Unknown: return "unknown";
    }
    return "unknown";
}

namespace {

// Temporaries only; the Topology's own topology and binding are hwloc
// handles released in its destructor.
struct BitmapFree {
    void operator()(hwloc_bitmap_s *b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapFree>;

struct FileClose {
    void operator()(std::FILE *f) const { std::fclose(f); }
};

std::string list_string(hwloc_const_bitmap_t set)
{
    char *s = nullptr;
    if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s)
        return {};
    std::string out(s);
    std::free(s);
    return out;
}

// Where the XML file that stands in for the machine came from: the setting
// named in messages, and the fix to suggest besides "give a valid file".
struct XmlSource {
    std::string path;
    std::string setting;   // "topology_base_xml_file" or "HWLOC_XMLFILE"
    std::string from_env;  // non-empty when the environment chose it
};

// topology_base_xml_file wins. Otherwise HWLOC_XMLFILE, exactly when
// hwloc_topology_load would use it: hwloc ignores these variables when
// HWLOC_COMPONENTS is set and prefers HWLOC_FSROOT, HWLOC_CPUID_PATH and
// HWLOC_SYNTHETIC. We hand that file to hwloc ourselves because hwloc,
// when it cannot load it, silently discovers this machine instead; a test
// or site that asked for a simulated machine must not get the real one
// without noticing.
std::optional<XmlSource> xml_source(const LoadOptions &opts)
{
    if (!opts.xml_file.empty())
        return XmlSource{opts.xml_file, "topology_base_xml_file", {}};
    for (const char *var : {"HWLOC_COMPONENTS", "HWLOC_FSROOT", "HWLOC_CPUID_PATH", "HWLOC_SYNTHETIC"})
        if (std::getenv(var))
            return std::nullopt;
    const char *env = std::getenv("HWLOC_XMLFILE");
    if (!env || !*env)
        return std::nullopt;
    return XmlSource{env, "HWLOC_XMLFILE", " (HWLOC_XMLFILE)"};
}

// The hwloc environment variable that chose a source other than this
// system when no XML file did (see xml_source for hwloc's order).
std::string env_source()
{
    for (const char *var : {"HWLOC_COMPONENTS", "HWLOC_FSROOT", "HWLOC_CPUID_PATH", "HWLOC_SYNTHETIC"})
        if (const char *v = std::getenv(var))
            return std::string(var) + "=" + v;
    return "another system (hwloc environment)";
}

// Major version from the <topology version="X.Y"> tag at the start of an
// XML file, or -1 when there is none. hwloc 2 only reads versions 1 and 2.
int xml_major_version(const std::string &head)
{
    auto tag = head.find("<topology");
    if (tag == std::string::npos)
        return -1;
    auto end = head.find('>', tag);
    auto ver = head.find("version=\"", tag);
    if (ver == std::string::npos || (end != std::string::npos && ver > end))
        return 1;  // v1 files carry no version attribute
    return std::atoi(head.c_str() + ver + 9);
}

// Why hwloc could not load `path`, and what to do instead. hwloc says
// nothing useful itself (its parser messages go to stderr, and only with
// HWLOC_XML_VERBOSE=1), so we look at the file: missing, unreadable, not
// hwloc XML, XML v3, or malformed.
struct XmlFailure {
    std::string reason;
    std::string fix = "give a hwloc v2 XML file (lstopo --of xml)";
};

XmlFailure xml_failure(const std::string &path)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return {"it is a directory"};
    std::unique_ptr<std::FILE, FileClose> f(std::fopen(path.c_str(), "rb"));
    if (!f)
        return {std::strerror(errno)};
    std::string head(4096, '\0');
    head.resize(std::fread(head.data(), 1, head.size(), f.get()));
    int major = xml_major_version(head);
    if (major < 0)
        return {"no <topology> element, so it is not an hwloc XML topology"};
    if (major > 2)
        return {"it is hwloc XML version " + std::to_string(major) +
                    "; this hwloc reads versions 1 and 2 only",
                "re-export it as XML v2 (lstopo --of xml from hwloc 2; hwloc 3 can also "
                "write v2)"};
    return {"hwloc rejected it as malformed (HWLOC_XML_VERBOSE=1 shows hwloc's parser messages)"};
}

Status xml_error(const XmlSource &xml)
{
    std::error_code ec;
    int code = std::filesystem::exists(xml.path, ec) ? WEFT_ERR_BAD_VALUE : WEFT_ERR_NOT_FOUND;
    XmlFailure why = xml_failure(xml.path);
    if (!xml.from_env.empty())
        why.fix += " or unset HWLOC_XMLFILE";
    return Status(code, xml.setting + "=" + xml.path + ": cannot load: " + why.reason + "; " + why.fix);
}

// PCI bus id ("0000:81:00.0") of the PCI device an OS device belongs to.
std::string pci_bus_id(hwloc_obj_t osdev)
{
    for (hwloc_obj_t o = osdev->parent; o && hwloc_obj_type_is_io(o->type); o = o->parent) {
        if (o->type != HWLOC_OBJ_PCI_DEVICE)
            continue;
        const auto &p = o->attr->pcidev;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", static_cast<unsigned>(p.domain),
                      static_cast<unsigned>(p.bus), static_cast<unsigned>(p.dev),
                      static_cast<unsigned>(p.func));
        return buf;
    }
    return {};
}

// First object of `type` (logical order) whose cpuset holds all of `set`.
hwloc_obj_t first_covering(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_const_cpuset_t set)
{
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, nullptr); o;
         o = hwloc_get_next_obj_by_type(topo, type, o))
        if (o->cpuset && hwloc_bitmap_isincluded(set, o->cpuset))
            return o;
    return nullptr;
}

// See the Distance enum: the smallest object holding binding and locality.
Distance classify(hwloc_topology_t topo, hwloc_const_cpuset_t binding, hwloc_const_cpuset_t locality)
{
    if (!locality || hwloc_bitmap_iszero(locality))
        return Distance::Unknown;
    Bitmap both(hwloc_bitmap_alloc());
    hwloc_bitmap_or(both.get(), binding, locality);
    if (first_covering(topo, HWLOC_OBJ_NUMANODE, both.get()))
        return Distance::SameNuma;
    if (first_covering(topo, HWLOC_OBJ_PACKAGE, both.get()))
        return Distance::SamePackage;
    if (first_covering(topo, HWLOC_OBJ_NUMANODE, locality) ||
        first_covering(topo, HWLOC_OBJ_PACKAGE, locality))
        return Distance::SameMachine;
    return Distance::Unknown;
}

// Sanitizer builds only. hwloc finds PCI devices through its hwloc_pci
// plugin, which uses libpciaccess, and dlcloses the plugin (and so
// libpciaccess) when the last topology is destroyed. libpciaccess keeps
// about 1 KB reachable only from its own globals; once those are unmapped,
// LeakSanitizer reports the memory with unsymbolizable frames that no
// suppression can match. Keeping libpciaccess mapped keeps it reachable.
// Other builds skip this: the loss is one block per plugin unload, and a
// weft process loads its topology once.
void keep_pciaccess_mapped()
{
#ifdef WEFT_TOPOLOGY_LSAN
    static void *const handle = dlopen("libpciaccess.so.0", RTLD_NOW | RTLD_NODELETE);
    (void)handle;  // absent library: nothing to keep, nothing to report
#endif
}

int logical_index_or(hwloc_obj_t o, int fallback)
{
    return o ? static_cast<int>(o->logical_index) : fallback;
}

int count(hwloc_topology_t topo, hwloc_obj_type_t type)
{
    return std::max(0, hwloc_get_nbobjs_by_type(topo, type));
}

} // namespace

Topology::~Topology()
{
    if (binding_)
        hwloc_bitmap_free(binding_);
    if (topo_)
        hwloc_topology_destroy(topo_);
}

Result<std::unique_ptr<Topology>> Topology::load(const LoadOptions &opts)
{
    // Topology's destructor releases whatever a failing step leaves behind.
    std::unique_ptr<Topology> t(new Topology());
    if (Status s = t->init_hwloc(opts); !s.ok())
        return s;
    if (Status s = t->init_binding(opts); !s.ok())
        return s;
    t->init_devices();
    return Result<std::unique_ptr<Topology>>(std::move(t));
}

Status Topology::init_hwloc(const LoadOptions &opts)
{
    keep_pciaccess_mapped();
    if (hwloc_topology_init(&topo_) < 0) {
        topo_ = nullptr;
        return Status(WEFT_ERR_NO_MEMORY, "topology: hwloc_topology_init failed: " +
                                              std::string(std::strerror(errno)));
    }
    // NICs and HCAs are what we place processes against; "important" keeps
    // them (and their PCI parents) without every bridge and DMA channel.
    // Without io_devices only an XML file brings devices (it costs nothing
    // to read them there).
    auto xml = xml_source(opts);
    io_devices_ = opts.io_devices || xml;
    hwloc_topology_set_io_types_filter(topo_, io_devices_ ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT
                                                          : HWLOC_TYPE_FILTER_KEEP_NONE);

    if (xml && hwloc_topology_set_xml(topo_, xml->path.c_str()) < 0)
        return xml_error(*xml);
    if (!xml && !opts.launcher_xml.empty() && load_launcher_export(opts.launcher_xml))
        return Status::success();
    if (hwloc_topology_load(topo_) < 0) {
        if (xml)
            return xml_error(*xml);
        return Status(WEFT_ERR_NOT_AVAILABLE,
                      "topology: hwloc could not discover this machine: " +
                          std::string(std::strerror(errno)) +
                          "; set topology_base_xml_file to a hwloc v2 XML file (lstopo --of xml)");
    }
    this_system_ = hwloc_topology_is_thissystem(topo_) != 0;
    if (xml)
        source_ = "XML file " + xml->path + xml->from_env;
    else
        source_ = this_system_ ? "this system" : env_source();
    return Status::success();
}

bool Topology::load_launcher_export(const std::string &path)
{
    if (hwloc_topology_set_xml(topo_, path.c_str()) == 0 &&
        hwloc_topology_set_flags(topo_, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM) == 0 &&
        hwloc_topology_load(topo_) == 0) {
        this_system_ = true;
        from_launcher_ = true;
        io_devices_ = false;   // weftrun exports no I/O objects
        source_ = "this system (launcher's export " + path + ")";
        return true;
    }
    // A failed load leaves topo_ unusable: start over for discovery.
    hwloc_topology_destroy(topo_);
    topo_ = nullptr;
    if (hwloc_topology_init(&topo_) < 0) {
        topo_ = nullptr;
        return false;
    }
    hwloc_topology_set_io_types_filter(topo_, io_devices_ ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT
                                                          : HWLOC_TYPE_FILTER_KEEP_NONE);
    return false;
}

Status Topology::init_binding(const LoadOptions &opts)
{
    hwloc_const_cpuset_t machine = hwloc_topology_get_topology_cpuset(topo_);
    binding_ = hwloc_bitmap_alloc();
    if (!binding_)
        return Status(WEFT_ERR_NO_MEMORY, "topology: cannot allocate the binding cpuset");

    if (!opts.binding.empty()) {
        const std::string where = "topology_base_binding=" + opts.binding + ": ";
        if (hwloc_bitmap_list_sscanf(binding_, opts.binding.c_str()) < 0)
            return Status(WEFT_ERR_BAD_VALUE,
                          where + "not a cpuset list; give OS PU numbers and ranges such as "
                                  "0-3 or 0,2,8-15");
        if (hwloc_bitmap_iszero(binding_))
            return Status(WEFT_ERR_BAD_VALUE, where + "selects no PU; give a non-empty list such as 0-3");
        if (!hwloc_bitmap_isincluded(binding_, machine)) {
            Bitmap outside(hwloc_bitmap_alloc());
            hwloc_bitmap_andnot(outside.get(), binding_, machine);
            return Status(WEFT_ERR_BAD_VALUE, where + "PUs " + list_string(outside.get()) +
                                                  " are not in the topology (" + source_ +
                                                  " has PUs " + list_string(machine) + ")");
        }
        return Status::success();
    }

    // The real binding only means something when hwloc describes this
    // machine; an XML topology's process is unbound (the whole machine).
    // A failed query or a binding outside the topology (PUs hwloc could not
    // see) also counts as unbound rather than as an error: placement then
    // simply has no preference.
    if (this_system_ && (hwloc_get_cpubind(topo_, binding_, HWLOC_CPUBIND_PROCESS) == 0 ||
                         hwloc_get_cpubind(topo_, binding_, HWLOC_CPUBIND_THREAD) == 0)) {
        hwloc_bitmap_and(binding_, binding_, machine);
        if (!hwloc_bitmap_iszero(binding_))
            return Status::success();
    }
    hwloc_bitmap_copy(binding_, machine);
    return Status::success();
}

void Topology::init_devices()
{
    for (hwloc_obj_t o = hwloc_get_next_osdev(topo_, nullptr); o; o = hwloc_get_next_osdev(topo_, o)) {
        DeviceKind kind;
        if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK)
            kind = DeviceKind::Network;
        else if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
            kind = DeviceKind::OpenFabrics;
        else
            continue;
        Device d;
        d.name = o->name ? o->name : "";
        d.kind = kind;
        d.pci_bus_id = pci_bus_id(o);
        hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo_, o);
        hwloc_const_cpuset_t loc = anc ? anc->cpuset : nullptr;
        if (loc && !hwloc_bitmap_iszero(loc)) {
            d.cpuset = list_string(loc);
            d.package = logical_index_or(first_covering(topo_, HWLOC_OBJ_PACKAGE, loc), -1);
            d.numa_node = logical_index_or(first_covering(topo_, HWLOC_OBJ_NUMANODE, loc), -1);
        }
        d.distance = classify(topo_, binding_, loc);
        devices_.push_back(std::move(d));
    }
    std::stable_sort(devices_.begin(), devices_.end(),
                     [](const Device &a, const Device &b) { return a.distance < b.distance; });
}

std::string Topology::binding() const { return list_string(binding_); }

bool Topology::bound() const
{
    return !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo_), binding_);
}

std::vector<int> Topology::numa_nodes() const
{
    std::vector<int> out;
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, nullptr); o;
         o = hwloc_get_next_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, o))
        if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, binding_))
            out.push_back(static_cast<int>(o->logical_index));
    return out;
}

int Topology::num_packages() const { return count(topo_, HWLOC_OBJ_PACKAGE); }
int Topology::num_numa_nodes() const { return count(topo_, HWLOC_OBJ_NUMANODE); }
int Topology::num_cores() const { return count(topo_, HWLOC_OBJ_CORE); }
int Topology::num_pus() const { return count(topo_, HWLOC_OBJ_PU); }

std::vector<Device> Topology::devices() const { return devices_; }

std::vector<Device> Topology::devices(DeviceKind kind) const
{
    std::vector<Device> out;
    std::copy_if(devices_.begin(), devices_.end(), std::back_inserter(out),
                 [kind](const Device &d) { return d.kind == kind; });
    return out;
}

std::optional<Device> Topology::device(const std::string &name) const
{
    auto it = std::find_if(devices_.begin(), devices_.end(),
                           [&name](const Device &d) { return d.name == name; });
    if (it == devices_.end())
        return std::nullopt;
    return *it;
}

} // namespace weft::topology
