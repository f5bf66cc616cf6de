// SPDX-License-Identifier: BSD-3-Clause
// btl/openib pieces that need the verbs headers but no RDMA device, so they
// run on every host that builds openib: the rdmacm cpc's connection data,
// the nearest-port choice (directly, and fed by the framework's hwloc
// distances from an XML topology), and the component's parameter checks
// and silence on a machine without RDMA.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "../btl_harness.hpp"
#include "btl_openib_device.hpp"
#include "core/framework.hpp"
#include "cpc/cpc_rdmacm.hpp"

using namespace weft::test::btl;
using namespace weft::openib;

namespace {

// ---- rdmacm private data ----------------------------------------------------

RdmacmPrivate sample_private()
{
    RdmacmPrivate p;
    p.kind = RdmacmPrivate::kAccept;
    p.job = job_hash("job-42");
    p.rank = 123456;
    p.qp.qpn = 0xabcdef;
    p.qp.psn = 0xffffff;
    p.qp.lid = 0x4321;
    for (uint8_t i = 0; i < 16; ++i)
        p.qp.gid[i] = static_cast<uint8_t>(i * 7);
    p.qp.mtu = IBV_MTU_1024;
    p.qp.recv_credits = 64;
    return p;
}

bool same_private(const RdmacmPrivate &a, const RdmacmPrivate &b)
{
    return a.kind == b.kind && a.job == b.job && a.rank == b.rank && a.qp.qpn == b.qp.qpn &&
           a.qp.psn == b.qp.psn && a.qp.lid == b.qp.lid && std::memcmp(a.qp.gid, b.qp.gid, 16) == 0 &&
           a.qp.mtu == b.qp.mtu && a.qp.recv_credits == b.qp.recv_credits;
}

std::vector<uint8_t> encoded(const RdmacmPrivate &p)
{
    std::vector<uint8_t> out(kRdmacmPrivateBytes);
    encode_private(p, out.data());
    return out;
}

// decode_private's verdict on bytes: "" when accepted, else its reason.
std::string refusal(const std::vector<uint8_t> &bytes)
{
    RdmacmPrivate out;
    std::string why;
    return decode_private(bytes.data(), bytes.size(), &out, &why) ? "" : (why.empty() ? "(no reason)" : why);
}

// Byte offsets in the private data: magic 2, version 1, kind 1, job 8, rank 4,
// qpn 4, psn 4, lid 2, gid 16, mtu 1, credits 4.
constexpr size_t kVersionAt = 2, kKindAt = 3, kQpnAt = 16, kPsnAt = 20, kMtuAt = 42;

} // namespace

TEST(OpenibRdmacmPrivate, RoundTripsEveryKind)
{
    for (uint8_t kind : {RdmacmPrivate::kConnect, RdmacmPrivate::kAccept, RdmacmPrivate::kLowerRankWins}) {
        RdmacmPrivate in = sample_private();
        in.kind = kind;
        const std::vector<uint8_t> bytes = encoded(in);
        RdmacmPrivate out;
        std::string why;
        ASSERT_TRUE(decode_private(bytes.data(), bytes.size(), &out, &why)) << why;
        EXPECT_TRUE(same_private(in, out)) << "kind " << int(kind);
    }
    // The limits of every range check are inside it.
    RdmacmPrivate edge = sample_private();
    edge.qp.qpn = 0;
    edge.qp.psn = 0;
    edge.qp.mtu = IBV_MTU_256;
    RdmacmPrivate out;
    std::string why;
    std::vector<uint8_t> bytes = encoded(edge);
    ASSERT_TRUE(decode_private(bytes.data(), bytes.size(), &out, &why)) << why;
    EXPECT_TRUE(same_private(edge, out));
    edge.qp.mtu = IBV_MTU_4096;
    bytes = encoded(edge);
    ASSERT_TRUE(decode_private(bytes.data(), bytes.size(), &out, &why)) << why;
    EXPECT_TRUE(same_private(edge, out));
}

