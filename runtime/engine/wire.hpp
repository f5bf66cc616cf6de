// SPDX-License-Identifier: BSD-3-Clause
// The engine's wire format: what one process's engine says to another's,
// carried as btl active messages (id kAmEngine). Every frame starts with a
// one-byte type; each type has a fixed header, then payload for the types
// that carry data. parse() checks a frame completely (type, length of the
// header, payload length against the header's) before any field is used,
// so a truncated or hostile frame is rejected with a reason, never read
// past its end. The header layouts are plain structs copied with memcpy
// (no alignment assumption on the received bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace weft::engine::wire {

inline constexpr uint8_t kAmEngine = 1;   // btl active-message id of the engine

enum class Type : uint8_t {
    Eager = 1,     // small put, no ack, no hdr_data, offset 0: the tagged fast path
    Put = 2,       // put with everything (ack request, offset, hdr_data), data inline
    Rts = 3,       // rendezvous put: header (+ its first bytes); the rest by RDMA get or pulled (Cts)
    Ack = 4,       // target -> initiator: the put landed (mlength, status)
    GetReq = 5,    // initiator -> target: read length bytes
    Reply = 6,     // target -> initiator: a chunk of a get's data
    Fin = 7,       // target -> initiator: rendezvous data received (mlength, status)
    Cts = 8,       // target -> initiator: send the rendezvous data by chunks
    Data = 9,      // initiator -> target: a chunk of rendezvous data
    Credit = 10,   // target -> initiator: eager bytes consumed, may be sent again
    PutReq = 11,   // target -> initiator: RDMA-write this part of the rendezvous data here (+ rkey)
    PutDone = 12,  // initiator -> target: that part is written (or why not)
    Tagged = 13,   // Eager to the tagged portal in 8 header bytes: the small-message path
};
const char *type_name(Type t);

inline constexpr uint8_t kFlagAck = 0x1;   // Put/Rts: the initiator wants an ACK
inline constexpr uint8_t kAckNoEvent = 0x1;   // Ack/Fin: the target MD disabled ACK events

