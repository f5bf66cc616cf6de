// btl/tcp beyond the conformance suite: interface choice from injected
// interface lists and an XML topology, reachability reasons, strangers at
// the listener, and a peer killed mid-transfer.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "btl_harness.hpp"
#include "btl_tcp_iface.hpp"
#include "btl_tcp_wire.hpp"
#include "core/framework.hpp"

using namespace weft::test::btl;
using namespace weft::btl_tcp;

namespace {

IfAddr v4(const std::string &name, const char *addr, unsigned prefix, unsigned flags = IFF_UP)
{
    IfAddr a;
    a.name = name;
    a.family = AF_INET;
    auto *sin = reinterpret_cast<sockaddr_in *>(&a.addr);
    sin->sin_family = AF_INET;
    inet_pton(AF_INET, addr, &sin->sin_addr);
    a.prefix = prefix;
    a.flags = flags;
    return a;
}

const std::vector<IfAddr> kMachine = {
    v4("lo", "127.0.0.1", 8, IFF_UP | IFF_LOOPBACK), v4("eth0", "10.1.0.5", 16),
    v4("eth1", "10.2.0.5", 16), v4("docker0", "172.17.0.1", 16), v4("virbr0", "192.168.122.1", 24),
    v4("veth12ab", "10.3.0.1", 24), v4("br-5f2c", "172.18.0.1", 16),
    v4("eth2", "169.254.3.3", 16), v4("eth3", "10.9.0.1", 24, 0 /* down */)};

// Loads btl/tcp with env and runs the choice on kMachine; names in order.
std::vector<std::string> choose(const std::vector<std::string> &env, std::string *error = nullptr,
                                std::vector<std::string> *skipped = nullptr)
{
    BtlHarness h;
    auto loaded = h.load({"tcp", PeerMode::other_process, env});
    if (!loaded.ok && !loaded.skip && error) {
        *error = loaded.message;
        return {};
    }
    const weft_host_t *host = weft::Framework::current()->host();
    std::vector<Chosen> out;
    std::vector<std::string> skip;
    std::string err;
    bool ok = choose_interfaces(host, kMachine, [host](const char *n) { return host->device_distance(n); },
                                &out, &skip, &err);
    if (error)
        *error = ok ? "" : err;
    if (skipped)
        *skipped = skip;
    std::vector<std::string> names;
    for (const auto &c : out)
        names.push_back(c.addr.name);
    return names;
}

} // namespace

TEST(BtlTcpInterfaces, VirtualBridgesLinkLocalAndDownAreSkipped)
{
    std::vector<std::string> skipped;
    auto names = choose({}, nullptr, &skipped);
    EXPECT_EQ(names, (std::vector<std::string>{"eth0", "eth1", "lo"}));
    std::string all;
    for (const auto &s : skipped)
        all += s + ";";
    EXPECT_NE(all.find("eth2 169.254.3.3/16 (link-local"), std::string::npos) << all;
    EXPECT_NE(all.find("docker0"), std::string::npos) << all;
    EXPECT_NE(all.find("eth3 10.9.0.1/24 (down)"), std::string::npos) << all;
}

TEST(BtlTcpInterfaces, IncludeAndExcludeByNameAndCidr)
{
    EXPECT_EQ(choose({"WEFT_MCA_btl_tcp_if_include=eth1"}), (std::vector<std::string>{"eth1"}));
    EXPECT_EQ(choose({"WEFT_MCA_btl_tcp_if_include=10.1.0.0/16,lo"}), (std::vector<std::string>{"eth0", "lo"}));
    EXPECT_EQ(choose({"WEFT_MCA_btl_tcp_if_include=docker0"}), (std::vector<std::string>{"docker0"}));
    EXPECT_EQ(choose({"WEFT_MCA_btl_tcp_if_exclude=eth0,10.2.0.0/16"}),
              (std::vector<std::string>{"docker0", "virbr0", "veth12ab", "br-5f2c", "lo"}));
}

TEST(BtlTcpInterfaces, IncludeWithExcludeIsAnErrorThatSaysSo)
{
    std::string error;
    auto names = choose({"WEFT_MCA_btl_tcp_if_include=eth0", "WEFT_MCA_btl_tcp_if_exclude=eth1"}, &error);
    EXPECT_TRUE(names.empty());
    // open() refuses the component; the message names both parameters.
    EXPECT_NE(error.find("tcp"), std::string::npos) << error;
}