TEST(OpenibRdmacmPrivate, ARefusalWithoutQueuePairDecodes)
{
    // The lower rank refuses a crossing request with kLowerRankWins and an
    // empty QpAddress (mtu 0). Refusing to decode it made the higher rank
    // fail the connection instead of waiting for the lower rank's request
    // (a third of simultaneous connects over rdmacm on Soft-RoCE).
    RdmacmPrivate refusal_data = sample_private();
    refusal_data.kind = RdmacmPrivate::kLowerRankWins;
    refusal_data.qp = QpAddress{};
    const std::vector<uint8_t> bytes = encoded(refusal_data);
    RdmacmPrivate out;
    std::string why;
    ASSERT_TRUE(decode_private(bytes.data(), bytes.size(), &out, &why)) << why;
    EXPECT_EQ(out.kind, RdmacmPrivate::kLowerRankWins);
    EXPECT_EQ(out.rank, refusal_data.rank);
    // The same empty QP in a request or an accept is still refused.
    for (uint8_t kind : {RdmacmPrivate::kConnect, RdmacmPrivate::kAccept}) {
        refusal_data.kind = kind;
        EXPECT_NE(refusal(encoded(refusal_data)), "") << "kind " << int(kind);
    }
}

TEST(OpenibRdmacmPrivate, EncodingDependsOnlyOnTheFields)
{
    // The bytes go to another process: whatever the buffer held before
    // (stack garbage) must not show through.
    const RdmacmPrivate p = sample_private();
    uint8_t zeros[kRdmacmPrivateBytes], ones[kRdmacmPrivateBytes];
    std::memset(zeros, 0x00, sizeof zeros);
    std::memset(ones, 0xff, sizeof ones);
    encode_private(p, zeros);
    encode_private(p, ones);
    EXPECT_EQ(std::memcmp(zeros, ones, kRdmacmPrivateBytes), 0);
}

TEST(OpenibRdmacmPrivate, ShortDataIsRefusedWithItsLength)
{
    const std::vector<uint8_t> bytes = encoded(sample_private());
    for (size_t len : {size_t{0}, size_t{1}, size_t{20}, kRdmacmPrivateBytes - 1}) {
        RdmacmPrivate out;
        std::string why;
        EXPECT_FALSE(decode_private(bytes.data(), len, &out, &why)) << len << " bytes accepted";
        EXPECT_NE(why.find(std::to_string(len) + " bytes"), std::string::npos) << why;
        EXPECT_NE(why.find(std::to_string(kRdmacmPrivateBytes)), std::string::npos) << why;
    }
    RdmacmPrivate out;
    std::string why;
    EXPECT_FALSE(decode_private(nullptr, 0, &out, &why));
    EXPECT_FALSE(why.empty());
}

TEST(OpenibRdmacmPrivate, PaddingBeyondTheDataIsAccepted)
{
    // rdma_cm hands over its message's whole private data field (56 bytes in
    // a request, 196 in a reply), whatever the sender gave it.
    const RdmacmPrivate in = sample_private();
    for (size_t total : {size_t{56}, size_t{196}}) {
        std::vector<uint8_t> bytes = encoded(in);
        bytes.resize(total, 0xcc);
        RdmacmPrivate out;
        std::string why;
        ASSERT_TRUE(decode_private(bytes.data(), bytes.size(), &out, &why)) << total << ": " << why;
        EXPECT_TRUE(same_private(in, out));
    }
}

