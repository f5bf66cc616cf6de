// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target of the engine's wire parser (runtime/engine/wire.cc):
// any byte string is either a frame whose parts lie inside it, or refused
// with a reason. Built by `make fuzz` with clang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft::engine::wire::Frame f;
    std::string why;
    std::span<const std::byte> bytes(reinterpret_cast<const std::byte *>(data), size);
    if (weft::engine::wire::parse(bytes, &f, &why)) {
        if (f.header.size() + f.payload.size() > size)
            std::abort();
    } else if (why.empty()) {
        std::abort();
    }
    return 0;
}
