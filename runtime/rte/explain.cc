// SPDX-License-Identifier: BSD-3-Clause
#include "rte/explain.hpp"

namespace weft::rt {

namespace {
void ignore_recv(void *, weft_btl_endpoint_t *, uint8_t, const void *, size_t) {}
void ignore_state(void *, weft_btl_endpoint_t *, weft_btl_ep_state_t, int, const char *) {}
void *refuse_accept(void *, weft_btl_endpoint_t *) { return nullptr; }
} // namespace

Result<Explanation> explain(Framework &fw)
{
    weft_btl_upcalls_t up{};
    up.size = sizeof up;
    up.recv = ignore_recv;
    up.state = ignore_state;
    up.accepted = refuse_accept;
    // A process of its own one-rank job, as a singleton would be.
    weft_btl_process_t self{};
    self.size = sizeof self;
    self.job_size = 1;
    self.local_size = 1;
    self.job_id = "weft_info";
    self.hostname = "localhost";
    BtlLayer btl;
    Explanation ex;
    Status st = btl.open(fw, up, &self);
    ex.components = btl.components();
    if (!st.ok() && btl.modules().empty())
        return st;

    std::vector<std::vector<std::byte>> cards;
    for (const auto &om : btl.modules()) {
        ex.modules.push_back({om.module->name, om.component->base.name, om.module->caps});
        std::vector<std::byte> card(4096);
        size_t len = card.size();
        if (weft_btl_card(om.module, card.data(), &len) != WEFT_SUCCESS)
            len = 0;
        card.resize(len);
        cards.push_back(std::move(card));
    }
    const struct { weft_peer_class_t cls; uint32_t rank, node; const char *host; } kClasses[] = {
        {WEFT_PEER_SELF, 0, 0, "localhost"},
        {WEFT_PEER_SAME_NODE, 1, 0, "localhost"},
        {WEFT_PEER_OTHER_NODE, 1, 1, "otherhost"},
    };
    for (const auto &k : kClasses) {
        std::vector<Candidate> cands;
        for (size_t i = 0; i < btl.modules().size(); ++i) {
            weft_btl_peer_t p{};
            p.size = sizeof p;
            p.rank = k.rank;
            p.node_id = k.node;
            p.peer_class = k.cls;
            p.hostname = k.host;
            p.card = cards[i].empty() ? nullptr : cards[i].data();
            p.card_len = cards[i].size();
            cands.push_back({btl.modules()[i].module, p});
        }
        ex.classes.push_back({k.cls, choose(k.cls, cands, btl.required())});
    }
    return ex;
}

} // namespace weft::rt
