// SPDX-License-Identifier: BSD-3-Clause
// weft/btl_base.hpp: the ops table it generates, its checked casts, its
// exception policy and its module ownership, on a toy module.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <new>
#include <stdexcept>

#include <weft/btl_base.hpp>

namespace {

struct ToyEndpoint : weft::btl::EndpointBase {
    bool finished = false;
    int sends = 0;
};

// Has the mandatory ops and sendi; throws where a test asks it to.
class ToyModule : public weft::btl::ModuleBase<ToyModule> {
public:
    using Endpoint = ToyEndpoint;
    static constexpr const char *kName = "toy";
    static bool usable(const ToyEndpoint &ep) { return !ep.finished; }

    explicit ToyModule(const weft_btl_component_t *component) : ModuleBase(component) {}

    int reachable(const weft_btl_peer_t *, char *why, size_t why_len)
    {
        if (throw_bad_alloc)
            throw std::bad_alloc();
        weft::btl::write_reason(why, why_len, "toy reaches rank %d", 7);
        return 1;
    }
    int send(ToyEndpoint &ep, uint8_t, const iovec *, int)
    {
        if (throw_other)
            throw std::runtime_error("toy");
        return ++ep.sends;
    }
    int sendi(ToyEndpoint &ep, uint8_t, const void *, size_t, const void *, size_t) noexcept { return ++ep.sends; }
    int progress() { return 0; }
    int connect(const weft_btl_peer_t *, weft_btl_endpoint_t **out)
    {
        ep.c.module = c_module();
        *out = &ep.c;
        return WEFT_SUCCESS;
    }
    bool in_progress() const { return busy; }