TEST(OpenibRdmacmPrivate, ForeignOrOutOfRangeDataIsRefused)
{
    const std::vector<uint8_t> good = encoded(sample_private());
    ASSERT_EQ(refusal(good), "");
    struct Damage {
        const char *what;
        size_t at;
        uint8_t value;
    };
    const Damage damages[] = {
        {"wrong magic", 0, static_cast<uint8_t>(good[0] ^ 0x80)},
        {"another version", kVersionAt, static_cast<uint8_t>(good[kVersionAt] + 1)},
        {"kind 0", kKindAt, 0},
        {"kind beyond the last", kKindAt, RdmacmPrivate::kLowerRankWins + 1},
        {"qpn of 25 bits", kQpnAt + 3, 0x01},
        {"psn of 25 bits", kPsnAt + 3, 0x01},
        {"mtu 0", kMtuAt, 0},
        {"mtu beyond 4096", kMtuAt, IBV_MTU_4096 + 1},
    };
    for (const Damage &d : damages) {
        std::vector<uint8_t> bytes = good;
        bytes[d.at] = d.value;
        const std::string why = refusal(bytes);
        EXPECT_NE(why, "") << d.what << " was accepted";
    }
    std::vector<uint8_t> bytes = good;
    bytes[0] ^= 0x80;
    EXPECT_NE(refusal(bytes).find("not weft's"), std::string::npos) << refusal(bytes);
    bytes = good;
    bytes[kMtuAt] = 0;
    EXPECT_NE(refusal(bytes).find("out-of-range"), std::string::npos) << refusal(bytes);
}

TEST(OpenibRdmacmPrivate, JobHashTellsJobsApart)
{
    EXPECT_EQ(job_hash("job-1"), job_hash("job-1"));
    EXPECT_NE(job_hash("job-1"), job_hash("job-2"));
    EXPECT_NE(job_hash(""), job_hash("job-1"));
}

// ---- port choice ------------------------------------------------------------

namespace {

std::vector<std::string> names(const std::vector<PortCandidate> &cands)
{
    std::vector<std::string> out;
    for (const PortCandidate &c : cands)
        out.push_back(c.device + ":" + std::to_string(c.port));
    return out;
}

using Names = std::vector<std::string>;

} // namespace

TEST(OpenibPortChoice, NearestKeepsEveryPortAtTheSmallestDistanceInOrder)
{
    EXPECT_EQ(names(nearest({})), Names{});
    EXPECT_EQ(names(nearest({{"mlx5_0", 1, WEFT_DISTANCE_MACHINE}, {"mlx5_1", 1, WEFT_DISTANCE_NUMA},
                             {"mlx5_1", 2, WEFT_DISTANCE_NUMA}, {"mlx5_2", 1, WEFT_DISTANCE_PACKAGE}})),
              (Names{"mlx5_1:1", "mlx5_1:2"}));
    EXPECT_EQ(names(nearest({{"a", 1, WEFT_DISTANCE_PACKAGE}, {"b", 1, WEFT_DISTANCE_PACKAGE}})),
              (Names{"a:1", "b:1"}));
    EXPECT_EQ(names(nearest({{"only", 1, WEFT_DISTANCE_MACHINE}})), Names{"only:1"});
}

TEST(OpenibPortChoice, UnknownDistanceNeverBeatsAKnownOne)
{
    // A negative distance is hwloc not knowing the device (a status, not a
    // small distance): it counts as WEFT_DISTANCE_UNKNOWN.
    EXPECT_EQ(names(nearest({{"rxe0", 1, -2}, {"mlx5_0", 1, WEFT_DISTANCE_MACHINE}})), Names{"mlx5_0:1"});
    EXPECT_EQ(names(nearest({{"rxe0", 1, -1}, {"mlx5_0", 1, WEFT_DISTANCE_NUMA}})), Names{"mlx5_0:1"});
    // Among unknowns alone, or tied with the explicit unknown class, all stay.
    EXPECT_EQ(names(nearest({{"rxe0", 1, -2}, {"rxe1", 1, WEFT_DISTANCE_UNKNOWN}})), (Names{"rxe0:1", "rxe1:1"}));
    EXPECT_EQ(names(nearest({{"rxe0", 1, -2}})), Names{"rxe0:1"});
}

