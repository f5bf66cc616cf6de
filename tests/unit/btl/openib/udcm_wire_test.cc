// SPDX-License-Identifier: BSD-3-Clause
// The udcm cpc's UD message parser (udcm_wire.hpp) on valid, truncated,
// oversized and hostile input: nothing received on the UD QP is used before
// decode() accepts it, and what it accepts re-encodes to the same bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "udcm_wire.hpp"

using namespace weft::openib::udcm;

namespace {

Message header(MsgType t)
{
    Message m;
    m.type = t;
    m.job_hash = job_hash("job-42");
    m.src_rank = 3;
    m.dst_rank = 7;
    m.src_id = 0x1001;
    m.dst_id = t == MsgType::req ? 0 : 0x2002;
    m.attempt = 2;
    return m;
}

Message address_message(MsgType t)
{
    Message m = header(t);
    m.rc.qpn = 0x123456;
    m.rc.psn = 0xabcdef;
    m.rc.lid = 0;
    m.rc.mtu = 3;
    m.rc.recv_credits = 256;
    for (uint8_t i = 0; i < 16; ++i) {
        m.rc.gid[i] = static_cast<uint8_t>(0xf0 + i);
        m.ud.gid[i] = static_cast<uint8_t>(i);
    }
    m.ud.qpn = 0x42;
    m.ud.lid = 17;
    return m;
}

// One valid message of each type.
std::vector<Message> valid_messages()
{
    std::vector<Message> v;
    v.push_back(address_message(MsgType::req));
    v.push_back(address_message(MsgType::rep));
    v.push_back(header(MsgType::rtu));
    Message rej = header(MsgType::rej);
    rej.reason = RejectReason::stale_connection;
    rej.rejected = MsgType::req;
    v.push_back(rej);
    Message mra = header(MsgType::mra);
    mra.acknowledged = MsgType::req;
    mra.service_timeout_ms = 5000;
    v.push_back(mra);
    v.push_back(header(MsgType::dreq));
    v.push_back(header(MsgType::drep));
    return v;
}

// Decodes an exact-size heap copy, so ASan sees any read past the message.
bool parse(const std::vector<uint8_t> &bytes, Message *out, std::string *why)
{
    std::vector<uint8_t> exact(bytes);
    exact.shrink_to_fit();
    return decode(std::span<const uint8_t>(exact.data(), exact.size()), out, why);
}

std::string refusal(const std::vector<uint8_t> &bytes)
{
    Message m;
    std::string why;
    if (parse(bytes, &m, &why))
        return "";
    return why.empty() ? "(refused without a reason)" : why;
}

template <class Edit>
std::string refusal_of_edited(MsgType t, Edit edit)
{
    for (Message m : valid_messages())
        if (m.type == t) {
            edit(m);
            return refusal(encode(m));
        }
    return "no such type";
}

} // namespace

TEST(UdcmWire, EachTypeRoundTrips)
{
    for (const Message &m : valid_messages()) {
        const auto bytes = encode(m);
        ASSERT_EQ(bytes.size(), wire_size(m.type)) << to_string(m.type);
        Message got;
        std::string why;
        ASSERT_TRUE(parse(bytes, &got, &why)) << to_string(m.type) << ": " << why;
        EXPECT_EQ(got.type, m.type);
        EXPECT_EQ(got.job_hash, m.job_hash);
        EXPECT_EQ(got.src_rank, 3u);
        EXPECT_EQ(got.dst_rank, 7u);
        EXPECT_EQ(got.src_id, m.src_id);
        EXPECT_EQ(got.dst_id, m.dst_id);
        EXPECT_EQ(got.attempt, 2u);
        EXPECT_EQ(encode(got), bytes) << to_string(m.type);
    }
    Message rep;
    std::string why;
    ASSERT_TRUE(parse(encode(address_message(MsgType::rep)), &rep, &why)) << why;
    EXPECT_EQ(rep.rc.qpn, 0x123456u);
    EXPECT_EQ(rep.rc.psn, 0xabcdefu);
    EXPECT_EQ(rep.rc.mtu, 3);
    EXPECT_EQ(rep.rc.recv_credits, 256u);
    EXPECT_EQ(rep.rc.gid[15], 0xff);
    EXPECT_EQ(rep.ud.qpn, 0x42u);
    EXPECT_EQ(rep.ud.lid, 17);
    EXPECT_EQ(rep.ud.gid[15], 15);
    Message rej;
    ASSERT_TRUE(parse(encode(valid_messages()[3]), &rej, &why)) << why;
    EXPECT_EQ(rej.reason, RejectReason::stale_connection);
    EXPECT_EQ(rej.rejected, MsgType::req);
    Message mra;
    ASSERT_TRUE(parse(encode(valid_messages()[4]), &mra, &why)) << why;
    EXPECT_EQ(mra.service_timeout_ms, 5000u);
}

