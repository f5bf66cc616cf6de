// SPDX-License-Identifier: BSD-3-Clause
// Topology service against real hwloc: the XML fixtures in
// contrib/topologies/ stand in for machines we do not have, and one load of
// this machine checks the real discovery and binding path.
#include <gtest/gtest.h>

#include <sched.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "topology/topology.hpp"

using weft::topology::Device;
using weft::topology::DeviceKind;
using weft::topology::Distance;
using weft::topology::LoadOptions;
using weft::topology::Topology;

namespace {

std::string fixture(const std::string &name)
{
    return std::string(WEFT_ABS_SRCDIR) + "/contrib/topologies/" + name;
}
const std::string kTwoSocket = "2socket-2nic-2hca.xml";
const std::string kOneSocketTwoNuma = "1socket-2numa.xml";

// Sets or unsets hwloc's environment variables for one test and restores
// whatever the runner had (a CI job may export HWLOC_XMLFILE itself).
class HwlocEnv {
public:
    HwlocEnv()
    {
        for (const char *v : kVars) {
            const char *old = std::getenv(v);
            saved_[v] = old ? std::optional<std::string>(old) : std::nullopt;
            unsetenv(v);
        }
    }
    ~HwlocEnv()
    {
        for (const auto &[name, value] : saved_) {
            if (value)
                setenv(name.c_str(), value->c_str(), 1);
            else
                unsetenv(name.c_str());
        }
    }
    HwlocEnv(const HwlocEnv &) = delete;
    HwlocEnv &operator=(const HwlocEnv &) = delete;
    void set(const char *name, const std::string &value) { setenv(name, value.c_str(), 1); }

private:
    static constexpr const char *kVars[] = {"HWLOC_XMLFILE", "HWLOC_SYNTHETIC", "HWLOC_FSROOT",
                                            "HWLOC_CPUID_PATH", "HWLOC_COMPONENTS",
                                            "HWLOC_THISSYSTEM"};
    std::map<std::string, std::optional<std::string>> saved_;
};

std::unique_ptr<Topology> load_ok(const LoadOptions &opts)
{
    auto r = Topology::load(opts);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r.value()) : nullptr;
}

std::unique_ptr<Topology> load_fixture(const std::string &name, const std::string &binding = "")
{
    LoadOptions o;
    o.xml_file = fixture(name);
    o.binding = binding;
    return load_ok(o);
}

std::vector<std::string> names(const std::vector<Device> &devs)
{
    std::vector<std::string> out;
    for (const auto &d : devs)
        out.push_back(d.name);
    return out;
}

std::vector<Distance> distances(const std::vector<Device> &devs)
{
    std::vector<Distance> out;
    for (const auto &d : devs)
        out.push_back(d.distance);
    return out;
}

bool sorted_nearest_first(const std::vector<Device> &devs)
{
    for (size_t i = 1; i < devs.size(); ++i)
        if (devs[i - 1].distance > devs[i].distance)
            return false;
    return true;
}

using V = std::vector<std::string>;
using D = std::vector<Distance>;

} // namespace

TEST(TopologyNames, KindAndDistanceNames)
{
    EXPECT_STREQ(weft::topology::kind_name(DeviceKind::Network), "network");
    EXPECT_STREQ(weft::topology::kind_name(DeviceKind::OpenFabrics), "openfabrics");
    EXPECT_STREQ(weft::topology::distance_name(Distance::SameNuma), "numa-local");
    EXPECT_STREQ(weft::topology::distance_name(Distance::SamePackage), "package-local");
    EXPECT_STREQ(weft::topology::distance_name(Distance::SameMachine), "remote-package");
    EXPECT_STREQ(weft::topology::distance_name(Distance::Unknown), "unknown");
}

TEST(TopologyTwoSocket, CountsSourceAndUnboundBinding)
{
    HwlocEnv env;
    auto t = load_fixture(kTwoSocket);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->source(), "XML file " + fixture(kTwoSocket));
    EXPECT_FALSE(t->is_this_system());
    EXPECT_EQ(t->num_packages(), 2);
    EXPECT_EQ(t->num_numa_nodes(), 2);
    EXPECT_EQ(t->num_cores(), 8);
    EXPECT_EQ(t->num_pus(), 16);
    // No binding given with an XML topology: the whole machine.
    EXPECT_EQ(t->binding(), "0-15");
    EXPECT_FALSE(t->bound());
    EXPECT_EQ(t->numa_nodes(), (std::vector<int>{0, 1}));
}

