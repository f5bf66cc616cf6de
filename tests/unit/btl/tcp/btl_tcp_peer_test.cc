// SPDX-License-Identifier: BSD-3-Clause
// btl/tcp beyond the conformance suite: interface choice from injected
// interface lists and an XML topology, reachability reasons, strangers at
// the listener, a peer killed mid-transfer, and several links per peer
// (unordered frames striped over them, direct placement, a peer with a
// different link count).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <random>

#include "../btl_harness.hpp"
#include "btl_tcp_iface.hpp"
#include "btl_tcp_link.hpp"
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
        EXPECT_EQ(weft_btl_reachable(m, &peer, why, sizeof why), 0) << m->name;
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
    EXPECT_EQ(weft_btl_reachable(h_.module(), &bad, why, sizeof why), 0);
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

// The parent of a forked pair: its modules up as rank 0 of job, and the
// child's card (empty when none came).
std::vector<std::byte> parent_side(BtlHarness &h, Channel &ch, const std::string &job)
{
    if (!h.init_modules().empty())
        return {};
    h.set_process(0, 2, job);
    if (!ch.send(h.card()))
        return {};
    return ch.receive(std::chrono::seconds(30)).value_or(std::vector<std::byte>{});
}

// Sends 4 MiB messages to a peer that is then killed; both ordered and
// (with several links) unordered frames are in flight.
void peer_killed_mid_transfer(BtlHarness &h, bool unordered)
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
        if (!h.init_modules().empty())
            _exit(1);
        h.set_process(1, 2, "kill-test");
        ch.send(h.card());
        auto card = ch.receive(std::chrono::seconds(30));
        if (!card)
            _exit(1);
        auto peer = BtlHarness::peer(0, WEFT_PEER_SAME_NODE, *card);
        weft_btl_endpoint_t *ep = nullptr;
        if (!h.connect(peer, &ep).empty())
            _exit(1);
        ch.send(std::string("connected"));
        ch.receive(std::chrono::seconds(60));   // until killed
        _exit(0);
    }
    close(fds[1]);
    Channel ch(fds[0]);
    const std::vector<std::byte> card = parent_side(h, ch, "kill-test");
    ASSERT_FALSE(card.empty()) << "the child sent no card";
    auto peer = BtlHarness::peer(1, WEFT_PEER_SAME_NODE, card);
    weft_btl_endpoint_t *ep = nullptr;
    ASSERT_EQ(h.connect(peer, &ep), "");
    // Wait for the victim's CONNECTED while progressing (its side of the handshake).
    ASSERT_TRUE(h.progress_until([&] { return ch.readable(); }));
    ASSERT_TRUE(ch.receive(std::chrono::seconds(30)).has_value());
    auto big = pattern(size_t{4} << 20, 3);
    iovec iov{big.data(), big.size()};
    for (int i = 0; i < 4; ++i)
        ASSERT_EQ(weft_btl_send(ep, 1, &iov, 1), WEFT_SUCCESS);
    // Unordered frames: one per idle link (busy links answer AGAIN).
    for (int i = 0; unordered && i < 4; ++i) {
        int rc = weft_btl_sendx(ep, 2, &iov, 1, WEFT_BTL_SEND_UNORDERED);
        ASSERT_TRUE(rc == WEFT_SUCCESS || rc == WEFT_ERR_AGAIN) << weft_status_string(rc);
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(h.progress_until([&] { return h.count_states(ep, WEFT_BTL_EP_FAILED) > 0; }))
        << h.failure();
    // The FAILED record of this endpoint (the victim's own connection
    // attempt may still sit in the listener's backlog and show up later).
    const StateChange *failed = nullptr;
    for (const auto &st : h.states)
        if (st.ep == ep && st.state == WEFT_BTL_EP_FAILED)
            failed = &st;
    ASSERT_NE(failed, nullptr);
    EXPECT_NE(failed->reason.find("rank 1"), std::string::npos) << failed->reason;
    EXPECT_NE(failed->reason.find("localhost"), std::string::npos) << failed->reason;
    EXPECT_LT(failed->status, 0);
    // The endpoint is gone: progress stays quiet, nothing hangs.
    for (int i = 0; i < 10; ++i)
        EXPECT_GE(h.progress_once(), 0);
    // Every connection btl/tcp closes says why: failing a peer at error
    // level, closing its links at debug level, with the same reason.
    std::string all;
    for (const auto &l : h.log_lines)
        all += l + "\n";
    auto line_with = [&](const std::string &a, const std::string &b) {
        for (const auto &l : h.log_lines)
            if (l.find(a) != std::string::npos && l.find(b) != std::string::npos)
                return true;
        return false;
    };
    EXPECT_TRUE(line_with("btl/tcp error: ", "rank 1 on host localhost")) << all;
    EXPECT_TRUE(line_with("btl/tcp error: ", "; closing the connection")) << all;
    EXPECT_TRUE(line_with("links to rank 1 on host localhost", ": failed: ")) << all;
}

