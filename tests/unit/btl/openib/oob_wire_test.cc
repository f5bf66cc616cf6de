// SPDX-License-Identifier: BSD-3-Clause
// The oob cpc's card section (components/btl/openib/cpc/oob_wire.hpp):
// pure code, tested on every host. A section comes from another process,
// so every truncated or hostile one must be refused with a reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "oob_wire.hpp"

using namespace weft::openib;

namespace {

// What rank 2 of a job of 5 publishes: a queue pair for each other rank.
oob::Section sample(uint32_t n = 5, uint32_t rank = 2)
{
    oob::Section s;
    s.rank = rank;
    s.lid = 0xbeef;
    for (uint8_t i = 0; i < 16; ++i)
        s.gid[i] = static_cast<uint8_t>(0x40 + i);
    s.mtu = 3;
    s.recv_credits = 64;
    s.entries.resize(n);
    for (uint32_t r = 0; r < n; ++r)
        if (r != rank)
            s.entries[r] = {2 + (0x100 + r * 0x10101) % 0xfffff0, (0xabcde0 + r) & 0xffffff};
    return s;
}

bool same(const oob::Section &a, const oob::Section &b)
{
    if (a.rank != b.rank || a.lid != b.lid || std::memcmp(a.gid, b.gid, 16) != 0 || a.mtu != b.mtu ||
        a.recv_credits != b.recv_credits || a.entries.size() != b.entries.size())
        return false;
    for (size_t i = 0; i < a.entries.size(); ++i)
        if (a.entries[i].qpn != b.entries[i].qpn || a.entries[i].psn != b.entries[i].psn)
            return false;
    return true;
}

std::string refused(const std::vector<uint8_t> &bytes)
{
    oob::Section s;
    std::string why;
    if (oob::decode(bytes, &s, &why))
        return "";
    return why.empty() ? "(refused without a reason)" : why;
}

// Little-endian field writers for hand-made hostile sections.
void put32(std::vector<uint8_t> &b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; ++i)
        b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

} // namespace

TEST(OobWire, RoundTripKeepsEveryField)
{
    for (uint32_t n : {1u, 2u, 5u, 64u}) {
        const oob::Section in = sample(n, n - 1);
        const std::vector<uint8_t> bytes = oob::encode(in);
        EXPECT_EQ(bytes.size(), oob::section_bytes(n));
        oob::Section out;
        std::string why;
        ASSERT_TRUE(oob::decode(bytes, &out, &why)) << "n=" << n << ": " << why;
        EXPECT_TRUE(same(in, out)) << "n=" << n;
    }
}

TEST(OobWire, LargestJobFitsAndRoundTrips)
{
    const oob::Section in = sample(oob::kMaxRanks, 7);
    const std::vector<uint8_t> bytes = oob::encode(in);
    oob::Section out;
    std::string why;
    ASSERT_TRUE(oob::decode(bytes, &out, &why)) << why;
    EXPECT_TRUE(same(in, out));
}

TEST(OobWire, TwentyFourBitFieldsKeepTheirLimits)
{
    oob::Section in = sample(3, 0);
    in.entries[1] = {0xffffff, 0xffffff};
    in.entries[2] = {2, 0};
    oob::Section out;
    std::string why;
    ASSERT_TRUE(oob::decode(oob::encode(in), &out, &why)) << why;
    EXPECT_EQ(out.entries[1].qpn, 0xffffffu);
    EXPECT_EQ(out.entries[1].psn, 0xffffffu);
    EXPECT_EQ(out.entries[2].qpn, 2u);
}

TEST(OobWire, EveryTruncationIsRefusedWithAReason)
{
    const std::vector<uint8_t> bytes = oob::encode(sample());
    for (size_t len = 0; len < bytes.size(); ++len) {
        const std::string why = refused(std::vector<uint8_t>(bytes.begin(), bytes.begin() + len));
        EXPECT_NE(why, "") << "a section cut to " << len << " bytes was accepted";
        EXPECT_NE(why.find("oob card section"), std::string::npos) << why;
    }
    std::vector<uint8_t> longer = bytes;
    longer.push_back(0);
    EXPECT_NE(refused(longer).find("expected"), std::string::npos) << refused(longer);
}

TEST(OobWire, HostileHeadersAreRefusedNamingTheField)
{
    const std::vector<uint8_t> good = oob::encode(sample());
    struct Case {
        const char *what;
        size_t at;
        uint32_t value;
        int width;
        const char *expect;
    };
    const Case cases[] = {
        {"version", 0, 2, 1, "version 2"},
        {"rank outside the job", 1, 5, 4, "outside its job"},
        {"job of 0", 5, 0, 4, "a job of 0"},
        {"job above the limit", 5, oob::kMaxRanks + 1, 4, "ranks (1.."},
        {"job size disagreeing with the length", 5, 4, 4, "expected"},
        {"MTU 0", 27, 0, 1, "MTU code 0"},
        {"MTU 6", 27, 6, 1, "MTU code 6"},
        {"no credits", 28, 0, 4, "receive credits"},
        {"too many credits", 28, oob::kMaxRecvCredits + 1, 4, "receive credits"},
    };
    for (const Case &c : cases) {
        std::vector<uint8_t> b = good;
        if (c.width == 1)
            b[c.at] = static_cast<uint8_t>(c.value);
        else
            put32(b, c.at, c.value);
        const std::string why = refused(b);
        EXPECT_NE(why.find(c.expect), std::string::npos) << c.what << ": " << why;
    }
}

TEST(OobWire, HostileEntriesAreRefused)
{
    {
        oob::Section s = sample(4, 1);
        s.entries[1] = {0x1234, 5};   // a queue pair for itself
        EXPECT_NE(refused(oob::encode(s)).find("for itself"), std::string::npos) << refused(oob::encode(s));
    }
    {
        oob::Section s = sample(4, 1);
        s.entries[3] = {1, 0};        // QP1 is the GSI queue pair
        EXPECT_NE(refused(oob::encode(s)).find("GSI"), std::string::npos) << refused(oob::encode(s));
    }
    {
        oob::Section s = sample(4, 1);
        s.entries[0] = {0, 77};       // a PSN without a queue pair
        EXPECT_NE(refused(oob::encode(s)).find("without a queue pair"), std::string::npos);
    }
    {
        oob::Section s = sample(4, 1);
        s.entries[0] = {};            // no queue pair for a rank: allowed (the peer skips it)
        EXPECT_EQ(refused(oob::encode(s)), "");
    }
}

TEST(OobWire, RandomBytesNeverCrashAndRefusalsSayWhy)
{
    std::mt19937 rng(20261124);
    const std::vector<uint8_t> good = oob::encode(sample(6, 3));
    for (int i = 0; i < 20000; ++i) {
        std::vector<uint8_t> b;
        if (i % 2) {
            b = good;                 // a few flipped bytes of a real section
            for (int k = 0; k < 1 + i % 4; ++k)
                b[rng() % b.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
        } else {
            b.resize(rng() % 96);
            for (auto &x : b)
                x = static_cast<uint8_t>(rng());
        }
        oob::Section s;
        std::string why;
        if (oob::decode(b, &s, &why)) {
            // Whatever is accepted is self-consistent.
            ASSERT_LT(s.rank, s.entries.size());
            ASSERT_EQ(s.entries[s.rank].qpn, 0u);
            ASSERT_EQ(oob::encode(s), b);
        } else {
            ASSERT_FALSE(why.empty());
        }
    }
}
