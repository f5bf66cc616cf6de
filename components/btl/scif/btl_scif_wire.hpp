// SPDX-License-Identifier: BSD-3-Clause
// The business card of btl/scif and the remote key of its registrations.
// Card: where this process listens (its scif port) and who it is (uid, pid),
// so a peer decides reachability (same node and user, not itself) before
// connecting, and a per-process secret a connector presents in its hello
// (the acceptor also checks that the connecting pid is the card's). Both are
// validated byte for byte before use.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace weft::btl_scif {

inline constexpr size_t kSecretBytes = 16;

struct Card {
    uint32_t magic;
    uint16_t version;
    uint16_t port;
    uint32_t uid;
    uint32_t pid;
    uint8_t secret[kSecretBytes];
};
static_assert(sizeof(Card) == 32, "the card has no padding");
inline constexpr uint32_t kCardMagic = 0x53434946;   // "SCIF"
inline constexpr uint16_t kCardVersion = 2;

// The connector's first ring message (kHello): who it is, the acceptor's
// secret from the acceptor's card, then its job id (up to kMaxJobId bytes).
struct HelloHead {
    uint32_t rank;
    uint8_t secret[kSecretBytes];
};
inline constexpr size_t kMaxJobId = 255;

// The hello in bytes (job id: the rest), or false if its length is out of
// bounds.
bool parse_hello(const void *bytes, size_t len, HelloHead *head, const char **job, size_t *job_len);

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