TEST(UdcmWire, JobHashIsStableAndSeparatesJobs)
{
    EXPECT_EQ(job_hash("job-42"), job_hash(std::string("job-") + "42"));
    EXPECT_NE(job_hash("job-42"), job_hash("job-43"));
    EXPECT_NE(job_hash(""), job_hash("a"));
    EXPECT_EQ(job_hash(""), 0xcbf29ce484222325ull);   // FNV-1a's offset basis: nothing mixed in
}

TEST(UdcmWire, EveryTruncationAndExtensionIsRefused)
{
    for (const Message &m : valid_messages()) {
        const auto bytes = encode(m);
        for (size_t n = 0; n < bytes.size(); ++n)
            EXPECT_NE(refusal({bytes.begin(), bytes.begin() + static_cast<long>(n)}), "")
                << to_string(m.type) << " cut to " << n;
        auto longer = bytes;
        longer.push_back(0);
        EXPECT_NE(refusal(longer), "") << to_string(m.type) << " one byte too long";
        longer.resize(4096, 0xff);
        EXPECT_NE(refusal(longer), "") << to_string(m.type) << " 4 KiB";
    }
    // A GRH-sized prefix left on by mistake is not a message either.
    auto with_grh = std::vector<uint8_t>(40, 0);
    const auto req = encode(valid_messages()[0]);
    with_grh.insert(with_grh.end(), req.begin(), req.end());
    EXPECT_NE(refusal(with_grh).find("magic"), std::string::npos);
}

TEST(UdcmWire, WrongMagicVersionTypeAndReservedAreRefusedWithAReason)
{
    const auto bytes = encode(valid_messages()[0]);
    auto bad = bytes;
    bad[0] ^= 1;
    EXPECT_NE(refusal(bad).find("magic"), std::string::npos);
    for (uint8_t v : {uint8_t{0}, uint8_t{2}, uint8_t{0xff}}) {
        bad = bytes;
        bad[4] = v;
        EXPECT_NE(refusal(bad).find("version"), std::string::npos) << int(v);
    }
    for (uint8_t t : {uint8_t{0}, uint8_t{8}, uint8_t{0xff}}) {
        bad = bytes;
        bad[5] = t;
        EXPECT_NE(refusal(bad).find("type"), std::string::npos) << int(t);
    }
    // A valid type whose length does not match: an RTU header on REQ bytes.
    bad = bytes;
    bad[5] = static_cast<uint8_t>(MsgType::rtu);
    EXPECT_NE(refusal(bad).find("expected"), std::string::npos);
    bad = bytes;
    bad[6] = 1;
    EXPECT_NE(refusal(bad).find("reserved"), std::string::npos);
}

TEST(UdcmWire, OutOfRangeFieldsAreRefused)
{
    using T = MsgType;
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.rc.qpn = 0; }), "");
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.rc.qpn = 1; }), "");
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.rc.qpn = 0x1000000; }), "");
    EXPECT_NE(refusal_of_edited(T::rep, [](Message &m) { m.rc.psn = 0x1000000; }), "");
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.rc.lid = 0xc000; }), "");
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.rc.mtu = 0; }), "");
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.rc.mtu = 6; }).find("mtu"), std::string::npos);
    EXPECT_NE(refusal_of_edited(T::rep, [](Message &m) { m.rc.recv_credits = kMaxRecvCredits + 1; }), "");
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.ud.qpn = 1; }).find("UD qpn"), std::string::npos);
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.ud.lid = 0xffff; }), "");
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.dst_id = 5; }), "") << "REQ naming the acceptor's id";
    EXPECT_NE(refusal_of_edited(T::req, [](Message &m) { m.src_id = 0; }), "");
    EXPECT_NE(refusal_of_edited(T::rep, [](Message &m) { m.dst_id = 0; }), "");
    EXPECT_NE(refusal_of_edited(T::rtu, [](Message &m) { m.src_id = 0; }), "");
    EXPECT_NE(refusal_of_edited(T::rtu, [](Message &m) { m.dst_rank = m.src_rank; }).find("itself"),
              std::string::npos);
    EXPECT_NE(refusal_of_edited(T::rej, [](Message &m) { m.reason = static_cast<RejectReason>(2); }), "");
    EXPECT_NE(refusal_of_edited(T::rej, [](Message &m) { m.reason = static_cast<RejectReason>(999); }), "");
    EXPECT_NE(refusal_of_edited(T::rej, [](Message &m) { m.rejected = static_cast<MsgType>(0); }), "");
    EXPECT_NE(refusal_of_edited(T::mra, [](Message &m) { m.acknowledged = MsgType::rtu; }), "");
    EXPECT_NE(refusal_of_edited(T::mra, [](Message &m) { m.service_timeout_ms = 0; }), "");
    EXPECT_NE(refusal_of_edited(T::mra, [](Message &m) { m.service_timeout_ms = kMaxServiceTimeoutMs + 1; }), "");
    // The ids that may be zero: a REJ or DREP sent by a side without a record.
    EXPECT_EQ(refusal_of_edited(T::rej, [](Message &m) { m.src_id = 0; }), "");
    EXPECT_EQ(refusal_of_edited(T::drep, [](Message &m) { m.src_id = 0; }), "");
    // The extremes that are valid.
    EXPECT_EQ(refusal_of_edited(T::req, [](Message &m) { m.rc.qpn = kMaxQpn; m.rc.psn = kMaxPsn; }), "");
    EXPECT_EQ(refusal_of_edited(T::mra, [](Message &m) { m.service_timeout_ms = kMaxServiceTimeoutMs; }), "");
}

