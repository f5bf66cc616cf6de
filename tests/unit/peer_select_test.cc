// SPDX-License-Identifier: BSD-3-Clause
// The per-peer transport decision (runtime/rte/peer_select): exclusivity,
// priority, latency, striping, reasons, and the require rule. The modules
// here are small C tables that answer reachable() from a script, the way a
// component built by another compiler would: choose() sees only the ABI.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "rte/peer_select.hpp"

namespace {

struct Script {
    bool reach;
    const char *why;
};

int scripted_reachable(weft_btl_module_t *m, const weft_btl_peer_t *, char *why, size_t len)
{
    auto *s = static_cast<Script *>(m->module_ctx);
    if (!s->reach)
        std::snprintf(why, len, "%s", s->why);
    return s->reach ? 1 : 0;
}

const weft_btl_module_ops_t kOps = [] {
    weft_btl_module_ops_t o{};
    o.size = sizeof o;
    o.reachable = scripted_reachable;
    return o;
}();

class FakeModules {
public:
    void add(const char *component, const char *name, uint32_t exclusivity, int priority, double latency,
             bool reach, const char *why = "")
    {
        scripts_.push_back(std::make_unique<Script>(Script{reach, why}));
        auto comp = std::make_unique<weft_btl_component_t>();
        std::memset(comp.get(), 0, sizeof *comp);
        std::snprintf(comp->base.name, sizeof comp->base.name, "%s", component);
        auto m = std::make_unique<weft_btl_module_t>();
        std::memset(m.get(), 0, sizeof *m);
        m->size = sizeof *m;
        m->component = comp.get();
        m->ops = &kOps;
        m->caps.size = sizeof m->caps;
        m->caps.exclusivity = exclusivity;
        m->caps.priority = priority;
        m->caps.latency_us = latency;
        m->caps.flags = WEFT_BTL_FLAG_SEND;
        std::snprintf(m->name, sizeof m->name, "%s", name);
        m->module_ctx = scripts_.back().get();
        comps_.push_back(std::move(comp));
        mods_.push_back(std::move(m));
    }
    weft_btl_module_t &module(size_t i) { return *mods_[i]; }
    std::vector<weft::rt::Candidate> candidates(weft_peer_class_t cls)
    {
        std::vector<weft::rt::Candidate> out;
        for (auto &m : mods_) {
            weft_btl_peer_t p{};
            p.size = sizeof p;
            p.rank = 1;
            p.peer_class = cls;
            out.push_back({m.get(), p});
        }
        return out;
    }

private:
    std::vector<std::unique_ptr<Script>> scripts_;
    std::vector<std::unique_ptr<weft_btl_component_t>> comps_;
    std::vector<std::unique_ptr<weft_btl_module_t>> mods_;
};

using Role = weft::rt::Verdict::Role;

TEST(PeerSelect, HigherExclusivityWinsOverPriority)
{
    FakeModules f;
    f.add("tcp", "tcp/eth0", WEFT_BTL_EXCLUSIVITY_DEFAULT, 100, 10.0, true);
    f.add("scif", "scif", WEFT_BTL_EXCLUSIVITY_SHM, 10, 0.2, true);
    auto c = weft::rt::choose(WEFT_PEER_SAME_NODE, f.candidates(WEFT_PEER_SAME_NODE), {});
    ASSERT_TRUE(c.reachable());
    ASSERT_EQ(c.chosen.size(), 1u);
    EXPECT_EQ(c.chosen[0], 1u);
    EXPECT_EQ(c.summary(), "scif");
    EXPECT_EQ(c.verdicts[0].role, Role::Excluded);
    EXPECT_NE(c.verdicts[0].reason.find("scif"), std::string::npos) << c.verdicts[0].reason;
    EXPECT_NE(c.verdicts[0].reason.find("exclusivity"), std::string::npos);
    EXPECT_EQ(c.verdicts[1].role, Role::Primary);
}

TEST(PeerSelect, EqualExclusivityOrdersByPriorityThenLatencyAndStripes)
{
    FakeModules f;
    f.add("tcp", "tcp/eth0", WEFT_BTL_EXCLUSIVITY_DEFAULT, 20, 10.0, true);
    f.add("openib", "openib/mlx5_0:1", WEFT_BTL_EXCLUSIVITY_DEFAULT, 20, 2.0, true);
    f.add("tcp", "tcp/eth1", WEFT_BTL_EXCLUSIVITY_DEFAULT, 5, 1.0, true);
    auto c = weft::rt::choose(WEFT_PEER_OTHER_NODE, f.candidates(WEFT_PEER_OTHER_NODE), {});
    ASSERT_EQ(c.chosen.size(), 3u);
    EXPECT_EQ(c.chosen[0], 1u);   // same priority as tcp/eth0, lower latency
    EXPECT_EQ(c.chosen[1], 0u);
    EXPECT_EQ(c.chosen[2], 2u);   // lowest priority, though fastest
    EXPECT_EQ(c.verdicts[0].role, Role::Striping);
    EXPECT_EQ(c.summary(), "openib/mlx5_0:1 + tcp/eth0 + tcp/eth1 (large messages shared)");
}

TEST(PeerSelect, UnreachableListsEveryComponentAndWhy)
{
    FakeModules f;
    f.add("self", "self", WEFT_BTL_EXCLUSIVITY_SELF, 100, 0.0, false, "reaches only the calling process");
    f.add("tcp", "tcp/eth0", WEFT_BTL_EXCLUSIVITY_DEFAULT, 20, 10.0, false, "no route to 10.77.0.2");
    auto c = weft::rt::choose(WEFT_PEER_OTHER_NODE, f.candidates(WEFT_PEER_OTHER_NODE), {});
    EXPECT_FALSE(c.reachable());
    EXPECT_EQ(c.summary(), "none");
    std::string msg = c.unreachable_message(3, "h2");
    EXPECT_NE(msg.find("rank 3 on h2 (other-node)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("self: unreachable: reaches only the calling process"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tcp/eth0: unreachable: no route to 10.77.0.2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("weft_info --explain"), std::string::npos) << msg;
}

TEST(PeerSelect, ModuleWithoutReasonStillGetsOne)
{
    FakeModules f;
    f.add("tcp", "tcp/eth0", WEFT_BTL_EXCLUSIVITY_DEFAULT, 20, 10.0, false, "");
    auto c = weft::rt::choose(WEFT_PEER_OTHER_NODE, f.candidates(WEFT_PEER_OTHER_NODE), {});
    EXPECT_FALSE(c.verdicts[0].reason.empty());
}

TEST(PeerSelect, ModuleThatCannotSendIsNotAsked)
{
    FakeModules f;
    f.add("tcp", "tcp/eth0", WEFT_BTL_EXCLUSIVITY_DEFAULT, 20, 10.0, true);
    f.module(0).caps.flags = WEFT_BTL_FLAG_PUT;
    auto c = weft::rt::choose(WEFT_PEER_OTHER_NODE, f.candidates(WEFT_PEER_OTHER_NODE), {});
    EXPECT_FALSE(c.reachable());
    EXPECT_NE(c.verdicts[0].reason.find("cannot send"), std::string::npos);
}

TEST(PeerSelect, RequiredComponentThatCannotReachIsAnError)
{
    FakeModules f;
    f.add("openib", "openib/mlx5_0:1", WEFT_BTL_EXCLUSIVITY_DEFAULT, 50, 2.0, false, "port is down");
    f.add("tcp", "tcp/eth0", WEFT_BTL_EXCLUSIVITY_DEFAULT, 20, 10.0, true);
    auto c = weft::rt::choose(WEFT_PEER_OTHER_NODE, f.candidates(WEFT_PEER_OTHER_NODE), {"openib"});
    EXPECT_FALSE(c.reachable());
    EXPECT_NE(c.require_error.find("btl_base_require=openib"), std::string::npos) << c.require_error;
    EXPECT_NE(c.require_error.find("port is down"), std::string::npos);
    EXPECT_NE(c.require_error.find("fall back to tcp/eth0"), std::string::npos);
    // Without the requirement the fallback is silent and fine.
    EXPECT_TRUE(weft::rt::choose(WEFT_PEER_OTHER_NODE, f.candidates(WEFT_PEER_OTHER_NODE), {}).reachable());
}

TEST(PeerSelect, RequiredComponentMerelyExcludedIsNoError)
{
    FakeModules f;
    f.add("scif", "scif", WEFT_BTL_EXCLUSIVITY_SHM, 10, 0.2, true);
    f.add("tcp", "tcp/eth0", WEFT_BTL_EXCLUSIVITY_DEFAULT, 20, 10.0, true);
    auto c = weft::rt::choose(WEFT_PEER_SAME_NODE, f.candidates(WEFT_PEER_SAME_NODE), {"tcp"});
    EXPECT_TRUE(c.reachable());
    EXPECT_TRUE(c.require_error.empty());
}

TEST(PeerSelect, NoModulesIsUnreachable)
{
    auto c = weft::rt::choose(WEFT_PEER_OTHER_NODE, {}, {});
    EXPECT_FALSE(c.reachable());
    EXPECT_NE(c.details().find("no btl module"), std::string::npos);
}

} // namespace
