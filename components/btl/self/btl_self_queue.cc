// SPDX-License-Identifier: BSD-3-Clause
#include "btl_self_queue.hpp"

#include <new>

namespace weft::btl_self {

std::span<std::byte> Event::reserve(size_t len)
{
    if (len <= inline_bytes.size()) {
        length = len;
        return {inline_bytes.data(), len};
    }
    large.reset(new (std::nothrow) std::byte[len]);
    if (!large)
        return {};
    length = len;
    return {large.get(), len};
}

std::span<const std::byte> Event::payload() const
{
    return {large ? large.get() : inline_bytes.data(), length};
}

EventQueue::EventQueue(size_t limit, size_t cells_per_slab)
    : limit_(limit), cells_per_slab_(cells_per_slab ? cells_per_slab : 1)
{
}

int EventQueue::grow()
{
    // Slabs are allocated outside the data path's steady state; a failure
    // becomes a status code, never an exception through the C ABI.
    try {
        slabs_.reserve(slabs_.size() + 1);
        auto slab = std::make_unique<Event[]>(cells_per_slab_);
        for (size_t i = 0; i < cells_per_slab_; ++i) {
            slab[i].next = free_;
            free_ = &slab[i];
        }
        slabs_.push_back(std::move(slab));
    } catch (const std::bad_alloc &) {
        return WEFT_ERR_NO_MEMORY;
    }
    return WEFT_SUCCESS;
}

int EventQueue::acquire(bool counted, Event **out)
{
    *out = nullptr;
    if (counted && counted_in_use_ >= limit_)
        return WEFT_ERR_AGAIN;
    if (!free_)
        if (int rc = grow(); rc != WEFT_SUCCESS)
            return rc;
    Event *e = free_;
    free_ = e->next;
    e->next = nullptr;
    e->counted = counted;
    if (counted)
        ++counted_in_use_;
    *out = e;
    return WEFT_SUCCESS;
}

void EventQueue::push(Event *e)
{
    e->next = nullptr;
    if (tail_)
        tail_->next = e;
    else
        head_ = e;
    tail_ = e;
    ++queued_;
}

Event *EventQueue::pop()
{
    Event *e = head_;
    if (!e)
        return nullptr;
    head_ = e->next;
    if (!head_)
        tail_ = nullptr;
    e->next = nullptr;
    --queued_;
    return e;
}

void EventQueue::release(Event *e)
{
    if (e->counted)
        --counted_in_use_;
    e->large.reset();
    e->length = 0;
    e->kind = EventKind::message;
    e->counted = false;
    e->ep = nullptr;
    e->rdma_cb = nullptr;
    e->rdma_ctx = nullptr;
    e->status = WEFT_SUCCESS;
    e->next = free_;
    free_ = e;
}

} // namespace weft::btl_self
