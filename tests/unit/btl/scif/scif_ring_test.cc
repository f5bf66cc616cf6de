// SPDX-License-Identifier: BSD-3-Clause
// btl/scif's shared-memory ring in one process: chunks arrive whole and in
// order, a burst may fill the whole ring, and small messages that the
// consumer keeps up with stay in the ring's first kHotCells cells (the pad
// that sends the producer back to cell 0 may need several pieces).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "scif_ring.hpp"

using namespace weft::scif;

namespace {

struct Ring {
    explicit Ring(uint32_t cells)
        : mem(static_cast<std::byte *>(std::aligned_alloc(kCell, ring_bytes(cells))), &std::free)
    {
        std::memset(mem.get(), 0, ring_bytes(cells));
        shared = reinterpret_cast<RingShared *>(mem.get());
        ring_init(shared, cells);
        producer = RingProducer(shared);
        consumer = RingConsumer(shared);
    }
    std::unique_ptr<std::byte, decltype(&std::free)> mem;
    RingShared *shared = nullptr;
    RingProducer producer;
    RingConsumer consumer;

    bool send(uint64_t value, size_t len = sizeof(uint64_t))
    {
        if (!producer.has_room(len))
            return false;
        auto dst = producer.reserve(len);
        std::memset(dst.data(), static_cast<int>(value & 0xff), len);
        std::memcpy(dst.data(), &value, std::min(len, sizeof value));
        producer.publish(static_cast<ChunkType>(kFirstUserType), 7);
        return true;
    }
    // The next chunk's value and where its payload sits in the ring.
    bool take(uint64_t *value, size_t *offset, size_t *len = nullptr)
    {
        Chunk c;
        if (!consumer.peek(&c))
            return false;
        EXPECT_EQ(c.tag, 7);
        std::memcpy(value, c.payload.data(), std::min(c.payload.size(), sizeof *value));
        *offset = static_cast<size_t>(c.payload.data() - shared->cell0);
        if (len)
            *len = c.payload.size();
        consumer.pop();
        return true;
    }
    // The next chunk's value, its cells freed without returning their
    // credit (consume); false when nothing is published.
    bool consume(uint64_t *value)
    {
        Chunk c;
        if (!consumer.peek(&c))
            return false;
        std::memcpy(value, c.payload.data(), std::min(c.payload.size(), sizeof *value));
        consumer.consume();
        return true;
    }
};

} // namespace

TEST(ScifRing, SmallMessagesTheConsumerKeepsUpWithStayInTheHotCells)
{
    Ring r(32768);   // 2 MiB: the pad back to cell 0 takes two pieces
    size_t furthest = 0;
    for (uint64_t i = 0; i < 5 * kHotCells; ++i) {
        ASSERT_TRUE(r.send(i)) << i;
        uint64_t got = 0;
        size_t off = 0;
        ASSERT_TRUE(r.take(&got, &off)) << i;
        ASSERT_EQ(got, i);
        furthest = std::max(furthest, off);
    }
    EXPECT_LE(furthest, size_t{kHotCells + 1} * kCell);
    EXPECT_TRUE(r.producer.empty());
}

TEST(ScifRing, ABurstFillsTheWholeRingAndArrivesInOrder)
{
    Ring r(8 * kHotCells);
    const size_t len = 200;   // 4 cells each
    uint64_t sent = 0;
    while (r.send(sent, len))
        ++sent;
    EXPECT_GT(sent * 4, size_t{7} * kHotCells);   // far past the hot cells
    uint64_t got = 0;
    size_t off = 0, n = 0;
    size_t furthest = 0;
    for (uint64_t i = 0; i < sent; ++i) {
        ASSERT_TRUE(r.take(&got, &off, &n)) << i;
        ASSERT_EQ(got, i);
        ASSERT_EQ(n, len);
        furthest = std::max(furthest, off);
    }
    EXPECT_GT(furthest, size_t{4} * kHotCells * kCell);
    EXPECT_FALSE(r.take(&got, &off));
    // Interleaved again after the burst: everything still arrives.
    for (uint64_t i = 0; i < 3 * kHotCells; ++i) {
        ASSERT_TRUE(r.send(1000000 + i, 1 + i % 300));
        ASSERT_TRUE(r.take(&got, &off, &n));
        ASSERT_EQ(n, 1 + i % 300);
        if (n >= sizeof got) {
            ASSERT_EQ(got, 1000000 + i);
        }
    }
}

// The btl frees a batch of chunks with consume() and returns their credit
// with one publish_head(): until then the producer sees a full ring, after
// it the whole ring again, and the freed cells (multi-cell chunks and the
// pad included) never look published when the producer comes round again.
TEST(ScifRing, ABatchConsumedIsCreditedWhenTheHeadIsPublished)
{
    Ring r(256);
    const size_t len = 100;   // 2 cells each
    uint64_t sent = 0;
    while (r.send(sent, len))
        ++sent;
    ASSERT_GT(sent, 0u);
    uint64_t got = 0;
    for (uint64_t i = 0; i < sent; ++i) {
        ASSERT_TRUE(r.consume(&got)) << i;
        ASSERT_EQ(got, i);
    }
    EXPECT_FALSE(r.consume(&got));
    EXPECT_FALSE(r.producer.has_room(len)) << "credit returned before publish_head()";
    EXPECT_FALSE(r.producer.empty());
    r.consumer.publish_head();
    EXPECT_TRUE(r.producer.empty());
    // Round the ring twice more in batches of 3, odd sizes, so pads and
    // chunks land on cells other chunks used.
    uint64_t next = 0, expect = 0;
    for (int round = 0; round < 200; ++round) {
        for (int k = 0; k < 3; ++k, ++next)
            ASSERT_TRUE(r.send(next, 8 + next % 150)) << next;
        for (int k = 0; k < 3; ++k, ++expect) {
            ASSERT_TRUE(r.consume(&got)) << expect;
            ASSERT_EQ(got, expect);
        }
        EXPECT_FALSE(r.consume(&got));
        r.consumer.publish_head();
    }
    EXPECT_TRUE(r.producer.empty());
}
