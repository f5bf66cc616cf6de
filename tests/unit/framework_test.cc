// SPDX-License-Identifier: BSD-3-Clause
// The framework as a process sees it: parameters from every source, the real
// components of this build tree opened through the C host table, selection
// and the require form.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <weft/component_util.hpp>

#include "core/framework.hpp"
#include "topology/topology.hpp"
#include "test_util.hpp"

using weft::Framework;
using weft::InitOptions;
using weft::test::TempDir;

namespace {

struct Captured {
    std::vector<std::string> lines;
    std::string all() const
    {
        std::string out;
        for (const auto &l : lines)
            out += l + "\n";
        return out;
    }
};

// Runs init with a private HOME-like param file list and captured output.
class FrameworkTest : public ::testing::Test {
protected:
    void TearDown() override { Framework::finalize(); }

    weft::Result<Framework *> init(std::vector<std::string> env,
                                   std::vector<std::pair<std::string, std::string>> cli = {})
    {
        // A file that exists (an absent one named here would be warned
        // about), unless the test names its own.
        const std::string key = "WEFT_MCA_mca_base_param_files=";
        const std::string file = home_.path() + "/mca-params.conf";
        if (::access(file.c_str(), F_OK) != 0)
            home_.write("mca-params.conf", "");
        if (std::none_of(env.begin(), env.end(),
                         [&](const std::string &e) { return e.rfind(key, 0) == 0; }))
            env.push_back(key + file);
        env_storage_ = env;
        envp_.clear();
        for (auto &e : env_storage_)
            envp_.push_back(e.c_str());
        envp_.push_back(nullptr);
        InitOptions o;
        o.envp = envp_.data();
        o.command_line = std::move(cli);
        o.log_sink = [this](std::string_view l) { out_.lines.emplace_back(l); };
        return Framework::init(o);
    }

    TempDir home_;
    Captured out_;
    std::vector<std::string> env_storage_;
    std::vector<const char *> envp_;
};

} // namespace

TEST_F(FrameworkTest, OpensTheBuildTreeComponents)
{
    auto fw = init({});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    EXPECT_TRUE(fw.value()->running_from_build_tree());
    auto *self = fw.value()->repository().find("btl", "self");
    ASSERT_NE(self, nullptr);
    EXPECT_TRUE(self->loaded) << self->failure;
    EXPECT_TRUE(self->opened) << self->failure;
    // Its parameter was registered through the C host table.
    const auto *prio = fw.value()->params().find("btl_self_priority");
    ASSERT_NE(prio, nullptr);
    EXPECT_EQ(prio->as_int(), 100);
    int64_t v = 0;
    EXPECT_EQ(fw.value()->host()->param_get_int("btl_self_priority", &v), WEFT_SUCCESS);
    EXPECT_EQ(v, 100);
    EXPECT_EQ(fw.value()->host()->param_get_int("btl_self_nonexistent", &v), WEFT_ERR_NOT_FOUND);
    EXPECT_TRUE(out_.lines.empty()) << out_.all();
}

TEST_F(FrameworkTest, UnknownEnvironmentNameWarnsOnceWithSuggestion)
{
    auto fw = init({"WEFT_MCA_btl_base_verbos=100"});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    std::string all = out_.all();
    EXPECT_NE(all.find("WEFT_MCA_btl_base_verbos"), std::string::npos) << all;
    EXPECT_NE(all.find("did you mean btl_base_verbose?"), std::string::npos) << all;
    EXPECT_NE(all.find("mca_base_warn_unknown=false"), std::string::npos) << all;
    EXPECT_EQ(out_.lines.size(), 1u) << all;
}

TEST_F(FrameworkTest, UnknownNameInFileAndCommandLineAlsoWarn)
{
    home_.write("mca-params.conf", "btl_self_priorty = 3\n");
    auto fw = init({}, {{"btl_tcp_if_inculde", "eth0"}});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    std::string all = out_.all();
    EXPECT_NE(all.find("did you mean btl_self_priority?"), std::string::npos) << all;
    EXPECT_NE(all.find("mca-params.conf:1"), std::string::npos) << all;
    EXPECT_NE(all.find("did you mean btl_tcp_if_include?"), std::string::npos) << all;
    EXPECT_NE(all.find("command line"), std::string::npos) << all;
}

TEST_F(FrameworkTest, WarningCanBeSilenced)
{
    auto fw = init({"WEFT_MCA_btl_base_verbos=100", "WEFT_MCA_mca_base_warn_unknown=false"});
    ASSERT_TRUE(fw.ok());
    EXPECT_TRUE(out_.lines.empty()) << out_.all();
}

