// SPDX-License-Identifier: BSD-3-Clause
// Which transports carry traffic to one peer, and why. Pure decision logic
// over the modules' own answers (reachable() with its reason, capability
// data), shared by the runtime's endpoints and weft_info --explain.
//
// The rule, in order:
//  1. every module is asked whether it reaches the peer; a "no" keeps its
//     reason;
//  2. among those that reach it, the highest exclusivity wins: self beats
//     shared memory beats networks, whatever their priorities;
//  3. within that exclusivity, priority then lower latency orders them: the
//     first carries small messages (and all of them when it is alone); the
//     others that can send share large messages with it (striping);
//  4. a component named in btl_base_require that could not reach the peer
//     while another did is a fallback, and an error.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <weft/btl.h>

namespace weft::rt {

const char *peer_class_name(weft_peer_class_t c);   // "self", "same-node", "other-node"

struct Candidate {
    weft_btl_module_t *module;
    weft_btl_peer_t peer;   // with this module's card of the peer
};

struct Verdict {
    std::string module;     // "self", "tcp/eth0"
    std::string component;  // "self", "tcp"
    enum class Role { Primary, Striping, Excluded, Unreachable } role;
    std::string reason;     // why this role, in words
};
const char *role_name(Verdict::Role r);   // "chosen", "large messages", "excluded", "unreachable"

struct PeerChoice {
    weft_peer_class_t peer_class = WEFT_PEER_SELF;
    std::vector<size_t> chosen;       // indices into the candidates; [0] carries small messages
    std::vector<Verdict> verdicts;    // one per candidate, in candidate order
    std::string require_error;        // non-empty: btl_base_require was violated

    bool reachable() const { return !chosen.empty() && require_error.empty(); }
    // "scif" or "scif + tcp (large messages)"; "none" when unreachable.
    std::string summary() const;
    // One line per candidate: "  tcp/eth0: excluded: scif reaches it with higher exclusivity".
    std::string details(const std::string &indent = "  ") const;
    // The error for an unreachable peer: each component tried and why not.
    std::string unreachable_message(uint32_t rank, const std::string &host) const;
};

PeerChoice choose(weft_peer_class_t peer_class, std::span<const Candidate> candidates,
                  const std::vector<std::string> &required);

} // namespace weft::rt
