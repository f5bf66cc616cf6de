// SPDX-License-Identifier: BSD-3-Clause
// Tag matching (engine/matching.hpp): alone over a portal table (posting
// order, wildcard source and tag, contexts, the fast path's frame, cancel,
// a failed source, the unexpected queue's order), and in two engines over
// a fake host (engine_fake_host.hpp): a message that finds its receive
// posted lands in it, one that finds none waits, and a new receive takes
// what arrived before it is posted; truncation either way.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <vector>

#include "engine/matching.hpp"
#include "engine_fake_host.hpp"

namespace {

using weft::engine::Matching;
using weft::engine::PutInfo;
using weft::engine::Request;
using weft::engine::tag_bits;
namespace wire = weft::engine::wire;

class MatchingAlone : public ::testing::Test {
protected:
    // A receive of len bytes into buf for source and tag (context 0), posted.
    Request *post(uint32_t source, int32_t tag, void *buf = nullptr, size_t len = 0, uint32_t context = 0)
    {
        Request &r = requests_.emplace_back();
        r.is_recv = true;
        r.buf = buf;
        r.len = len;
        Matching::set_key(&r, source, tag, context);
        matching.post(&r);
        return &r;
    }
    // An eager message from src with tag that no receive wanted yet.
    void arrive(uint32_t src, int32_t tag, std::vector<std::byte> data)
    {
        PutInfo u;
        u.source = src;
        u.type = wire::Type::Eager;
        u.portal = WEFT_PT_TAGGED;
        u.match_bits = tag_bits(0, tag);
        u.length = data.size();
        portals.store_unexpected(u, data);
    }
    static std::vector<std::byte> tagged_frame(int32_t tag, std::vector<std::byte> payload)
    {
        wire::Tagged t;
        t.type = static_cast<uint8_t>(wire::Type::Tagged);
        t.set_match_bits(tag_bits(0, tag));
        std::vector<std::byte> f(sizeof t);
        std::memcpy(f.data(), &t, sizeof t);
        f.insert(f.end(), payload.begin(), payload.end());
        return f;
    }