#pragma pack(push, 1)
struct Eager {           // 16 bytes + payload
    uint8_t type;
    uint8_t portal;
    uint16_t reserved;
    uint32_t length;     // payload bytes that follow
    uint64_t match_bits;
};
// Eager's short form for the tagged portal, the most frequent frame: the
// match bits are a context (< 2^24) and a tag, and the payload is the rest
// of the frame. Half of Eager's header: on a transport that copies and
// checksums every byte in software (Soft-RoCE under emulation: 80-byte
// sends took 1-2 us longer than 64-byte ones) header bytes show in the
// small-message latency.
struct Tagged {          // 8 bytes + payload
    uint8_t type;
    uint8_t context_lo;
    uint16_t context_hi;
    uint32_t tag;
    static constexpr uint64_t kMaxContext = (uint64_t{1} << 24) - 1;
    uint64_t match_bits() const
    {
        return (uint64_t{context_lo} | uint64_t{context_hi} << 8) << 32 | tag;
    }
    void set_match_bits(uint64_t bits)   // the context must be <= kMaxContext
    {
        const uint32_t context = static_cast<uint32_t>(bits >> 32);
        context_lo = static_cast<uint8_t>(context);
        context_hi = static_cast<uint16_t>(context >> 8);
        tag = static_cast<uint32_t>(bits);
    }
};
struct Put {             // 40 bytes + payload
    uint8_t type;
    uint8_t portal;
    uint8_t flags;
    uint8_t reserved;
    uint32_t length;     // payload bytes that follow
    uint64_t match_bits;
    uint64_t offset;
    uint64_t hdr_data;
    uint64_t op;         // initiator's operation id, echoed in the Ack
};
// The rkey (RDMA: the target reads the data) or the put's first bytes
// (chunks: the target asks only for the rest, so the round trip to its
// Cts overlaps data) follow the header. Both sides of a job run one
// build: a receiver older than `first` rejects such an Rts as announcing
// fewer payload bytes than it carries.
struct Rts {             // 64 bytes + rkey_len + first bytes
    uint8_t type;
    uint8_t portal;
    uint8_t flags;
    uint8_t rkey_len;    // 0: no RDMA; the target answers with Cts (or a Fin)
    uint32_t first;      // bytes of data [0, first) after the rkey
    uint64_t length;     // total bytes of the put
    uint64_t match_bits;
    uint64_t offset;
    uint64_t hdr_data;
    uint64_t op;
    uint64_t addr;       // initiator's buffer, for an RDMA get with the rkey
    uint64_t reserved2;
};
struct Ack {             // Ack and Fin share this layout
    uint8_t type;
    uint8_t flags;       // kAckNoEvent
    uint8_t reserved[2];
    int32_t status;
    uint64_t op;
    uint64_t mlength;
    uint64_t offset;     // where in the target's MD it landed
};
struct GetReq {
    uint8_t type;
    uint8_t portal;
    uint16_t reserved;
    uint32_t reserved2;
    uint64_t length;
    uint64_t match_bits;
    uint64_t offset;
    uint64_t op;
};
struct Reply {           // + payload
    uint8_t type;
    uint8_t last;        // 1 on the final chunk
    uint16_t reserved;
    int32_t status;      // of the whole get (the target's answer)
    uint64_t op;
    uint64_t chunk_offset;
    uint64_t mlength;    // total bytes the get moves (the same in every chunk)
    uint32_t length;     // payload bytes that follow
    uint32_t reserved2;
};
struct Cts {
    uint8_t type;
    uint8_t reserved[7];
    uint64_t op;         // the initiator's operation
    uint64_t token;      // the target's receive
    uint64_t mlength;    // bytes the target will take
};
struct Data {            // + payload
    uint8_t type;
    uint8_t reserved[3];
    uint32_t length;     // payload bytes that follow
    uint64_t token;
    uint64_t chunk_offset;
};
struct Credit {
    uint8_t type;
    uint8_t reserved[7];
    uint64_t bytes;
};
struct PutReq {          // 48 bytes + rkey bytes
    uint8_t type;
    uint8_t rkey_len;
    uint8_t reserved[6];
    uint64_t op;         // the initiator's operation
    uint64_t token;      // the target's receive
    uint64_t offset;     // the part of the put's data to write ...
    uint64_t length;
    uint64_t addr;       // ... to this address of the target, with the rkey
};
struct PutDone {
    uint8_t type;
    uint8_t reserved[3];
    int32_t status;
    uint64_t token;
};
#pragma pack(pop)

static_assert(sizeof(Eager) == 16 && sizeof(Tagged) == 8 && sizeof(Put) == 40 && sizeof(Rts) == 64 && sizeof(PutReq) == 48);

// A validated frame: the header bytes (copy into the struct of `type`),
// and the payload or rkey that follows it.
struct Frame {
    Type type;
    std::span<const std::byte> header;
    std::span<const std::byte> payload;
};

// Checks a received frame. On failure returns false and says why in *why.
bool parse(std::span<const std::byte> bytes, Frame *frame, std::string *why);

template <class H>
H read(const Frame &f)
{
    H h;
    __builtin_memcpy(&h, f.header.data(), sizeof h);
    return h;
}

// A header struct as the bytes that go on the wire.
template <class H>
std::span<const std::byte> bytes_of(const H &h)
{
    return {reinterpret_cast<const std::byte *>(&h), sizeof h};
}

// An Ack or Fin (type) answering the initiator's operation op.
inline Ack make_ack(Type type, uint64_t op, int status, uint64_t mlength, uint64_t offset,
                    bool no_event = false)
{
    Ack a{};
    a.type = static_cast<uint8_t>(type);
    a.flags = no_event ? kAckNoEvent : 0;
    a.status = status;
    a.op = op;
    a.mlength = mlength;
    a.offset = offset;
    return a;
}

} // namespace weft::engine::wire
