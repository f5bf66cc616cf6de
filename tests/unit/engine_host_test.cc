// SPDX-License-Identifier: BSD-3-Clause
// The messaging engine without the runtime: two engines in one process,
// each given a fake Host (engine/host.hpp), joined by a fake btl module
// whose send() hands the frame to the other side's inbox. Shows that the
// engine needs nothing of runtime/rte: connection on first use through the
// host, queueing until the host says connected, eager and rendezvous
// messages, peer failures reported by the host, and that it takes back
// everything it registered when it goes.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/host.hpp"
#include "log/log.hpp"

namespace {

using weft::Status;
using weft::engine::Config;
using weft::engine::Engine;
using weft::engine::Request;

class FakeHost final : public weft::engine::Host {
public:
    explicit FakeHost(uint32_t rank) : rank_(rank)
    {
        ops_.size = sizeof ops_;
        ops_.send = send;
        module_.size = sizeof module_;
        module_.ops = &ops_;
        module_.caps.size = sizeof module_.caps;
        module_.caps.eager_limit = 4096;
        module_.caps.max_send = 16384;   // rendezvous data goes in several chunks
        module_.caps.bandwidth_mbs = 1000;
        module_.caps.flags = WEFT_BTL_FLAG_SEND;
        module_.module_ctx = this;
        std::snprintf(module_.name, sizeof module_.name, "fake");
        ep_.size = sizeof ep_;
        ep_.module = &module_;
        ep_.peer_rank = 1 - rank;
        ep_.state = WEFT_BTL_EP_CONNECTED;
        endpoints_[0] = &ep_;
        progress_.add(deliver, this, weft::rt::ProgressEngine::kNoWake);
        logger_.set_sink([this](std::string_view line) { log_lines.emplace_back(line); });
        logger_.set_verbosity("engine", WEFT_LOG_INFO);
    }
    ~FakeHost() override { progress_.remove(deliver, this); }

    weft::rt::ProgressEngine &progress() override { return progress_; }
    weft::log::Logger &logger() override { return logger_; }
    Status set_handler(uint8_t am_id, weft::engine::AmHandler fn, void *ctx) override
    {
        if (fn && am_)
            return Status(WEFT_ERR_EXISTS, "fake host: id " + std::to_string(am_id) + " taken");
        am_ = fn;
        am_ctx_ = ctx;
        return Status::success();
    }
    void set_place_handler(uint8_t, weft::engine::PlaceHandler place, weft::engine::PlacedHandler,
                           void *) override
    {
        place_registered = place != nullptr;
    }
    void set_peer_failed_handler(weft::engine::PeerFailedHandler fn, void *ctx) override
    {
        failed_fn_ = fn;
        failed_ctx_ = ctx;
    }
    Status start_connect(uint32_t rank) override
    {
        connects.push_back(rank);
        if (!reachable)
            return Status(WEFT_ERR_UNREACHABLE, "fake host: nothing reaches rank " + std::to_string(rank));
        return Status::success();
    }
    std::span<weft_btl_endpoint_t *const> connected_endpoints(uint32_t) override
    {
        if (!connected)
            return {};
        return endpoints_;
    }

    // What the runtime does when a peer dies.
    void fail_peer(uint32_t rank, const std::string &why)
    {
        if (failed_fn_)
            failed_fn_(failed_ctx_, rank, why);
    }
    bool registered() const { return am_ || failed_fn_ || place_registered; }

    FakeHost *other = nullptr;
    bool reachable = true;
    bool connected = true;
    bool place_registered = false;
    std::vector<uint32_t> connects;
    std::vector<std::string> log_lines;
    size_t frames_sent = 0;

private:
    static int send(weft_btl_endpoint_t *ep, uint8_t am_id, const iovec *iov, int iovcnt)
    {
        auto *self = static_cast<FakeHost *>(ep->module->module_ctx);
        if (am_id != weft::engine::wire::kAmEngine)
            return WEFT_ERR_BAD_PARAM;
        std::vector<std::byte> frame;
        for (int i = 0; i < iovcnt; ++i) {
            const auto *p = static_cast<const std::byte *>(iov[i].iov_base);
            frame.insert(frame.end(), p, p + iov[i].iov_len);
        }
        self->other->inbox_.push_back(std::move(frame));
        ++self->frames_sent;
        return WEFT_SUCCESS;
    }
    // The fake transport's progress: frames that arrived go to the handler.
    static int deliver(void *ctx)
    {
        auto *self = static_cast<FakeHost *>(ctx);
        int n = 0;
        while (!self->inbox_.empty() && self->am_) {
            const std::vector<std::byte> frame = std::move(self->inbox_.front());
            self->inbox_.pop_front();
            self->am_(self->am_ctx_, &self->ep_, frame.data(), frame.size());
            ++n;
        }
        return n;
    }

    uint32_t rank_;
    weft::rt::ProgressEngine progress_;
    weft::log::Logger logger_;
    weft_btl_module_ops_t ops_{};
    weft_btl_module_t module_{};
    weft_btl_endpoint_t ep_{};
    weft_btl_endpoint_t *endpoints_[1] = {};
    std::deque<std::vector<std::byte>> inbox_;
    weft::engine::AmHandler am_ = nullptr;
    void *am_ctx_ = nullptr;
    weft::engine::PeerFailedHandler failed_fn_ = nullptr;
    void *failed_ctx_ = nullptr;
};

Config config_of(uint32_t rank)
{
    Config c;
    c.my_rank = rank;
    c.job_size = 2;
    c.chunk = 4096;
    return c;
}

class EngineHost : public ::testing::Test {
protected:
    void SetUp() override
    {
        host0.other = &host1;
        host1.other = &host0;
        ASSERT_TRUE(e0.init().ok());
        ASSERT_TRUE(e1.init().ok());
    }
    // Both sides' progress until done() (bounded: a lost frame fails the
    // test instead of hanging it).
    template <class Done>
    bool pump(Done done)
    {
        for (int pass = 0; pass < 100000; ++pass) {
            if (done())
                return true;
            host0.progress().progress();
            host1.progress().progress();
        }
        return done();
    }
    static std::vector<unsigned char> pattern(size_t n)
    {
        std::vector<unsigned char> v(n);
        for (size_t i = 0; i < n; ++i)
            v[i] = static_cast<unsigned char>(i * 7 + 3);
        return v;
    }

    FakeHost host0{0}, host1{1};
    Engine e0{host0, config_of(0)}, e1{host1, config_of(1)};
};

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