    weft::engine::Portals portals{1, 3};
    Matching matching{portals};
    std::deque<Request> requests_;   // stable addresses
};

TEST_F(MatchingAlone, MessageTakesTheOldestPostedReceiveItMatches)
{
    Request *a = post(0, 5);
    Request *any = post(WEFT_ANY_SOURCE, WEFT_ANY_TAG);
    Request *b = post(0, 5);
    Request *from2 = post(2, 5);
    // Posting order decides, a wildcard receive included.
    EXPECT_EQ(matching.match_posted(0, tag_bits(0, 5)), a);
    EXPECT_EQ(matching.match_posted(0, tag_bits(0, 5)), any);
    EXPECT_EQ(matching.match_posted(0, tag_bits(0, 5)), b);
    // A receive for another source is passed over.
    EXPECT_EQ(matching.match_posted(0, tag_bits(0, 5)), nullptr);
    EXPECT_TRUE(from2->posted);
    EXPECT_EQ(matching.match_posted(2, tag_bits(0, 5)), from2);
    EXPECT_FALSE(matching.any_posted());
    EXPECT_FALSE(a->posted);
}

TEST_F(MatchingAlone, AnyTagStaysInsideItsContext)
{
    Request *r = post(WEFT_ANY_SOURCE, WEFT_ANY_TAG, nullptr, 0, /*context=*/2);
    EXPECT_EQ(matching.match_posted(1, tag_bits(0, 7)), nullptr);
    EXPECT_EQ(matching.match_posted(1, tag_bits(3, 7)), nullptr);
    EXPECT_EQ(matching.match_posted(1, tag_bits(2, 7)), r);
}

TEST_F(MatchingAlone, TaggedFrameLandsInItsReceiveAndTruncatesToTheBuffer)
{
    char small[4] = {};
    Request *r = post(1, 3, small, sizeof small);
    const std::vector<std::byte> eight = {std::byte{'a'}, std::byte{'b'}, std::byte{'c'}, std::byte{'d'},
                                          std::byte{'e'}, std::byte{'f'}, std::byte{'g'}, std::byte{'h'}};
    // Another tag: left for the general path, the receive stays posted.
    auto other = tagged_frame(4, eight);
    EXPECT_FALSE(matching.land_tagged_frame(1, other.data(), other.size()));
    EXPECT_TRUE(r->posted);
    auto frame = tagged_frame(3, eight);
    ASSERT_TRUE(matching.land_tagged_frame(1, frame.data(), frame.size()));
    EXPECT_TRUE(r->done);
    EXPECT_EQ(r->status.error, WEFT_ERR_TRUNCATED);
    EXPECT_EQ(r->status.count, sizeof small);
    EXPECT_EQ(r->status.source, 1u);
    EXPECT_EQ(r->status.tag, 3);
    EXPECT_EQ(std::memcmp(small, "abcd", 4), 0);
    // Nothing posted: nothing to land.
    EXPECT_FALSE(matching.land_tagged_frame(1, frame.data(), frame.size()));
}

TEST_F(MatchingAlone, ArrivedMessagesAreTakenOldestFirstAndProbedInPlace)
{
    arrive(1, 1, {std::byte{10}});
    arrive(2, 2, {std::byte{20}});
    arrive(1, 1, {std::byte{30}});
    const auto *seen = matching.probe(WEFT_ANY_SOURCE, 2, 0);
    ASSERT_NE(seen, nullptr);
    EXPECT_EQ(seen->data()[0], std::byte{20});
    EXPECT_EQ(matching.probe(WEFT_ANY_SOURCE, 2, 0), seen) << "probing takes nothing";
    EXPECT_EQ(matching.probe(0, WEFT_ANY_TAG, 0), nullptr);
    EXPECT_EQ(matching.probe(1, WEFT_ANY_TAG, 1), nullptr) << "another context";

    Request key;
    Matching::set_key(&key, WEFT_ANY_SOURCE, WEFT_ANY_TAG, 0);
    auto *first = matching.take_arrived(key);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->data()[0], std::byte{10});
    portals.free_unexpected(first);
    Matching::set_key(&key, 1, 1, 0);
    auto *third = matching.take_arrived(key);
    ASSERT_NE(third, nullptr);
    EXPECT_EQ(third->data()[0], std::byte{30}) << "the tag-2 message in between is passed over";
    portals.free_unexpected(third);
    EXPECT_EQ(matching.take_arrived(key), nullptr);
    EXPECT_TRUE(portals.has_unexpected(WEFT_PT_TAGGED));
}

TEST_F(MatchingAlone, CancelAndAFailedSourceEndPostedReceivesOnly)
{
    Request *from1 = post(1, 1);
    Request *from2 = post(2, 1);
    Request *any = post(WEFT_ANY_SOURCE, 1);
    matching.fail_source(1, WEFT_ERR_UNREACHABLE);
    EXPECT_TRUE(from1->done);
    EXPECT_EQ(from1->status.error, WEFT_ERR_UNREACHABLE);
    EXPECT_FALSE(from2->done);
    EXPECT_FALSE(any->done) << "another rank may still satisfy it";
    EXPECT_TRUE(matching.cancel(from2));
    EXPECT_EQ(from2->status.error, WEFT_ERR_CANCELED);
    EXPECT_FALSE(matching.cancel(from2)) << "no longer posted";
    EXPECT_EQ(matching.match_posted(2, tag_bits(0, 1)), any);
}

// ---------------------------------------------------------------- in the engine

using Matched = weft::test::EnginePair;

