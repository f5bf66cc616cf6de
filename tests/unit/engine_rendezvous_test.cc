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
#include <cstddef>
#include <memory>
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
    // After rank1_takes_the_rts: rank 1 read the whole message in one get
    // and sent no PutReq (frames: what rank 1 had sent before, its own
    // Rts in an exchange); both ends then complete with the bytes intact.
    void rank1_read_it_whole(size_t frames)
    {
        ASSERT_EQ(host1.get_lengths(), std::vector<size_t>{kLarge}) << "one read of the whole message";
        EXPECT_EQ(host1.frames_sent, frames) << "no PutReq";
        ASSERT_EQ(host1.finish_gets(WEFT_SUCCESS), 1u);
        ASSERT_TRUE(r->done);
        EXPECT_EQ(r->status.error, WEFT_SUCCESS);
        EXPECT_EQ(in, out);
        ASSERT_TRUE(pump([&] { return s->done; }));
        EXPECT_EQ(s->status.error, WEFT_SUCCESS);
    }

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

// A large message on its own is moved by both sides (engine_base_rndv_split):
// the receiver reads the first part and asks the sender (PutReq) to write
// the rest.
TEST_F(Rendezvous, ALargeMessageOnItsOwnIsReadInPartAndTheRestAskedFor)
{
    host0.enable_get();
    host1.enable_get();
    host1.enable_put();
    start();
    rank1_takes_the_rts();
    ASSERT_EQ(host1.get_lengths().size(), 1u);
    EXPECT_LT(host1.get_lengths()[0], kLarge) << "the receiver reads only the first part";
    EXPECT_EQ(host1.frames_sent, 1u) << "the PutReq";
}

// In an exchange (this rank's own rendezvous to the sender in flight, as in
// MPI_Sendrecv) the sender's core is busy reading our message: the receiver
// reads the whole message itself and asks for no write.
TEST_F(Rendezvous, InAnExchangeTheReceiverReadsTheWholeMessage)
{
    host0.enable_get();
    host1.enable_get();
    host1.enable_put();
    const std::vector<unsigned char> theirs = pattern(kLarge);
    weft_request_t back_sh{};   // rank 1's send, left in flight
    ASSERT_TRUE(e1.isend(theirs.data(), theirs.size(), 0, 9, 0, 0, &back_sh).ok());
    ASSERT_EQ(host1.frames_sent, 1u) << "rank 1's own Rts";
    start();
    rank1_takes_the_rts();
    EXPECT_EQ(host0.puts_issued, 0u);
    rank1_read_it_whole(1);
}

// A receive whose data is read at once (WEFT_RECV_READ_AT_ONCE: a
// reduction) is copied whole by the receiver, so it lands in its cache.
TEST_F(Rendezvous, AReceiveReadAtOnceReadsTheWholeMessage)
{
    host0.enable_get();
    host1.enable_get();
    host1.enable_put();
    in.assign(kLarge, 0);
    weft::Status error;
    ASSERT_EQ(e1.irecv(in.data(), in.size(), 0, 9, 0, &rh, &error, WEFT_RECV_READ_AT_ONCE), WEFT_SUCCESS);
    ASSERT_TRUE(e0.isend(out.data(), out.size(), 1, 9, 0, 0, &sh).ok());
    r = e1.request(rh);
    s = e0.request(sh);
    rank1_takes_the_rts();
    rank1_read_it_whole(0);
}

