// SPDX-License-Identifier: BSD-3-Clause
// btl/tcp wire formats: the business card, the connection handshake and the
// per-message frame header. Everything read from the network or the modex
// goes through the parsers here, which check lengths, versions and ids
// before anything else looks at the bytes (they are fuzzed:
// tests/fuzz/tcp_frame_fuzz.cc). Integers are little-endian on the wire
// (memcpy of host order: every platform weft builds on is little-endian,
// checked below).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace weft::btl_tcp {

static_assert(std::endian::native == std::endian::little, "btl/tcp wire format assumes little-endian");

inline constexpr uint16_t kProtocolVersion = 1;
inline constexpr size_t kSecretBytes = 16;
inline constexpr size_t kJobIdBytes = 64;
inline constexpr size_t kMaxCardEntries = 32;

// ---- card -------------------------------------------------------------------

struct CardEntry {
    uint8_t family = 0;      // 4 or 6
    uint8_t prefix = 0;
    bool loopback = false;
    uint16_t port = 0;       // host order here
    uint8_t addr[16] = {};
};

struct Card {
    uint8_t secret[kSecretBytes] = {};
    std::vector<CardEntry> entries;
};

std::vector<std::byte> encode_card(const Card &card);
// Empty string when bytes are a valid card, else what is wrong with them.
std::string decode_card(std::span<const std::byte> bytes, Card *out);

// ---- handshake --------------------------------------------------------------

enum class HelloKind : uint16_t {
    hello = 1,        // connector -> acceptor
    accept = 2,       // acceptor -> connector: this connection carries the endpoint
    duplicate = 3,    // both sides connected at once; this one loses (see module)
    refuse = 4        // the acceptor's runtime refused the peer
};

// Fixed size, so a short or oversized handshake is recognised by length.
struct Hello {
    HelloKind kind = HelloKind::hello;
    uint32_t rank = 0;                   // the sender's rank
    uint32_t link = 0;                   // which link of the endpoint (0..links-1)
    uint32_t links = 1;                  // how many the connector opens
    uint8_t secret[kSecretBytes] = {};   // hello: the acceptor's secret from its card
    char job_id[kJobIdBytes] = {};       // NUL padded
};
inline constexpr size_t kHelloBytes = 4 + 2 + 2 + 4 + 4 + 4 + kSecretBytes + kJobIdBytes;

void encode_hello(const Hello &h, std::byte out[kHelloBytes]);
// Empty when valid (magic, version, kind, NUL in job id), else why not.
std::string decode_hello(std::span<const std::byte> bytes, Hello *out);

// ---- frames -----------------------------------------------------------------

// Every frame travels whole on one link of an endpoint. Frames sent in
// order go on link 0; frames the runtime marked unordered may take any
// link (btl.h "Ordering"), so nothing is split across links here.
enum : uint8_t {
    kFrameMessage = 0,   // an active message: am_id + payload
    kFrameClose = 1      // orderly disconnect of this link: nothing follows on it
};

// 12 bytes before every payload: length, am id, kind, check bytes, length again.
struct FrameHeader {
    uint32_t len = 0;    // payload bytes following this header
    uint8_t am_id = 0;
    uint8_t kind = kFrameMessage;
    uint32_t total = 0;  // = len (a second copy that catches a stream out of sync)
};
inline constexpr size_t kFrameHeaderBytes = 12;

inline constexpr uint8_t kFrameCheck = 0xa7;   // catches a stream that lost its framing

// Inline: every frame sent passes here.
inline void encode_frame(const FrameHeader &h, std::byte out[kFrameHeaderBytes])
{
    const uint8_t check = kFrameCheck, zero = 0;
    std::memcpy(out, &h.len, 4);
    std::memcpy(out + 4, &h.am_id, 1);
    std::memcpy(out + 5, &h.kind, 1);
    std::memcpy(out + 6, &check, 1);
    std::memcpy(out + 7, &zero, 1);
    std::memcpy(out + 8, &h.total, 4);
}
// Empty when the header is valid for a peer limited to max_payload bytes.
std::string decode_frame(std::span<const std::byte> bytes, size_t max_payload, FrameHeader *out);

// decode_frame's verdict without its reason, inline for the receive path
// (every frame passes here; only a bad one needs decode_frame's text).
// True when valid, with *out filled in.
inline bool frame_valid(std::span<const std::byte> bytes, size_t max_payload, FrameHeader *out)
{
    if (bytes.size() < kFrameHeaderBytes)
        return false;
    FrameHeader h;
    uint8_t check, zero;
    std::memcpy(&h.len, bytes.data(), 4);
    std::memcpy(&h.am_id, bytes.data() + 4, 1);
    std::memcpy(&h.kind, bytes.data() + 5, 1);
    std::memcpy(&check, bytes.data() + 6, 1);
    std::memcpy(&zero, bytes.data() + 7, 1);
    std::memcpy(&h.total, bytes.data() + 8, 4);
    const bool ok = check == kFrameCheck && zero == 0 && h.total <= max_payload &&
                    ((h.kind == kFrameMessage && h.total == h.len) || (h.kind == kFrameClose && h.len == 0 && h.total == 0));
    if (ok)
        *out = h;
    return ok;
}

} // namespace weft::btl_tcp