TEST_F(Matched, PostedReceiveTakesTheMessageElseItWaitsAndANewReceiveTakesItFirst)
{
    int first = 0, second = 0, later = 0;
    weft_request_t r1, r2, r3, s;
    // Posted before the message: it lands there, nothing is left waiting.
    ASSERT_TRUE(e1.irecv(&first, sizeof first, 0, 1, 0, &r1).ok());
    int one = 1, two = 2, three = 3;
    ASSERT_TRUE(e0.isend(&one, sizeof one, 1, 1, 0, 0, &s).ok());
    e0.free_request(e0.request(s));
    ASSERT_TRUE(pump([&] { return e1.request(r1)->done; }));
    EXPECT_EQ(first, 1);
    int flag = 1;
    ASSERT_TRUE(e1.iprobe(WEFT_ANY_SOURCE, WEFT_ANY_TAG, 0, &flag, nullptr).ok());
    EXPECT_EQ(flag, 0);
    // No receive: the message waits; a receive posted later takes it at
    // once (before a message sent after it), without being posted.
    ASSERT_TRUE(e0.isend(&two, sizeof two, 1, 2, 0, 0, &s).ok());
    e0.free_request(e0.request(s));
    weft_msg_status_t st{};
    ASSERT_TRUE(pump([&] {
        return e1.iprobe(WEFT_ANY_SOURCE, WEFT_ANY_TAG, 0, &flag, &st).ok() && flag == 1;
    }));
    EXPECT_EQ(st.tag, 2);
    ASSERT_TRUE(e1.irecv(&second, sizeof second, WEFT_ANY_SOURCE, WEFT_ANY_TAG, 0, &r2).ok());
    EXPECT_TRUE(e1.request(r2)->done);
    EXPECT_EQ(second, 2);
    ASSERT_TRUE(e1.irecv(&later, sizeof later, 0, WEFT_ANY_TAG, 0, &r3).ok());
    EXPECT_FALSE(e1.request(r3)->done);
    ASSERT_TRUE(e0.isend(&three, sizeof three, 1, 3, 0, 0, &s).ok());
    e0.free_request(e0.request(s));
    ASSERT_TRUE(pump([&] { return e1.request(r3)->done; }));
    EXPECT_EQ(later, 3);
    EXPECT_EQ(e1.request(r3)->status.tag, 3);
    for (weft_request_t r : {r1, r2, r3})
        e1.free_request(e1.request(r));
}

TEST_F(Matched, ShortReceiveIsTruncatedWhetherTheMessageWasPostedOrWaiting)
{
    const int64_t value = 0x1122334455667788;
    int32_t half = 0;
    weft_request_t r, s;
    ASSERT_TRUE(e1.irecv(&half, sizeof half, 0, 4, 0, &r).ok());
    ASSERT_TRUE(e0.isend(&value, sizeof value, 1, 4, 0, 0, &s).ok());
    e0.free_request(e0.request(s));
    ASSERT_TRUE(pump([&] { return e1.request(r)->done; }));
    EXPECT_EQ(e1.request(r)->status.error, WEFT_ERR_TRUNCATED);
    EXPECT_EQ(e1.request(r)->status.count, sizeof half);
    EXPECT_EQ(std::memcmp(&half, &value, sizeof half), 0);
    e1.free_request(e1.request(r));

    // The same message waiting first.
    ASSERT_TRUE(e0.isend(&value, sizeof value, 1, 5, 0, 0, &s).ok());
    e0.free_request(e0.request(s));
    int flag = 0;
    ASSERT_TRUE(pump([&] {
        return e1.iprobe(0, 5, 0, &flag, nullptr).ok() && flag == 1;
    }));
    half = 0;
    ASSERT_TRUE(e1.irecv(&half, sizeof half, 0, 5, 0, &r).ok());
    ASSERT_TRUE(e1.request(r)->done);
    EXPECT_EQ(e1.request(r)->status.error, WEFT_ERR_TRUNCATED);
    EXPECT_EQ(e1.request(r)->status.count, sizeof half);
    EXPECT_EQ(std::memcmp(&half, &value, sizeof half), 0);
    e1.free_request(e1.request(r));
}

} // namespace
