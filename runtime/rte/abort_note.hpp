// SPDX-License-Identifier: BSD-3-Clause
// The note a weft rank appends to its PMIx_Abort message when it has seen
// peers fail: " [failed peers: 0,3]". weftrun reads it back to tell a
// survivor's abort (a consequence) from the peer's own death (the cause);
// other launchers just print it, which tells the reader the same.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace weft::rt {

inline constexpr const char *kFailedPeersOpen = " [failed peers: ";

inline std::string failed_peers_note(std::span<const uint32_t> ranks)
{
    if (ranks.empty())
        return {};
    std::string s = kFailedPeersOpen;
    for (size_t i = 0; i < ranks.size(); ++i)
        s += (i ? "," : "") + std::to_string(ranks[i]);
    return s + "]";
}

// The ranks of a trailing note, or none when the message does not end with
// one (a message of another program).
inline std::vector<uint32_t> parse_failed_peers(const std::string &msg)
{
    const size_t at = msg.rfind(kFailedPeersOpen);
    if (at == std::string::npos || msg.empty() || msg.back() != ']')
        return {};
    std::vector<uint32_t> out;
    const char *p = msg.c_str() + at + std::char_traits<char>::length(kFailedPeersOpen);
    const char *end = msg.c_str() + msg.size() - 1;
    while (p < end) {
        char *next = nullptr;
        const unsigned long v = std::strtoul(p, &next, 10);
        if (next == p || (next != end && *next != ',') || v > UINT32_MAX)
            return {};
        out.push_back(static_cast<uint32_t>(v));
        p = next == end ? end : next + 1;
    }
    return out;
}

} // namespace weft::rt
