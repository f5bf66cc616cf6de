// SPDX-License-Identifier: BSD-3-Clause
// The oob cpc's section of a btl/openib card: for every rank of the job,
// the RC queue pair (number and first packet sequence number) this process
// created at weft_init for that rank, plus what the peer's ready_qp needs
// of this port (LID, GID, MTU) and the receive buffers each QP has. Pure
// code, no verbs, so the unit tests check it on any machine; a section
// comes from another process and is checked field by field.
//
// Layout, little-endian:
//   u8  version (kVersion)
//   u32 rank          the publisher's
//   u32 job_size      entries that follow (one per rank, the publisher's own included)
//   u16 lid           0 on RoCE
//   u8  gid[16]
//   u8  mtu           enum ibv_mtu, 1..5
//   u32 recv_credits  data receive buffers posted per peer (1..2^20-1)
//   job_size times:   u24 qpn, u24 psn    (qpn 0: no queue pair for that rank)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace weft::openib::oob {

struct Entry {
    uint32_t qpn = 0;                  // 24 bits; 0 = none
    uint32_t psn = 0;                  // 24 bits
};

struct Section {
    uint32_t rank = 0;
    uint16_t lid = 0;
    uint8_t gid[16] = {};
    uint8_t mtu = 0;
    uint32_t recv_credits = 0;
    std::vector<Entry> entries;        // index = rank; size = the job's size
};

inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 1 + 4 + 4 + 2 + 16 + 1 + 4;
inline constexpr size_t kEntryBytes = 6;
// The largest job a section can describe (btl_openib_cpc_oob_max_procs is
// capped by it): header + 2048 entries stays under 12.5 KiB.
inline constexpr uint32_t kMaxRanks = 2048;
inline constexpr uint32_t kMaxRecvCredits = (1u << 20) - 1;

// Bytes of a section for a job of n ranks.
constexpr size_t section_bytes(uint32_t n) { return kHeaderBytes + size_t{n} * kEntryBytes; }

// The caller keeps the fields within their ranges (qpn and psn are cut to
// 24 bits).
std::vector<uint8_t> encode(const Section &s);
// false with *why for anything this version did not write, or that names
// impossible values (a rank outside the job, a queue pair for itself, a
// reserved queue pair number, an MTU ibverbs does not have).
bool decode(std::span<const uint8_t> bytes, Section *s, std::string *why);

} // namespace weft::openib::oob