TEST_F(FrameworkTest, PrecedenceFileEnvCommandLineWithProvenance)
{
    std::string file = home_.write("mca-params.conf", "# mine\nbtl_self_priority = 7\n");
    {
        auto fw = init({});
        ASSERT_TRUE(fw.ok());
        const auto *p = fw.value()->params().find("btl_self_priority");
        EXPECT_EQ(p->as_int(), 7);
        EXPECT_EQ(p->origin().describe(), "file (" + file + ":2)");
        Framework::finalize();
    }
    {
        auto fw = init({"WEFT_MCA_btl_self_priority=8"});
        ASSERT_TRUE(fw.ok());
        EXPECT_EQ(fw.value()->params().find("btl_self_priority")->as_int(), 8);
        EXPECT_EQ(fw.value()->params().find("btl_self_priority")->origin().describe(),
                  "environment");
        Framework::finalize();
    }
    auto fw = init({"WEFT_MCA_btl_self_priority=8"}, {{"btl_self_priority", "9"}});
    ASSERT_TRUE(fw.ok());
    EXPECT_EQ(fw.value()->params().find("btl_self_priority")->as_int(), 9);
    EXPECT_EQ(fw.value()->params().find("btl_self_priority")->origin().describe(), "command line");
}

TEST_F(FrameworkTest, BadValueFailsInitWithAcceptedValues)
{
    auto fw = init({"WEFT_MCA_btl_base_verbose=loud"});
    ASSERT_FALSE(fw.ok());
    EXPECT_EQ(fw.status().code(), WEFT_ERR_BAD_VALUE);
    EXPECT_NE(fw.status().message().find("WEFT_MCA_btl_base_verbose"), std::string::npos);
    EXPECT_NE(fw.status().message().find("none, error, warn"), std::string::npos)
        << fw.status().message();
    EXPECT_EQ(Framework::current(), nullptr);
}

TEST_F(FrameworkTest, BadComponentParameterValueFailsToo)
{
    auto fw = init({"WEFT_MCA_btl_tcp_eager_limit=lots"});
    ASSERT_FALSE(fw.ok());
    EXPECT_NE(fw.status().message().find("64k"), std::string::npos) << fw.status().message();
}

TEST_F(FrameworkTest, FileSyntaxErrorFailsInitWithFileAndLine)
{
    std::string file = home_.write("mca-params.conf", "btl_self_priority = 3\nnonsense\n");
    auto fw = init({});
    ASSERT_FALSE(fw.ok());
    EXPECT_NE(fw.status().message().find(file + ":2"), std::string::npos) << fw.status().message();
}

TEST_F(FrameworkTest, SelectionIncludeExcludeAndDidYouMean)
{
    {
        auto fw = init({"WEFT_MCA_btl=self"});
        ASSERT_TRUE(fw.ok()) << fw.status().message();
        auto sel = fw.value()->select("btl");
        ASSERT_TRUE(sel.ok()) << sel.status().message();
        ASSERT_EQ(sel.value().selected.size(), 1u);
        EXPECT_EQ(sel.value().selected[0]->name, "self");
        Framework::finalize();
    }
    {
        auto fw = init({"WEFT_MCA_btl=^tcp"});
        ASSERT_TRUE(fw.ok());
        auto sel = fw.value()->select("btl");
        ASSERT_TRUE(sel.ok()) << sel.status().message();
        for (auto *r : sel.value().selected)
            EXPECT_NE(r->name, "tcp");
        bool tcp_rejected = false;
        for (const auto &rej : sel.value().rejected)
            if (rej.record->name == "tcp") {
                tcp_rejected = true;
                EXPECT_NE(rej.reason.find("^tcp"), std::string::npos) << rej.reason;
            }
        EXPECT_TRUE(tcp_rejected);
        Framework::finalize();
    }
    auto fw = init({"WEFT_MCA_btl=slef,tcp"});
    ASSERT_TRUE(fw.ok());
    auto sel = fw.value()->select("btl");
    ASSERT_FALSE(sel.ok());
    EXPECT_NE(sel.status().message().find("did you mean 'self'"), std::string::npos)
        << sel.status().message();
}