// Ranks that share cores (a progress mode other than busy): the sender's
// core belongs to another rank too, so the receiver reads it all.
TEST_F(Rendezvous, RanksThatShareCoresReadTheWholeMessage)
{
    host0.enable_get();
    host1.enable_get();
    host1.enable_put();
    host1.progress().set_mode(weft::rt::ProgressMode::Yield, "test: ranks share cores");
    start();
    rank1_takes_the_rts();
    rank1_read_it_whole(0);
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

// A connection's own eager limit (weft_btl_endpoint_t.eager_limit: a module
// that found the rendezvous faster on that connection, as btl/scif with
// single copy, sets it below its caps'): the engine takes it unless the user
// set engine_base_eager_limit, and only when the module's endpoint is large
// enough to have it.
class EndpointEagerLimit : public ::testing::Test {
protected:
    static constexpr size_t kModuleLimit = 64 * 1024, kEndpointLimit = 8 * 1024, kMid = 16 * 1024;

    // Two engines over fake modules with a 64 KiB eager limit, sends up to
    // 256 KiB, and endpoints that say limit (in a struct of endpoint_size
    // bytes); user_cap is engine_base_eager_limit. With rdma, both modules
    // offer reads (rank 1's engine, initialized last, gets the completions,
    // so only rank 1 reads).
    void make(size_t limit, size_t user_cap = 0, bool rdma = false,
              size_t endpoint_size = sizeof(weft_btl_endpoint_t))
    {
        host0.other = &host1;
        host1.other = &host0;
        for (weft::test::FakeHost *h : {&host0, &host1}) {
            h->module().caps.eager_limit = kModuleLimit;
            h->module().caps.max_send = 256 * 1024;
            h->endpoint().size = endpoint_size;
            h->endpoint().eager_limit = limit;
            if (endpoint_size > offsetof(weft_btl_endpoint_t, single_copy_from))
                h->endpoint().single_copy_from = single_copy_from;
            if (rdma)
                h->enable_get();
        }
        for (uint32_t rank : {0u, 1u}) {
            weft::engine::Config c = weft::test::config_of(rank);
            c.eager_limit_cap = user_cap;
            (rank ? e1 : e0) = std::make_unique<weft::engine::Engine>(rank ? host1 : host0, c);
            ASSERT_TRUE((rank ? e1 : e0)->init().ok());
        }
    }
    // Sends len bytes from rank `from` to the other rank; true once both
    // ends completed with the bytes intact (reads finished as they come).
    bool transfer(uint32_t from, size_t len, unsigned send_flags = 0)
    {
        weft::engine::Engine &src = from ? *e1 : *e0, &dst = from ? *e0 : *e1;
        const std::vector<unsigned char> out = bytes_of_len(len);
        std::vector<unsigned char> in(len, 0);
        weft_request_t rh{}, sh{};
        if (!dst.irecv(in.data(), in.size(), from, 5, 0, &rh).ok() ||
            !src.isend(out.data(), out.size(), 1 - from, 5, 0, send_flags, &sh).ok())
            return false;
        Request *r = dst.request(rh), *s = src.request(sh);
        for (int pass = 0; pass < 100000 && !(r->done && s->done); ++pass) {
            host0.progress().progress();
            host1.progress().progress();
            host1.finish_gets(WEFT_SUCCESS);
        }
        return r->done && s->done && r->status.error == WEFT_SUCCESS && s->status.error == WEFT_SUCCESS &&
               r->status.count == len && in == out;
    }
    static std::vector<unsigned char> bytes_of_len(size_t n)
    {
        std::vector<unsigned char> v(n);
        for (size_t i = 0; i < n; ++i)
            v[i] = static_cast<unsigned char>(i * 13 + 1);
        return v;
    }
    uint64_t sent(uint32_t from, int proto)
    {
        return (from ? e1 : e0)->counters().peer(1 - from).sent.msgs[proto];
    }
    uint64_t limit_of(uint32_t from) { return (from ? e1 : e0)->counters().peer(1 - from).eager_limit; }
    // Sends n messages of len bytes from rank 0 to rank 1, every receive and
    // send posted before any progress (a window); true once all completed
    // intact.
    bool window(int n, size_t len)
    {
        const std::vector<unsigned char> out = bytes_of_len(len);
        std::vector<std::vector<unsigned char>> in(static_cast<size_t>(n), std::vector<unsigned char>(len, 0));
        std::vector<Request *> reqs;
        for (int i = 0; i < n; ++i) {
            weft_request_t rh{}, sh{};
            if (!e1->irecv(in[i].data(), len, 0, 6, 0, &rh).ok() || !e0->isend(out.data(), len, 1, 6, 0, 0, &sh).ok())
                return false;
            reqs.push_back(e1->request(rh));
            reqs.push_back(e0->request(sh));
        }
        auto all_done = [&] {
            for (Request *r : reqs)
                if (!r->done)
                    return false;
            return true;
        };
        for (int pass = 0; pass < 100000 && !all_done(); ++pass) {
            host0.progress().progress();
            host1.progress().progress();
            host1.finish_gets(WEFT_SUCCESS);
        }
        for (Request *r : reqs)
            if (!r->done || r->status.error != WEFT_SUCCESS)
                return false;
        for (const auto &v : in)
            if (v != out)
                return false;
        return true;
    }

    size_t single_copy_from = 0;   // the endpoints' weft_btl_endpoint_t.single_copy_from
    weft::test::FakeHost host0{0}, host1{1};
    std::unique_ptr<weft::engine::Engine> e0, e1;
};

TEST_F(EndpointEagerLimit, BelowTheModulesSendsAMidSizeMessageByRendezvous)
{
    make(kEndpointLimit, 0, true);
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 0u);
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 1u) << "read by rank 1";
    EXPECT_EQ(host1.gets_issued, 1u);
    EXPECT_EQ(limit_of(0), kEndpointLimit) << "the counters say which limit the peer got";
    ASSERT_TRUE(transfer(0, kEndpointLimit));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u) << "at the limit: eager";
}

