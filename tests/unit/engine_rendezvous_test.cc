// SPDX-License-Identifier: BSD-3-Clause
// The rendezvous part of the engine (engine/rendezvous.hpp) through a fake
// host: a large message by chunks (Cts, Data), its first bytes carried by
// the Rts (landed in a matched, unexpected, truncated or once-cancelled
// receive), and by an RDMA read of the sender's registered buffer, a read
// the module refuses (the receiver asks for chunks instead) or cannot
// start yet (retried from progress), and a peer that fails in the middle:
// the receive and the send complete with an error, and a read that
// finishes afterwards changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine_fake_host.hpp"

namespace {

using weft::engine::Request;

class Rendezvous : public weft::test::EnginePair {
protected:
    static constexpr size_t kLarge = 100000;   // past the fake module's eager limit (4096)
    // What an Rts carries by chunks: rndv_first (64k, config_of) capped by
    // the fake module's largest message (16384) less the Rts header.
    static constexpr size_t kFirst = 16384 - sizeof(weft::engine::wire::Rts);
    static constexpr size_t kChunk = 4096;     // config_of

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
    // The Rts with the first bytes, then the rest in chunks.
    EXPECT_EQ(host0.frames_sent, 1 + (kLarge - kFirst + kChunk - 1) / kChunk);
}

// The Rts's first bytes land when it matches; the Cts asks only for the rest.
TEST_F(Rendezvous, RtsCarriesTheFirstBytesIntoTheMatchedReceive)
{
    start();
    rank1_takes_the_rts();
    EXPECT_EQ(host1.frames_sent, 1u) << "the Cts";
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + kFirst, in.begin())) << "landed before any Data frame";
    EXPECT_EQ(in[kFirst], 0) << "the rest is still at the sender";
    ASSERT_TRUE(pump([&] { return r->done && s->done; }));
    EXPECT_EQ(r->status.error, WEFT_SUCCESS);
    EXPECT_EQ(r->status.count, kLarge);
    EXPECT_EQ(in, out);
    EXPECT_EQ(s->status.error, WEFT_SUCCESS);
}

// An Rts nobody waits for yet keeps its first bytes with it in the
// unexpected queue; the receive posted later takes them and the rest.
TEST_F(Rendezvous, UnexpectedRtsKeepsItsFirstBytesForTheLaterReceive)
{
    ASSERT_TRUE(e0.isend(out.data(), out.size(), 1, 9, 0, 0, &sh).ok());
    s = e0.request(sh);
    rank1_takes_the_rts();
    EXPECT_EQ(host1.frames_sent, 0u) << "unexpected: no Cts yet";
    in.assign(kLarge, 0);
    ASSERT_TRUE(e1.irecv(in.data(), in.size(), 0, 9, 0, &rh).ok());
    r = e1.request(rh);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + kFirst, in.begin()));
    EXPECT_EQ(host1.frames_sent, 1u) << "the Cts for the rest";
    ASSERT_TRUE(pump([&] { return r->done && s->done; }));
    EXPECT_EQ(r->status.error, WEFT_SUCCESS);
    EXPECT_EQ(in, out);
    EXPECT_EQ(s->status.error, WEFT_SUCCESS);
}

// A buffer no longer than the first bytes: the receive is done (truncated)
// when the Rts arrives, and the Fin alone answers the sender.
TEST_F(Rendezvous, ReceiveTheRtsFillsEndsAtOnceTruncated)
{
    start(1000);
    rank1_takes_the_rts();
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_ERR_TRUNCATED);
    EXPECT_EQ(r->status.count, 1000u);
    EXPECT_EQ(in, std::vector<unsigned char>(out.begin(), out.begin() + 1000));
    EXPECT_EQ(host1.frames_sent, 1u) << "the Fin, no Cts";
    ASSERT_TRUE(pump([&] { return s->done; }));
    EXPECT_EQ(s->status.error, WEFT_SUCCESS);
    EXPECT_EQ(host0.frames_sent, 1u) << "no Data frame";
}

// A buffer between the first bytes and the whole: the Cts asks for the
// bytes from the first up to the buffer's end.
TEST_F(Rendezvous, TruncatedByChunksTakesTheFirstBytesAndTheRestThatFits)
{
    start(kLarge / 2);
    rank1_takes_the_rts();
    ASSERT_TRUE(pump([&] { return r->done && s->done; }));
    EXPECT_EQ(r->status.error, WEFT_ERR_TRUNCATED);
    EXPECT_EQ(r->status.count, kLarge / 2);
    EXPECT_EQ(in, std::vector<unsigned char>(out.begin(), out.begin() + kLarge / 2));
    EXPECT_EQ(s->status.error, WEFT_SUCCESS);
    EXPECT_EQ(host0.frames_sent, 1 + (kLarge / 2 - kFirst + kChunk - 1) / kChunk);
}

// A receive cancelled before the Rts came takes none of its bytes; the
// message waits, whole, for the next receive.
TEST_F(Rendezvous, CancelledReceiveLeavesTheRtsAndItsBytesToTheNextOne)
{
    std::vector<unsigned char> cancelled(kLarge, 0);
    weft_request_t ch{};
    ASSERT_TRUE(e1.irecv(cancelled.data(), cancelled.size(), 0, 9, 0, &ch).ok());
    e1.cancel(e1.request(ch));
    ASSERT_TRUE(e1.request(ch)->done);
    EXPECT_EQ(e1.request(ch)->status.error, WEFT_ERR_CANCELED);
    ASSERT_TRUE(e0.isend(out.data(), out.size(), 1, 9, 0, 0, &sh).ok());
    s = e0.request(sh);
    rank1_takes_the_rts();
    EXPECT_EQ(cancelled, std::vector<unsigned char>(kLarge, 0));
    in.assign(kLarge, 0);
    ASSERT_TRUE(e1.irecv(in.data(), in.size(), 0, 9, 0, &rh).ok());
    r = e1.request(rh);
    ASSERT_TRUE(pump([&] { return r->done && s->done; }));
    EXPECT_EQ(r->status.error, WEFT_SUCCESS);
    EXPECT_EQ(in, out);
    EXPECT_EQ(cancelled, std::vector<unsigned char>(kLarge, 0));
}

// A synchronous send short enough for the Rts: one frame each way.
TEST_F(Rendezvous, SynchronousSendTheRtsHoldsIsOneRoundTrip)
{
    const size_t len = kFirst - 100;
    in.assign(len, 0);
    ASSERT_TRUE(e1.irecv(in.data(), in.size(), 0, 9, 0, &rh).ok());
    ASSERT_TRUE(e0.isend(out.data(), len, 1, 9, 0, WEFT_SEND_SYNC, &sh).ok());
    r = e1.request(rh);
    s = e0.request(sh);
    rank1_takes_the_rts();
    ASSERT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_SUCCESS);
    EXPECT_EQ(in, std::vector<unsigned char>(out.begin(), out.begin() + len));
    ASSERT_TRUE(pump([&] { return s->done; }));
    EXPECT_EQ(s->status.error, WEFT_SUCCESS);
    EXPECT_EQ(host0.frames_sent, 1u);
    EXPECT_EQ(host1.frames_sent, 1u) << "the Fin";
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
    // goes to the failed peer): past the Rts's first bytes, nothing landed.
    ASSERT_TRUE(pump([&] { return e1.rejected() > 0; }));
    EXPECT_EQ(std::vector<unsigned char>(in.begin() + kFirst, in.end()), std::vector<unsigned char>(kLarge - kFirst, 0));
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
