// SPDX-License-Identifier: BSD-3-Clause
// weft_info --explain: for this host and each peer class, every btl
// component considered and why it was taken or rejected. The modules are
// really initialized and really asked; a peer of each class is described
// with this process's own cards (what a peer like us would publish).
#pragma once

#include <string>
#include <vector>

#include "core/framework.hpp"
#include "rte/btl_layer.hpp"
#include "rte/peer_select.hpp"

namespace weft::rt {

struct Explanation {
    std::vector<ComponentVerdict> components;   // selection + init stage
    struct Module { std::string name, component; weft_btl_caps_t caps; };
    std::vector<Module> modules;
    struct Class { weft_peer_class_t peer_class; PeerChoice choice; };
    std::vector<Class> classes;                 // self, same-node, other-node
};

Result<Explanation> explain(Framework &fw);

} // namespace weft::rt
