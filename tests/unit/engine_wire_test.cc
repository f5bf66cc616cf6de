// SPDX-License-Identifier: BSD-3-Clause
// The engine's wire parser on truncated, oversized and hostile frames: each
// is refused with a reason, nothing is read past the frame (ASan checks).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "engine/wire.hpp"

using namespace weft::engine;

namespace {

template <class H>
std::vector<std::byte> frame(const H &h, size_t payload = 0)
{
    std::vector<std::byte> v(sizeof h + payload);
    std::memcpy(v.data(), &h, sizeof h);
    return v;
}

bool parses(const std::vector<std::byte> &v, std::string *why = nullptr)
{
    wire::Frame f;
    std::string w;
    bool ok = wire::parse(v, &f, &w);
    if (why)
        *why = w;
    return ok;
}

} // namespace

TEST(EngineWire, GoodFramesParse)
{
    wire::Eager e{};
    e.type = static_cast<uint8_t>(wire::Type::Eager);
    e.portal = 63;
    e.length = 5;
    auto v = frame(e, 5);
    wire::Frame f;
    std::string why;
    ASSERT_TRUE(wire::parse(v, &f, &why)) << why;
    EXPECT_EQ(f.type, wire::Type::Eager);
    EXPECT_EQ(f.payload.size(), 5u);
    wire::Credit c{};
    c.type = static_cast<uint8_t>(wire::Type::Credit);
    EXPECT_TRUE(parses(frame(c)));
    wire::PutReq q{};
    q.type = static_cast<uint8_t>(wire::Type::PutReq);
    q.rkey_len = 24;
    ASSERT_TRUE(wire::parse(frame(q, 24), &f, &why)) << why;
    EXPECT_EQ(f.payload.size(), 24u);
    wire::PutDone d{};
    d.type = static_cast<uint8_t>(wire::Type::PutDone);
    EXPECT_TRUE(parses(frame(d)));
}

TEST(EngineWire, TaggedFrameCarriesContextAndTagInEightBytes)
{
    wire::Tagged t{};
    t.type = static_cast<uint8_t>(wire::Type::Tagged);
    const uint64_t bits = (uint64_t{0xabcdef} << 32) | 0x7fff1234u;
    t.set_match_bits(bits);
    EXPECT_EQ(t.match_bits(), bits);
    auto v = frame(t, 3);
    wire::Frame f;
    std::string why;
    ASSERT_TRUE(wire::parse(v, &f, &why)) << why;
    EXPECT_EQ(f.type, wire::Type::Tagged);
    EXPECT_EQ(f.payload.size(), 3u);   // the rest of the frame
    EXPECT_EQ(wire::read<wire::Tagged>(f).match_bits(), bits);
    EXPECT_TRUE(parses(frame(t)));     // no payload
    v.resize(sizeof t - 1);
    EXPECT_FALSE(parses(v, &why));
    EXPECT_NE(why.find("shorter than its 8-byte header"), std::string::npos) << why;
}

TEST(EngineWire, TruncatedAndMislabelledFramesAreRefused)
{
    std::string why;
    EXPECT_FALSE(parses({}, &why));
    EXPECT_EQ(why, "empty frame");
    wire::Put p{};
    p.type = static_cast<uint8_t>(wire::Type::Put);
    p.length = 100;
    auto v = frame(p, 10);   // announces 100 payload bytes, carries 10
    EXPECT_FALSE(parses(v, &why));
    EXPECT_NE(why.find("announces 100 payload bytes but carries 10"), std::string::npos) << why;
    v.resize(sizeof p - 1);   // shorter than the header
    EXPECT_FALSE(parses(v, &why));
    EXPECT_NE(why.find("shorter than its 40-byte header"), std::string::npos) << why;
    std::vector<std::byte> unknown{std::byte{0xee}, std::byte{0}};
    EXPECT_FALSE(parses(unknown, &why));
    EXPECT_NE(why.find("unknown frame type 238"), std::string::npos);
    wire::Eager e{};
    e.type = static_cast<uint8_t>(wire::Type::Eager);
    e.portal = 64;
    EXPECT_FALSE(parses(frame(e), &why));
    EXPECT_NE(why.find("portal 64 out of range"), std::string::npos);
    wire::Rts r{};
    r.type = static_cast<uint8_t>(wire::Type::Rts);
    r.rkey_len = 65;
    EXPECT_FALSE(parses(frame(r, 65), &why));
    wire::PutReq q{};
    q.type = static_cast<uint8_t>(wire::Type::PutReq);
    q.rkey_len = 65;
    EXPECT_FALSE(parses(frame(q, 65), &why));
    EXPECT_NE(why.find("putreq rkey of 65 bytes"), std::string::npos) << why;
    q.rkey_len = 8;
    EXPECT_FALSE(parses(frame(q, 7), &why));   // announces 8 rkey bytes, carries 7

}

// An Rts's payload is its rkey, then its first data bytes: both counted.
TEST(EngineWire, RtsCarriesItsFirstBytesAfterTheKey)
{
    wire::Rts r{};
    r.type = static_cast<uint8_t>(wire::Type::Rts);
    r.length = 100000;
    r.first = 1000;
    wire::Frame f;
    std::string why;
    auto v = frame(r, 1000);
    ASSERT_TRUE(wire::parse(v, &f, &why)) << why;
    EXPECT_EQ(f.payload.size(), 1000u);
    r.rkey_len = 8;
    EXPECT_TRUE(parses(frame(r, 1008), &why)) << why;
    EXPECT_FALSE(parses(frame(r, 1000), &why));   // the key's bytes are missing
    EXPECT_NE(why.find("announces 1008 payload bytes but carries 1000"), std::string::npos) << why;
    r.rkey_len = 0;
    r.length = 999;   // more first bytes than the put has
    EXPECT_FALSE(parses(frame(r, 1000), &why));
    EXPECT_NE(why.find("rts carries 1000 bytes of a put of 999"), std::string::npos) << why;
}

TEST(EngineWire, RandomBytesNeverCrash)
{
    std::mt19937 rng(1234);
    for (int i = 0; i < 200000; ++i) {
        std::vector<std::byte> v(rng() % 96);
        for (auto &b : v)
            b = static_cast<std::byte>(rng());
        if (!v.empty() && (i & 1))
            v[0] = static_cast<std::byte>(1 + rng() % 12);   // a valid type, random rest
        wire::Frame f;
        std::string why;
        if (wire::parse(v, &f, &why)) {
            ASSERT_LE(f.header.size() + f.payload.size(), v.size());
        } else {
            ASSERT_FALSE(why.empty());
        }
    }
}
