// SPDX-License-Identifier: BSD-3-Clause
// The portal table (portals.hpp): event queues, match entries and memory
// descriptors: creation, checks of what the application passes, matching,
// events, and unlinking.
#include "engine/portals.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace weft::engine {

namespace {

Status bad(const std::string &msg) { return Status(WEFT_ERR_BAD_PARAM, msg); }

constexpr unsigned kKnownOptions = WEFT_MD_OP_PUT | WEFT_MD_OP_GET | WEFT_MD_MANAGE_REMOTE |
                                   WEFT_MD_TRUNCATE | WEFT_MD_ACK_DISABLE | WEFT_MD_MAX_SIZE;

} // namespace

Status check_portal(const char *fn, unsigned portal)
{
    if (portal >= WEFT_MAX_PORTALS)
        return bad(std::string(fn) + ": portal " + std::to_string(portal) + " out of range (0.." +
                   std::to_string(WEFT_MAX_PORTALS - 1) + ")");
    return Status::success();
}

// ---------------------------------------------------------------- EQ

Status Portals::eq_alloc(unsigned count, weft_eq_handler_t handler, weft_eq_t *out)
{
    if (!out)
        return bad("weft_eq_alloc: eq is NULL");
    if (count == 0 || count > (1u << 24))
        return bad("weft_eq_alloc: count " + std::to_string(count) + " (give 1..16777216 events)");
    uint64_t h;
    Eq *eq = eqs_.alloc(&h);
    eq->ring.resize(count);
    eq->handler = handler;
    out->cookie = h;
    return Status::success();
}

Status Portals::eq_free(weft_eq_t handle)
{
    Eq *eq = eqs_.get(handle.cookie);
    if (!eq)
        return bad("weft_eq_free: not an event queue (stale or invalid handle)");
    eqs_.free(eq);
    return Status::success();
}

Status Portals::eq_check(std::span<const weft_eq_t> handles)
{
    for (const auto &h : handles)
        if (!eqs_.get(h.cookie))
            return bad("weft_eq_poll: not an event queue (stale or invalid handle)");
    return Status::success();
}

int Portals::eq_ready(std::span<const weft_eq_t> handles)
{
    for (size_t i = 0; i < handles.size(); ++i) {
        Eq *eq = eqs_.get(handles[i].cookie);
        if (eq && eq->count > 0)
            return static_cast<int>(i);
    }
    return -1;
}

Status Portals::eq_take(weft_eq_t handle, weft_event_t *ev)
{
    Eq *eq = eqs_.get(handle.cookie);
    *ev = eq->ring[eq->head];
    eq->head = (eq->head + 1) % eq->ring.size();
    --eq->count;
    if (eq->dropped) {
        eq->dropped = false;
        return Status(WEFT_ERR_OVERFLOW, "weft_eq_poll: the event queue was full and dropped events; "
                                         "allocate it with a larger count");
    }
    return Status::success();
}

void Portals::post_event(Md *md, weft_event_kind_t kind, uint32_t initiator, uint32_t target,
                        unsigned portal, uint64_t bits, size_t rlength, size_t mlength, size_t offset,
                        uint64_t hdr_data, int status)
{
    if (!md || md->desc.eq.cookie == 0)
        return;
    Eq *eq = eqs_.get(md->desc.eq.cookie);
    if (!eq)
        return;   // freed while the MD lived: events have nowhere to go
    weft_event_t ev{};
    ev.type = kind;
    ev.initiator = initiator;
    ev.target = target;
    ev.portal = portal;
    ev.match_bits = bits;
    ev.rlength = rlength;
    ev.mlength = mlength;
    ev.offset = offset;
    ev.md.cookie = md->handle;
    ev.md_start = md->desc.start;
    ev.md_user_ptr = md->desc.user_ptr;
    ev.hdr_data = hdr_data;
    ev.status = status;
    ev.sequence = ++eq->sequence;
    if (eq->count == eq->ring.size()) {
        eq->dropped = true;
    } else {
        eq->ring[(eq->head + eq->count) % eq->ring.size()] = ev;
        ++eq->count;
        eq->last_md = md->handle;
    }
    if (eq->handler)
        eq->handler(&ev);
}

// ---------------------------------------------------------------- ME

