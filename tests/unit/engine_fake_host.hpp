// SPDX-License-Identifier: BSD-3-Clause
// A fake engine::Host (engine/host.hpp) for the engine's unit tests: two
// engines in one process, each given one of these, joined by a fake btl
// module whose send() hands the frame to the other side's inbox (delivered
// by the host's progress). The module can also read the peer's memory
// (enable_get): the two engines share the process, so the remote address
// is enough; each read is held until the test finishes it (finish_gets),
// so a test can act while one is in flight. With `placing` set it offers
// every frame longer than WEFT_BTL_PLACE_HEAD to the engine's place
// handler first, as btl/tcp does with a large frame it has the first bytes
// of, and copies an accepted frame into the engine's buffers; with
// `hold_placed` the placed() answers wait for the test (finish_placed).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/host.hpp"
#include "log/log.hpp"

namespace weft::test {

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
    void set_place_handler(uint8_t, weft::engine::PlaceHandler place, weft::engine::PlacedHandler placed,
                           void *ctx) override
    {
        place_registered = place != nullptr;
        place_ = place;
        placed_ = placed;
        place_ctx_ = ctx;
    }
    // Answers the placements held back (hold_placed) with status; how many.
    size_t finish_placed(int status)
    {
        std::vector<uint64_t> now;
        now.swap(held_);
        for (uint64_t token : now)
            placed_(place_ctx_, &ep_, token, status);
        return now.size();
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

    // The module offers RDMA reads (and registration, so the sender's
    // engine hands out its buffer's address). get_answer: what get()
    // returns (a refused read; AGAIN: queues full).
    void enable_get()
    {
        ops_.get = get;
        ops_.mem_register = mem_register;
        ops_.mem_deregister = mem_deregister;
        module_.caps.flags |= WEFT_BTL_FLAG_GET;
    }
    // The module has sendx: it takes a frame at once (as send) whatever the
    // flags; sendx_calls counts them.
    void enable_sendx() { ops_.sendx = sendx; }
    uint64_t sendx_calls = 0;
    // Completes the reads in flight with status (copying their data when
    // it is success); how many.
    size_t finish_gets(int status)
    {
        std::deque<PendingGet> now;
        now.swap(gets_);
        for (const PendingGet &g : now) {
            if (status == WEFT_SUCCESS)
                std::memcpy(g.local, reinterpret_cast<const void *>(g.remote), g.len);
            g.cb(&ep_, g.ctx, status);
        }
        return now.size();
    }
    size_t gets_in_flight() const { return gets_.size(); }
    // Bytes of each read in flight, in the order they were issued.
    std::vector<size_t> get_lengths() const
    {
        std::vector<size_t> v;
        for (const PendingGet &g : gets_)
            v.push_back(g.len);
        return v;
    }
    // The module offers RDMA writes too (the split rendezvous asks for
    // one); puts_issued counts them, none completes.
    void enable_put()
    {
        ops_.put = put;
        module_.caps.flags |= WEFT_BTL_FLAG_PUT;
    }
    size_t puts_issued = 0;
    // The fake module and its one endpoint, for tests that change their
    // caps or the endpoint's own eager limit before the first send.
    weft_btl_module_t &module() { return module_; }
    weft_btl_endpoint_t &endpoint() { return ep_; }

    FakeHost *other = nullptr;
    bool reachable = true;
    bool connected = true;
    bool place_registered = false;
    bool placing = false;
    bool hold_placed = false;
    size_t frames_placed = 0;              // accepted by the place handler
    int get_answer = WEFT_SUCCESS;
    size_t gets_issued = 0;
    size_t registered_buffers = 0;         // registrations not yet released
    std::vector<uint32_t> connects;
    std::vector<std::string> log_lines;
    size_t frames_sent = 0;

private:
    struct PendingGet {
        void *local;
        uint64_t remote;
        size_t len;
        weft_btl_rdma_cb_t cb;
        void *ctx;
    };

    static FakeHost *of(weft_btl_module_t *m) { return static_cast<FakeHost *>(m->module_ctx); }
    static int send(weft_btl_endpoint_t *ep, uint8_t am_id, const iovec *iov, int iovcnt)
    {
        FakeHost *self = of(ep->module);
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
    static int sendx(weft_btl_endpoint_t *ep, uint8_t am_id, const iovec *iov, int iovcnt, uint32_t)
    {
        ++of(ep->module)->sendx_calls;
        return send(ep, am_id, iov, iovcnt);
    }
    static int get(weft_btl_endpoint_t *ep, void *local, size_t len, uint64_t remote, const void *, size_t,
                   weft_btl_rdma_cb_t cb, void *ctx)
    {
        FakeHost *self = of(ep->module);
        ++self->gets_issued;
        if (self->get_answer != WEFT_SUCCESS)
            return self->get_answer;
        self->gets_.push_back({local, remote, len, cb, ctx});
        return WEFT_SUCCESS;
    }
    static int put(weft_btl_endpoint_t *ep, const void *, size_t, uint64_t, const void *, size_t, weft_btl_rdma_cb_t,
                   void *)
    {
        ++of(ep->module)->puts_issued;
        return WEFT_SUCCESS;
    }
    static int mem_register(weft_btl_module_t *m, void *addr, size_t len, weft_btl_reg_t *reg)
    {
        reg->addr = addr;
        reg->length = len;
        reg->rkey_len = 8;
        std::memset(reg->rkey, 0x5a, reg->rkey_len);
        ++of(m)->registered_buffers;
        return WEFT_SUCCESS;
    }
    static int mem_deregister(weft_btl_module_t *m, weft_btl_reg_t *)
    {
        --of(m)->registered_buffers;
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
            if (!self->place(frame))
                self->am_(self->am_ctx_, &self->ep_, frame.data(), frame.size());
            ++n;
        }
        return n;
    }

    // What a placing module does with a frame: true when the handler took it.
    bool place(const std::vector<std::byte> &frame)
    {
        if (!placing || !place_ || frame.size() <= WEFT_BTL_PLACE_HEAD)
            return false;
        weft_btl_placement_t p{};
        p.size = sizeof p;
        if (place_(place_ctx_, &ep_, {frame.data(), WEFT_BTL_PLACE_HEAD}, frame.size(), &p) != 1)
            return false;
        EXPECT_TRUE(p.iovcnt >= 1 && p.iovcnt <= WEFT_BTL_PLACE_IOV);
        size_t at = p.skip;
        for (int i = 0; i < p.iovcnt; ++i) {
            std::memcpy(p.iov[i].iov_base, frame.data() + at, p.iov[i].iov_len);
            at += p.iov[i].iov_len;
        }
        EXPECT_EQ(at, frame.size()) << "the placement's buffers do not add up to the frame";
        ++frames_placed;
        if (hold_placed)
            held_.push_back(p.token);
        else
            placed_(place_ctx_, &ep_, p.token, WEFT_SUCCESS);
        return true;
    }

    uint32_t rank_;
    weft::rt::ProgressEngine progress_;
    weft::log::Logger logger_;
    weft_btl_module_ops_t ops_{};
    weft_btl_module_t module_{};
    weft_btl_endpoint_t ep_{};
    weft_btl_endpoint_t *endpoints_[1] = {};
    std::deque<std::vector<std::byte>> inbox_;
    std::deque<PendingGet> gets_;
    weft::engine::AmHandler am_ = nullptr;
    void *am_ctx_ = nullptr;
    weft::engine::PeerFailedHandler failed_fn_ = nullptr;
    void *failed_ctx_ = nullptr;
    weft::engine::PlaceHandler place_ = nullptr;
    weft::engine::PlacedHandler placed_ = nullptr;
    void *place_ctx_ = nullptr;
    std::vector<uint64_t> held_;
};

inline weft::engine::Config config_of(uint32_t rank)
{
    weft::engine::Config c;
    c.my_rank = rank;
    c.job_size = 2;
    c.chunk = 4096;
    c.rndv_first = 64u << 10;   // the Rts carries the first bytes (capped by max_send)
    return c;
}

// Two engines, rank 0 and rank 1, over two fake hosts. Rank 1's engine is
// initialized last, so it is Engine::current() (the one the btl's RDMA
// completions reach): tests that read by RDMA read on rank 1.
class EnginePair : public ::testing::Test {
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
    weft::engine::Engine e0{host0, config_of(0)}, e1{host1, config_of(1)};
};

} // namespace weft::test
