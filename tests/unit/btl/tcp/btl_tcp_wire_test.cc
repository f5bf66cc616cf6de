// SPDX-License-Identifier: BSD-3-Clause
// btl/tcp wire parsers on valid, truncated and hostile input: nothing read
// from a socket or the modex is used before these checks pass.
#include <gtest/gtest.h>

#include <cstring>

#include "btl_tcp_wire.hpp"

using namespace weft::btl_tcp;

namespace {

Card sample_card()
{
    Card c;
    for (size_t i = 0; i < kSecretBytes; ++i)
        c.secret[i] = static_cast<uint8_t>(i * 7);
    CardEntry lo{4, 8, true, 4000, {127, 0, 0, 1}};
    CardEntry eth{4, 24, false, 4001, {10, 77, 0, 1}};
    c.entries = {lo, eth};
    return c;
}

// A valid message frame header of len payload bytes, encoded into out.
FrameHeader message_header(uint32_t len, uint8_t am_id, std::byte out[kFrameHeaderBytes])
{
    FrameHeader h;
    h.len = h.total = len;
    h.am_id = am_id;
    encode_frame(h, out);
    return h;
}

} // namespace

TEST(BtlTcpWire, CardRoundTripsAndRejectsDamage)
{
    auto bytes = encode_card(sample_card());
    Card back;
    ASSERT_EQ(decode_card(bytes, &back), "");
    ASSERT_EQ(back.entries.size(), 2u);
    EXPECT_TRUE(back.entries[0].loopback);
    EXPECT_EQ(back.entries[1].port, 4001);
    EXPECT_EQ(std::memcmp(back.secret, sample_card().secret, kSecretBytes), 0);
    for (size_t cut = 0; cut < bytes.size(); ++cut)
        EXPECT_NE(decode_card(std::span(bytes.data(), cut), &back), "") << "cut at " << cut;
    auto bad = bytes;
    bad[0] = std::byte{0};
    EXPECT_NE(decode_card(bad, &back).find("magic"), std::string::npos);
    bad = bytes;
    bad[4] = std::byte{9};   // version
    EXPECT_NE(decode_card(bad, &back).find("version"), std::string::npos);
    bad = bytes;
    bad[6] = std::byte{0xff};   // entry count beyond the bytes
    EXPECT_NE(decode_card(bad, &back), "");
    bad = bytes;
    bad[24] = std::byte{5};   // first entry's family
    EXPECT_NE(decode_card(bad, &back), "");
}

TEST(BtlTcpWire, HelloRoundTripsAndRejectsHostileInput)
{
    Hello h;
    h.rank = 7;
    std::strcpy(h.job_id, "job-1");
    std::byte buf[kHelloBytes];
    encode_hello(h, buf);
    Hello back;
    ASSERT_EQ(decode_hello(std::span(buf, kHelloBytes), &back), "");
    EXPECT_EQ(back.rank, 7u);
    EXPECT_STREQ(back.job_id, "job-1");
    for (size_t cut = 0; cut < kHelloBytes; ++cut)
        EXPECT_NE(decode_hello(std::span(buf, cut), &back), "");
    std::byte bad[kHelloBytes];
    std::memcpy(bad, buf, sizeof bad);
    bad[0] = std::byte{'G'};   // "GET / HTTP" and friends
    EXPECT_NE(decode_hello(std::span(bad, kHelloBytes), &back).find("magic"), std::string::npos);
    std::memcpy(bad, buf, sizeof bad);
    bad[6] = std::byte{99};   // kind
    EXPECT_NE(decode_hello(std::span(bad, kHelloBytes), &back), "");
    std::memcpy(bad, buf, sizeof bad);
    std::memset(bad + kHelloBytes - kJobIdBytes, 'x', kJobIdBytes);   // unterminated job id
    EXPECT_NE(decode_hello(std::span(bad, kHelloBytes), &back), "");
    std::memcpy(bad, buf, sizeof bad);
    bad[12] = std::byte{5};   // link 5 of 1
    EXPECT_NE(decode_hello(std::span(bad, kHelloBytes), &back), "");
}

TEST(BtlTcpWire, FrameHeadersAreCheckedBeforeUse)
{
    std::byte buf[kFrameHeaderBytes];
    FrameHeader h = message_header(100, 9, buf);
    FrameHeader back;
    ASSERT_EQ(decode_frame(std::span(buf, kFrameHeaderBytes), 1000, &back), "");
    EXPECT_EQ(back.len, 100u);
    EXPECT_EQ(back.am_id, 9);
    for (size_t cut = 0; cut < kFrameHeaderBytes; ++cut)
        EXPECT_NE(decode_frame(std::span(buf, cut), 1000, &back), "");
    // Longer than the limit the receiver announced: hostile, never allocated.
    EXPECT_NE(decode_frame(std::span(buf, kFrameHeaderBytes), 99, &back).find("exceeds"), std::string::npos);
    std::byte bad[kFrameHeaderBytes];
    std::memcpy(bad, buf, sizeof bad);
    bad[6] ^= std::byte{1};   // check byte: the stream lost its framing
    EXPECT_NE(decode_frame(std::span(bad, kFrameHeaderBytes), 1000, &back), "");
    std::memcpy(bad, buf, sizeof bad);
    bad[5] = std::byte{77};   // kind
    EXPECT_NE(decode_frame(std::span(bad, kFrameHeaderBytes), 1000, &back), "");
    h.kind = kFrameClose;
    encode_frame(h, bad);   // a close frame with a payload
    EXPECT_NE(decode_frame(std::span(bad, kFrameHeaderBytes), 1000, &back), "");
}

// The receive path's inline check (frame_valid) and the parser agree on
// every single-byte change of a valid header, and on every limit.
TEST(BtlTcpWire, InlineFrameCheckAgreesWithTheParser)
{
    std::byte good[kFrameHeaderBytes];
    FrameHeader h = message_header(100, 3, good);
    FrameHeader a, b;
    for (size_t limit : {size_t{0}, size_t{99}, size_t{100}, size_t{1000}})
        EXPECT_EQ(frame_valid(std::span(good, kFrameHeaderBytes), limit, &a),
                  decode_frame(std::span(good, kFrameHeaderBytes), limit, &b).empty())
            << "limit " << limit;
    size_t invalid = 0;
    for (size_t at = 0; at < kFrameHeaderBytes; ++at)
        for (int v = 0; v < 256; ++v) {
            std::byte bytes[kFrameHeaderBytes];
            std::memcpy(bytes, good, sizeof bytes);
            bytes[at] = static_cast<std::byte>(v);
            const bool parsed = decode_frame(std::span(bytes, kFrameHeaderBytes), 1000, &b).empty();
            ASSERT_EQ(frame_valid(std::span(bytes, kFrameHeaderBytes), 1000, &a), parsed)
                << "byte " << at << " = " << v;
            if (parsed) {
                EXPECT_TRUE(a.len == b.len && a.am_id == b.am_id && a.kind == b.kind && a.total == b.total);
            }
            invalid += !parsed;
        }
    EXPECT_GT(invalid, 0u);
    h.kind = kFrameClose;
    h.len = h.total = 0;
    encode_frame(h, good);
    EXPECT_TRUE(frame_valid(std::span(good, kFrameHeaderBytes), 0, &a));
    EXPECT_EQ(a.kind, kFrameClose);
}