Status Portals::me_attach(unsigned portal, uint32_t rank, uint64_t bits, uint64_t ignore,
                         weft_unlink_t unlink, weft_ins_pos_t pos, Me *relative_to, weft_me_t *out)
{
    if (Status st = check_portal("weft_me_attach", portal); !st.ok())
        return st;
    if (portal == WEFT_PT_TAGGED)
        return bad("weft_me_attach: portal " + std::to_string(portal) +
                   " (WEFT_PT_TAGGED) belongs to tagged messaging (weft_irecv); use portals 0.." +
                   std::to_string(WEFT_PT_TAGGED - 1));
    if (!out)
        return bad("weft_me_attach: me is NULL");
    if (rank != WEFT_RANK_ANY && rank >= job_size_)
        return bad("weft_me_attach: match rank " + std::to_string(rank) + " is not in the job (size " +
                   std::to_string(job_size_) + "; WEFT_RANK_ANY matches every rank)");
    uint64_t h;
    Me *me = mes_.alloc(&h);
    me->portal = portal;
    me->match_rank = rank;
    me->match_bits = bits;
    me->ignore_bits = ignore;
    me->unlink = unlink;
    Portal &pt = portals_[portal];
    if (relative_to) {
        if (pos == WEFT_INS_BEFORE) {
            me->next = relative_to;
            me->prev = relative_to->prev;
        } else {
            me->prev = relative_to;
            me->next = relative_to->next;
        }
    } else if (pos == WEFT_INS_BEFORE) {
        me->next = pt.head;
    } else {
        me->prev = pt.tail;
    }
    (me->prev ? me->prev->next : pt.head) = me;
    (me->next ? me->next->prev : pt.tail) = me;
    out->cookie = h;
    return Status::success();
}

Status Portals::me_insert(weft_me_t current, uint32_t rank, uint64_t bits, uint64_t ignore,
                         weft_unlink_t unlink, weft_ins_pos_t pos, weft_me_t *out)
{
    Me *cur = mes_.get(current.cookie);
    if (!cur)
        return bad("weft_me_insert: current is not a match entry (stale or invalid handle)");
    return me_attach(cur->portal, rank, bits, ignore, unlink, pos, cur, out);
}

void Portals::me_remove(Me *me)
{
    Portal &pt = portals_[me->portal];
    (me->prev ? me->prev->next : pt.head) = me->next;
    (me->next ? me->next->prev : pt.tail) = me->prev;
    mes_.free(me);
}

Status Portals::me_unlink(weft_me_t handle)
{
    Me *me = mes_.get(handle.cookie);
    if (!me)
        return bad("weft_me_unlink: not a match entry (stale or invalid handle)");
    if (Md *md = me->md) {
        me->unlink = WEFT_UNLINK;   // the ME goes with its MD
        if (md->pending > 0) {
            md->unlink_when_idle = true;
            return Status::success();
        }
        md_release(md, true);
        return Status::success();
    }
    me_remove(me);
    return Status::success();
}

Status Portals::portal_set_lazy(unsigned portal, bool lazy)
{
    if (Status st = check_portal("weft_portal_set_lazy", portal); !st.ok())
        return st;
    if (portal == WEFT_PT_TAGGED && !lazy)
        return bad("weft_portal_set_lazy: portal " + std::to_string(portal) +
                   " carries tagged messages and must stay lazy");
    portals_[portal].lazy = lazy;
    return Status::success();
}

// ---------------------------------------------------------------- MD

namespace {
Status check_desc(const char *fn, const weft_md_desc_t &d)
{
    if (!d.start && d.length > 0)
        return bad(std::string(fn) + ": start is NULL with length " + std::to_string(d.length));
    if (d.options & ~kKnownOptions)
        return bad(std::string(fn) + ": unknown option bits 0x" + [&] {
                       char b[16];
                       std::snprintf(b, sizeof b, "%x", d.options & ~kKnownOptions);
                       return std::string(b);
                   }());
    if (d.threshold < WEFT_MD_THRESH_INF)
        return bad(std::string(fn) + ": threshold " + std::to_string(d.threshold) +
                   " (give a count >= 0 or WEFT_MD_THRESH_INF)");
    return Status::success();
}
} // namespace

// A checked descriptor becomes an MD (attached or bound by the caller).
Status Portals::new_md(const char *fn, const weft_md_desc_t &desc, weft_unlink_t unlink, Md **out)
{
    if (Status st = check_desc(fn, desc); !st.ok())
        return st;
    if (desc.eq.cookie && !eqs_.get(desc.eq.cookie))
        return bad(std::string(fn) + ": desc.eq is not an event queue (stale or invalid handle)");
    uint64_t h;
    Md *md = mds_.alloc(&h);
    md->desc = desc;
    md->unlink = unlink;
    md->threshold = desc.threshold;
    *out = md;
    return Status::success();
}

Status Portals::md_attach(weft_me_t me_handle, const weft_md_desc_t &desc, weft_unlink_t unlink,
                          weft_md_t *out, Me **attached)
{
    Me *me = mes_.get(me_handle.cookie);
    if (!me)
        return bad("weft_md_attach: not a match entry (stale or invalid handle)");
    if (me->md)
        return bad("weft_md_attach: the match entry already has a memory descriptor");
    Md *md;
    if (Status st = new_md("weft_md_attach", desc, unlink, &md); !st.ok())
        return st;
    md->me = me;
    me->md = md;
    if (out)
        out->cookie = md->handle;
    *attached = me;
    return Status::success();
}

