// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for btl/scif's control messages (scif_ctrl.hpp): the
// connect handshake, window notices, wake-ups and the bounce-buffer RMA
// requests/replies, as parse_ctrl() sees them from a socket. A message that
// parses must re-encode to the same bytes (nothing invented, nothing lost).
// The same bytes go to btl/scif's card and hello parsers (a peer's card from
// the modex, a stranger's hello from the ring): a hello that parses must
// name a job id inside the input and within its bound.
// Build: make fuzz (needs clang with -fsanitize=fuzzer); not part of make check.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "btl_scif_wire.hpp"
#include "scif_ctrl.hpp"

using namespace weft::scif;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // An exact-size heap copy, so ASan catches a read past the message.
    std::vector<std::byte> in(size);
    if (size)
        std::memcpy(in.data(), data, size);
    weft::btl_scif::Card card;
    weft::btl_scif::parse_card(in.data(), in.size(), &card);
    weft::btl_scif::HelloHead head;
    const char *job = nullptr;
    size_t job_len = 0;
    if (weft::btl_scif::parse_hello(in.data(), in.size(), &head, &job, &job_len) &&
        (job_len > weft::btl_scif::kMaxJobId || job < reinterpret_cast<const char *>(in.data()) ||
         job + job_len != reinterpret_cast<const char *>(in.data()) + in.size()))
        __builtin_trap();
    CtrlMsg msg;
    if (parse_ctrl(std::span<const std::byte>(in.data(), in.size()), &msg) != 0)
        return 0;
    std::byte again[kCtrlMax];
    const size_t n = encode_ctrl(msg, std::span<std::byte, kCtrlMax>(again, kCtrlMax));
    if (n != size || std::memcmp(again, in.data(), n) != 0)
        __builtin_trap();
    return 0;
}
