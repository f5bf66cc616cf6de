// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the btl/tcp wire parsers: a byte stream is cut into
// frames the way a link reads it; cards and handshakes get the same bytes.
// Build: make fuzz (needs clang with -fsanitize=fuzzer); not part of make check.
#include <cstddef>
#include <cstdint>
#include <span>

#include "btl_tcp_wire.hpp"

using namespace weft::btl_tcp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::span<const std::byte> in(reinterpret_cast<const std::byte *>(data), size);
    Card card;
    (void)decode_card(in, &card);
    Hello hello;
    (void)decode_hello(in.first(size < kHelloBytes ? size : kHelloBytes), &hello);
    // Frames back to back, with a small limit so oversize claims are common.
    size_t at = 0;
    while (size - at >= kFrameHeaderBytes) {
        FrameHeader h, fast;
        const bool valid = decode_frame(in.subspan(at, kFrameHeaderBytes), 4096, &h).empty();
        // The receive path's inline check must agree with the parser.
        if (frame_valid(in.subspan(at, kFrameHeaderBytes), 4096, &fast) != valid)
            __builtin_trap();
        if (!valid)
            break;
        at += kFrameHeaderBytes;
        if (h.len > size - at)
            break;   // truncated payload: a link waits for more
        at += h.len;
    }
    return 0;
}