TEST(BtlTcpInterfaces, NearestNicFirstFromAnXmlTopology)
{
    const std::string xml = std::string(WEFT_ABS_SRCDIR) + "/contrib/topologies/2socket-2nic-2hca.xml";
    auto on_second = choose({"WEFT_MCA_topology_base_xml_file=" + xml, "WEFT_MCA_topology_base_binding=8-15"});
    auto on_first = choose({"WEFT_MCA_topology_base_xml_file=" + xml, "WEFT_MCA_topology_base_binding=0-7"});
    ASSERT_EQ(on_second.size(), 3u);
    EXPECT_EQ(on_second[0], "eth1");
    EXPECT_EQ(on_first[0], "eth0");
    EXPECT_EQ(on_first.back(), "lo");
}

namespace {

class BtlTcp : public ::testing::Test {
protected:
    void SetUp() override
    {
        auto loaded = h_.load({"tcp", PeerMode::other_process, {"WEFT_MCA_btl_base_verbose=60"}});
        if (loaded.skip)
            GTEST_SKIP() << loaded.message;
        ASSERT_TRUE(loaded.ok) << loaded.message;
    }
    BtlHarness h_;
};

// The loopback listener's port from this process's card.
uint16_t loopback_port(const std::vector<std::byte> &bytes, Card *card)
{
    if (!decode_card(bytes, card).empty())
        return 0;
    for (const auto &e : card->entries)
        if (e.loopback && e.family == 4)
            return e.port;
    return 0;
}

int dial(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr *>(&sin), sizeof sin) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

} // namespace

TEST_F(BtlTcp, ReachabilityIsDecidedBySubnetWithReasons)
{
    ASSERT_EQ(h_.init_modules(), "");
    Card card;
    card.entries = {CardEntry{4, 24, false, 5000, {203, 0, 113, 9}}};
    auto bytes = encode_card(card);
    auto peer = BtlHarness::peer(3, WEFT_PEER_OTHER_NODE, bytes);
    for (weft_btl_module_t *m : h_.modules()) {
        char why[WEFT_REASON_MAX] = {};
        EXPECT_EQ(m->ops->reachable(m, &peer, why, sizeof why), 0) << m->name;
        EXPECT_NE(std::string(why).find("rank 3"), std::string::npos) << why;
        if (std::string(m->name) != "tcp/lo")
            EXPECT_NE(std::string(why).find("203.0.113.9/24"), std::string::npos) << why;
        else
            EXPECT_NE(std::string(why).find("loopback"), std::string::npos) << why;
    }
    // A broken card is a reason, not a crash.
    std::vector<std::byte> junk(40, std::byte{0x41});
    auto bad = BtlHarness::peer(4, WEFT_PEER_OTHER_NODE, junk);
    char why[WEFT_REASON_MAX] = {};
    EXPECT_EQ(h_.module()->ops->reachable(h_.module(), &bad, why, sizeof why), 0);
    EXPECT_NE(std::string(why).find("card"), std::string::npos) << why;
}

