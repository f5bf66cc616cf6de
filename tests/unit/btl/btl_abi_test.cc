// SPDX-License-Identifier: BSD-3-Clause
// A btl built against a smaller btl.h still works: weft_btl_oldabi
// (tests/components/old_abi_component.c) has an ops table that ends after
// finalize and a module that ends after upcalls.accepted. The runtime's btl
// layer takes it, the wrappers of weft/btl_inline.h answer for the ops it
// lacks without reaching past its table, the upcalls are copied only as far
// as it has room, and messages go through it.
#include "weft_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <weft/btl.h>

#include "core/framework.hpp"
#include "rte/btl_layer.hpp"
#include "../test_util.hpp"
#include "../../components/old_abi_component.h"

namespace {

using weft::Framework;

struct Seen {
    std::vector<std::string> recv;
    std::vector<weft_btl_ep_state_t> states;
};

void up_recv(void *ctx, weft_btl_endpoint_t *, uint8_t am_id, const void *data, size_t len)
{
    static_cast<Seen *>(ctx)->recv.push_back(std::to_string(am_id) + ":" +
                                             std::string(static_cast<const char *>(data), len));
}
void up_state(void *ctx, weft_btl_endpoint_t *, weft_btl_ep_state_t state, int, const char *)
{
    static_cast<Seen *>(ctx)->states.push_back(state);
}
void *up_accepted(void *, weft_btl_endpoint_t *) { return nullptr; }
int up_place(void *, weft_btl_endpoint_t *, uint8_t, const void *, size_t, size_t, weft_btl_placement *) { return 0; }
void up_placed(void *, weft_btl_endpoint_t *, uint8_t, uint64_t, int) {}

class BtlAbiTest : public ::testing::Test {
protected:
    void SetUp() override
    {
#ifndef WEFT_HAVE_DLOPEN
        GTEST_SKIP() << "weft was configured with --disable-dlopen: no test component can load";
#endif
        if (!std::filesystem::exists(WEFT_TEST_COMPONENT_DIR "/weft_btl_oldabi.so"))
            GTEST_SKIP() << "btl/oldabi is not built in " WEFT_TEST_COMPONENT_DIR " (make check builds it)";
        env_ = {"WEFT_MCA_mca_base_component_path=" WEFT_TEST_COMPONENT_DIR, "WEFT_MCA_btl=oldabi",
                "WEFT_MCA_mca_base_param_files=" + home_.write("mca-params.conf", "")};
        for (auto &e : env_)
            envp_.push_back(e.c_str());
        envp_.push_back(nullptr);
        weft::InitOptions o;
        o.envp = envp_.data();
        o.warn_unknown = false;
        o.log_sink = [this](std::string_view l) { log_.emplace_back(l); };
        auto fw = Framework::init(o);
        ASSERT_TRUE(fw.ok()) << fw.status().message();
        fw_ = fw.value();
    }
    void TearDown() override
    {
        layer_.close();
        if (fw_)
            Framework::finalize();
    }

    // Opens the layer with every upcall the runtime has, place included.
    weft_btl_module_t *open()
    {
        weft_btl_upcalls_t up{};
        up.size = sizeof up;
        up.ctx = &seen_;
        up.recv = up_recv;
        up.state = up_state;
        up.accepted = up_accepted;
        up.place = up_place;
        up.placed = up_placed;
        process_.size = sizeof process_;
        if (auto st = layer_.open(*fw_, up, &process_); !st.ok()) {
            ADD_FAILURE() << st.message();
            return nullptr;
        }
        if (layer_.modules().size() != 1) {
            ADD_FAILURE() << "btl/oldabi made " << layer_.modules().size() << " modules";
            return nullptr;
        }
        return layer_.modules().front().module;
    }
    // Progresses m until pred() holds, at most a bounded number of times.
    template <class Pred> bool progress_until(weft_btl_module_t *m, Pred pred)
    {
        for (int i = 0; i < 100 && !pred(); ++i)
            if (weft_btl_progress(m) < 0)
                return false;
        return pred();
    }