TEST_F(BtlTcp, PeerKilledMidTransferFailsWithItsRankAndHost)
{
    peer_killed_mid_transfer(h_, false);
}

namespace {

class BtlTcpLinks : public ::testing::Test {
protected:
    void SetUp() override
    {
        auto loaded = h_.load({"tcp", PeerMode::other_process,
                               {"WEFT_MCA_btl_base_verbose=60", "WEFT_MCA_btl_tcp_links=4"}});
        if (loaded.skip)
            GTEST_SKIP() << loaded.message;
        ASSERT_TRUE(loaded.ok) << loaded.message;
    }
    BtlHarness h_;
};

// A large message's first bytes: which one it is and how its payload was made.
struct BigHeader {
    uint32_t index;            // PlacedHead (btl_harness.hpp): the index, then the seed
    uint32_t seed;
    uint32_t ordered_before;   // ordered messages the sender had sent before it
};

constexpr size_t kBigMessages = 24;
constexpr size_t kOrdered = 200;

} // namespace

TEST_F(BtlTcpLinks, PeerKilledMidTransferFailsWithItsRankAndHost)
{
    peer_killed_mid_transfer(h_, true);
}

// The parent sends large unordered frames of random sizes (spread over the
// links) between small ordered ones; the child places every other large
// one straight into its own buffers (in two pieces) and takes the rest
// through recv. Every byte is checked; ordered frames keep their order.
TEST_F(BtlTcpLinks, UnorderedLargeMessagesOverLinksLandWholeAndOrderedOnesInOrder)
{
    std::string result = run_two_process(h_, [](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = ctx.side == Side::parent ? "sender" : "receiver";
        auto peer = ctx.peer(WEFT_PEER_SAME_NODE);
        weft_btl_endpoint_t *ep = nullptr;
        // Both sides connect at once: the lower-rank rule decides per link.
        if (h.component()->start_connect(h.module_for(peer), &peer, &ep) != WEFT_SUCCESS || !ep)
            return me + ": start_connect failed";
        if (!h.progress_until([&] { return h.count_states(ep, WEFT_BTL_EP_CONNECTED) > 0; }))
            return me + ": not connected: " + h.failure();
        if (!(ep->module->caps.flags & WEFT_BTL_FLAG_UNORDERED) || !WEFT_BTL_HAS_OP(ep->module, sendx))
            return me + ": btl/tcp does not offer unordered sends";
        const size_t max_send = ep->module->caps.max_send;

        if (ctx.side == Side::parent) {
            std::mt19937 rng(20240607);
            std::uniform_int_distribution<size_t> size(Link::kPlaceMin, std::min<size_t>(3u << 20, max_send));
            uint32_t ordered = 0;
            for (size_t i = 0; i < kBigMessages; ++i) {
                for (int k = 0; k < 8 && ordered < kOrdered; ++k, ++ordered) {
                    iovec iov{&ordered, sizeof ordered};
                    if (h.retry_on_again([&] { return weft_btl_send(ep, 7, &iov, 1); }) != WEFT_SUCCESS)
                        return me + ": ordered send failed";
                }
                BigHeader hdr{static_cast<uint32_t>(i), static_cast<uint32_t>(rng()), ordered};
                auto payload = pattern(size(rng) - sizeof hdr, hdr.seed);
                iovec iov[2] = {{&hdr, sizeof hdr}, {payload.data(), payload.size()}};
                int rc = h.retry_on_again(
                    [&] { return weft_btl_sendx(ep, 9, iov, 2, WEFT_BTL_SEND_UNORDERED); });
                if (rc != WEFT_SUCCESS)
                    return me + ": unordered send " + std::to_string(i) + ": " + weft_status_string(rc);
                std::fill(payload.begin(), payload.end(), std::byte{0xee});   // copy semantics
            }
            for (; ordered < kOrdered; ++ordered) {
                iovec iov{&ordered, sizeof ordered};
                if (h.retry_on_again([&] { return weft_btl_send(ep, 7, &iov, 1); }) != WEFT_SUCCESS)
                    return me + ": ordered send failed";
            }
            // The receiver reports; keep the queued bytes moving meanwhile.
            if (!h.progress_until([&] { return ctx.channel.readable(); }))
                return me + ": no report from the receiver: " + h.failure();
            auto report = ctx.channel.receive(std::chrono::seconds(30));
            if (!report)
                return me + ": the receiver went away";
            std::string text(reinterpret_cast<const char *>(report->data()), report->size());
            return text == "ok" ? "" : "receiver: " + text;
        }

        // Receiver: odd messages are placed into two buffers each.
        SplitPlacer placer(h, 9, sizeof(BigHeader));
        auto count = [&](uint8_t am) {
            return static_cast<size_t>(std::count_if(h.deliveries.begin(), h.deliveries.end(),
                                                     [am](const Delivery &d) { return d.am_id == am; }));
        };
        const bool all = h.progress_until([&] {
            return !placer.problem().empty() || (count(9) + placer.landed() >= kBigMessages && count(7) >= kOrdered);
        });
        std::string verdict;
        if (!placer.problem().empty())
            verdict = placer.problem();
        else if (!all)
            verdict = std::to_string(count(9)) + " received and " + std::to_string(placer.landed()) + " placed of " +
                      std::to_string(kBigMessages) + ", " + std::to_string(count(7)) + " ordered: " + h.failure();
        // Ordered frames in order, and each large one after the ordered ones sent before it.
        uint32_t next = 0;
        std::vector<uint32_t> ordered_seen_at(kBigMessages, 0);
        for (const auto &d : h.deliveries) {
            if (!verdict.empty())
                break;
            if (d.am_id == 7) {
                uint32_t v;
                std::memcpy(&v, d.data.data(), sizeof v);
                if (d.data.size() != sizeof v || v != next++)
                    verdict = "ordered message " + std::to_string(next - 1) + " out of order";
            } else if (d.am_id == 9) {
                BigHeader hdr;
                std::memcpy(&hdr, d.data.data(), sizeof hdr);
                if (hdr.index % 2 == 1 || hdr.index >= kBigMessages)
                    verdict = "message " + std::to_string(hdr.index) + " delivered instead of placed";
                else if (checksum(std::span(d.data).subspan(sizeof hdr)) !=
                         checksum(pattern(d.data.size() - sizeof hdr, hdr.seed)))
                    verdict = "message " + std::to_string(hdr.index) + " (received) differs";
            }
        }
        if (verdict.empty())
            verdict = placer.check(kBigMessages / 2);
        ctx.channel.send(verdict.empty() ? std::string("ok") : verdict);
        return verdict.empty() ? "" : me + ": " + verdict;
    });
    EXPECT_TRUE(result.empty()) << result;
}

