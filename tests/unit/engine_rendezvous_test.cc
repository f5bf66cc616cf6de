// SPDX-License-Identifier: BSD-3-Clause
// The rendezvous part of the engine (engine/rendezvous.hpp) through a fake
// host: a large message by chunks (Cts, Data) and by an RDMA read of the
// sender's registered buffer, a read the module refuses (the receiver asks
// for chunks instead) or cannot start yet (retried from progress), and a
// peer that fails in the middle: the receive and the send complete with an
// error, and a read that finishes afterwards changes nothing.
#include <gtest/gtest.h>

#include <vector>

#include "engine_fake_host.hpp"

namespace {

using weft::engine::Request;

class Rendezvous : public weft::test::EnginePair {
protected:
    static constexpr size_t kLarge = 100000;   // past the fake module's eager limit (4096)

    // Posts rank 1's receive of kLarge bytes (into a buffer of len) and
    // rank 0's send; only the Rts has gone (into rank 1's inbox).
    void start(size_t len = kLarge)
    {
        in.assign(len, 0);
        ASSERT_TRUE(e1.irecv(in.data(), in.size(), 0, 9, 0, &rh).ok());
        ASSERT_TRUE(e0.isend(out.data(), out.size(), 1, 9, 0, 0, &sh).ok());
        r = e1.request(rh);
        s = e0.request(sh);
        ASSERT_EQ(host0.frames_sent, 1u) << "the Rts alone";
    }
    // One pass of rank 1: it handles the Rts (matching the receive).
    void rank1_takes_the_rts() { host1.progress().progress(); }

    const std::vector<unsigned char> out = pattern(kLarge);
    std::vector<unsigned char> in;
    weft_request_t rh{}, sh{};
    Request *r = nullptr, *s = nullptr;
};

TEST_F(Rendezvous, ByChunksWhenTheModuleCannotRead)
{
    start();
    rank1_takes_the_rts();
    EXPECT_EQ(host1.frames_sent, 1u) << "the Cts";
    EXPECT_FALSE(r->done);
    ASSERT_TRUE(pump([&] { return r->done && s->done; }));
    EXPECT_EQ(r->status.error, WEFT_SUCCESS);
    EXPECT_EQ(r->status.count, kLarge);
    EXPECT_EQ(in, out);
    EXPECT_EQ(s->status.error, WEFT_SUCCESS);
    // The Rts, then kLarge bytes in chunks of at most 4096 (config_of).
    EXPECT_GE(host0.frames_sent, 1 + kLarge / 4096);
}

TEST_F(Rendezvous, ReceiverFailingMidwayByChunksEndsTheReceiveWithAnError)
{
    start();
    rank1_takes_the_rts();   // the Cts is on its way; no data yet
    ASSERT_FALSE(r->done);
    host1.fail_peer(0, "rank 0 terminated (fake)");
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_ERR_UNREACHABLE);
    EXPECT_EQ(r->status.count, 0u);
    // Data that still arrives for it is refused, not written (and no Fin
    // goes to the failed peer).
    ASSERT_TRUE(pump([&] { return e1.rejected() > 0; }));
    EXPECT_EQ(in, std::vector<unsigned char>(kLarge, 0));
    EXPECT_FALSE(s->done);
}

TEST_F(Rendezvous, SenderWhosePeerFailsBeforeTheFinEndsWithAnError)
{
    start();
    rank1_takes_the_rts();
    host0.progress().progress();   // the Cts: every chunk goes out; the send waits for the Fin
    ASSERT_GT(host0.frames_sent, 1u);
    ASSERT_FALSE(s->done);
    host0.fail_peer(1, "rank 1 terminated (fake)");
    ASSERT_TRUE(s->done);
    EXPECT_EQ(s->status.error, WEFT_ERR_UNREACHABLE);
    EXPECT_EQ(e0.failure_of(1, WEFT_ERR_UNREACHABLE), "rank 1 terminated (fake)");
}

