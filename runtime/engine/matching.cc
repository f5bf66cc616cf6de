// SPDX-License-Identifier: BSD-3-Clause
// Tag matching (matching.hpp) off the fast path: the unexpected queue's
// take and probe, cancel, and a failed source.
#include "engine/matching.hpp"

namespace weft::engine {

bool Matching::cancel(Request *r)
{
    if (!r->posted)
        return false;
    unpost(r);
    r->done = true;
    r->status.count = 0;
    r->status.error = WEFT_ERR_CANCELED;
    return true;
}

void Matching::fail_source(uint32_t rank, int error)
{
    for (Request *r = posted_head_, *next; r; r = next) {
        next = r->next;
        if (r->source != rank)
            continue;
        unpost(r);
        r->done = true;
        r->status.source = rank;
        r->status.error = error;
    }
}

Unexpected *Matching::take_arrived(const Request &r)
{
    return portals_.take_unexpected(WEFT_PT_TAGGED, r.source, r.bits, r.ignore);
}

const Unexpected *Matching::probe(uint32_t source, int32_t tag, uint32_t context) const
{
    Request key;
    set_key(&key, source, tag, context);
    for (const Unexpected *u = portals_.portal(WEFT_PT_TAGGED).uq_head; u; u = u->next)
        if (u->matches(key.source, key.bits, key.ignore))
            return u;
    return nullptr;
}

} // namespace weft::engine