TEST(TopologyTwoSocket, DeviceKindsPciIdsAndLocality)
{
    HwlocEnv env;
    auto t = load_fixture(kTwoSocket, "0");
    ASSERT_TRUE(t);
    EXPECT_EQ(names(t->devices(DeviceKind::Network)), (V{"eth0", "ib0", "eth1"}));
    EXPECT_EQ(names(t->devices(DeviceKind::OpenFabrics)), (V{"mlx5_0", "mlx5_1"}));

    struct Want {
        const char *name;
        DeviceKind kind;
        const char *pci;
        int package;
        const char *cpuset;
    };
    for (const Want &w : {Want{"eth0", DeviceKind::Network, "0000:01:00.0", 0, "0-7"},
                          Want{"ib0", DeviceKind::Network, "0000:02:00.0", 0, "0-7"},
                          Want{"mlx5_0", DeviceKind::OpenFabrics, "0000:02:00.0", 0, "0-7"},
                          Want{"eth1", DeviceKind::Network, "0000:81:00.0", 1, "8-15"},
                          Want{"mlx5_1", DeviceKind::OpenFabrics, "0000:82:00.0", 1, "8-15"}}) {
        SCOPED_TRACE(w.name);
        auto d = t->device(w.name);
        ASSERT_TRUE(d);
        EXPECT_EQ(d->kind, w.kind);
        EXPECT_EQ(d->pci_bus_id, w.pci);
        EXPECT_EQ(d->package, w.package);
        EXPECT_EQ(d->numa_node, w.package);  // one NUMA node per package here
        EXPECT_EQ(d->cpuset, w.cpuset);
    }
    EXPECT_FALSE(t->device("eth7"));
}

TEST(TopologyTwoSocket, BoundToPackage1PrefersPackage1Devices)
{
    HwlocEnv env;
    auto t = load_fixture(kTwoSocket, "8-15");
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->bound());
    EXPECT_EQ(t->binding(), "8-15");
    EXPECT_EQ(t->numa_nodes(), (std::vector<int>{1}));
    auto all = t->devices();
    EXPECT_EQ(names(all), (V{"eth1", "mlx5_1", "eth0", "ib0", "mlx5_0"}));
    EXPECT_EQ(distances(all), (D{Distance::SameNuma, Distance::SameNuma, Distance::SameMachine,
                                 Distance::SameMachine, Distance::SameMachine}));
    EXPECT_EQ(t->devices(DeviceKind::OpenFabrics).front().name, "mlx5_1");
    EXPECT_EQ(t->devices(DeviceKind::Network).front().name, "eth1");
}

TEST(TopologyTwoSocket, BoundToPackage0PrefersPackage0Devices)
{
    HwlocEnv env;
    auto t = load_fixture(kTwoSocket, "0-3");
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->bound());
    EXPECT_EQ(t->numa_nodes(), (std::vector<int>{0}));
    auto all = t->devices();
    EXPECT_EQ(names(all), (V{"eth0", "ib0", "mlx5_0", "eth1", "mlx5_1"}));
    EXPECT_EQ(distances(all), (D{Distance::SameNuma, Distance::SameNuma, Distance::SameNuma,
                                 Distance::SameMachine, Distance::SameMachine}));
    EXPECT_EQ(t->devices(DeviceKind::OpenFabrics).front().name, "mlx5_0");
}

TEST(TopologyTwoSocket, UnboundIsRemoteFromEveryDeviceAndKeepsHwlocOrder)
{
    HwlocEnv env;
    auto t = load_fixture(kTwoSocket);
    ASSERT_TRUE(t);
    auto all = t->devices();
    EXPECT_EQ(names(all), (V{"eth0", "ib0", "mlx5_0", "eth1", "mlx5_1"}));
    for (const auto &d : all)
        EXPECT_EQ(d.distance, Distance::SameMachine) << d.name;
}