// A peer that opens a different number of links is refused, and both sides
// say which parameter differs.
// A link's reader over a socket pair, with a sink that places every
// message of am id 9 into a buffer of its own and keeps the others.
TEST(BtlTcpLink, AfterAPlacementTheNextLargeMessageIsReadStraightIntoItsPlace)
{
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    Link tx(weft::UniqueFd(fds[0]), 1u << 20), rx(weft::UniqueFd(fds[1]), 1u << 20);
    struct Sink final : LinkSink {
        std::vector<std::vector<std::byte>> places;   // by token
        std::vector<size_t> heads;                    // bytes shown to each place()
        std::vector<std::vector<std::byte>> messages;
        size_t landed = 0;
        void message(uint8_t, std::span<const std::byte> data) override
        {
            messages.emplace_back(data.begin(), data.end());
        }
        bool stop() const override { return false; }
        bool place(uint8_t am_id, std::span<const std::byte> head, size_t len, weft_btl_placement_t *p) override
        {
            if (am_id != 9)
                return false;
            heads.push_back(head.size());
            places.emplace_back(len);
            p->skip = 0;
            p->iov[0] = {places.back().data(), len};
            p->iovcnt = 1;
            p->token = places.size() - 1;
            return true;
        }
        void placed(uint8_t, uint64_t, int status) override { landed += status == WEFT_SUCCESS; }
    } sink;
    // Three messages larger than the link's read buffer, then a small one.
    constexpr size_t kLarge = 80 * 1024, kCount = 3;
    std::vector<std::vector<std::byte>> sent;
    for (size_t i = 0; i < kCount; ++i) {
        auto &m = sent.emplace_back(kLarge);
        for (size_t k = 0; k < kLarge; ++k)
            m[k] = static_cast<std::byte>(k * 13 + i);
        FrameHeader h;
        h.len = h.total = kLarge;
        h.am_id = 9;
        iovec iov{m.data(), m.size()};
        ASSERT_EQ(tx.send(h, &iov, 1), 0);
    }
    uint32_t small = 0x5eed;
    FrameHeader hs;
    hs.len = hs.total = sizeof small;
    hs.am_id = 7;
    iovec iov{&small, sizeof small};
    ASSERT_EQ(tx.send(hs, &iov, 1), 0);
    std::string error;
    for (int pass = 0; pass < 100000 && sink.messages.empty(); ++pass) {
        bool drained;
        ASSERT_EQ(tx.flush(&drained), 0);
        ASSERT_EQ(rx.receive(sink, &error), 0) << error;
    }
    ASSERT_EQ(sink.landed, kCount);
    ASSERT_EQ(sink.messages.size(), 1u);
    EXPECT_EQ(sink.messages[0].size(), sizeof small);
    for (size_t i = 0; i < kCount; ++i)
        EXPECT_TRUE(sink.places[i] == sent[i]) << "message " << i << " landed wrong";
    // The first was found by a bulk read; each later one was read only up
    // to the head the runtime needs, so its payload went from the socket
    // into its place, not through the link's buffer and a copy.
    for (size_t i = 1; i < kCount; ++i)
        EXPECT_EQ(sink.heads[i], WEFT_BTL_PLACE_HEAD) << "message " << i;
}