TEST_F(EndpointEagerLimit, MidSizeMessagesArriveIntactBothWays)
{
    make(kEndpointLimit, 0, true);
    // Rank 0's reads are refused (the fake's completions reach rank 1's
    // engine only), so what rank 1 sends goes by chunks after the refusal.
    host0.get_answer = WEFT_ERR_NOT_SUPPORTED;
    for (size_t len : {kMid, 2 * kMid, 4 * kMid, 4 * kMid + 1}) {
        EXPECT_TRUE(transfer(0, len)) << len << " bytes, rank 0 to 1";
        EXPECT_TRUE(transfer(1, len)) << len << " bytes, rank 1 to 0";
    }
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 4u) << "rank 1 reads what rank 0 sends";
    EXPECT_EQ(sent(1, WEFT_PROTO_EAGER) + sent(1, WEFT_PROTO_RNDV_RDMA), 0u);
    EXPECT_EQ(sent(1, WEFT_PROTO_RNDV_CHUNKS), 4u);
}

TEST_F(EndpointEagerLimit, ZeroTakesTheModules)
{
    make(0, 0, true);
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u);
    EXPECT_EQ(limit_of(0), kModuleLimit);
}

TEST_F(EndpointEagerLimit, NeverAboveTheModules)
{
    make(2 * kModuleLimit, 0, true);
    EXPECT_TRUE(transfer(0, kModuleLimit + 1));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 0u);
    EXPECT_EQ(limit_of(0), kModuleLimit);
}

TEST_F(EndpointEagerLimit, TheUsersEngineLimitWins)
{
    make(kEndpointLimit, 32 * 1024, true);
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u) << "engine_base_eager_limit 32k, not the connection's 8k";
    EXPECT_EQ(limit_of(0), 32u * 1024);
}

// single_copy_from (btl/scif where process_vm_readv is cheap): past it, a
// message on its own goes by rendezvous (the single copy), and one sent
// while a rendezvous to the peer is still in flight goes eagerly, so a
// window is not stalled by a handshake per message. Once the window is
// done, a lone message takes the single copy again.
TEST_F(EndpointEagerLimit, PastSingleCopyFromALoneMessageTakesTheSingleCopyAndAWindowGoesEagerly)
{
    single_copy_from = kEndpointLimit;
    make(0, 0, true);
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 1u) << "alone: the single copy";
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 0u);
    ASSERT_TRUE(transfer(0, kEndpointLimit));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u) << "at single_copy_from: eager";
    ASSERT_TRUE(window(4, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 2u) << "the window's first message only";
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 4u) << "the other three behind it";
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 3u) << "alone again once the window's rendezvous ended";
    EXPECT_EQ(limit_of(0), kModuleLimit) << "the eager limit stays the module's";
}

