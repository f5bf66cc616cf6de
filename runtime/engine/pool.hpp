// A pool of engine objects named by generational handles. Slots live in a
// deque (stable addresses; growing allocates, steady state does not), freed
// slots are reused from a free list, and every reuse bumps the slot's
// generation, so a stale handle (an object freed and its slot reused) is
// recognised instead of touching the new object.
//
// Handle layout: kind (8 bits) | generation (24 bits) | slot index + 1 (32).
#pragma once

#include <cstdint>
#include <deque>
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
            idx = static_cast<uint32_t>(slots_.size());
            slots_.emplace_back();
        }
        Slot &s = slots_[idx];
        s.live = true;
        s.obj = T{};
        s.handle = (uint64_t{Kind} << 56) | (uint64_t{s.gen & 0xffffffu} << 32) | (uint64_t{idx} + 1);
        s.obj.handle = s.handle;
        *handle = s.handle;
        ++live_;
        return &s.obj;
    }

    // The live object a handle names, or nullptr (wrong kind, freed, stale).
    T *get(uint64_t handle)
    {
        if ((handle >> 56) != Kind)
            return nullptr;
        const uint64_t idx1 = handle & 0xffffffffu;
        if (idx1 == 0 || idx1 > slots_.size())
            return nullptr;
        Slot &s = slots_[idx1 - 1];
        return s.live && s.handle == handle ? &s.obj : nullptr;
    }

    // T carries its own handle (set by alloc), which finds the slot.
    void free(T *obj)
    {
        if (!obj || !get(obj->handle))
            return;
        const uint32_t idx = static_cast<uint32_t>((obj->handle & 0xffffffffu) - 1);
        Slot *s = &slots_[idx];
        s->live = false;
        ++s->gen;
        s->obj = T{};
        free_.push_back(idx);
        --live_;
    }

    size_t live() const { return live_; }

    // Visits every live object (teardown, failure of a peer).
    template <class F>
    void for_each(F &&f)
    {
        for (Slot &s : slots_)
            if (s.live)
                f(&s.obj);
    }

private:
    struct Slot {
        T obj{};
        uint64_t handle = 0;
        uint32_t gen = 1;
        bool live = false;
    };
    std::deque<Slot> slots_;
    std::vector<uint32_t> free_;
    size_t live_ = 0;
};

} // namespace weft::engine
