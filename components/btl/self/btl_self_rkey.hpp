// SPDX-License-Identifier: BSD-3-Clause
// Memory registrations of btl/self and the remote keys that name them.
//
// An rkey carries the registration id with the registered base and length.
// put/get resolve a target range only through a live registration whose
// base and length match the key, and only when the whole range lies inside
// it: a stale, forged or truncated key, or a range that sticks out, is
// WEFT_ERR_BAD_PARAM before any byte is touched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include <weft/btl.h>

namespace weft::btl_self {

class Registrations {
public:
    // Registers [addr, addr + len) and fills reg (addr, length, rkey).
    int add(void *addr, size_t len, weft_btl_reg_t *reg);
    // Forgets the registration described by reg.
    int remove(const weft_btl_reg_t *reg);
    // The local address of [remote_addr, remote_addr + len) inside the
    // registration named by rkey, or WEFT_ERR_BAD_PARAM.
    int resolve(const void *rkey, size_t rkey_len, uint64_t remote_addr, size_t len,
                std::byte **out) const;

private:
    struct Region {
        std::byte *base;
        size_t length;
    };
    // The live region the key names, or nullptr.
    const Region *lookup(const void *rkey, size_t rkey_len) const;

    std::unordered_map<uint32_t, Region> regions_;
    uint32_t next_id_ = 1;
};

} // namespace weft::btl_self
