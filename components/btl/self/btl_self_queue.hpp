// SPDX-License-Identifier: BSD-3-Clause
// The event queue of btl/self: everything a send, put/get, connect or
// disconnect produces is queued here and delivered by progress(), in order,
// because the btl contract allows upcalls only from progress().
//
// Events live in fixed cells taken from a free list that grows in slabs and
// never shrinks before finalize, so the small-message path allocates nothing
// in steady state. A payload larger than a cell's inline bytes gets its own
// buffer, owned by the cell until it is released.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include <weft/btl.h>

namespace weft::btl_self {

// Inline payload bytes per cell: the largest sendi() and the threshold above
// which send() allocates. 256 keeps a cell within a few cache lines.
inline constexpr size_t kInlineBytes = 256;

enum class EventKind : unsigned char { message, state, rdma_done };

struct Event {
    Event *next = nullptr;            // FIFO or free-list link; cells are owned by slabs
    EventKind kind = EventKind::message;
    bool counted = false;             // counts against the queue limit (data-path events)
    uint8_t am_id = 0;
    weft_btl_ep_state_t state = WEFT_BTL_EP_CONNECTING;
    int status = WEFT_SUCCESS;
    weft_btl_endpoint_t *ep = nullptr;
    weft_btl_rdma_cb_t rdma_cb = nullptr;
    void *rdma_ctx = nullptr;
    size_t length = 0;
    std::unique_ptr<std::byte[]> large;   // only for payloads above kInlineBytes
    alignas(std::max_align_t) std::array<std::byte, kInlineBytes> inline_bytes{};

    // Room for a payload of len bytes: the inline bytes or a new buffer.
    // Empty span with len > 0 means the allocation failed.
    std::span<std::byte> reserve(size_t len);
    std::span<const std::byte> payload() const;
};

class EventQueue {
public:
    // limit: how many counted events may wait before acquire() says AGAIN.
    EventQueue(size_t limit, size_t cells_per_slab);

    // A clean cell, or WEFT_ERR_AGAIN (counted and the limit is reached) or
    // WEFT_ERR_NO_MEMORY. The cell is not queued until push().
    int acquire(bool counted, Event **out);
    void push(Event *e);
    // The oldest event, or nullptr.
    Event *pop();
    // Returns a popped (or never pushed) cell to the free list, dropping any
    // large buffer it owns.
    void release(Event *e);
    size_t size() const { return queued_; }

private:
    int grow();

    size_t limit_;
    size_t cells_per_slab_;
    std::vector<std::unique_ptr<Event[]>> slabs_;
    Event *free_ = nullptr;
    Event *head_ = nullptr;
    Event *tail_ = nullptr;
    size_t queued_ = 0;
    size_t counted_in_use_ = 0;   // acquired or queued counted cells
};

} // namespace weft::btl_self
