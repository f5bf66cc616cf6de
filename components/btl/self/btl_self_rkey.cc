// SPDX-License-Identifier: BSD-3-Clause
#include "btl_self_rkey.hpp"

#include <cstring>
#include <new>

namespace weft::btl_self {

namespace {

constexpr uint32_t kRkeyMagic = 0x57534b31;   // "WSK1"

// The key as stored in weft_btl_reg_t::rkey (host byte order: the key never
// leaves the process for self).
struct RkeyWire {
    uint32_t magic;
    uint32_t id;
    uint64_t base;
    uint64_t length;
};
static_assert(sizeof(RkeyWire) <= sizeof(weft_btl_reg_t::rkey));

bool decode(const void *rkey, size_t rkey_len, RkeyWire *out)
{
    if (!rkey || rkey_len != sizeof(RkeyWire))
        return false;
    std::memcpy(out, rkey, sizeof *out);
    return out->magic == kRkeyMagic;
}

} // namespace

int Registrations::add(void *addr, size_t len, weft_btl_reg_t *reg)
{
    if (!WEFT_HAS_MEMBER(reg, weft_btl_reg_t, module_ctx) || (!addr && len > 0))
        return WEFT_ERR_BAD_PARAM;
    uint32_t id = next_id_++;
    if (id == 0)   // wrapped: 0 is never a valid id
        id = next_id_++;
    try {
        regions_.emplace(id, Region{static_cast<std::byte *>(addr), len});
    } catch (const std::bad_alloc &) {
        return WEFT_ERR_NO_MEMORY;
    }
    RkeyWire key{kRkeyMagic, id, reinterpret_cast<uintptr_t>(addr), len};
    reg->addr = addr;
    reg->length = len;
    std::memset(reg->rkey, 0, sizeof reg->rkey);
    std::memcpy(reg->rkey, &key, sizeof key);
    reg->rkey_len = sizeof key;
    reg->module_ctx = nullptr;
    return WEFT_SUCCESS;
}

const Registrations::Region *Registrations::lookup(const void *rkey, size_t rkey_len) const
{
    RkeyWire key{};
    if (!decode(rkey, rkey_len, &key))
        return nullptr;
    auto it = regions_.find(key.id);
    if (it == regions_.end())
        return nullptr;
    const Region &r = it->second;
    if (reinterpret_cast<uintptr_t>(r.base) != key.base || r.length != key.length)
        return nullptr;
    return &r;
}

int Registrations::remove(const weft_btl_reg_t *reg)
{
    if (!WEFT_HAS_MEMBER(reg, weft_btl_reg_t, rkey_len) || !lookup(reg->rkey, reg->rkey_len))
        return WEFT_ERR_NOT_FOUND;
    RkeyWire key{};
    decode(reg->rkey, reg->rkey_len, &key);
    regions_.erase(key.id);
    return WEFT_SUCCESS;
}

int Registrations::resolve(const void *rkey, size_t rkey_len, uint64_t remote_addr, size_t len,
                           std::byte **out) const
{
    *out = nullptr;
    const Region *r = lookup(rkey, rkey_len);
    if (!r)
        return WEFT_ERR_BAD_PARAM;
    const uint64_t base = reinterpret_cast<uintptr_t>(r->base);
    // Written so that no sum can overflow: offset first, then the room left.
    if (remote_addr < base || remote_addr - base > r->length || len > r->length - (remote_addr - base))
        return WEFT_ERR_BAD_PARAM;
    *out = r->base + (remote_addr - base);
    return WEFT_SUCCESS;
}

} // namespace weft::btl_self