namespace {

// The ports nearest() keeps for a process bound to `binding` on the
// two-socket XML machine (mlx5_0 on socket 0, mlx5_1 on socket 1), with the
// distances the framework's hwloc topology gives; a device hwloc does not
// know ("rxe0") is a candidate too.
struct XmlChoice {
    std::string error;
    int distance0 = 0, distance1 = 0, distance_unknown = 0;
    Names kept;
};

XmlChoice choose_on_xml_machine(const std::string &binding)
{
    const std::string xml = std::string(WEFT_ABS_SRCDIR) + "/contrib/topologies/2socket-2nic-2hca.xml";
    BtlHarness h;
    // On a host without RDMA, query says unavailable (skip): the framework,
    // with its topology, is up all the same.
    auto loaded = h.load({"openib",
                          PeerMode::other_process,
                          {"WEFT_MCA_topology_base_xml_file=" + xml, "WEFT_MCA_topology_base_binding=" + binding}});
    XmlChoice out;
    if (!loaded.ok && !loaded.skip) {
        out.error = loaded.message;
        return out;
    }
    const weft_host_t *host = weft::Framework::current()->host();
    out.distance0 = host->device_distance("mlx5_0");
    out.distance1 = host->device_distance("mlx5_1");
    out.distance_unknown = host->device_distance("rxe0");
    out.kept = names(nearest({{"rxe0", 1, out.distance_unknown},
                              {"mlx5_0", 1, out.distance0},
                              {"mlx5_1", 1, out.distance1}}));
    return out;
}

} // namespace

TEST(OpenibPortChoice, ProcessKeepsTheHcaOfItsOwnSocketFromAnXmlTopology)
{
    const XmlChoice socket0 = choose_on_xml_machine("0-7");
    ASSERT_EQ(socket0.error, "");
    EXPECT_GE(socket0.distance0, 0);
    EXPECT_LT(socket0.distance0, socket0.distance1);
    EXPECT_LT(socket0.distance_unknown, 0) << "rxe0 is not in the XML topology";
    EXPECT_EQ(socket0.kept, Names{"mlx5_0:1"});

    const XmlChoice socket1 = choose_on_xml_machine("8-15");
    ASSERT_EQ(socket1.error, "");
    EXPECT_GE(socket1.distance1, 0);
    EXPECT_LT(socket1.distance1, socket1.distance0);
    EXPECT_EQ(socket1.kept, Names{"mlx5_1:1"});
}

// ---- component parameters ---------------------------------------------------

namespace {

// Loads btl/openib with env (the harness skips it where query finds no
// port, but the component is loaded and opened either way) and calls its
// init() directly: init checks its parameters before it looks for ports, so
// the checks run on any host. Returns init's status; its log lines in *log.
struct InitOutcome {
    std::string error;   // the harness could not load the component at all
    bool built = true;
    int status = WEFT_SUCCESS;
    std::string log;
};

InitOutcome init_openib(const std::vector<std::string> &env)
{
    InitOutcome out;
    BtlHarness h;
    auto loaded = h.load({"openib", PeerMode::other_process, env});
    if (!loaded.ok && !loaded.skip) {
        out.error = loaded.message;
        return out;
    }
    auto *rec = weft::Framework::current()->repository().find(WEFT_BTL_FRAMEWORK, "openib");
    if (!rec || !rec->opened) {
        out.built = false;
        return out;
    }
    const auto *component = reinterpret_cast<const weft_btl_component_t *>(rec->component);
    weft_btl_module_t *made[16] = {};
    int count = 0;
    out.status = component->init(weft::Framework::current()->host(), made, 16, &count);
    for (int i = 0; i < count; ++i)
        weft_btl_finalize(made[i]);
    for (const std::string &line : h.log_lines)
        out.log += line + "\n";
    return out;
}

} // namespace

TEST(OpenibParams, UnknownCpcIsRefusedNamingItAndTheKnownOnes)
{
    const InitOutcome r = init_openib({"WEFT_MCA_btl_openib_cpc=udcm,bogus"});
    ASSERT_EQ(r.error, "");
    if (!r.built)
        GTEST_SKIP() << "btl/openib is not built here";
    EXPECT_NE(r.status, WEFT_SUCCESS);
    EXPECT_NE(r.log.find("unknown connection method 'bogus'"), std::string::npos) << r.log;
    EXPECT_NE(r.log.find("known: udcm, rdmacm, oob"), std::string::npos) << r.log;
}

