// The business card of btl/scif and the remote key of its registrations.
// Card: where this process listens (its scif port) and who it is (uid, pid),
// so a peer decides reachability (same node and user, not itself) before
// connecting. Both are validated byte for byte before use.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace weft::btl_scif {

struct Card {
    uint32_t magic;
    uint16_t version;
    uint16_t port;
    uint32_t uid;
    uint32_t pid;
};
inline constexpr uint32_t kCardMagic = 0x53434946;   // "SCIF"
inline constexpr uint16_t kCardVersion = 1;

// The card in bytes, or false if bytes are not a card of this version.
bool parse_card(const void *bytes, size_t len, Card *out);

struct Rkey {
    uint32_t magic;
    uint32_t pid;     // the owner: a key is valid toward that process only
    uint64_t base;
    uint64_t length;
};
inline constexpr uint32_t kRkeyMagic = 0x524b4559;   // "RKEY"

bool parse_rkey(const void *bytes, size_t len, Rkey *out);

} // namespace weft::btl_scif