TEST_F(BtlTcp, StrangersAreRefusedAndCounted)
{
    ASSERT_EQ(h_.init_modules(), "");
    h_.set_process(0, 4, "stranger-test-job");
    Card card;
    const uint16_t port = loopback_port(h_.card(), &card);
    if (port == 0)
        GTEST_SKIP() << "no IPv4 loopback module here";
    // 1: garbage; 2: a well-formed hello with the wrong secret; 3: right
    // secret, wrong job; 4: a short hello, then the connection closes.
    std::vector<int> fds;
    const std::string garbage(kHelloBytes, 'G');
    fds.push_back(dial(port));
    ASSERT_EQ(send(fds.back(), garbage.data(), garbage.size(), 0), static_cast<ssize_t>(garbage.size()));
    Hello hello;
    hello.rank = 1;
    std::strcpy(hello.job_id, "stranger-test-job");
    std::byte buf[kHelloBytes];
    encode_hello(hello, buf);   // all-zero secret
    fds.push_back(dial(port));
    ASSERT_EQ(send(fds.back(), buf, sizeof buf, 0), static_cast<ssize_t>(sizeof buf));
    std::memcpy(hello.secret, card.secret, kSecretBytes);
    std::strcpy(hello.job_id, "another-job");
    encode_hello(hello, buf);
    fds.push_back(dial(port));
    ASSERT_EQ(send(fds.back(), buf, sizeof buf, 0), static_cast<ssize_t>(sizeof buf));
    int shortfd = dial(port);
    ASSERT_EQ(send(shortfd, buf, 10, 0), 10);
    close(shortfd);
    auto count_seen = [&] {
        for (const auto &l : h_.log_lines)
            if (l.find("refused connections: 4") != std::string::npos)
                return true;
        return false;
    };
    ASSERT_TRUE(h_.progress_until(count_seen)) << h_.failure();
    // Each stranger's socket is closed: reads see EOF.
    for (int fd : fds) {
        char c;
        EXPECT_EQ(recv(fd, &c, 1, 0), 0);
        close(fd);
    }
    EXPECT_TRUE(h_.states.empty()) << "a stranger reached the runtime";
    EXPECT_TRUE(h_.deliveries.empty());
    std::string all;
    for (const auto &l : h_.log_lines)
        all += l + "\n";
    EXPECT_NE(all.find("wrong secret"), std::string::npos) << all;
    EXPECT_NE(all.find("another-job"), std::string::npos) << all;
}

TEST_F(BtlTcp, PeerKilledMidTransferFailsWithItsRankAndHost)
{
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The victim: connects, then sits without progress until killed,
        // so the parent's large messages pile up in flight.
        close(fds[0]);
        Channel ch(fds[1]);
        if (!h_.init_modules().empty())
            _exit(1);
        h_.set_process(1, 2, "kill-test");
        ch.send(h_.card());
        auto card = ch.receive(std::chrono::seconds(30));
        if (!card)
            _exit(1);
        auto peer = BtlHarness::peer(0, WEFT_PEER_SAME_NODE, *card);
        weft_btl_endpoint_t *ep = nullptr;
        if (!h_.connect(peer, &ep).empty())
            _exit(1);
        ch.send(std::string("connected"));
        ch.receive(std::chrono::seconds(60));   // until killed
        _exit(0);
    }
    close(fds[1]);
    Channel ch(fds[0]);
    ASSERT_EQ(h_.init_modules(), "");
    h_.set_process(0, 2, "kill-test");
    ASSERT_TRUE(ch.send(h_.card()));
    auto card = ch.receive(std::chrono::seconds(30));
    ASSERT_TRUE(card.has_value());
    auto peer = BtlHarness::peer(1, WEFT_PEER_SAME_NODE, *card);
    weft_btl_endpoint_t *ep = nullptr;
    ASSERT_EQ(h_.connect(peer, &ep), "");
    // Wait for the victim's CONNECTED while progressing (its side of the handshake).
    ASSERT_TRUE(h_.progress_until([&] { return ch.readable(); }));
    ASSERT_TRUE(ch.receive(std::chrono::seconds(30)).has_value());
    auto big = pattern(size_t{4} << 20, 3);
    iovec iov{big.data(), big.size()};
    for (int i = 0; i < 4; ++i)
        ASSERT_EQ(ep->module->ops->send(ep, 1, &iov, 1), WEFT_SUCCESS);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(h_.progress_until([&] { return h_.count_states(ep, WEFT_BTL_EP_FAILED) > 0; }))
        << h_.failure();
    // The FAILED record of this endpoint (the victim's own connection
    // attempt may still sit in the listener's backlog and show up later).
    const StateChange *failed = nullptr;
    for (const auto &st : h_.states)
        if (st.ep == ep && st.state == WEFT_BTL_EP_FAILED)
            failed = &st;
    ASSERT_NE(failed, nullptr);
    EXPECT_NE(failed->reason.find("rank 1"), std::string::npos) << failed->reason;
    EXPECT_NE(failed->reason.find("localhost"), std::string::npos) << failed->reason;
    EXPECT_LT(failed->status, 0);
    // The endpoint is gone: progress stays quiet, nothing hangs.
    for (int i = 0; i < 10; ++i)
        EXPECT_GE(h_.progress_once(), 0);
}