TEST(TopologyTwoSocket, BindingAcrossPackagesTouchesBothNumaNodes)
{
    HwlocEnv env;
    auto t = load_fixture(kTwoSocket, "6-9");
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->bound());
    EXPECT_EQ(t->numa_nodes(), (std::vector<int>{0, 1}));
    for (const auto &d : t->devices())
        EXPECT_EQ(d.distance, Distance::SameMachine) << d.name;
}

TEST(TopologyOneSocketTwoNuma, CountsAndDeviceNumaNodes)
{
    HwlocEnv env;
    auto t = load_fixture(kOneSocketTwoNuma);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->num_packages(), 1);
    EXPECT_EQ(t->num_numa_nodes(), 2);
    EXPECT_EQ(t->num_cores(), 8);
    EXPECT_EQ(t->num_pus(), 16);
    EXPECT_EQ(t->device("eth0")->numa_node, 0);
    EXPECT_EQ(t->device("mlx5_0")->numa_node, 1);
    EXPECT_EQ(t->device("ib0")->numa_node, 1);
    EXPECT_EQ(t->device("eth1")->numa_node, 1);
    EXPECT_EQ(t->device("mlx5_0")->pci_bus_id, "0000:41:00.0");
    // eth2 hangs off the package: local to both nodes, so to neither alone.
    EXPECT_EQ(t->device("eth2")->numa_node, -1);
    EXPECT_EQ(t->device("eth2")->package, 0);
    EXPECT_EQ(t->device("eth2")->cpuset, "0-15");
    // Unbound spans both NUMA nodes of the one package.
    for (const auto &d : t->devices())
        EXPECT_EQ(d.distance, Distance::SamePackage) << d.name;
}

TEST(TopologyOneSocketTwoNuma, BoundToNuma0)
{
    HwlocEnv env;
    auto t = load_fixture(kOneSocketTwoNuma, "0-7");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->numa_nodes(), (std::vector<int>{0}));
    auto all = t->devices();
    EXPECT_EQ(names(all), (V{"eth0", "ib0", "mlx5_0", "eth1", "eth2"}));
    EXPECT_EQ(distances(all), (D{Distance::SameNuma, Distance::SamePackage, Distance::SamePackage,
                                 Distance::SamePackage, Distance::SamePackage}));
}

TEST(TopologyOneSocketTwoNuma, BoundToOnePuOfNuma1)
{
    HwlocEnv env;
    auto t = load_fixture(kOneSocketTwoNuma, "9");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->numa_nodes(), (std::vector<int>{1}));
    auto all = t->devices();
    EXPECT_EQ(names(all), (V{"ib0", "mlx5_0", "eth1", "eth0", "eth2"}));
    EXPECT_EQ(distances(all), (D{Distance::SameNuma, Distance::SameNuma, Distance::SameNuma,
                                 Distance::SamePackage, Distance::SamePackage}));
    EXPECT_EQ(t->devices(DeviceKind::Network).front().name, "ib0");
}

TEST(TopologyErrors, MissingXmlFileNamesSettingPathAndFix)
{
    HwlocEnv env;
    LoadOptions o;
    o.xml_file = "/nonexistent/weft-topology.xml";
    auto r = Topology::load(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), WEFT_ERR_NOT_FOUND);
    const std::string &m = r.status().message();
    EXPECT_NE(m.find("topology_base_xml_file=/nonexistent/weft-topology.xml"), std::string::npos) << m;
    EXPECT_NE(m.find("cannot load"), std::string::npos) << m;
    EXPECT_NE(m.find("lstopo --of xml"), std::string::npos) << m;
}

TEST(TopologyErrors, MalformedXmlIsAnError)
{
    HwlocEnv env;
    weft::test::TempDir dir;
    LoadOptions o;
    o.xml_file = dir.write("broken.xml", "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
                                         "  <object type=\"Machine\" cpuset=\"0x1\"\n");
    auto r = Topology::load(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), WEFT_ERR_BAD_VALUE);
    const std::string &m = r.status().message();
    EXPECT_NE(m.find(o.xml_file), std::string::npos) << m;
    EXPECT_NE(m.find("malformed"), std::string::npos) << m;
}

