// SPDX-License-Identifier: BSD-3-Clause
// A pool of engine objects named by generational handles. Slots live in
// fixed chunks of 256 (stable addresses; growing allocates, steady state
// does not; finding a slot is two loads, cheaper than a deque's index),
// freed slots are reused last in, first out from a list threaded through
// the slots themselves, and every reuse bumps the slot's generation, so a
// stale handle (an object freed and its slot reused) is recognised instead
// of touching the new object. An object is reset when it is allocated, not
// again when freed (it is on every request's path).
//
// An object's own handle field is the slot's state: the handle while it
// is live, 0 once freed. So looking a handle up is one compare, and free()
// recognises a pointer that is not a live object of this pool (freed
// already, or not from it) by the same field, without a second look-up.
// alloc, get and free are inline: every tagged message passes through all
// three, and each call and return is a measurable part of its cost.
//
// Handle layout: kind (8 bits, never 0) | generation (24 bits) | slot index + 1 (32).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace weft::engine {

// Each pool starts a cache line of its own. Smaller than before the free
// list moved into the slots, the pools had shifted every later member of
// Portals and Engine (the peers, the posted list), and `weft_bench lat 8`
// measured 1.02x slower at an equal instruction count (interleaved A/B,
// 101 rounds); aligned, 1.005x and 0.995x paired in two runs of 101.
template <class T, uint8_t Kind>
class alignas(64) Pool {
    static_assert(Kind != 0, "a handle of kind 0 could be 0, the mark of a free slot");

public:
    // A fresh object (value-initialized) and its handle.
    T *alloc(uint64_t *handle)
    {
        const uint32_t idx = free_head_ != kNoSlot ? free_head_ : grow();
        Slot &s = slot(idx);
        free_head_ = s.next_free;
        if constexpr (requires(T &t) { t.reset(); })
            s.obj.reset();   // cheaper than a value-initialized copy
        else
            s.obj = T{};
        s.obj.handle = (uint64_t{Kind} << 56) | (uint64_t{s.gen & 0xffffffu} << 32) | (uint64_t{idx} + 1);
        *handle = s.obj.handle;
        ++live_;
        return &s.obj;
    }

    // Whether handle is of this pool's kind (live or not).
    static bool names(uint64_t handle) { return (handle >> 56) == Kind; }

    // The live object a handle names, or nullptr (wrong kind, freed, stale).
    T *get(uint64_t handle)
    {
        if (!names(handle))
            return nullptr;
        // Index 0 (a handle without a slot) wraps to 2^32 - 1, past size_.
        const uint32_t idx = static_cast<uint32_t>(handle) - 1;
        if (idx >= size_)
            return nullptr;
        Slot &s = slot(idx);
        return s.obj.handle == handle ? &s.obj : nullptr;
    }

    // T carries its own handle (set by alloc), which finds the slot. A
    // pointer that is not a live object of this pool (null, freed already,
    // an object on the stack) is left alone.
    void free(T *obj)
    {
        if (!obj || !names(obj->handle))
            return;
        const uint32_t idx = static_cast<uint32_t>(obj->handle) - 1;
        if (idx >= size_)
            return;
        Slot &s = slot(idx);
        if (&s.obj != obj)
            return;
        s.obj.handle = 0;
        ++s.gen;
        s.next_free = free_head_;
        free_head_ = idx;
        --live_;
    }

    size_t live() const { return live_; }

    // Visits every live object (teardown, failure of a peer).
    template <class F>
    void for_each(F &&f)
    {
        for (uint32_t i = 0; i < size_; ++i)
            if (Slot &s = slot(i); s.obj.handle != 0)
                f(&s.obj);
    }

private:
    static constexpr uint32_t kNoSlot = 0xffffffffu;
    struct Slot {
        T obj{};
        uint32_t gen = 1;
        uint32_t next_free = kNoSlot;      // while free: the next free slot
    };
    static constexpr uint32_t kChunk = 256, kChunkMask = kChunk - 1;
    Slot &slot(uint32_t idx) { return chunks_[idx >> 8][idx & kChunkMask]; }
    // A slot never used (its next_free is kNoSlot, so the free list stays
    // empty), in a new chunk when the last one is full.
    [[gnu::noinline]] uint32_t grow()
    {
        const uint32_t idx = size_++;
        if ((idx & kChunkMask) == 0)
            chunks_.push_back(std::make_unique<Slot[]>(kChunk));
        return idx;
    }
    std::vector<std::unique_ptr<Slot[]>> chunks_;
    uint32_t size_ = 0;                    // slots ever made
    uint32_t free_head_ = kNoSlot;         // the last slot freed
    size_t live_ = 0;
};

} // namespace weft::engine