TEST_F(BtlTcpLinks, MismatchedLinkCountIsRefusedWithAClearError)
{
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The child uses one link; it only accepts (and refuses).
        close(fds[0]);
        Channel ch(fds[1]);
        weft::params::Origin api;
        api.source = weft::params::Source::Api;
        if (!weft::Framework::current()->params().set("btl_tcp_links", "1", api).ok() ||
            !h_.init_modules().empty())
            _exit(1);
        h_.set_process(1, 2, "links-test");
        ch.send(h_.card());
        if (!ch.receive(std::chrono::seconds(30)))
            _exit(1);
        // Until the parent is done: it needs this side's answers.
        if (!h_.progress_until([&] { return ch.readable(); }))
            _exit(2);
        for (const auto &l : h_.log_lines)
            if (l.find("opens 4 links per peer, this process 1") != std::string::npos &&
                l.find("btl_tcp_links") != std::string::npos)
                _exit(0);
        _exit(3);
    }
    close(fds[1]);
    Channel ch(fds[0]);
    const std::vector<std::byte> card = parent_side(h_, ch, "links-test");
    ASSERT_FALSE(card.empty()) << "the child sent no card";
    auto peer = BtlHarness::peer(1, WEFT_PEER_SAME_NODE, card);
    weft_btl_endpoint_t *ep = nullptr;
    std::string err = h_.connect(peer, &ep);
    ch.send(std::string("done"));
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_FALSE(err.empty()) << "a peer with another link count was accepted";
    const StateChange *failed = nullptr;
    for (const auto &st : h_.states)
        if (st.ep == ep && st.state == WEFT_BTL_EP_FAILED)
            failed = &st;
    ASSERT_NE(failed, nullptr) << err;
    EXPECT_NE(failed->reason.find("btl_tcp_links=1, this process 4"), std::string::npos) << failed->reason;
    EXPECT_NE(failed->reason.find("rank 1"), std::string::npos) << failed->reason;
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the refusing side did not log why (exit code 3) or failed otherwise";
}
