// SPDX-License-Identifier: BSD-3-Clause
// Encoding of the oob cpc's card section (see oob_wire.hpp).
#include "oob_wire.hpp"

#include <cstring>

namespace weft::openib::oob {

namespace {

template <class T>
void put_le(std::vector<uint8_t> &out, T v, size_t n = sizeof(T))
{
    for (size_t i = 0; i < n; ++i)
        out.push_back(static_cast<uint8_t>(uint64_t(v) >> (8 * i)));
}

uint64_t get_le(const uint8_t *p, size_t n)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n; ++i)
        x |= uint64_t(p[i]) << (8 * i);
    return x;
}

} // namespace

std::vector<uint8_t> encode(const Section &s)
{
    std::vector<uint8_t> out;
    out.reserve(section_bytes(static_cast<uint32_t>(s.entries.size())));
    put_le<uint8_t>(out, kVersion);
    put_le<uint32_t>(out, s.rank);
    put_le<uint32_t>(out, static_cast<uint32_t>(s.entries.size()));
    put_le<uint16_t>(out, s.lid);
    out.insert(out.end(), s.gid, s.gid + sizeof s.gid);
    put_le<uint8_t>(out, s.mtu);
    put_le<uint32_t>(out, s.recv_credits);
    for (const Entry &e : s.entries) {
        put_le<uint32_t>(out, e.qpn & 0xffffff, 3);
        put_le<uint32_t>(out, e.psn & 0xffffff, 3);
    }
    return out;
}

bool decode(std::span<const uint8_t> bytes, Section *s, std::string *why)
{
    auto no = [&](std::string text) {
        *why = "oob card section: " + std::move(text);
        return false;
    };
    if (bytes.size() < kHeaderBytes)
        return no("truncated (" + std::to_string(bytes.size()) + " bytes; its header alone has " +
                  std::to_string(kHeaderBytes) + ")");
    const uint8_t *p = bytes.data();
    if (p[0] != kVersion)
        return no("version " + std::to_string(p[0]) + ", this weft reads version " + std::to_string(kVersion) +
                  " (is every process running the same weft?)");
    const auto rank = static_cast<uint32_t>(get_le(p + 1, 4));
    const auto n = static_cast<uint32_t>(get_le(p + 5, 4));
    if (n == 0 || n > kMaxRanks)
        return no("a job of " + std::to_string(n) + " ranks (1.." + std::to_string(kMaxRanks) + " are possible)");
    if (rank >= n)
        return no("published by rank " + std::to_string(rank) + ", outside its job of " + std::to_string(n));
    if (bytes.size() != section_bytes(n))
        return no(std::to_string(bytes.size()) + " bytes for a job of " + std::to_string(n) + " ranks (expected " +
                  std::to_string(section_bytes(n)) + ")");
    Section out;
    out.rank = rank;
    out.lid = static_cast<uint16_t>(get_le(p + 9, 2));
    std::memcpy(out.gid, p + 11, sizeof out.gid);
    out.mtu = p[27];
    out.recv_credits = static_cast<uint32_t>(get_le(p + 28, 4));
    if (out.mtu < 1 || out.mtu > 5)
        return no("MTU code " + std::to_string(out.mtu) + " (ibverbs has 1..5: 256..4096 bytes)");
    if (out.recv_credits == 0 || out.recv_credits > kMaxRecvCredits)
        return no(std::to_string(out.recv_credits) + " receive credits (1.." + std::to_string(kMaxRecvCredits) +
                  " are possible)");
    out.entries.resize(n);
    const uint8_t *e = p + kHeaderBytes;
    for (uint32_t r = 0; r < n; ++r, e += kEntryBytes) {
        Entry &en = out.entries[r];
        en.qpn = static_cast<uint32_t>(get_le(e, 3));
        en.psn = static_cast<uint32_t>(get_le(e + 3, 3));
        if (r == rank && en.qpn != 0)
            return no("rank " + std::to_string(rank) + " lists a queue pair for itself");
        if (en.qpn == 1)
            return no("queue pair number 1 for rank " + std::to_string(r) + " (QP1 is the GSI queue pair)");
        if (en.qpn == 0 && en.psn != 0)
            return no("a packet sequence number without a queue pair for rank " + std::to_string(r));
    }
    *s = std::move(out);
    return true;
}

} // namespace weft::openib::oob