    ToyEndpoint ep;
    bool throw_bad_alloc = false, throw_other = false, busy = false;
};

// A second module class: its pointers are foreign to ToyModule.
class OtherModule : public weft::btl::ModuleBase<OtherModule> {
public:
    using Endpoint = ToyEndpoint;
    static constexpr const char *kName = "other";
    OtherModule() : ModuleBase(nullptr) {}
    int reachable(const weft_btl_peer_t *, char *, size_t) { return 0; }
    int send(ToyEndpoint &, uint8_t, const iovec *, int) { return 0; }
    int progress() { return 0; }
    int connect(const weft_btl_peer_t *, weft_btl_endpoint_t **) { return 0; }
    int card(void *, size_t *len) { return *len = 0, WEFT_SUCCESS; }
    int wait_fd() const { return 3; }
    int rdma(ToyEndpoint &, bool, void *, size_t, uint64_t, const void *, size_t, weft_btl_rdma_cb_t, void *)
    {
        return 0;
    }
    bool in_progress() const { return false; }
};

using Toys = weft::btl::Modules<ToyModule>;

class BtlBase : public ::testing::Test {
protected:
    void TearDown() override { Toys::finalize(nullptr); }
};

TEST_F(BtlBase, TableHasTheMembersTheModuleHasAndNoOthers)
{
    const weft_btl_module_ops_t &t = weft::btl::Ops<ToyModule>::table;
    EXPECT_EQ(t.size, sizeof(weft_btl_module_ops_t));
    EXPECT_NE(t.reachable, nullptr);
    EXPECT_NE(t.send, nullptr);
    EXPECT_NE(t.sendi, nullptr);
    EXPECT_NE(t.progress, nullptr);
    EXPECT_NE(t.finalize, nullptr);
    EXPECT_EQ(t.card, nullptr);
    EXPECT_EQ(t.sendx, nullptr);
    EXPECT_EQ(t.put, nullptr);
    EXPECT_EQ(t.get, nullptr);
    EXPECT_EQ(t.mem_register, nullptr);
    EXPECT_EQ(t.wait_fd, nullptr);
    EXPECT_EQ(t.disconnect, nullptr);
    EXPECT_EQ(t.prepare_wait, nullptr);
    EXPECT_EQ(t.modex_ready, nullptr);

    const weft_btl_module_ops_t &o = weft::btl::Ops<OtherModule>::table;
    EXPECT_NE(o.card, nullptr);
    EXPECT_NE(o.wait_fd, nullptr);
    EXPECT_NE(o.put, nullptr);   // both from rdma()
    EXPECT_NE(o.get, nullptr);
    EXPECT_EQ(o.sendi, nullptr);
}

TEST_F(BtlBase, CastsFindTheObjectsAndRefuseForeignOrFinishedOnes)
{
    ToyModule toy(nullptr);
    OtherModule other;
    weft_btl_module_t *m = toy.c_module();
    EXPECT_EQ(m->ops, &weft::btl::Ops<ToyModule>::table);
    EXPECT_EQ(ToyModule::from(m), &toy);
    EXPECT_EQ(ToyModule::from(nullptr), nullptr);
    EXPECT_EQ(ToyModule::from(other.c_module()), nullptr);

    weft_btl_endpoint_t *ep = nullptr;
    ASSERT_EQ(toy.connect(nullptr, &ep), WEFT_SUCCESS);
    EXPECT_EQ(ToyModule::endpoint(ep), &toy.ep);
    EXPECT_EQ(ToyModule::endpoint(nullptr), nullptr);
    EXPECT_EQ(OtherModule::endpoint(ep), nullptr);   // its module is not an OtherModule

    // Through the C ABI, as the runtime calls it.
    EXPECT_EQ(weft_btl_sendi(ep, 1, "x", 1, nullptr, 0), 1);
    EXPECT_EQ(weft_btl_sendx(ep, 1, nullptr, 0, 0), WEFT_ERR_NOT_SUPPORTED);
    toy.ep.finished = true;
    EXPECT_EQ(weft_btl_sendi(ep, 1, "x", 1, nullptr, 0), WEFT_ERR_BAD_PARAM);
    EXPECT_EQ(toy.ep.sends, 1);

    weft_btl_endpoint_t orphan{};
    EXPECT_EQ(m->ops->send(&orphan, 1, nullptr, 0), WEFT_ERR_BAD_PARAM);   // no module
    EXPECT_EQ(m->ops->progress(other.c_module()), WEFT_ERR_BAD_PARAM);
}

TEST_F(BtlBase, NoExceptionCrossesTheAbi)
{
    ToyModule toy(nullptr);
    weft_btl_endpoint_t *ep = nullptr;
    ASSERT_EQ(toy.connect(nullptr, &ep), WEFT_SUCCESS);
    weft_btl_peer_t peer{};
    peer.size = sizeof peer;
    char why[64] = "";
    EXPECT_EQ(weft_btl_reachable(toy.c_module(), &peer, why, sizeof why), 1);
    EXPECT_STREQ(why, "toy reaches rank 7");

    toy.throw_bad_alloc = true;
    EXPECT_EQ(weft_btl_reachable(toy.c_module(), &peer, why, sizeof why), 0);
    EXPECT_STREQ(why, "btl/toy: could not decide reachability (status -6)")
        << "WEFT_ERR_NO_MEMORY is " << WEFT_ERR_NO_MEMORY;
    EXPECT_EQ(weft_btl_reachable(toy.c_module(), nullptr, why, sizeof why), 0);
    EXPECT_STREQ(why, "btl/toy: reachable() without a btl/toy module or a peer");

    toy.throw_other = true;
    iovec iov{why, 1};
    EXPECT_EQ(weft_btl_send(ep, 1, &iov, 1), WEFT_ERROR);
    EXPECT_EQ(weft_btl_send(ep, 1, nullptr, 1), WEFT_ERR_BAD_PARAM);
    EXPECT_EQ(weft_btl_send(ep, 1, &iov, -1), WEFT_ERR_BAD_PARAM);
}

TEST_F(BtlBase, ModulesOwnsWhatInitMadeAndReleasesItOnce)
{
    static const weft_btl_component_t component{};
    weft_btl_module_t *out[2] = {};
    int n = -1;
    auto make = [](std::unique_ptr<ToyModule> &m) {
        m = std::make_unique<ToyModule>(&component);
        return static_cast<int>(WEFT_SUCCESS);
    };
    EXPECT_EQ(Toys::init_one(nullptr, nullptr, nullptr, 2, &n, make), WEFT_ERR_BAD_PARAM);
    EXPECT_EQ(n, 0);
    ASSERT_EQ(Toys::init_one(nullptr, nullptr, out, 2, &n, make), WEFT_SUCCESS);
    ASSERT_EQ(n, 1);
    EXPECT_EQ(out[0]->component, &component);

    weft_btl_peer_t peer{};
    weft_btl_endpoint_t *ep = reinterpret_cast<weft_btl_endpoint_t *>(1);
    EXPECT_EQ(Toys::start_connect(out[0], nullptr, &ep), WEFT_ERR_BAD_PARAM);
    EXPECT_EQ(ep, nullptr);
    EXPECT_EQ(Toys::start_connect(out[0], &peer, &ep), WEFT_SUCCESS);
    EXPECT_EQ(ToyModule::endpoint(ep), &Toys::all()[0]->ep);

    // A failed creation leaves nothing behind, and reports its status.
    Toys::finalize(nullptr);
    EXPECT_EQ(Toys::init(nullptr, nullptr, out, 2, &n,
                         [](auto &modules, int) {
                             modules.push_back(std::make_unique<ToyModule>(nullptr));
                             throw std::bad_alloc();
                             return 0;
                         }),
              WEFT_ERR_NO_MEMORY);
    EXPECT_TRUE(Toys::all().empty());
    EXPECT_EQ(n, 0);

    ASSERT_EQ(Toys::init_one(nullptr, nullptr, out, 2, &n, make), WEFT_SUCCESS);
    weft_btl_module_t *m = out[0];
    Toys::all()[0]->busy = true;   // inside its own upcall
    EXPECT_EQ(weft_btl_finalize(m), WEFT_ERR_BAD_PARAM);
    Toys::all()[0]->busy = false;
    EXPECT_EQ(weft_btl_finalize(m), WEFT_SUCCESS);
    EXPECT_TRUE(Toys::all().empty());
    ToyModule stranger(nullptr);
    EXPECT_EQ(weft_btl_finalize(stranger.c_module()), WEFT_ERR_BAD_PARAM);   // not init()'s
}

TEST(UniqueFd, ClosesOnceAndHandsOver)
{
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    {
        weft::UniqueFd a(p[0]);
        weft::UniqueFd b(std::move(a));
        EXPECT_FALSE(a);
        EXPECT_EQ(b.get(), p[0]);
        const int kept = b.release();
        EXPECT_EQ(kept, p[0]);
        b.reset(p[1]);
    }
    EXPECT_EQ(fcntl(p[1], F_GETFD), -1);   // b closed it
    EXPECT_NE(fcntl(p[0], F_GETFD), -1);   // released: still open
    close(p[0]);
}

} // namespace