TEST(TopologyErrors, NotHwlocXmlIsAnError)
{
    HwlocEnv env;
    weft::test::TempDir dir;
    LoadOptions o;
    o.xml_file = dir.write("other.xml", "<?xml version=\"1.0\"?>\n<config><a/></config>\n");
    auto r = Topology::load(o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("not an hwloc XML topology"), std::string::npos)
        << r.status().message();
}

TEST(TopologyErrors, XmlVersion3SaysHwloc2CannotReadIt)
{
    HwlocEnv env;
    weft::test::TempDir dir;
    LoadOptions o;
    o.xml_file = dir.write("v3.xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                     "<!DOCTYPE topology SYSTEM \"hwloc3.dtd\">\n"
                                     "<topology version=\"3.0\">\n"
                                     "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" "
                                     "complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" "
                                     "complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
                                     "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" "
                                     "complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
                                     "gp_index=\"2\"/>\n"
                                     "  </object>\n</topology>\n");
    auto r = Topology::load(o);
    ASSERT_FALSE(r.ok());
    const std::string &m = r.status().message();
    EXPECT_NE(m.find("version 3"), std::string::npos) << m;
    EXPECT_NE(m.find(o.xml_file), std::string::npos) << m;
}

TEST(TopologyErrors, DirectoryIsNotAnXmlFile)
{
    HwlocEnv env;
    weft::test::TempDir dir;
    LoadOptions o;
    o.xml_file = dir.path();
    auto r = Topology::load(o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("directory"), std::string::npos) << r.status().message();
}

TEST(TopologyErrors, BadBindingStringsAreErrors)
{
    HwlocEnv env;
    for (const char *bad : {"abc", "0-3,x", "1-0", "16", "8-", "0-31"}) {
        SCOPED_TRACE(bad);
        LoadOptions o;
        o.xml_file = fixture(kTwoSocket);
        o.binding = bad;
        auto r = Topology::load(o);
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.status().code(), WEFT_ERR_BAD_VALUE);
        EXPECT_NE(r.status().message().find(std::string("topology_base_binding=") + bad),
                  std::string::npos)
            << r.status().message();
    }
    LoadOptions o;
    o.xml_file = fixture(kTwoSocket);
    o.binding = "16-19";
    auto r = Topology::load(o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("PUs 16-19 are not in the topology"), std::string::npos)
        << r.status().message();
}

TEST(TopologyThisSystem, LoadsAndReportsTheRealBinding)
{
    HwlocEnv env;
    auto t = load_ok({});
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->is_this_system());
    EXPECT_EQ(t->source(), "this system");
    EXPECT_GE(t->num_pus(), 1);
    EXPECT_GE(t->num_numa_nodes(), 1);
    EXPECT_GE(t->num_cores(), 0);
    EXPECT_FALSE(t->numa_nodes().empty());

    // What the kernel says about this thread, limited to what hwloc sees.
    cpu_set_t mask;
    CPU_ZERO(&mask);
    ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    hwloc_bitmap_t expect = hwloc_bitmap_alloc();
    for (int i = 0; i < CPU_SETSIZE; ++i)
        if (CPU_ISSET(i, &mask))
            hwloc_bitmap_set(expect, static_cast<unsigned>(i));
    hwloc_bitmap_and(expect, expect, hwloc_topology_get_topology_cpuset(t->raw()));
    char *s = nullptr;
    hwloc_bitmap_list_asprintf(&s, expect);
    EXPECT_EQ(t->binding(), s);
    std::free(s);
    hwloc_bitmap_free(expect);

    // Whatever devices this machine has are well formed and ordered.
    auto all = t->devices();
    EXPECT_TRUE(sorted_nearest_first(all));
    for (const auto &d : all) {
        EXPECT_FALSE(d.name.empty());
        if (d.cpuset.empty()) {
            EXPECT_EQ(d.distance, Distance::Unknown) << d.name;
        }
    }
}

