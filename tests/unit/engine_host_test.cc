// SPDX-License-Identifier: BSD-3-Clause
// The messaging engine without the runtime: two engines in one process,
// each given a fake Host (engine_fake_host.hpp), joined by a fake btl module
// whose send() hands the frame to the other side's inbox. Shows that the
// engine needs nothing of runtime/rte: connection on first use through the
// host, queueing until the host says connected, eager and rendezvous
// messages, peer failures reported by the host, and that it takes back
// everything it registered when it goes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_fake_host.hpp"

namespace {

using weft::Status;
using weft::engine::Engine;
using weft::engine::Request;
using weft::test::config_of;
using weft::test::FakeHost;

using EngineHost = weft::test::EnginePair;

TEST_F(EngineHost, EagerAndRendezvousMessagesCrossTheFakeTransport)
{
    for (size_t n : {size_t{0}, size_t{8}, size_t{4000}, size_t{100000}}) {
        const auto out = pattern(n);
        std::vector<unsigned char> in(n);
        weft_request_t rh, sh;
        ASSERT_TRUE(e1.irecv(in.data(), n, 0, 7, 0, &rh).ok());
        ASSERT_TRUE(e0.isend(out.data(), n, 1, 7, 0, 0, &sh).ok());
        Request *r = e1.request(rh), *s = e0.request(sh);
        ASSERT_TRUE(pump([&] { return r->done && s->done; })) << n;
        EXPECT_EQ(r->status.error, WEFT_SUCCESS) << n;
        EXPECT_EQ(r->status.count, n);
        EXPECT_EQ(r->status.source, 0u);
        EXPECT_EQ(r->status.tag, 7);
        EXPECT_EQ(in, out) << n;
        EXPECT_EQ(s->status.error, WEFT_SUCCESS) << n;
        e1.free_request(r);
        e0.free_request(s);
    }
    // Connected once, through the host, on first use.
    EXPECT_EQ(host0.connects, std::vector<uint32_t>{1});
    // The 100000-byte message went by rendezvous, in chunks (several frames).
    EXPECT_GT(host0.frames_sent, 4u + 100000 / 16384);
}

TEST_F(EngineHost, QueuesUntilTheHostSaysConnected)
{
    host0.connected = false;
    int x = 42, got = 0;
    weft_request_t rh, sh;
    ASSERT_TRUE(e1.irecv(&got, sizeof got, 0, 1, 0, &rh).ok());
    ASSERT_TRUE(e0.isend(&x, sizeof x, 1, 1, 0, 0, &sh).ok());
    Request *r = e1.request(rh);
    EXPECT_FALSE(pump([&] { return r->done; })) << "delivered before the host connected";
    EXPECT_EQ(host0.frames_sent, 0u);
    host0.connected = true;
    ASSERT_TRUE(pump([&] { return r->done && e0.request(sh)->done; }));
    EXPECT_EQ(got, 42);
    EXPECT_EQ(host0.connects, std::vector<uint32_t>{1});
}

TEST_F(EngineHost, UnreachablePeerFailsTheSendWithTheHostsReason)
{
    host0.reachable = false;
    int x = 1;
    weft_request_t sh;
    const Status st = e0.isend(&x, sizeof x, 1, 1, 0, 0, &sh);
    EXPECT_EQ(st.code(), WEFT_ERR_UNREACHABLE);
    EXPECT_NE(st.message().find("fake host: nothing reaches rank 1"), std::string::npos) << st.message();
}

TEST_F(EngineHost, PeerFailureFromTheHostEndsWhatWaitsForThatPeer)
{
    int got = 0;
    weft_request_t rh;
    ASSERT_TRUE(e0.irecv(&got, sizeof got, 1, 3, 0, &rh).ok());
    host0.fail_peer(1, "rank 1 terminated (fake)");
    Request *r = e0.request(rh);
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_ERR_UNREACHABLE);
    EXPECT_EQ(e0.failure_of(1, WEFT_ERR_UNREACHABLE), "rank 1 terminated (fake)");
    weft_request_t sh;
    const Status st = e0.isend(&got, sizeof got, 1, 3, 0, 0, &sh);
    EXPECT_EQ(st.code(), WEFT_ERR_UNREACHABLE);
    EXPECT_NE(st.message().find("terminated (fake)"), std::string::npos) << st.message();
    // The host's logger got the engine's line about it.
    ASSERT_FALSE(host0.log_lines.empty());
    EXPECT_NE(host0.log_lines.back().find("rank 1 failed"), std::string::npos) << host0.log_lines.back();
}

TEST(EngineHostLifetime, TakesBackEverythingItRegistered)
{
    FakeHost host(0);
    {
        Engine e(host, config_of(0));
        ASSERT_TRUE(e.init().ok());
        EXPECT_TRUE(host.registered());
        EXPECT_EQ(Engine::current(), &e);
        // A second engine on the same host cannot take its active-message id.
        Engine again(host, config_of(0));
        EXPECT_EQ(again.init().code(), WEFT_ERR_EXISTS);
    }
    EXPECT_FALSE(host.registered());
    EXPECT_EQ(Engine::current(), nullptr);
}

} // namespace