    weft::test::TempDir home_;
    std::vector<std::string> env_;
    std::vector<const char *> envp_;
    std::vector<std::string> log_;
    Framework *fw_ = nullptr;
    weft::rt::BtlLayer layer_;
    weft_btl_process_t process_{};
    Seen seen_;
};

TEST_F(BtlAbiTest, UpcallsAreCopiedOnlyAsFarAsTheModuleHasRoom)
{
    weft_btl_module_t *m = open();
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->upcalls.size, WEFT_BTL_MODULE_MIN_SIZE - offsetof(weft_btl_module_t, upcalls));
    EXPECT_FALSE(WEFT_HAS_MEMBER(&m->upcalls, weft_btl_upcalls_t, place));
    EXPECT_EQ(m->upcalls.recv, &up_recv);
    EXPECT_EQ(m->upcalls.state, &up_state);
    EXPECT_EQ(m->upcalls.accepted, &up_accepted);
    EXPECT_EQ(m->process, &process_);
    // The module's own memory after its declared size is untouched.
    const auto *bytes = reinterpret_cast<const unsigned char *>(m);
    for (size_t i = WEFT_BTL_MODULE_MIN_SIZE; i < sizeof *m; ++i)
        ASSERT_EQ(bytes[i], OLDABI_CANARY) << "byte " << i << " of the module was overwritten";
}

TEST_F(BtlAbiTest, WrappersAnswerForOpsBeyondTheTable)
{
    weft_btl_module_t *m = open();
    ASSERT_NE(m, nullptr);
    const auto *report = static_cast<const oldabi_report_t *>(m->module_ctx);
    EXPECT_FALSE(WEFT_BTL_HAS_OP(m, prepare_wait));
    EXPECT_FALSE(WEFT_BTL_HAS_OP(m, sendx));
    EXPECT_FALSE(WEFT_BTL_HAS_OP(m, modex_ready));
    EXPECT_FALSE(WEFT_BTL_HAS_OP(m, card));
    EXPECT_TRUE(WEFT_BTL_HAS_OP(m, disconnect));
    EXPECT_EQ(weft_btl_prepare_wait(m), WEFT_ERR_NOT_SUPPORTED);
    EXPECT_EQ(weft_btl_modex_ready(m), WEFT_ERR_NOT_SUPPORTED);
    size_t len = 16;
    char card[16];
    EXPECT_EQ(weft_btl_card(m, card, &len), WEFT_ERR_NOT_SUPPORTED);
    EXPECT_EQ(weft_btl_wait_fd(m), -1);
    EXPECT_EQ(weft_btl_mem_register(m, card, sizeof card, nullptr), WEFT_ERR_NOT_SUPPORTED);
    // The runtime's own passes over its modules skip what is not there.
    layer_.modex_ready(fw_->logger());
    EXPECT_EQ(report->tail_op_calls, 0) << "an op beyond ops->size was called";
    for (const auto &line : log_)
        EXPECT_EQ(line.find("oldabi"), std::string::npos) << line;
}

TEST_F(BtlAbiTest, MessagesGoThroughTheOldModule)
{
    weft_btl_module_t *m = open();
    ASSERT_NE(m, nullptr);
    const auto *report = static_cast<const oldabi_report_t *>(m->module_ctx);
    weft_btl_peer_t peer{};
    peer.size = sizeof peer;
    peer.peer_class = WEFT_PEER_SELF;
    char why[WEFT_REASON_MAX] = "";
    ASSERT_EQ(weft_btl_reachable(m, &peer, why, sizeof why), 1) << why;
    weft_btl_endpoint_t *ep = nullptr;
    ASSERT_EQ(layer_.modules().front().component->start_connect(m, &peer, &ep), WEFT_SUCCESS);
    ASSERT_TRUE(progress_until(m, [&] { return !seen_.states.empty(); }));
    EXPECT_EQ(seen_.states.front(), WEFT_BTL_EP_CONNECTED);
    EXPECT_FALSE(WEFT_HAS_MEMBER(ep, weft_btl_endpoint_t, eager_limit)) << "a 1.0 endpoint";

    char hello[] = "hello";
    iovec iov{hello, 5};
    EXPECT_EQ(weft_btl_sendi(ep, 3, hello, 2, hello + 2, 3), WEFT_ERR_NOT_SUPPORTED);
    EXPECT_EQ(weft_btl_sendx(ep, 3, &iov, 1, WEFT_BTL_SEND_UNORDERED), WEFT_ERR_NOT_SUPPORTED);
    EXPECT_EQ(weft_btl_put(ep, hello, 5, 0, nullptr, 0, nullptr, nullptr), WEFT_ERR_NOT_SUPPORTED);
    EXPECT_EQ(weft_btl_get(ep, hello, 5, 0, nullptr, 0, nullptr, nullptr), WEFT_ERR_NOT_SUPPORTED);
    ASSERT_EQ(weft_btl_send(ep, 4, &iov, 1), WEFT_SUCCESS);
    ASSERT_TRUE(progress_until(m, [&] { return !seen_.recv.empty(); }));
    EXPECT_EQ(seen_.recv.front(), "4:hello");

    ASSERT_EQ(weft_btl_disconnect(ep), WEFT_SUCCESS);
    ASSERT_TRUE(progress_until(m, [&] { return seen_.states.size() == 2; }));
    EXPECT_EQ(seen_.states.back(), WEFT_BTL_EP_CLOSED);
    EXPECT_EQ(report->tail_op_calls, 0);
}

} // namespace

