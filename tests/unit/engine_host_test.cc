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

TEST_F(EngineHost, LargeEagerMessageIsPlacedStraightIntoItsPostedReceive)
{
    host1.placing = true;
    host1.hold_placed = true;
    const size_t n = 4000;   // eager (the fake module's limit is 4096), longer than a place head
    const auto out = pattern(n);
    std::vector<unsigned char> in(n);
    weft_request_t rh, sh;
    ASSERT_TRUE(e1.irecv(in.data(), n, 0, 7, 0, &rh).ok());
    ASSERT_TRUE(e0.isend(out.data(), n, 1, 7, 0, 0, &sh).ok());
    ASSERT_TRUE(pump([&] { return host1.frames_placed == 1; }));
    // The data is in the receive's buffer; the receive is done only when
    // the module says the whole message landed.
    EXPECT_EQ(in, out);
    Request *r = e1.request(rh);
    EXPECT_FALSE(r->done);
    EXPECT_FALSE(r->posted);
    EXPECT_EQ(host1.finish_placed(WEFT_SUCCESS), 1u);
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_SUCCESS);
    EXPECT_EQ(r->status.count, n);
    EXPECT_EQ(r->status.source, 0u);
    EXPECT_EQ(r->status.tag, 7);
    e1.free_request(r);
    e0.free_request(e0.request(sh));

    // Declined, and delivered whole as before: a message nothing waits
    // for (it waits in the unexpected queue), and one longer than its
    // receive (truncated, which the ordinary path says).
    int small = 0;
    ASSERT_TRUE(e1.irecv(&small, sizeof small, 0, 8, 0, &rh).ok());
    for (int32_t tag : {9, 8}) {
        ASSERT_TRUE(e0.isend(out.data(), n, 1, tag, 0, 0, &sh).ok());
        e0.release_request(e0.request(sh));
    }
    r = e1.request(rh);
    ASSERT_TRUE(pump([&] { return r->done; }));
    EXPECT_EQ(r->status.error, WEFT_ERR_TRUNCATED);
    EXPECT_EQ(host1.frames_placed, 1u);
    e1.free_request(r);
    ASSERT_TRUE(e1.irecv(in.data(), n, 0, 9, 0, &rh).ok());
    r = e1.request(rh);
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.count, n);
    e1.free_request(r);
}

TEST_F(EngineHost, ReceiveFreedOrFailedWhileItsDataIsPlacedEndsCleanly)
{
    host1.placing = true;
    host1.hold_placed = true;
    const size_t n = 3000;
    const auto out = pattern(n);
    std::vector<unsigned char> in(n);
    weft_request_t rh, sh;
    // Freed by its owner while the module places it: kept until placed().
    ASSERT_TRUE(e1.irecv(in.data(), n, 0, 3, 0, &rh).ok());
    ASSERT_TRUE(e0.isend(out.data(), n, 1, 3, 0, 0, &sh).ok());
    e0.release_request(e0.request(sh));
    ASSERT_TRUE(pump([&] { return host1.frames_placed == 1; }));
    e1.release_request(e1.request(rh));
    EXPECT_NE(e1.request(rh), nullptr) << "freed while the module still writes into its buffer";
    EXPECT_EQ(host1.finish_placed(WEFT_SUCCESS), 1u);
    EXPECT_EQ(e1.request(rh), nullptr);
    // The module could not finish: the receive ends with its error.
    ASSERT_TRUE(e1.irecv(in.data(), n, 0, 4, 0, &rh).ok());
    ASSERT_TRUE(e0.isend(out.data(), n, 1, 4, 0, 0, &sh).ok());
    e0.release_request(e0.request(sh));
    ASSERT_TRUE(pump([&] { return host1.frames_placed == 2; }));
    EXPECT_EQ(host1.finish_placed(WEFT_ERR_UNREACHABLE), 1u);
    Request *r = e1.request(rh);
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_ERR_UNREACHABLE);
    EXPECT_EQ(r->status.count, 0u);
    e1.free_request(r);
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
