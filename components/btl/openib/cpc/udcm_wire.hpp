// SPDX-License-Identifier: BSD-3-Clause
// The udcm cpc's wire format: the InfiniBand CM handshake (REQ, REP, RTU,
// REJ, MRA, DREQ, DREP) carried in UD datagrams between the udcm UD queue
// pairs of two processes. Nothing received on the UD QP is looked at before
// decode() has checked it: exact length per type, magic, version, type and
// the range of every field (tests/unit/udcm_wire_test.cc, fuzzed by
// tests/fuzz/udcm_wire_fuzz.cc).
//
// Layout, little-endian, fixed per type (offsets in bytes):
//
//    0  u32  magic "WUDC"
//    4  u8   version (kWireVersion)
//    5  u8   type (MsgType)
//    6  u16  reserved, 0
//    8  u64  job hash (job_hash() of CpcHost::job_id()): another job's traffic is dropped
//   16  u32  sender's rank
//   20  u32  receiver's rank
//   24  u32  sender's connection id     (0 only in a REJ or DREP sent without a record)
//   28  u32  receiver's connection id   (0 only in a REQ: the acceptor has none yet)
//   32  u32  attempt: which transmission of this message (0 first, then each retry)
//   36       body:
//            REQ, REP  the sender's RC QP (32 bytes) then its UD return address (24 bytes)
//                        rc: u32 qpn, u32 psn, u16 lid, u8 mtu, u8 0, u32 recv_credits, gid[16]
//                        ud: u32 qpn, u16 lid, u16 0, gid[16]
//            REJ       u16 reason (RejectReason), u8 type of the message rejected, u8 0
//            MRA       u8 type of the message acknowledged, u8 0 x3, u32 service timeout (ms)
//            RTU, DREQ, DREP  nothing
//
// Connection ids make every attempt distinguishable: a message whose ids do
// not match the receiver's current attempt is stale (a duplicate, or from a
// process that restarted its endpoint) and udcm_fsm treats it as such.
//
// This header needs no verbs headers, so its tests build anywhere.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace weft::openib::udcm {

static_assert(std::endian::native == std::endian::little, "udcm wire format assumes little-endian");

inline constexpr uint32_t kWireMagic = 0x43445557;   // "WUDC" in memory order
inline constexpr uint8_t kWireVersion = 1;

inline constexpr size_t kHeaderBytes = 36;
inline constexpr size_t kAddressBodyBytes = 56;      // REQ, REP
inline constexpr size_t kRejectBodyBytes = 4;
inline constexpr size_t kMraBodyBytes = 8;
inline constexpr size_t kMaxMessageBytes = kHeaderBytes + kAddressBodyBytes;

// Field limits checked by decode().
inline constexpr uint32_t kMaxQpn = 0xffffff;            // QPNs are 24 bits
inline constexpr uint32_t kMinQpn = 2;                   // 0 and 1 are the SMI and GSI QPs
inline constexpr uint32_t kMaxPsn = 0xffffff;            // PSNs are 24 bits
inline constexpr uint16_t kFirstMulticastLid = 0xc000;   // unicast LIDs are below
inline constexpr uint8_t kMinMtu = 1;                    // IBV_MTU_256
inline constexpr uint8_t kMaxMtu = 5;                    // IBV_MTU_4096
inline constexpr uint32_t kMaxRecvCredits = 1u << 20;
inline constexpr uint32_t kMaxServiceTimeoutMs = 10 * 60 * 1000;

enum class MsgType : uint8_t {
    req = 1,    // connect request: the initiator's RC QP and UD address
    rep = 2,    // reply: the acceptor's RC QP (ready, receives posted)
    rtu = 3,    // ready to use: the initiator's QP is ready too
    rej = 4,    // reject, with a reason
    mra = 5,    // message receipt acknowledged: the answer takes longer, stop resending
    dreq = 6,   // disconnect request
    drep = 7,   // disconnect reply
};
inline constexpr uint8_t kMaxMsgType = 7;

// Reject reasons: the InfiniBand CM numbers where one fits, weft's own from
// 1000 (the CM leaves those values unused).
enum class RejectReason : uint16_t {
    no_resources = 3,           // IB_CM_REJ_NO_RESOURCES: the acceptor could not prepare its QP
    timeout = 4,                // IB_CM_REJ_TIMEOUT: the sender gave up waiting
    invalid_comm_id = 6,        // IB_CM_REJ_INVALID_COMM_ID: no such connection attempt
    stale_connection = 10,      // IB_CM_REJ_STALE_CONN: an older connection is still in place
    consumer = 28,              // IB_CM_REJ_CONSUMER_DEFINED: openib refused the peer
    wrong_job = 1001,           // weft: the request came from another job
    simultaneous_connect = 1002 // weft: both connected at once and the receiver's own
                                // request wins (lower rank); wait for its REQ
};

const char *to_string(MsgType t);
const char *to_string(RejectReason r);

// The RC side of a connection as it travels (mirrors openib's QpAddress,
// without its verbs headers).
struct RcAddress {
    uint32_t qpn = 0;
    uint32_t psn = 0;
    uint16_t lid = 0;
    uint8_t gid[16] = {};
    uint8_t mtu = 0;
    uint32_t recv_credits = 0;
};

// Where to send UD datagrams back to the sender.
struct UdAddress {
    uint32_t qpn = 0;
    uint16_t lid = 0;
    uint8_t gid[16] = {};
};

struct Message {
    MsgType type = MsgType::req;
    uint64_t job_hash = 0;
    uint32_t src_rank = 0;
    uint32_t dst_rank = 0;
    uint32_t src_id = 0;
    uint32_t dst_id = 0;
    uint32_t attempt = 0;
    // REQ, REP
    RcAddress rc{};
    UdAddress ud{};
    // REJ
    RejectReason reason = RejectReason::consumer;
    MsgType rejected = MsgType::req;
    // MRA
    MsgType acknowledged = MsgType::req;
    uint32_t service_timeout_ms = 0;
};

// 64-bit FNV-1a of the job id: fixed size on the wire, and equal job ids
// give equal hashes in every process.
uint64_t job_hash(std::string_view job_id);

// The encoded size of a message of type t.
size_t wire_size(MsgType t);

// Encodes m into out and returns its length (wire_size(m.type)). Encodes
// what it is given; only decode() judges fields.
size_t encode(const Message &m, std::span<uint8_t, kMaxMessageBytes> out);
std::vector<uint8_t> encode(const Message &m);

// Decodes and checks bytes. false with *why (what is wrong, for a log
// line) when they are not exactly one valid message; *out is then untouched.
bool decode(std::span<const uint8_t> bytes, Message *out, std::string *why);

// ---- card -------------------------------------------------------------------
// The udcm section of a module's card (CpcModule::card): where the udcm UD
// QP of that process listens. 24 bytes: u8 version, u8 0, u16 lid, u32 UD
// qpn, gid[16].
inline constexpr uint8_t kCardVersion = 1;
inline constexpr size_t kCardBytes = 24;

std::vector<uint8_t> encode_card(const UdAddress &ud);
bool decode_card(std::span<const uint8_t> bytes, UdAddress *out, std::string *why);

} // namespace weft::openib::udcm
