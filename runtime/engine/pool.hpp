// SPDX-License-Identifier: BSD-3-Clause
// A pool of engine objects named by generational handles. Slots live in
// fixed chunks of 256 (stable addresses; growing allocates, steady state
// does not; finding a slot is two loads, cheaper than a deque's index),
// freed slots are reused from a free list, and every reuse bumps the slot's
// generation, so a stale handle (an object freed and its slot reused) is
// recognised instead of touching the new object. An object is reset when
// it is allocated, not again when freed (it is on every request's path).
//
// Handle layout: kind (8 bits) | generation (24 bits) | slot index + 1 (32).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace weft::engine {

template <class T, uint8_t Kind>
class Pool {
public:
    // A fresh object (value-initialized) and its handle.
    T *alloc(uint64_t *handle)
    {
        uint32_t idx;
        if (!free_.empty()) {
            idx = free_.back();
            free_.pop_back();
        } else {
            idx = size_++;
            if ((idx & kChunkMask) == 0)
                chunks_.push_back(std::make_unique<Slot[]>(kChunk));
        }
        Slot &s = slot(idx);
        s.live = true;
        if constexpr (requires(T &t) { t.reset(); })
            s.obj.reset();   // cheaper than a value-initialized copy
        else
            s.obj = T{};
        s.handle = (uint64_t{Kind} << 56) | (uint64_t{s.gen & 0xffffffu} << 32) | (uint64_t{idx} + 1);
        s.obj.handle = s.handle;
        *handle = s.handle;
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
        const uint64_t idx1 = handle & 0xffffffffu;
        if (idx1 == 0 || idx1 > size_)
            return nullptr;
        Slot &s = slot(static_cast<uint32_t>(idx1 - 1));
        return s.live && s.handle == handle ? &s.obj : nullptr;
    }

    // T carries its own handle (set by alloc), which finds the slot.
    void free(T *obj)
    {
        if (!obj || !get(obj->handle))
            return;
        const uint32_t idx = static_cast<uint32_t>((obj->handle & 0xffffffffu) - 1);
        Slot *s = &slot(idx);
        s->live = false;
        ++s->gen;
        free_.push_back(idx);
        --live_;
    }

    size_t live() const { return live_; }

    // Visits every live object (teardown, failure of a peer).
    template <class F>
    void for_each(F &&f)
    {
        for (uint32_t i = 0; i < size_; ++i)
            if (Slot &s = slot(i); s.live)
                f(&s.obj);
    }

private:
    struct Slot {
        T obj{};
        uint64_t handle = 0;
        uint32_t gen = 1;
        bool live = false;
    };
    static constexpr uint32_t kChunk = 256, kChunkMask = kChunk - 1;
    Slot &slot(uint32_t idx) { return chunks_[idx >> 8][idx & kChunkMask]; }
    std::vector<std::unique_ptr<Slot[]>> chunks_;
    uint32_t size_ = 0;                    // slots ever made
    std::vector<uint32_t> free_;
    size_t live_ = 0;
};

} // namespace weft::engine