TEST_F(FrameworkTest, RequireTurnsFallbackIntoAnErrorWithTheReason)
{
    // This machine has no RDMA device (the tests of openib run in a VM), so
    // requiring openib must fail and say why; without require, others win.
    auto fw = init({"WEFT_MCA_btl_base_require=openib"});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    auto *openib = fw.value()->repository().find("btl", "openib");
    if (!openib)
        GTEST_SKIP() << "btl/openib not built here (no libibverbs)";
    fw.value()->repository().query_all("btl", fw.value()->host());
    if (openib->query.available)
        GTEST_SKIP() << "this machine has a usable RDMA port: " << openib->query.reason;
    auto sel = fw.value()->select("btl");
    ASSERT_FALSE(sel.ok());
    EXPECT_NE(sel.status().message().find("openib"), std::string::npos);
    EXPECT_NE(sel.status().message().find("RDMA"), std::string::npos) << sel.status().message();
}

TEST_F(FrameworkTest, TcpRefusesBothIncludeAndExclude)
{
    auto fw = init({"WEFT_MCA_btl_tcp_if_include=lo", "WEFT_MCA_btl_tcp_if_exclude=eth0"});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    auto *tcp = fw.value()->repository().find("btl", "tcp");
    ASSERT_NE(tcp, nullptr);
    EXPECT_FALSE(tcp->opened);
    EXPECT_NE(out_.all().find("mutually exclusive"), std::string::npos) << out_.all();
}