TEST(OpenibParams, EagerLimitAboveFrameSizeIsRefusedWithTheValues)
{
    const InitOutcome r = init_openib({"WEFT_MCA_btl_openib_eager_limit=128k", "WEFT_MCA_btl_openib_frame_size=64k"});
    ASSERT_EQ(r.error, "");
    if (!r.built)
        GTEST_SKIP() << "btl/openib is not built here";
    EXPECT_EQ(r.status, WEFT_ERR_BAD_VALUE);
    EXPECT_NE(r.log.find("eager_limit=131072"), std::string::npos) << r.log;
    EXPECT_NE(r.log.find("frame_size=65536"), std::string::npos) << r.log;
    EXPECT_NE(r.log.find("need eager_limit <= frame_size"), std::string::npos) << r.log;
}

TEST(OpenibParams, OutOfRangeTimeoutIsRefusedWithTheRange)
{
    const InitOutcome r = init_openib({"WEFT_MCA_btl_openib_timeout=40"});
    ASSERT_EQ(r.error, "");
    if (!r.built)
        GTEST_SKIP() << "btl/openib is not built here";
    EXPECT_EQ(r.status, WEFT_ERR_BAD_VALUE);
    EXPECT_NE(r.log.find("btl_openib_timeout=40 is out of range: use 1 to 31"), std::string::npos) << r.log;
}

namespace {

// Sends this process's stderr to a file for its lifetime; text() reads what
// arrived so far.
class StderrCapture {
public:
    StderrCapture()
    {
        std::fflush(stderr);
        saved_ = dup(STDERR_FILENO);
        dup2(file_.fd(), STDERR_FILENO);
    }
    ~StderrCapture() { restore(); }
    StderrCapture(const StderrCapture &) = delete;
    StderrCapture &operator=(const StderrCapture &) = delete;
    void restore()
    {
        if (saved_ < 0)
            return;
        std::fflush(stderr);
        dup2(saved_, STDERR_FILENO);
        close(saved_);
        saved_ = -1;
    }
    std::string text() const
    {
        std::string out;
        char buf[4096];
        for (off_t at = 0;;) {
            const ssize_t n = pread(file_.fd(), buf, sizeof buf, at);
            if (n <= 0)
                break;
            out.append(buf, static_cast<size_t>(n));
            at += n;
        }
        return out;
    }

private:
    class File {
    public:
        File()
        {
            char name[] = "/tmp/weft-openib-stderr-XXXXXX";
            fd_ = mkstemp(name);
            if (fd_ >= 0)
                unlink(name);
        }
        ~File()
        {
            if (fd_ >= 0)
                close(fd_);
        }
        int fd() const { return fd_; }

    private:
        int fd_ = -1;
    };
    File file_;
    int saved_ = -1;
};

} // namespace

TEST(OpenibParams, WithoutADeviceQuerySaysWhyAndNothingReachesStderr)
{
    std::string stderr_text, reason;
    bool available = false, built = true;
    std::vector<std::string> log;
    {
        StderrCapture capture;
        BtlHarness h;
        auto loaded = h.load({"openib", PeerMode::other_process, {}});
        auto *rec = weft::Framework::current()->repository().find(WEFT_BTL_FRAMEWORK, "openib");
        built = rec && rec->opened;
        if (built) {
            available = loaded.ok;
            reason = rec->query.reason;
        }
        log = h.log_lines;
        capture.restore();
        stderr_text = capture.text();
    }
    if (!built)
        GTEST_SKIP() << "btl/openib is not built here";
    if (available)
        GTEST_SKIP() << "this machine has an RDMA port (" << reason << "): nothing to check about its absence";
    // The common machine has no RDMA at all: a reason for weft_info, silence
    // everywhere else at the default verbosity.
    EXPECT_NE(reason.find("no RDMA device"), std::string::npos) << reason;
    EXPECT_EQ(stderr_text, "") << "loading btl/openib on a machine without RDMA wrote to stderr";
    for (const std::string &line : log)
        EXPECT_EQ(line.find("openib"), std::string::npos) << "logged at the default verbosity: " << line;
}
