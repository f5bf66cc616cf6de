// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the udcm cpc's UD messages (udcm_wire.hpp), as
// decode() sees them after the GRH of a received datagram. A message that
// decodes must re-encode to the same bytes (nothing invented, nothing lost).
// Build: make fuzz (needs clang with -fsanitize=fuzzer); not part of make check.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "udcm_wire.hpp"

using namespace weft::openib::udcm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // An exact-size heap copy, so ASan catches a read past the message.
    std::vector<uint8_t> in(data, data + size);
    Message msg;
    std::string why;
    if (!decode(std::span<const uint8_t>(in.data(), in.size()), &msg, &why)) {
        if (why.empty())
            __builtin_trap();   // every refusal says why
        return 0;
    }
    uint8_t again[kMaxMessageBytes];
    const size_t n = encode(msg, std::span<uint8_t, kMaxMessageBytes>(again));
    if (n != size || std::memcmp(again, in.data(), n) != 0)
        __builtin_trap();
    return 0;
}
