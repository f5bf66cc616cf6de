// SPDX-License-Identifier: BSD-3-Clause
// What btl/openib puts on the wire besides the user's bytes: the 32-bit
// immediate of every send, and the module's business card. Pure code, no
// verbs, so the unit tests check it on any machine.
//
// The immediate carries the whole frame header, so a send's payload is the
// user's bytes alone and an 8-byte message fits an inline send:
//   bits 0-7    active-message id (the runtime's)
//   bits 8-9    kind: data, credit (a credit return only), close, more
//   bits 10-11  control credits returned (credit and close frames use them)
//   bits 12-31  data credits returned (receive buffers reposted since the
//               last frame to that peer)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace weft::openib {

// more: a frame of a message longer than one buffer, not its last (the
// last is data, with the message's am_id).
enum class FrameKind : uint8_t { data = 0, credit = 1, close = 2, more = 3 };

inline constexpr uint32_t kMaxDataCredits = (1u << 20) - 1;
inline constexpr uint32_t kMaxControlCredits = 3;

struct Imm {
    uint8_t am_id = 0;
    FrameKind kind = FrameKind::data;
    uint32_t control_credits = 0;
    uint32_t data_credits = 0;
};

// Callers keep the credit fields within their limits (they return the rest
// with the next frame).
inline uint32_t encode_imm(const Imm &imm)
{
    return uint32_t{imm.am_id} | (uint32_t(imm.kind) & 3u) << 8 | (imm.control_credits & 3u) << 10 |
           (imm.data_credits & kMaxDataCredits) << 12;
}

// Every 32-bit value decodes (all four kinds are in use); the receiver
// checks what the fields mean for its endpoint.
inline void decode_imm(uint32_t raw, Imm *imm)
{
    imm->am_id = static_cast<uint8_t>(raw & 0xff);
    const uint32_t kind = (raw >> 8) & 3u;
    imm->kind = static_cast<FrameKind>(kind);
    imm->control_credits = (raw >> 10) & 3u;
    imm->data_credits = raw >> 12;
}

// The business card of a module: where its port is, and one section per
// connection method (cpc) it runs, in its priority order.
struct CardSection {
    std::string cpc;                 // "udcm", "rdmacm", "oob"
    std::vector<uint8_t> data;       // that cpc's own card
};

struct Card {
    uint8_t gid[16] = {};
    uint16_t lid = 0;
    bool roce = false;
    uint64_t subnet_prefix = 0;      // IB: ports of different subnets cannot talk
    std::vector<CardSection> sections;
};

inline constexpr uint32_t kCardMagic = 0x4f494231;   // "OIB1"
inline constexpr size_t kMaxSections = 8;
inline constexpr size_t kMaxSectionBytes = 16384;   // oob lists a queue pair per rank

std::vector<uint8_t> encode_card(const Card &card);
// false with *why for anything that is not a card this version wrote.
bool decode_card(std::span<const uint8_t> bytes, Card *card, std::string *why);

} // namespace weft::openib