Status Portals::md_bind(const weft_md_desc_t &desc, weft_unlink_t unlink, weft_md_t *out)
{
    if (!out)
        return bad("weft_md_bind: md is NULL");
    Md *md;
    if (Status st = new_md("weft_md_bind", desc, unlink, &md); !st.ok())
        return st;
    out->cookie = md->handle;
    return Status::success();
}

Status Portals::md_unlink(weft_md_t handle)
{
    Md *md = mds_.get(handle.cookie);
    if (!md)
        return bad("weft_md_unlink: not a memory descriptor (stale or invalid handle)");
    if (md->pending > 0) {
        md->unlink_when_idle = true;   // released when its operations finish
        return Status::success();
    }
    md_release(md, true);
    return Status::success();
}

void Portals::md_used(Md *md)
{
    if (md->pending > 0)
        return;
    const bool used_up = md->threshold == 0 && md->unlink == WEFT_UNLINK;
    if (used_up || md->unlink_when_idle)
        md_release(md, md->unlink_when_idle);
}

void Portals::md_release(Md *md, bool explicit_unlink)
{
    if (md->desc.eq.cookie) {
        if (Eq *eq = eqs_.get(md->desc.eq.cookie)) {
            if (explicit_unlink) {
                post_event(md, WEFT_EVENT_UNLINK, my_rank_, my_rank_, md->me ? md->me->portal : 0, 0, 0, 0,
                           0, 0, WEFT_SUCCESS);
                if (eq->count > 0 && eq->last_md == md->handle)
                    eq->ring[(eq->head + eq->count - 1) % eq->ring.size()].unlinked = 1;
            } else if (eq->count > 0 && eq->last_md == md->handle) {
                // The MD's last event says it went away with it.
                eq->ring[(eq->head + eq->count - 1) % eq->ring.size()].unlinked = 1;
            }
        }
    }
    if (Request *r = md->request)
        r->md = nullptr;
    if (Me *me = md->me) {
        me->md = nullptr;
        if (me->unlink == WEFT_UNLINK)
            me_remove(me);
    }
    mds_.free(md);
}

// ---------------------------------------------------------------- matching

bool Portals::md_accepts(const Md &md, unsigned op, size_t rlength, size_t offset) const
{
    if (md.threshold == 0 || !(md.desc.options & op))
        return false;
    const size_t off = (md.desc.options & WEFT_MD_MANAGE_REMOTE) ? offset : md.local_offset;
    const size_t space = md.desc.length > off ? md.desc.length - off : 0;
    size_t fits = space;
    if (md.desc.options & WEFT_MD_MAX_SIZE)
        fits = std::min(fits, md.desc.max_size);
    return rlength <= fits || (md.desc.options & WEFT_MD_TRUNCATE);
}

Me *Portals::match(unsigned portal, uint32_t src, uint64_t bits, unsigned op, size_t rlength, size_t offset)
{
    for (Me *me = portals_[portal].head; me; me = me->next) {
        if (!me->md)
            continue;
        if (me->match_rank != WEFT_RANK_ANY && me->match_rank != src)
            continue;
        if (((me->match_bits ^ bits) & ~me->ignore_bits) != 0)
            continue;
        if (md_accepts(*me->md, op, rlength, offset))
            return me;
    }
    return nullptr;
}

void Portals::store_unexpected(const PutInfo &u, std::span<const std::byte> data)
{
    uint64_t h;
    Unexpected *q = unexpected_.alloc(&h);
    q->info = u;
    if (u.rkey_len) {
        std::memcpy(q->rkey.data(), u.rkey, u.rkey_len);
        q->info.rkey = q->rkey.data();
    }
    if (q->carried() <= kInlineUnexpected)
        std::memcpy(q->inline_data.data(), data.data(), q->carried());
    else
        q->heap_data.assign(data.begin(), data.end());
    Portal &pt = portals_[u.portal];
    (pt.uq_tail ? pt.uq_tail->next : pt.uq_head) = q;
    pt.uq_tail = q;
}

Unexpected *Portals::take_unexpected(unsigned portal, uint32_t rank, uint64_t bits, uint64_t ignore)
{
    Portal &pt = portals_[portal];
    Unexpected *prev = nullptr;
    for (Unexpected *u = pt.uq_head; u; prev = u, u = u->next) {
        if (!u->matches(rank, bits, ignore))
            continue;
        (prev ? prev->next : pt.uq_head) = u->next;
        if (pt.uq_tail == u)
            pt.uq_tail = prev;
        u->next = nullptr;
        return u;
    }
    return nullptr;
}

} // namespace weft::engine