TEST_F(Rendezvous, ByReadingTheSendersBuffer)
{
    host0.enable_get();
    host1.enable_get();
    start();
    EXPECT_EQ(host0.registered_buffers, 1u) << "the send's buffer, for the receiver to read";
    rank1_takes_the_rts();
    EXPECT_EQ(host1.gets_in_flight(), 1u);
    EXPECT_EQ(host1.frames_sent, 0u) << "no Cts: the receiver reads";
    EXPECT_FALSE(r->done);
    EXPECT_EQ(host1.finish_gets(WEFT_SUCCESS), 1u);
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_SUCCESS);
    EXPECT_EQ(r->status.count, kLarge);
    EXPECT_EQ(in, out);
    // The Fin ends the send and gives its registration back.
    ASSERT_TRUE(pump([&] { return s->done; }));
    EXPECT_EQ(s->status.error, WEFT_SUCCESS);
    EXPECT_EQ(host0.registered_buffers, 0u);
}

TEST_F(Rendezvous, TruncatedReadTakesWhatTheBufferHolds)
{
    host0.enable_get();
    host1.enable_get();
    start(kLarge / 2);
    rank1_takes_the_rts();
    EXPECT_EQ(host1.finish_gets(WEFT_SUCCESS), 1u);
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_ERR_TRUNCATED);
    EXPECT_EQ(r->status.count, kLarge / 2);
    EXPECT_EQ(in, std::vector<unsigned char>(out.begin(), out.begin() + kLarge / 2));
    ASSERT_TRUE(pump([&] { return s->done; }));
    EXPECT_EQ(s->status.error, WEFT_SUCCESS);
}

TEST_F(Rendezvous, PeerFailingDuringTheReadEndsTheReceiveAndTheLateReadIsIgnored)
{
    host0.enable_get();
    host1.enable_get();
    start();
    rank1_takes_the_rts();
    ASSERT_EQ(host1.gets_in_flight(), 1u);
    host1.fail_peer(0, "rank 0 terminated (fake)");
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_ERR_UNREACHABLE);
    // The read completes after the receive ended: its handle is stale, so
    // the receive's result stays and nothing more is sent.
    const size_t frames = host1.frames_sent;
    EXPECT_EQ(host1.finish_gets(WEFT_SUCCESS), 1u);
    EXPECT_EQ(r->status.error, WEFT_ERR_UNREACHABLE);
    EXPECT_EQ(host1.frames_sent, frames);
}

TEST_F(Rendezvous, ReadThatFailsEndsTheReceiveAndTellsTheSender)
{
    host0.enable_get();
    host1.enable_get();
    start();
    rank1_takes_the_rts();
    EXPECT_EQ(host1.finish_gets(WEFT_ERR_BAD_VALUE), 1u);
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_ERR_BAD_VALUE);
    // The Fin carries the error to the sender.
    ASSERT_TRUE(pump([&] { return s->done; }));
    EXPECT_EQ(s->status.error, WEFT_ERR_BAD_VALUE);
    EXPECT_EQ(host0.registered_buffers, 0u);
}

TEST_F(Rendezvous, ReadTheModuleRefusesFallsBackToChunks)
{
    host0.enable_get();
    host1.enable_get();
    host1.get_answer = WEFT_ERR_NOT_SUPPORTED;
    start();
    rank1_takes_the_rts();
    EXPECT_EQ(host1.gets_issued, 1u);
    EXPECT_EQ(host1.frames_sent, 1u) << "a Cts instead";
    ASSERT_TRUE(pump([&] { return r->done && s->done; }));
    EXPECT_EQ(r->status.error, WEFT_SUCCESS);
    EXPECT_EQ(in, out);
    EXPECT_EQ(s->status.error, WEFT_SUCCESS);
}

TEST_F(Rendezvous, ReadTheModuleCannotStartYetIsRetriedFromProgress)
{
    host0.enable_get();
    host1.enable_get();
    host1.get_answer = WEFT_ERR_AGAIN;
    start();
    rank1_takes_the_rts();   // the engine's own progress may have tried again already
    const size_t tries = host1.gets_issued;
    EXPECT_GE(tries, 1u);
    EXPECT_EQ(host1.gets_in_flight(), 0u);
    EXPECT_EQ(host1.frames_sent, 0u) << "no Cts: the read waits for room";
    e1.progress();   // still no room
    EXPECT_EQ(host1.gets_issued, tries + 1);
    EXPECT_FALSE(r->done);
    host1.get_answer = WEFT_SUCCESS;
    e1.progress();
    EXPECT_EQ(host1.gets_in_flight(), 1u);
    EXPECT_EQ(host1.finish_gets(WEFT_SUCCESS), 1u);
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_SUCCESS);
    EXPECT_EQ(in, out);
}

} // namespace