TEST(TopologyThisSystem, BindingOptionStandsInForTheRealOne)
{
    HwlocEnv env;
    auto real = load_ok({});
    ASSERT_TRUE(real);
    // The first PU this process may use (a cgroup may hide PU 0).
    const std::string first =
        std::to_string(hwloc_bitmap_first(hwloc_topology_get_topology_cpuset(real->raw())));
    LoadOptions o;
    o.binding = first;
    auto t = load_ok(o);
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->is_this_system());
    EXPECT_EQ(t->binding(), first);
    EXPECT_EQ(t->bound(), t->num_pus() > 1);
    EXPECT_EQ(t->numa_nodes().size(), 1u);
}

TEST(TopologyEnv, HwlocXmlfileIsHonoured)
{
    HwlocEnv env;
    env.set("HWLOC_XMLFILE", fixture(kTwoSocket));
    auto t = load_ok({});
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->is_this_system());
    EXPECT_EQ(t->source(), "XML file " + fixture(kTwoSocket) + " (HWLOC_XMLFILE)");
    EXPECT_EQ(t->num_packages(), 2);
    EXPECT_EQ(t->binding(), "0-15");
    EXPECT_TRUE(t->device("mlx5_1"));
}

TEST(TopologyEnv, XmlFileSettingWinsOverHwlocXmlfile)
{
    HwlocEnv env;
    env.set("HWLOC_XMLFILE", fixture(kTwoSocket));
    auto t = load_fixture(kOneSocketTwoNuma);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->source(), "XML file " + fixture(kOneSocketTwoNuma));
    EXPECT_EQ(t->num_packages(), 1);
}

TEST(TopologyEnv, UnloadableHwlocXmlfileIsAnErrorNotTheRealMachine)
{
    HwlocEnv env;
    env.set("HWLOC_XMLFILE", "/nonexistent/env-topology.xml");
    auto r = Topology::load({});
    ASSERT_FALSE(r.ok());
    const std::string &m = r.status().message();
    EXPECT_NE(m.find("HWLOC_XMLFILE=/nonexistent/env-topology.xml"), std::string::npos) << m;
    EXPECT_NE(m.find("unset HWLOC_XMLFILE"), std::string::npos) << m;
}

TEST(TopologyEnv, HwlocThisSystemMakesXmlClaimThisMachine)
{
    HwlocEnv env;
    env.set("HWLOC_THISSYSTEM", "1");
    auto t = load_fixture(kTwoSocket, "8-15");
    ASSERT_TRUE(t);
    // hwloc's word is reported as is; the source still names the file.
    EXPECT_TRUE(t->is_this_system());
    EXPECT_EQ(t->source(), "XML file " + fixture(kTwoSocket));
    EXPECT_EQ(t->devices().front().name, "eth1");
}

// Without io_devices hwloc is asked for no I/O objects at all (its PCI and
// GPU discovery is the slow part on big hosts), so no devices come back.
TEST(TopologyThisSystem, WithoutIoDevicesHwlocDiscoversNoIo)
{
    HwlocEnv env;
    LoadOptions o;
    o.io_devices = false;
    auto t = load_ok(o);
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->has_io_devices());
    for (hwloc_obj_type_t type : {HWLOC_OBJ_PCI_DEVICE, HWLOC_OBJ_OS_DEVICE, HWLOC_OBJ_BRIDGE}) {
        hwloc_type_filter_e f = HWLOC_TYPE_FILTER_KEEP_ALL;
        ASSERT_EQ(hwloc_topology_get_type_filter(t->raw(), type, &f), 0);
        EXPECT_EQ(f, HWLOC_TYPE_FILTER_KEEP_NONE) << hwloc_obj_type_string(type);
    }
    EXPECT_TRUE(t->devices().empty());
    EXPECT_TRUE(load_ok({})->has_io_devices());
}

// An XML file describes its devices: they are read whatever io_devices says.
TEST(TopologyTwoSocket, XmlKeepsItsDevicesWithoutIoDevices)
{
    HwlocEnv env;
    LoadOptions o;
    o.xml_file = fixture(kTwoSocket);
    o.io_devices = false;
    auto t = load_ok(o);
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->has_io_devices());
    EXPECT_EQ(t->devices().size(), load_fixture(kTwoSocket)->devices().size());
    EXPECT_FALSE(t->devices().empty());
}
