// SPDX-License-Identifier: BSD-3-Clause
// The portals objects: event queues, match entries and memory descriptors,
// the portal table with each portal's match list and (lazy portals)
// unexpected queue, and the events they post. It knows no peer and no
// transport: the engine (engine.hpp) moves data into and out of them.
#pragma once

#include <weft.h>

#include <array>
#include <cstdint>
#include <span>

#include "core/status.hpp"
#include "engine/objects.hpp"
#include "engine/pool.hpp"

namespace weft::engine {

// An error naming fn unless portal is one of the table's.
Status check_portal(const char *fn, unsigned portal);

class Portals {
public:
    explicit Portals(uint32_t my_rank, uint32_t job_size) : my_rank_(my_rank), job_size_(job_size) {}

    // weft.h's calls; errors carry a message.
    Status eq_alloc(unsigned count, weft_eq_handler_t handler, weft_eq_t *eq);
    Status eq_free(weft_eq_t eq);
    // weft_eq_poll without the wait: every handle valid; the first queue
    // with an event (-1: none); that event taken.
    Status eq_check(std::span<const weft_eq_t> eqs);
    int eq_ready(std::span<const weft_eq_t> eqs);
    Status eq_take(weft_eq_t eq, weft_event_t *ev);
    Status me_attach(unsigned portal, uint32_t rank, uint64_t bits, uint64_t ignore, weft_unlink_t unlink,
                     weft_ins_pos_t pos, Me *relative_to, weft_me_t *out);
    Status me_insert(weft_me_t current, uint32_t rank, uint64_t bits, uint64_t ignore,
                     weft_unlink_t unlink, weft_ins_pos_t pos, weft_me_t *out);
    Status me_unlink(weft_me_t me);
    Status portal_set_lazy(unsigned portal, bool lazy);
    // weft_md_attach without the unexpected messages it may take (the
    // engine delivers those): *attached is the match entry.
    Status md_attach(weft_me_t me, const weft_md_desc_t &desc, weft_unlink_t unlink, weft_md_t *out,
                     Me **attached);
    Status md_bind(const weft_md_desc_t &desc, weft_unlink_t unlink, weft_md_t *out);
    Status md_unlink(weft_md_t md);

    // A checked descriptor becomes an MD (attached or bound by the caller).
    Status new_md(const char *fn, const weft_md_desc_t &desc, weft_unlink_t unlink, Md **out);
    Md *md(uint64_t handle) { return mds_.get(handle); }
    Portal &portal(unsigned index) { return portals_[index]; }
    const Portal &portal(unsigned index) const { return portals_[index]; }
    bool has_unexpected(unsigned portal) const { return portals_[portal].uq_head != nullptr; }

    // The first match entry of portal whose MD takes the operation.
    Me *match(unsigned portal, uint32_t src, uint64_t bits, unsigned op, size_t rlength, size_t offset);
    bool md_accepts(const Md &md, unsigned op, size_t rlength, size_t offset) const;
    // A put nothing wanted yet, kept (header, key and eager data copied)
    // at the end of u.portal's unexpected queue.
    void store_unexpected(const PutInfo &u, std::span<const std::byte> data);
    // Takes the oldest arrived put of portal that matches.
    Unexpected *take_unexpected(unsigned portal, uint32_t rank, uint64_t bits, uint64_t ignore);
    // A taken put, delivered: its slot back.
    void free_unexpected(Unexpected *u) { unexpected_.free(u); }
    void post_event(Md *md, weft_event_kind_t kind, uint32_t initiator, uint32_t target, unsigned portal,
                    uint64_t bits, size_t rlength, size_t mlength, size_t offset, uint64_t hdr_data,
                    int status);
    void md_used(Md *md);                  // threshold bookkeeping after an operation
    void md_release(Md *md, bool explicit_unlink);

private:
    void me_remove(Me *me);

    uint32_t my_rank_, job_size_;
    std::array<Portal, WEFT_MAX_PORTALS> portals_{};
    Pool<Eq, 1> eqs_;
    Pool<Me, 2> mes_;
    Pool<Md, 3> mds_;
    Pool<Unexpected, 6> unexpected_;
};

} // namespace weft::engine