// The op attach_counters (btl.h): what a module counted before moves into
// the runtime's block, which it then counts in; a block smaller than the
// module's struct is refused and the module keeps its own.
TEST_F(BtlBase, CountersMoveIntoTheAttachedBlock)
{
    ToyModule toy(nullptr);
    weft_btl_module_t *m = toy.c_module();
    ASSERT_TRUE(WEFT_BTL_HAS_OP(m, attach_counters));
    EXPECT_EQ(toy.again(), WEFT_ERR_AGAIN);
    toy.count_failure("the peer went away");

    weft_btl_counters_t small{};
    small.size = offsetof(weft_btl_counters_t, again);
    EXPECT_EQ(weft_btl_attach_counters(m, &small), WEFT_ERR_NOT_SUPPORTED);
    EXPECT_EQ(small.failures, 0u);
    EXPECT_EQ(weft_btl_attach_counters(m, nullptr), WEFT_ERR_NOT_SUPPORTED);

    weft_btl_counters_t block{};
    block.size = sizeof block;
    ASSERT_EQ(weft_btl_attach_counters(m, &block), WEFT_SUCCESS);
    EXPECT_EQ(block.size, sizeof block);
    EXPECT_EQ(block.again, 1u);
    EXPECT_EQ(block.failures, 1u);
    EXPECT_STREQ(block.last_failure, "the peer went away");
    toy.count_state(WEFT_BTL_EP_CONNECTED, "");
    toy.count_state(WEFT_BTL_EP_CLOSED, "bye");
    toy.count_state(WEFT_BTL_EP_FAILED, "reset by peer");
    toy.again();
    EXPECT_EQ(block.connects, 1u);
    EXPECT_EQ(block.failures, 2u);
    EXPECT_STREQ(block.last_failure, "reset by peer");
    EXPECT_EQ(block.again, 2u);
    EXPECT_EQ(&toy.counters(), &block);

    OtherModule other;
    EXPECT_EQ(weft::btl::Ops<ToyModule>::attach_counters(other.c_module(), &block), WEFT_ERR_BAD_PARAM);
}