TEST_F(FrameworkTest, UnreadableParamFilesAreWarnedAboutOnceEach)
{
    const std::string missing = home_.path() + "/no-such.conf";
    const std::string dir = home_.path();
    // The default user file (absent in this fresh HOME-less list) is not
    // named here; the two bad ones are, the missing one twice.
    auto fw = init({"WEFT_MCA_mca_base_param_files=" + missing + ":" + dir + ":" + missing});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    const std::string all = out_.all();
    EXPECT_NE(all.find("parameter file " + missing + ": No such file or directory; nothing was "
                       "read from it (it is named in mca_base_param_files)"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find("parameter file " + dir + ": Is a directory"), std::string::npos) << all;
    EXPECT_EQ(out_.lines.size(), 2u) << all;
}

TEST_F(FrameworkTest, AbsentDefaultUserFileIsNotWarnedAbout)
{
    auto fw = init({"WEFT_MCA_mca_base_param_files=" + weft::user_param_file()});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    if (::access(weft::user_param_file().c_str(), F_OK) == 0)
        GTEST_SKIP() << weft::user_param_file() << " exists here";
    EXPECT_TRUE(out_.lines.empty()) << out_.all();
}

TEST_F(FrameworkTest, OnlyTheProcessSpeakingForTheJobWarnsAboutParamFiles)
{
    const std::string missing = home_.path() + "/no-such.conf";
    env_storage_ = {"WEFT_MCA_mca_base_param_files=" + missing};
    envp_ = {env_storage_[0].c_str(), nullptr};
    InitOptions o;
    o.envp = envp_.data();
    o.warn_unknown = false;   // rank 1..N-1 of a job
    o.log_sink = [this](std::string_view l) { out_.lines.emplace_back(l); };
    auto fw = Framework::init(o);
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    EXPECT_TRUE(out_.lines.empty()) << out_.all();
}

TEST_F(FrameworkTest, LongUnknownNameIsShownCut)
{
    const std::string name = "btl_" + std::string(60000, 'q');
    home_.write("mca-params.conf", name + " = 1\n");
    auto fw = init({});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    ASSERT_EQ(out_.lines.size(), 1u) << out_.all().substr(0, 2000);
    EXPECT_NE(out_.lines[0].find("(60004 characters)"), std::string::npos)
        << out_.lines[0].substr(0, 2000);
    EXPECT_LT(out_.lines[0].size(), 1000u);
    EXPECT_EQ(out_.lines[0].find("did you mean"), std::string::npos);
}

TEST_F(FrameworkTest, TcpIncludeNamingNoInterfaceWarnsEvenWhenTcpIsNotSelected)
{
    auto fw = init({"WEFT_MCA_btl=self", "WEFT_MCA_btl_tcp_if_include=lo,nosuchif0,10.0.0.0/8"});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    auto sel = fw.value()->select("btl");
    ASSERT_TRUE(sel.ok()) << sel.status().message();
    const std::string all = out_.all();
    EXPECT_NE(all.find("no interface on this host is named 'nosuchif0'"), std::string::npos) << all;
    EXPECT_EQ(all.find("named 'lo'"), std::string::npos) << all;
    EXPECT_EQ(all.find("10.0.0.0/8'"), std::string::npos) << all;
    EXPECT_EQ(out_.lines.size(), 1u) << all;
}

TEST_F(FrameworkTest, TcpIncludeWarningComesFromTheProcessSpeakingForTheJobOnly)
{
    env_storage_ = {"WEFT_MCA_btl=self", "WEFT_MCA_btl_tcp_if_include=nosuchif0",
                    "WEFT_MCA_mca_base_param_files="};
    envp_ = {env_storage_[0].c_str(), env_storage_[1].c_str(), env_storage_[2].c_str(), nullptr};
    InitOptions o;
    o.envp = envp_.data();
    o.warn_unknown = false;
    o.log_sink = [this](std::string_view l) { out_.lines.emplace_back(l); };
    auto fw = Framework::init(o);
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    ASSERT_TRUE(fw.value()->select("btl").ok());
    EXPECT_TRUE(out_.lines.empty()) << out_.all();
}

TEST_F(FrameworkTest, UnknownComponentParameterIsReported)
{
    auto fw = init({"WEFT_MCA_btl_nonexistentcomp_foo=1"});
    ASSERT_TRUE(fw.ok());
    EXPECT_NE(out_.all().find("unknown parameter WEFT_MCA_btl_nonexistentcomp_foo"),
              std::string::npos)
        << out_.all();
}

// The process's topology answers core and binding questions without I/O
// discovery; a device question gets a topology that has the devices.
TEST_F(FrameworkTest, TopologyHasNoIoDiscoveryIoTopologyHas)
{
    auto fw = init({});
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    auto cpu = fw.value()->topology();
    ASSERT_TRUE(cpu.ok()) << cpu.status().message();
    if (cpu.value()->has_io_devices())
        GTEST_SKIP() << "an XML topology stands in for this machine: " << cpu.value()->source();
    hwloc_type_filter_e f = HWLOC_TYPE_FILTER_KEEP_ALL;
    ASSERT_EQ(hwloc_topology_get_type_filter(cpu.value()->raw(), HWLOC_OBJ_PCI_DEVICE, &f), 0);
    EXPECT_EQ(f, HWLOC_TYPE_FILTER_KEEP_NONE);
    auto io = fw.value()->io_topology();
    ASSERT_TRUE(io.ok()) << io.status().message();
    EXPECT_TRUE(io.value()->has_io_devices());
    EXPECT_NE(io.value(), cpu.value());
}

// The small-message copy of components (two overlapping fixed-size copies
// up to 48 bytes): every length copies exactly its bytes, at every offset
// of source and destination, and writes nothing past them.
TEST(ComponentUtil, CopyBytesCopiesExactlyTheBytesAtEveryLength)
{
    std::vector<unsigned char> src(200), dst(200);
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<unsigned char>(i * 7 + 1);
    for (size_t n = 0; n <= 130; ++n)
        for (size_t at : {0, 1, 3, 8}) {
            std::fill(dst.begin(), dst.end(), 0xee);
            weft::cutil::copy_bytes(dst.data() + at, src.data() + (8 - at), n);
            for (size_t i = 0; i < dst.size(); ++i) {
                const bool inside = i >= at && i < at + n;
                ASSERT_EQ(dst[i], inside ? src[i - at + (8 - at)] : 0xee) << "n " << n << " at " << at << " byte " << i;
            }
        }
}

// The bulk copy at a destination 1-31 bytes past its source modulo a page
// (copy_page_aliased, not memcpy's rep movsb) copies exactly its bytes,
// and the check picks those gaps and no others, wherever the buffers lie.
TEST(ComponentUtil, CopyBytesAtPageAliasedOffsetsCopiesExactlyTheBytes)
{
    constexpr size_t kRoom = 3 * 4096 + 300;
    std::vector<unsigned char> src(kRoom), dst(kRoom + 4096);
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<unsigned char>(i * 13 + 5);
    const auto page_offset = [](const void *p) { return reinterpret_cast<uintptr_t>(p) & 4095u; };
    for (size_t gap : {0, 1, 8, 16, 31, 32, 48, 4064, 4095}) {
        // dst + at lies gap bytes past src + 3 modulo a page.
        const size_t at = (page_offset(src.data() + 3) + gap - page_offset(dst.data())) & 4095u;
        const bool aliased = gap >= 1 && gap <= 31;
        ASSERT_EQ(weft::cutil::page_alias_ahead(dst.data() + at, src.data() + 3), aliased) << "gap " << gap;
        for (size_t n : {2047, 2048, 2049, 4096, 4096 + 127, 3 * 4096 + 200}) {
            std::fill(dst.begin(), dst.end(), 0xee);
            weft::cutil::copy_bytes(dst.data() + at, src.data() + 3, n);
            for (size_t i = 0; i < dst.size(); ++i) {
                const bool inside = i >= at && i < at + n;
                ASSERT_EQ(dst[i], inside ? src[i - at + 3] : 0xee) << "gap " << gap << " n " << n << " byte " << i;
            }
        }
    }
}
