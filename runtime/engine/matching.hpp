// SPDX-License-Identifier: BSD-3-Clause
// Tag matching on portal WEFT_PT_TAGGED, by MPI's rules: an arriving
// message takes the oldest posted receive whose source and tag it
// satisfies; a new receive takes the oldest arrived message it satisfies,
// before it is posted. Match bits are the context (high 32 bits) and the
// tag (low 32); a receive for any tag ignores the low half, one for any
// source takes every rank.
//
// Two queues: receives waiting for a message (the posted list, kept here in
// posting order), and messages waiting for a receive (the tagged portal's
// unexpected queue, kept by Portals with the other lazy portals' queues, in
// arrival order). A posted receive has no match entry and no MD; only a
// message that needs the portal machinery (a rendezvous header or a Put)
// gives it one (Engine::land_by_md).
//
// The receive fast path, an eager tagged frame that finds its receive
// (land_tagged_frame: match, copy, complete), is inline here, so that the
// engine's on_am (tagged.cc) compiles into one function with no call left;
// matching.cc has the rest. Matching never sends: the engine returns the
// eager credit (Peers::consume_credit) of what it landed.
#pragma once

#include <weft.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include <weft/component_util.hpp>

#include "engine/objects.hpp"
#include "engine/portals.hpp"
#include "engine/wire.hpp"

namespace weft::engine {

// The match bits of a message sent with tag in context.
inline uint64_t tag_bits(uint32_t context, int32_t tag)
{
    return (uint64_t{context} << 32) | static_cast<uint32_t>(tag);
}

class Matching {
public:
    explicit Matching(Portals &portals) : portals_(portals) {}
    Matching(const Matching &) = delete;
    Matching &operator=(const Matching &) = delete;

    // What a receive for source and tag (WEFT_ANY_SOURCE, WEFT_ANY_TAG
    // allowed) in context matches: r's source, bits and ignore.
    static void set_key(Request *r, uint32_t source, int32_t tag, uint32_t context)
    {
        r->source = source;
        r->bits = tag_bits(context, tag == WEFT_ANY_TAG ? 0 : tag);
        r->ignore = tag == WEFT_ANY_TAG ? 0xffffffffull : 0;
    }

    // ---- receives waiting for a message
    bool any_posted() const { return posted_head_ != nullptr; }
    // r (its key set) waits at the end of the posted list.
    void post(Request *r)
    {
        r->posted = true;
        r->next = nullptr;
        r->prev = posted_tail_;
        (posted_tail_ ? posted_tail_->next : posted_head_) = r;
        posted_tail_ = r;
    }
    void unpost(Request *r)
    {
        (r->prev ? r->prev->next : posted_head_) = r->next;
        (r->next ? r->next->prev : posted_tail_) = r->prev;
        r->prev = r->next = nullptr;
        r->posted = false;
    }
    // The oldest posted receive a message from src with bits matches, left
    // on the list; null if none.
    Request *find_posted(uint32_t src, uint64_t bits) const
    {
        for (Request *r = posted_head_; r; r = r->next)
            if ((r->source == WEFT_ANY_SOURCE || r->source == src) && ((r->bits ^ bits) & ~r->ignore) == 0)
                return r;
        return nullptr;
    }
    // The same, off the list.
    Request *match_posted(uint32_t src, uint64_t bits)
    {
        Request *r = find_posted(src, bits);
        if (r)
            unpost(r);
        return r;
    }
    // A posted receive withdrawn (weft_cancel): done with WEFT_ERR_CANCELED.
    // False when it is no longer posted (matched already, or a send).
    bool cancel(Request *r);
    // rank failed: the receives only it could satisfy end with error.
    void fail_source(uint32_t rank, int error);

    // ---- landing
    // An eager message's data into r (matched): copied up to r's length,
    // r done, TRUNCATED when the message was longer.
    static void land_eager(Request *r, uint32_t src, uint64_t bits, std::span<const std::byte> data)
    {
        const size_t n = std::min(data.size(), r->len);
        weft::cutil::copy_bytes(r->buf, data.data(), n);
        r->done = true;
        r->status.source = src;
        r->status.tag = static_cast<int32_t>(bits & 0xffffffffu);
        r->status.count = n;
        r->status.error = n < data.size() ? WEFT_ERR_TRUNCATED : WEFT_SUCCESS;
    }
    // The on_am fast path: a Tagged frame (header and payload) from src
    // that matches a posted receive lands in it (the caller credits src
    // with the payload, len - sizeof(wire::Tagged)). False, nothing done,
    // when it is not such a frame or matches nothing: the general path
    // then parses it.
    bool land_tagged_frame(uint32_t src, const void *frame, size_t len)
    {
        wire::Tagged h;
        if (!posted_head_ || len < sizeof h)
            return false;
        std::memcpy(&h, frame, sizeof h);
        if (h.type != static_cast<uint8_t>(wire::Type::Tagged))
            return false;   // the general path parses (and rejects) it
        const uint64_t bits = h.match_bits();
        Request *r = match_posted(src, bits);
        if (!r)
            return false;
        land_eager(r, src, bits, {static_cast<const std::byte *>(frame) + sizeof h, len - sizeof h});
        return true;
    }

    // ---- messages waiting for a receive (matching.cc)
    // The oldest arrived message r's key matches, off the queue (the caller
    // lands it and gives it back: Portals::free_unexpected); null if none.
    Unexpected *take_arrived(const Request &r);
    // The oldest arrived message a receive for source and tag in context
    // would take, left where it is (weft_iprobe); null if none.
    const Unexpected *probe(uint32_t source, int32_t tag, uint32_t context) const;

private:
    Portals &portals_;
    Request *posted_head_ = nullptr, *posted_tail_ = nullptr;
};

} // namespace weft::engine
