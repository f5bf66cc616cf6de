// SPDX-License-Identifier: BSD-3-Clause
// btl/openib's wire formats, tested directly (pure code, any host): the
// 32-bit immediate that carries every frame's header, and the business card
// that a peer reads from another process. A card is untrusted input, so
// every malformed one must be refused with a reason, never crash.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "btl_openib_wire.hpp"

using namespace weft::openib;

namespace {

constexpr FrameKind kAllKinds[] = {FrameKind::data, FrameKind::credit, FrameKind::close, FrameKind::more};

bool same_imm(const Imm &a, const Imm &b)
{
    return a.am_id == b.am_id && a.kind == b.kind && a.control_credits == b.control_credits &&
           a.data_credits == b.data_credits;
}

std::string describe(const Imm &imm)
{
    return "am " + std::to_string(imm.am_id) + " kind " + std::to_string(int(imm.kind)) + " control " +
           std::to_string(imm.control_credits) + " data " + std::to_string(imm.data_credits);
}

// A card as a RoCE port running both cpcs would publish it.
Card sample_card()
{
    Card card;
    for (uint8_t i = 0; i < 16; ++i)
        card.gid[i] = static_cast<uint8_t>(0xa0 + i);
    card.lid = 0x1234;
    card.roce = true;
    card.subnet_prefix = 0xfe80000000000000ull;
    card.sections.push_back({"udcm", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}});
    card.sections.push_back({"rdmacm", {10, 77, 0, 1, 0x12, 0x34}});
    return card;
}

bool same_card(const Card &a, const Card &b)
{
    if (std::memcmp(a.gid, b.gid, sizeof a.gid) != 0 || a.lid != b.lid || a.roce != b.roce ||
        a.subnet_prefix != b.subnet_prefix || a.sections.size() != b.sections.size())
        return false;
    for (size_t i = 0; i < a.sections.size(); ++i)
        if (a.sections[i].cpc != b.sections[i].cpc || a.sections[i].data != b.sections[i].data)
            return false;
    return true;
}

// Offsets into an encoded card (see encode_card): magic 4, gid 16, lid 2,
// roce 1, subnet prefix 8, then the section count.
constexpr size_t kRoceOffset = 4 + 16 + 2;
constexpr size_t kSectionCountOffset = kRoceOffset + 1 + 8;

} // namespace

TEST(OpenibWire, ImmediateRoundTripsEveryKindAtTheCreditLimits)
{
    const uint32_t data_credits[] = {0, 1, 2, 63, 64, 4095, 4096, kMaxDataCredits - 1, kMaxDataCredits};
    const uint8_t am_ids[] = {0, 1, 127, 128, 254, 255};
    for (FrameKind kind : kAllKinds)
        for (uint8_t am : am_ids)
            for (uint32_t control = 0; control <= kMaxControlCredits; ++control)
                for (uint32_t data : data_credits) {
                    const Imm in{am, kind, control, data};
                    Imm out;
                    decode_imm(encode_imm(in), &out);
                    ASSERT_TRUE(same_imm(in, out)) << describe(in) << " came back as " << describe(out);
                }
}

TEST(OpenibWire, EveryImmediateDecodesAndEncodesBackToItself)
{
    // The receiver decodes whatever arrives; the format has no spare bits,
    // so decoding then encoding must give back the very same 32 bits. A
    // prime stride visits about a million values spread over the whole range.
    uint64_t checked = 0;
    for (uint64_t raw = 0; raw <= UINT32_MAX; raw += 4099, ++checked) {
        Imm imm;
        decode_imm(static_cast<uint32_t>(raw), &imm);
        ASSERT_LE(imm.control_credits, kMaxControlCredits);
        ASSERT_LE(imm.data_credits, kMaxDataCredits);
        ASSERT_EQ(encode_imm(imm), static_cast<uint32_t>(raw)) << describe(imm);
    }
    EXPECT_GT(checked, 1'000'000u);
    // The extremes by name.
    Imm all_ones;
    decode_imm(UINT32_MAX, &all_ones);
    EXPECT_TRUE(same_imm(all_ones, Imm{255, FrameKind::more, kMaxControlCredits, kMaxDataCredits}))
        << describe(all_ones);
}

TEST(OpenibWire, CardRoundTrips)
{
    const Card in = sample_card();
    const std::vector<uint8_t> bytes = encode_card(in);
    Card out;
    std::string why;
    ASSERT_TRUE(decode_card(bytes, &out, &why)) << why;
    EXPECT_TRUE(same_card(in, out));

    // InfiniBand, no sections, and a section at the size limit.
    Card ib;
    ib.lid = 7;
    ib.subnet_prefix = 0xfe80000000001234ull;
    ASSERT_TRUE(decode_card(encode_card(ib), &out, &why)) << why;
    EXPECT_TRUE(same_card(ib, out));
    EXPECT_FALSE(out.roce);
    ib.sections.push_back({"oob", std::vector<uint8_t>(kMaxSectionBytes, 0x5a)});
    for (size_t i = 1; i < kMaxSections; ++i)
        ib.sections.push_back({"cpc" + std::to_string(i), {static_cast<uint8_t>(i)}});
    ASSERT_TRUE(decode_card(encode_card(ib), &out, &why)) << why;
    EXPECT_TRUE(same_card(ib, out));
}

TEST(OpenibWire, EveryTruncatedCardIsRefusedWithAReason)
{
    const std::vector<uint8_t> bytes = encode_card(sample_card());
    for (size_t len = 0; len < bytes.size(); ++len) {
        Card out;
        std::string why;
        EXPECT_FALSE(decode_card(std::span(bytes.data(), len), &out, &why)) << "accepted " << len << " bytes";
        EXPECT_FALSE(why.empty()) << "no reason for a card cut to " << len << " bytes";
    }
}

