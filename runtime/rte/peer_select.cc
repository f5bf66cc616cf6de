// SPDX-License-Identifier: BSD-3-Clause
#include "rte/peer_select.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace weft::rt {

const char *peer_class_name(weft_peer_class_t c)
{
    switch (c) {
    case WEFT_PEER_SELF: return "self";
    case WEFT_PEER_SAME_NODE: return "same-node";
    case WEFT_PEER_OTHER_NODE: return "other-node";
    }
    return "unknown";
}

const char *role_name(Verdict::Role r)
{
    switch (r) {
    case Verdict::Role::Primary: return "chosen";
    case Verdict::Role::Striping: return "large messages";
    case Verdict::Role::Excluded: return "excluded";
    case Verdict::Role::Unreachable: return "unreachable";
    }
    return "?";
}

namespace {

std::string component_of(const weft_btl_module_t *m)
{
    return m->component ? m->component->base.name : m->name;
}

bool can_send(const weft_btl_module_t *m) { return (m->caps.flags & WEFT_BTL_FLAG_SEND) != 0; }

} // namespace

PeerChoice choose(weft_peer_class_t peer_class, std::span<const Candidate> candidates,
                  const std::vector<std::string> &required)
{
    PeerChoice pc;
    pc.peer_class = peer_class;
    std::vector<size_t> reach;
    for (size_t i = 0; i < candidates.size(); ++i) {
        const Candidate &c = candidates[i];
        Verdict v{c.module->name, component_of(c.module), Verdict::Role::Unreachable, {}};
        char why[WEFT_REASON_MAX] = {};
        if (!can_send(c.module))
            v.reason = "cannot send active messages";
        else if (weft_btl_reachable(c.module, &c.peer, why, sizeof why) == 1)
            reach.push_back(i);
        else
            v.reason = why[0] ? why : "said unreachable without a reason";
        pc.verdicts.push_back(std::move(v));
    }
    if (!reach.empty()) {
        auto caps = [&](size_t i) -> const weft_btl_caps_t & { return candidates[i].module->caps; };
        uint32_t top = 0;
        for (size_t i : reach)
            top = std::max(top, caps(i).exclusivity);
        std::vector<size_t> best;
        for (size_t i : reach)
            if (caps(i).exclusivity == top)
                best.push_back(i);
        std::stable_sort(best.begin(), best.end(), [&](size_t a, size_t b) {
            if (caps(a).priority != caps(b).priority)
                return caps(a).priority > caps(b).priority;
            return caps(a).latency_us < caps(b).latency_us;
        });
        const std::string winner = pc.verdicts[best.front()].module;
        for (size_t i : reach) {
            Verdict &v = pc.verdicts[i];
            if (i == best.front()) {
                v.role = Verdict::Role::Primary;
                v.reason = "reaches the peer; exclusivity " + std::to_string(top) + ", priority " +
                           std::to_string(caps(i).priority);
            } else if (caps(i).exclusivity < top) {
                v.role = Verdict::Role::Excluded;
                v.reason = "reaches the peer, but " + winner + " does with higher exclusivity (" +
                           std::to_string(top) + " > " + std::to_string(caps(i).exclusivity) + ")";
            } else {
                v.role = Verdict::Role::Striping;
                v.reason = "reaches the peer as well as " + winner +
                           "; carries a share of the rendezvous data sent in chunks";
            }
        }
        pc.chosen.push_back(best.front());
        for (size_t i : best)
            if (i != best.front())
                pc.chosen.push_back(i);
    }
    // A required component that could not reach the peer is a fallback.
    if (pc.peer_class != WEFT_PEER_SELF && !pc.chosen.empty())
        for (const auto &req : required)
            for (const auto &v : pc.verdicts)
                if (v.component == req && v.role == Verdict::Role::Unreachable) {
                    pc.require_error = "btl_base_require=" + req + ", but " + v.module +
                                       " cannot reach this peer (" + v.reason + "); it would fall back to " +
                                       pc.verdicts[pc.chosen.front()].module;
                }
    return pc;
}

std::string PeerChoice::summary() const
{
    if (chosen.empty())
        return "none";
    std::string s = verdicts[chosen.front()].module;
    for (size_t k = 1; k < chosen.size(); ++k)
        s += " + " + verdicts[chosen[k]].module;
    if (chosen.size() > 1)
        s += " (large messages shared)";
    return s;
}

std::string PeerChoice::details(const std::string &indent) const
{
    std::string s;
    for (const auto &v : verdicts)
        s += indent + v.module + ": " + role_name(v.role) + ": " + v.reason + "\n";
    if (verdicts.empty())
        s += indent + "(no btl module is initialized in this process)\n";
    return s;
}

std::string PeerChoice::unreachable_message(uint32_t rank, const std::string &host) const
{
    std::string s = "no transport reaches rank " + std::to_string(rank) + " on " + host + " (" +
                    peer_class_name(peer_class) + ")";
    if (!require_error.empty())
        return s + ": " + require_error +
               "; remove it from btl_base_require to allow the fallback";
    s += "; tried:\n" + details("  ");
    s += "Enable a transport that reaches it (btl=... / weft_info --explain shows what each "
         "component can reach from this host).";
    return s;
}

} // namespace weft::rt