namespace {

int stub_reachable(weft_btl_module_t *, const weft_btl_peer_t *, char *, size_t) { return 0; }
int stub_send(weft_btl_endpoint_t *, uint8_t, const iovec *, int) { return WEFT_SUCCESS; }
int stub_module(weft_btl_module_t *) { return WEFT_SUCCESS; }

TEST(BtlAbiCheck, ModulesBelowAbi10AreRefusedWithAReason)
{
    weft_btl_module_ops_t ops{};
    ops.size = sizeof ops;
    ops.reachable = stub_reachable;
    ops.send = stub_send;
    ops.progress = stub_module;
    ops.finalize = stub_module;
    weft_btl_module_t m{};
    m.size = sizeof m;
    m.ops = &ops;
    EXPECT_EQ(weft_btl_module_abi_problem(&m), nullptr);

    m.size = WEFT_BTL_MODULE_MIN_SIZE - 1;
    EXPECT_STREQ(weft_btl_module_abi_problem(&m), "the module struct is smaller than ABI 1.0's");
    m.size = WEFT_BTL_MODULE_MIN_SIZE;
    EXPECT_EQ(weft_btl_module_abi_problem(&m), nullptr);

    ops.size = WEFT_BTL_MODULE_OPS_MIN_SIZE - 1;
    EXPECT_STREQ(weft_btl_module_abi_problem(&m), "the ops table is smaller than ABI 1.0's");
    ops.size = WEFT_BTL_MODULE_OPS_MIN_SIZE;
    ops.progress = nullptr;
    EXPECT_NE(weft_btl_module_abi_problem(&m), nullptr);
    ops.progress = stub_module;
    m.ops = nullptr;
    EXPECT_STREQ(weft_btl_module_abi_problem(&m), "the module has no ops table");
    EXPECT_STREQ(weft_btl_module_abi_problem(nullptr), "init returned a NULL module");
}

TEST(BtlAbiCheck, AFullSizeModuleGetsEveryUpcall)
{
    weft_btl_module_t m{};
    m.size = sizeof m;
    weft_btl_upcalls_t up{};
    up.size = sizeof up;
    up.recv = up_recv;
    up.place = up_place;
    up.placed = up_placed;
    weft_btl_module_set_upcalls(&m, &up);
    EXPECT_EQ(m.upcalls.size, sizeof up);
    EXPECT_EQ(m.upcalls.recv, &up_recv);
    EXPECT_EQ(m.upcalls.placed, &up_placed);
    // A runtime older than the module: the module learns how much it got.
    weft_btl_module_t newer{};
    newer.size = sizeof newer;
    up.size = offsetof(weft_btl_upcalls_t, place);
    weft_btl_module_set_upcalls(&newer, &up);
    EXPECT_EQ(newer.upcalls.size, offsetof(weft_btl_upcalls_t, place));
    EXPECT_FALSE(WEFT_HAS_MEMBER(&newer.upcalls, weft_btl_upcalls_t, place));
    EXPECT_EQ(newer.upcalls.place, nullptr);
}

} // namespace