TEST(UdcmWire, NonZeroPaddingIsRefused)
{
    // Offsets inside the bodies (see udcm_wire.hpp's layout).
    const std::pair<MsgType, size_t> pads[] = {
        {MsgType::req, kHeaderBytes + 11}, {MsgType::rep, kHeaderBytes + 32 + 6},
        {MsgType::rej, kHeaderBytes + 3},  {MsgType::mra, kHeaderBytes + 1},
        {MsgType::mra, kHeaderBytes + 3},
    };
    for (auto [type, offset] : pads)
        for (const Message &m : valid_messages())
            if (m.type == type) {
                auto bytes = encode(m);
                bytes[offset] = 0x80;
                EXPECT_NE(refusal(bytes).find("padding"), std::string::npos) << to_string(type) << " @" << offset;
            }
}

// Hostile bytes: random buffers, and valid messages with random bytes
// flipped, from a fixed seed. decode() must never crash or read past the
// input; whatever it accepts must re-encode to exactly the same bytes
// (nothing invented, nothing ignored).
TEST(UdcmWire, RandomBytesAreRefusedOrRoundTrip)
{
    std::mt19937_64 rng(20240611);
    const auto valid = valid_messages();
    size_t accepted = 0, refused = 0;
    for (int round = 0; round < 200000; ++round) {
        std::vector<uint8_t> bytes;
        if (round % 4 == 0) {
            bytes.resize(rng() % (kMaxMessageBytes + 8));
            for (auto &b : bytes)
                b = static_cast<uint8_t>(rng());
        } else {
            bytes = encode(valid[rng() % valid.size()]);
            const int flips = 1 + static_cast<int>(rng() % 3);
            for (int f = 0; f < flips; ++f)
                bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
            if (round % 7 == 0)
                bytes.resize(rng() % (bytes.size() + 1));
        }
        Message m;
        std::string why;
        if (parse(bytes, &m, &why)) {
            ++accepted;
            ASSERT_EQ(encode(m), bytes) << "round " << round;
        } else {
            ++refused;
            ASSERT_FALSE(why.empty()) << "round " << round;
        }
    }
    // Both outcomes happened: the loop exercised the checks, not only the magic.
    EXPECT_GT(accepted, 1000u);
    EXPECT_GT(refused, 1000u);
}

TEST(UdcmWire, CardRoundTripsAndRefusesDamage)
{
    UdAddress ud;
    ud.qpn = 0x4711;
    ud.lid = 0;
    for (uint8_t i = 0; i < 16; ++i)
        ud.gid[i] = static_cast<uint8_t>(i * 3);
    const auto card = encode_card(ud);
    ASSERT_EQ(card.size(), kCardBytes);
    UdAddress back;
    std::string why;
    ASSERT_TRUE(decode_card(card, &back, &why)) << why;
    EXPECT_EQ(back.qpn, 0x4711u);
    EXPECT_EQ(std::memcmp(back.gid, ud.gid, 16), 0);
    for (size_t n = 0; n < card.size(); ++n)
        EXPECT_FALSE(decode_card(std::span(card.data(), n), &back, &why)) << n;
    auto bad = card;
    bad[0] = 2;
    EXPECT_FALSE(decode_card(bad, &back, &why));
    EXPECT_NE(why.find("version"), std::string::npos);
    bad = card;
    bad[4] = 1;   // qpn 1: the GSI QP
    bad[5] = bad[6] = bad[7] = 0;
    EXPECT_FALSE(decode_card(bad, &back, &why));
    bad = card;
    bad[3] = 0xc0;   // a multicast LID
    EXPECT_FALSE(decode_card(bad, &back, &why));
}