// A forwarded send (WEFT_SEND_FORWARD: a broadcast's inner hop, whose
// receiver waits for it) goes eagerly past single_copy_from even alone.
TEST_F(EndpointEagerLimit, AForwardedSendGoesEagerlyPastSingleCopyFrom)
{
    single_copy_from = kEndpointLimit;
    make(0, 0, true);
    ASSERT_TRUE(transfer(0, kMid, WEFT_SEND_FORWARD));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u);
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 0u);
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 1u) << "the same message not forwarded: the single copy";
}

// Past the connection's own eager limit a forwarded send goes eagerly up to
// the module's, when the module takes it at once (sendx); a plain send of
// the same size goes by rendezvous, and without sendx so does a forwarded
// one. Past the module's limit both go by rendezvous.
TEST_F(EndpointEagerLimit, AForwardedSendGoesEagerlyUpToTheModulesLimitThroughSendx)
{
    make(kEndpointLimit, 0, true);
    ASSERT_TRUE(transfer(0, kMid, WEFT_SEND_FORWARD));
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 1u) << "no sendx: no eager past the connection's limit";
    e0.reset();
    e1.reset();
    host0.enable_sendx();
    host1.enable_sendx();
    make(kEndpointLimit, 0, true);
    ASSERT_TRUE(transfer(0, kMid, WEFT_SEND_FORWARD));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u);
    EXPECT_EQ(host0.sendx_calls, 1u);
    ASSERT_TRUE(transfer(0, kModuleLimit, WEFT_SEND_FORWARD));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 2u) << "at the module's limit";
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 1u) << "not forwarded: the connection's limit";
    ASSERT_TRUE(transfer(0, kModuleLimit + 1, WEFT_SEND_FORWARD));
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 2u) << "past the module's limit";
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 2u);
}

// The user's engine_base_eager_limit holds for forwarded sends too.
TEST_F(EndpointEagerLimit, TheUsersEngineLimitHoldsForForwardedSends)
{
    host0.enable_sendx();
    host1.enable_sendx();
    make(0, kEndpointLimit, true);
    ASSERT_TRUE(transfer(0, kMid, WEFT_SEND_FORWARD));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 0u);
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 1u);
}

// Where ranks share cores (progress mode yield or block) a lone message
// stays eager up to the eager limit: the single copy's handshake would wait
// for the receiver to get a core.
TEST_F(EndpointEagerLimit, RanksThatShareCoresSendALoneMessageEagerly)
{
    single_copy_from = kEndpointLimit;
    host0.progress().set_mode(weft::rt::ProgressMode::Block, "test: ranks share cores");
    make(0, 0, true);
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u);
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 0u);
}

// engine_base_eager_limit set by the user overrides single_copy_from, as
// it does the endpoint's eager limit.
TEST_F(EndpointEagerLimit, TheUsersEngineLimitOverridesSingleCopyFrom)
{
    single_copy_from = kEndpointLimit;
    make(0, 32 * 1024, true);
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u);
    EXPECT_EQ(sent(0, WEFT_PROTO_RNDV_RDMA), 0u);
}

// An endpoint that ends before single_copy_from (built against an older
// header) is not read there.
TEST_F(EndpointEagerLimit, SingleCopyFromIgnoredInAnOlderEndpoint)
{
    single_copy_from = kEndpointLimit;
    make(0, 0, true, offsetof(weft_btl_endpoint_t, single_copy_from));
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u);
}

// A module built against the 1.0 header has no eager_limit in its
// endpoint: whatever lies there is not read.
TEST_F(EndpointEagerLimit, IgnoredInAnEndpointOfTheFirstAbi)
{
    make(kEndpointLimit, 0, true, offsetof(weft_btl_endpoint_t, eager_limit));
    ASSERT_TRUE(transfer(0, kMid));
    EXPECT_EQ(sent(0, WEFT_PROTO_EAGER), 1u);
    EXPECT_EQ(limit_of(0), kModuleLimit);
}

} // namespace