TEST(OpenibWire, BadMagicIsRefusedAndSaysWhatToCheck)
{
    std::vector<uint8_t> bytes = encode_card(sample_card());
    bytes[0] ^= 0x01;
    Card out;
    std::string why;
    EXPECT_FALSE(decode_card(bytes, &out, &why));
    EXPECT_NE(why.find("magic"), std::string::npos) << why;
    EXPECT_NE(why.find("same weft"), std::string::npos) << why;
}

TEST(OpenibWire, TooManySectionsAreRefused)
{
    Card card = sample_card();
    card.sections.clear();
    for (size_t i = 0; i <= kMaxSections; ++i)
        card.sections.push_back({"cpc" + std::to_string(i), {1}});
    Card out;
    std::string why;
    EXPECT_FALSE(decode_card(encode_card(card), &out, &why));
    EXPECT_NE(why.find(std::to_string(kMaxSections + 1) + " cpc sections"), std::string::npos) << why;
    EXPECT_NE(why.find("at most " + std::to_string(kMaxSections)), std::string::npos) << why;
}

TEST(OpenibWire, InvalidLinkLayerIsRefused)
{
    std::vector<uint8_t> bytes = encode_card(sample_card());
    bytes[kRoceOffset] = 2;
    Card out;
    std::string why;
    EXPECT_FALSE(decode_card(bytes, &out, &why));
    EXPECT_NE(why.find("link layer"), std::string::npos) << why;
}

TEST(OpenibWire, OversizedSectionIsRefused)
{
    Card card = sample_card();
    card.sections[1].data.assign(kMaxSectionBytes + 1, 0x11);
    Card out;
    std::string why;
    EXPECT_FALSE(decode_card(encode_card(card), &out, &why));
    EXPECT_NE(why.find("'rdmacm'"), std::string::npos) << why;
    EXPECT_NE(why.find(std::to_string(kMaxSectionBytes)), std::string::npos) << why;
}

TEST(OpenibWire, BadSectionNamesAreRefused)
{
    // An empty name, and one longer than any cpc's (16 bytes at most).
    for (const std::string &name : {std::string(), std::string(17, 'x')}) {
        Card card = sample_card();
        card.sections[0].cpc = name;
        Card out;
        std::string why;
        EXPECT_FALSE(decode_card(encode_card(card), &out, &why)) << "name of " << name.size() << " bytes";
        EXPECT_NE(why.find("section 0 has a bad cpc name"), std::string::npos) << why;
    }
}

TEST(OpenibWire, TrailingBytesAreRefused)
{
    std::vector<uint8_t> bytes = encode_card(sample_card());
    bytes.push_back(0);
    bytes.push_back(0);
    bytes.push_back(0);
    Card out;
    std::string why;
    EXPECT_FALSE(decode_card(bytes, &out, &why));
    EXPECT_NE(why.find("3 trailing bytes"), std::string::npos) << why;
}

TEST(OpenibWire, SectionCountBeyondTheBytesIsRefused)
{
    // The count says more sections than the card holds.
    std::vector<uint8_t> bytes = encode_card(sample_card());
    bytes[kSectionCountOffset] = 3;
    Card out;
    std::string why;
    EXPECT_FALSE(decode_card(bytes, &out, &why));
    EXPECT_NE(why.find("section 2"), std::string::npos) << why;
}

// Random bytes, and random damage to a real card: each must be refused with
// a reason or decode to a card that encodes back to exactly those bytes.
// (Run under ASan/UBSan this is a small deterministic fuzzer.)
TEST(OpenibWire, RandomAndDamagedCardsAreRefusedOrRoundTrip)
{
    std::mt19937 rng(0x0123face);
    const std::vector<uint8_t> good = encode_card(sample_card());
    size_t accepted = 0, refused = 0;
    auto check = [&](const std::vector<uint8_t> &bytes) {
        Card out;
        std::string why;
        if (decode_card(bytes, &out, &why)) {
            ++accepted;
            EXPECT_EQ(encode_card(out), bytes) << "a card decoded but does not encode back to its bytes";
        } else {
            ++refused;
            EXPECT_FALSE(why.empty()) << "refused without a reason";
        }
    };
    std::uniform_int_distribution<int> byte(0, 255);
    for (int i = 0; i < 20000; ++i) {
        // Pure noise, half of it behind the right magic so the parser gets past it.
        std::vector<uint8_t> noise(std::uniform_int_distribution<size_t>(0, 160)(rng));
        for (uint8_t &b : noise)
            b = static_cast<uint8_t>(byte(rng));
        if (i % 2 && noise.size() >= 4)
            std::copy(good.begin(), good.begin() + 4, noise.begin());
        check(noise);

        // A real card with a few bytes changed, cut short or extended.
        std::vector<uint8_t> damaged = good;
        const int flips = std::uniform_int_distribution<int>(1, 3)(rng);
        for (int f = 0; f < flips; ++f)
            damaged[std::uniform_int_distribution<size_t>(0, damaged.size() - 1)(rng)] =
                static_cast<uint8_t>(byte(rng));
        switch (i % 3) {
        case 1:
            damaged.resize(std::uniform_int_distribution<size_t>(0, damaged.size())(rng));
            break;
        case 2:
            damaged.push_back(static_cast<uint8_t>(byte(rng)));
            break;
        default:
            break;
        }
        check(damaged);
    }
    // Both outcomes were exercised: some damage (in the GID, say) leaves a valid card.
    EXPECT_GT(accepted, 0u);
    EXPECT_GT(refused, 0u);
}
