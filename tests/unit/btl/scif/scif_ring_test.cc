// SPDX-License-Identifier: BSD-3-Clause
// btl/scif's shared-memory ring in one process: chunks arrive whole and in
// order, a burst may fill the whole ring, and small messages that the
// consumer keeps up with stay in the ring's first kHotCells cells (the pad
// that sends the producer back to cell 0 may need several pieces).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

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

    // send() of a chunk that fits a cell tries put_cell first (the btl's
    // small-message path), its payload in two pieces.
    bool cell_path = false;
    uint64_t cell_sends = 0;

    // continues: a fragment after a message's first (RingProducer::reserve).
    bool send(uint64_t value, size_t len = sizeof(uint64_t), bool continues = false)
    {
        if (cell_path && len <= kCellPayload) {
            std::byte buf[kCellPayload];
            std::memset(buf, static_cast<int>(value & 0xff), len);
            std::memcpy(buf, &value, std::min(len, sizeof value));
            const size_t split = std::min<size_t>(len, 3);
            if (producer.put_cell(static_cast<ChunkType>(kFirstUserType), 7, {buf, split},
                                  {buf + split, len - split})) {
                ++cell_sends;
                return true;
            }
        }
        if (!producer.has_room(len))
            return false;
        auto dst = producer.reserve(len, continues);
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
    // A first-lap chunk of len bytes whose every continuation cell holds,
    // where a header would sit, the header that would publish a chunk of
    // value 0xdead at the same cell one lap later: stale payload that looks
    // published to a consumer that polls it then.
    void send_lures(size_t len)
    {
        auto dst = producer.reserve(len);
        std::byte *first = dst.data() - kChunkHeader;
        const size_t cell = static_cast<size_t>(first - shared->cell0) / kCell;
        std::memset(dst.data(), 0, len);
        for (size_t c = 1; c < cells_for(len); ++c) {
            const uint32_t head[2] = {ring_detail::seq_of(cell + c + shared->cells),
                                      ring_detail::pack_meta(8, static_cast<ChunkType>(kFirstUserType), 7)};
            const uint64_t dead = 0xdead;
            std::memcpy(first + c * kCell, head, sizeof head);
            if (c + 1 < cells_for(len))
                std::memcpy(first + c * kCell + kChunkHeader, &dead, sizeof dead);
        }
        producer.publish(static_cast<ChunkType>(kFirstUserType), 7);
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

void small_messages_stay_in_the_hot_cells(bool cell_path)
{
    Ring r(32768);   // 2 MiB: the pad back to cell 0 takes two pieces
    r.cell_path = cell_path;
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
    if (cell_path) {
        EXPECT_GT(r.cell_sends, 4 * kHotCells);
    }
}

} // namespace

// has_room_for() answers for the cells the chunks will really take: from an
// empty ring whose tail is past the hot region, reserve() first pads to the
// ring's end, and the chunks then have only the cells below the old tail
// until the consumer moves. btl/scif's sendx(WEFT_BTL_SEND_NOW) relies on
// it: a "yes" that ran out of room halfway would queue a copy.
TEST(ScifRing, RoomForSeveralChunksCountsThePadBackToCellZero)
{
    Ring r(32768);
    constexpr uint32_t kTail = kHotCells + 1;
    ASSERT_TRUE(r.send(1, kTail * kCell - kChunkHeader));   // one chunk of kTail cells
    uint64_t got = 0;
    size_t off = 0;
    ASSERT_TRUE(r.take(&got, &off));
    ASSERT_TRUE(r.producer.empty());
    constexpr size_t kLen = 16392;   // a 16 KiB fragment and its 8-byte total
    const uint32_t per = cells_for(kLen);
    const size_t fit = kTail / per;  // below the old tail
    EXPECT_TRUE(r.producer.has_room_for(fit, kLen));
    EXPECT_FALSE(r.producer.has_room_for(fit + 1, kLen)) << "the ring is empty, but the pad takes its end";
    // What the answer stood for: fit chunks go in, the next one does not.
    for (size_t i = 0; i < fit; ++i)
        ASSERT_TRUE(r.send(10 + i, kLen)) << i;
    EXPECT_FALSE(r.producer.has_room(kLen));
}

// Streamed messages (fragments published one by one, each read while the
// next is written) that the consumer keeps up with stay near the hot cells
// too: the producer looks for an empty ring where a message starts, not at
// a later fragment, where the consumer still has the one before to read.
// Looked at there, the ring was never empty and the next look came after
// the next message's start: such traffic walked all 2 MiB of the ring.
TEST(ScifRing, StreamedMessagesTheConsumerKeepsUpWithStayNearTheHotCells)
{
    Ring r(32768);
    constexpr size_t kFragment = 2056;   // 2 KiB and a header: 33 cells
    constexpr int kFragments = 3;   // a look past kHotCells first falls on a later fragment
    size_t furthest = 0;
    uint64_t got = 0;
    size_t off = 0;
    for (uint64_t m = 0; m < 1000; ++m) {
        for (int f = 0; f < kFragments; ++f) {
            const uint64_t value = m * kFragments + f;
            ASSERT_TRUE(r.send(value, kFragment, f > 0)) << value;
            if (f > 0) {   // the fragment before, while this one is in
                ASSERT_TRUE(r.take(&got, &off));
                ASSERT_EQ(got, value - 1);
                furthest = std::max(furthest, off);
            }
        }
        ASSERT_TRUE(r.take(&got, &off));   // the last: caught up
        ASSERT_EQ(got, m * kFragments + kFragments - 1);
        furthest = std::max(furthest, off);
    }
    EXPECT_LE(furthest, size_t{kHotCells + kFragments * cells_for(kFragment)} * kCell);
}

// A small chunk, once published, claims the kClaimAheadCells cells after it
// for writing, each cell once; a mid-sized one claims its own cells before
// the copy but none after it; a large one claims nothing; and no claim
// reaches a cell that still holds a chunk the consumer has not read (a
// claim pulls the line away from the consumer's cache, so that would slow
// the consumer down).
TEST(ScifRing, ASmallChunkClaimsTheNextCellsButNeverUnreadOnes)
{
    Ring r(256);
    r.cell_path = true;
    ASSERT_TRUE(r.send(1, 64));   // two cells, by reserve/publish
    EXPECT_EQ(r.producer.position(), 2u);
    EXPECT_EQ(r.producer.claimed(), 2u + kClaimAheadCells);
    ASSERT_TRUE(r.send(2, 8));    // one cell, by put_cell
    EXPECT_EQ(r.cell_sends, 1u);
    EXPECT_EQ(r.producer.claimed(), 3u + kClaimAheadCells);
    const uint64_t before = r.producer.claimed();
    ASSERT_TRUE(r.send(3, (kClaimMaxChunkCells + 8) * kCell));   // past the small sizes
    EXPECT_GT(before, 3u) << "the claims so far reach past the third chunk's first cell";
    EXPECT_EQ(r.producer.claimed(), r.producer.position()) << "a mid-sized chunk claims its own cells only";
    const uint64_t own = r.producer.claimed();
    ASSERT_TRUE(r.send(4, (kClaimOwnMaxCells + 8) * kCell - kChunkHeader));   // 72 cells
    EXPECT_EQ(r.producer.claimed(), own) << "a large chunk is left to the copy";
    uint64_t got = 0;
    size_t off = 0;
    for (int i = 0; i < 4; ++i)
        ASSERT_TRUE(r.take(&got, &off));
    // Now fill the ring with nothing read: the claims stop at the cells the
    // consumer has yet to read, head + 256.
    const uint64_t head = r.producer.position();
    uint64_t n = 0;
    while (r.send(100 + n, 64)) {
        ++n;
        EXPECT_LE(r.producer.claimed(), head + 256) << "after chunk " << n;
    }
    EXPECT_EQ(n, 128u);
    EXPECT_EQ(r.producer.claimed(), head + 256);
}

TEST(ScifRing, SmallMessagesTheConsumerKeepsUpWithStayInTheHotCells)
{
    small_messages_stay_in_the_hot_cells(false);
}

TEST(ScifRing, OneCellMessagesTheConsumerKeepsUpWithStayInTheHotCells)
{
    small_messages_stay_in_the_hot_cells(true);
}

// One-cell chunks by put_cell, longer ones by reserve/publish, in one
// stream that wraps many times, the consumer now keeping up and now
// lagging a batch behind: every chunk arrives once, in order, whole.
TEST(ScifRing, OneCellChunksMixedWithLongerOnesArriveInOrder)
{
    for (uint32_t cells : {64u, 32768u}) {
        Ring r(cells);
        r.cell_path = true;
        uint64_t sent = 0, got_n = 0;
        for (uint64_t round = 0; round < 4 * kHotCells; ++round) {
            const size_t burst = round % 7 == 0 ? 40 : 1;
            for (size_t k = 0; k < burst; ++k, ++sent) {
                const size_t len = 1 + (sent * 13) % (sent % 5 == 0 ? 300 : kCellPayload);
                if (!r.send(sent, len))
                    break;
            }
            uint64_t got = 0;
            size_t off = 0, len = 0;
            while (got_n < sent && r.take(&got, &off, &len)) {
                const size_t want = 1 + (got_n * 13) % (got_n % 5 == 0 ? 300 : kCellPayload);
                ASSERT_EQ(len, want) << cells << " chunk " << got_n;
                if (len >= sizeof got) {
                    ASSERT_EQ(got, got_n) << cells;
                }
                const auto fill = static_cast<std::byte>(got_n & 0xff);
                const std::byte *p = r.shared->cell0 + off;
                for (size_t b = sizeof got; b < len; ++b)
                    ASSERT_EQ(p[b], fill) << cells << " chunk " << got_n << " byte " << b;
                ++got_n;
            }
        }
        EXPECT_GT(r.cell_sends, 2 * kHotCells) << cells;
        EXPECT_TRUE(r.producer.empty()) << cells;
    }
}

// put_cell answers from the head it last read: a full ring stays full to it
// after the consumer frees cells, until has_room() reads the head again.
TEST(ScifRing, TheCellPathDeclinesAFullRingUntilTheHeadIsRead)
{
    Ring r(64);
    r.cell_path = true;
    uint64_t sent = 0;
    while (r.send(sent))
        ++sent;
    EXPECT_EQ(sent, 64u);
    EXPECT_EQ(r.cell_sends, 64u);
    uint64_t got = 0;
    for (uint64_t i = 0; i < sent; ++i) {
        ASSERT_TRUE(r.consume(&got));
        ASSERT_EQ(got, i);
    }
    r.consumer.publish_head();
    const std::byte b[8] = {};
    EXPECT_FALSE(r.producer.put_cell(static_cast<ChunkType>(kFirstUserType), 7, {b, 8}, {}));
    EXPECT_TRUE(r.producer.has_room(8));
    EXPECT_TRUE(r.producer.put_cell(static_cast<ChunkType>(kFirstUserType), 7, {b, 8}, {}));
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

// The consumer never writes the cells (a write would take the message's
// lines from the producer's cache; see scif_ring.hpp): what it read is
// still there after it freed them.
TEST(ScifRing, TheConsumerLeavesTheCellsAsTheProducerWroteThem)
{
    Ring r(256);
    const size_t len = 300;   // 5 cells
    ASSERT_TRUE(r.send(42, len));
    ASSERT_TRUE(r.send(43));
    const std::vector<std::byte> before(r.shared->cell0, r.shared->cell0 + 6 * kCell);
    uint64_t got = 0;
    ASSERT_TRUE(r.consume(&got));
    EXPECT_EQ(got, 42u);
    ASSERT_TRUE(r.consume(&got));
    EXPECT_EQ(got, 43u);
    r.consumer.publish_head();
    EXPECT_EQ(std::memcmp(before.data(), r.shared->cell0, before.size()), 0);
}

// Nor does a publish write the cell the consumer polls next when that cell
// cannot look published (a store there would take the line the consumer is
// about to poll): the bytes after the chunk stay as they were.
TEST(ScifRing, APublishLeavesTheNextStartAloneWhenItCannotLookPublished)
{
    Ring r(256);
    std::memset(r.shared->cell0, 0x5a, 9 * kCell);
    size_t end = 0;   // cells the chunks sent so far cover
    for (uint64_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(r.send(i, 8 + i * kCell));   // 1, 2 and 3 cells
        end += cells_for(8 + i * kCell);
        for (size_t b = end * kCell; b < 9 * kCell; ++b)
            ASSERT_EQ(r.shared->cell0[b], std::byte{0x5a}) << "chunk " << i << " byte " << b;
    }
}

// Stale payload that holds exactly the header that would publish its cell
// on the next lap is never read: every continuation cell of the first lap
// carries one; then the second lap goes one small chunk at a time (its
// starts land on those cells, and so does the pad at the end), and each
// time the consumer sees the chunk just sent and nothing else.
namespace {

void stale_payload_is_never_read(bool cell_path)
{
    constexpr uint32_t kCells = 64;
    Ring r(kCells);
    const size_t len = 7 * kCell - kChunkHeader;   // 7 cells
    uint64_t sent = 0;
    for (; r.producer.has_room(len); ++sent)
        r.send_lures(len);
    ASSERT_EQ(sent, 9u);
    uint64_t got = 0;
    for (uint64_t i = 0; i < sent; ++i)
        ASSERT_TRUE(r.consume(&got));
    r.consumer.publish_head();
    for (uint64_t i = 0; i < 3 * kCells; ++i) {
        ASSERT_FALSE(r.consume(&got)) << "a chunk nobody published, before " << i;
        ASSERT_TRUE(r.send(1000 + i, 8 + (i % 3) * 40)) << i;
        ASSERT_TRUE(r.consume(&got)) << i;
        ASSERT_EQ(got, 1000 + i);
        r.consumer.publish_head();
        r.cell_path = cell_path;   // the lures went the long way; the second lap this way
    }
    if (cell_path) {
        EXPECT_GT(r.cell_sends, kCells);
    }
}

} // namespace

TEST(ScifRing, StalePayloadThatLooksLikeTheNextLapsHeaderIsNeverRead)
{
    stale_payload_is_never_read(false);
}

TEST(ScifRing, StalePayloadIsNeverReadAfterAOneCellChunk)
{
    stale_payload_is_never_read(true);
}

// The same for the start of a pad's second piece: a 2 MiB ring's first lap
// is two chunks as long as they go, all lures; on the second lap small
// messages go back to cell 0 after the hot cells, with a pad in two pieces
// whose second starts inside the first lap's second chunk.
TEST(ScifRing, StalePayloadWhereAPadPieceStartsIsNeverRead)
{
    Ring r(32768);
    const size_t len = r.producer.max_chunk();
    ASSERT_TRUE(r.producer.has_room(len));
    r.send_lures(len);
    ASSERT_TRUE(r.producer.has_room(len));
    r.send_lures(len);
    uint64_t got = 0;
    ASSERT_TRUE(r.consume(&got));
    ASSERT_TRUE(r.consume(&got));
    r.consumer.publish_head();
    for (uint64_t i = 0; i < 3 * kHotCells; ++i) {
        ASSERT_TRUE(r.send(1000 + i)) << i;
        size_t off = 0;
        ASSERT_TRUE(r.take(&got, &off)) << i;
        ASSERT_EQ(got, 1000 + i) << "at cell " << off / kCell;
        ASSERT_FALSE(r.take(&got, &off)) << "a chunk nobody published, after " << i;
    }
}

// Back to cell 0 past the hot cells with a chunk exactly as long as the
// cells before the consumer's head, and one cell shorter and longer: the
// chunk ends where the pad starts, whose header the consumer has still to
// read (a producer that cleared the start after each chunk would erase it,
// and a 64 KiB ping-pong after 16 KiB ones stopped).
TEST(ScifRing, BackToCellZeroLeavesThePadBeforeTheHeadReadable)
{
    Ring r(4 * kHotCells);
    for (uint32_t cells : {kHotCells + 2, kHotCells + 1, kHotCells, kHotCells - 1}) {
        const size_t len = size_t{cells} * kCell - kChunkHeader;
        for (uint64_t i = 0; i < 4; ++i) {
            ASSERT_TRUE(r.send(cells * 10 + i, len)) << cells << " " << i;
            uint64_t got = 0;
            size_t off = 0;
            ASSERT_TRUE(r.take(&got, &off)) << cells << " " << i;
            ASSERT_EQ(got, cells * 10 + i);
        }
    }
    EXPECT_TRUE(r.producer.empty());
}

namespace {

// The two ways of one direction of a connection: the ring and the duplex
// line (the producer writes the connector's half).
struct Link {
    Ring ring{64};
    DuplexShared line{};
    Duplex tx{&line, true};
    Duplex rx{&line, false};
    uint64_t duplex_sent = 0;

    // value as a len-byte message through the duplex line when asked and
    // its half is free, else through the ring (false if it has no room).
    bool send(uint64_t value, size_t len, bool try_duplex)
    {
        std::byte buf[kDuplexPayload];
        if (try_duplex && len <= sizeof buf) {
            std::memset(buf, static_cast<int>(value & 0xff), len);
            std::memcpy(buf, &value, std::min(len, sizeof value));
            const size_t split = std::min<size_t>(len, 5);
            if (tx.put(static_cast<ChunkType>(kFirstUserType), 7, {buf, split}, {buf + split, len - split},
                       ring.producer.position())) {
                ++duplex_sent;
                return true;
            }
        }
        return ring.send(value, len);
    }
    // The next message in order: its value and length; taken.
    bool take(uint64_t *value, size_t *len)
    {
        Chunk c;
        bool from_duplex = false;
        if (!peek_message(ring.consumer, rx, &c, &from_duplex))
            return false;
        EXPECT_EQ(c.tag, 7);
        *value = 0;
        std::memcpy(value, c.payload.data(), std::min(c.payload.size(), sizeof *value));
        *len = c.payload.size();
        if (from_duplex)
            rx.consume();
        else
            ring.consumer.pop();
        return true;
    }
};

} // namespace

// Messages through the duplex line and the ring in one stream (the ring
// wrapping with pads, the consumer now keeping up and now a batch behind,
// its acks now prompt and now late): all arrive once, in the order sent.
TEST(ScifDuplex, MessagesKeepTheirOrderAcrossTheDuplexLineAndTheRing)
{
    Link l;
    uint64_t sent = 0, got_n = 0;
    for (uint64_t round = 0; round < 4000; ++round) {
        const size_t burst = 1 + round % 5;
        for (size_t k = 0; k < burst; ++k) {
            const size_t len = 1 + (sent * 7) % (sent % 4 == 0 ? 200 : kDuplexPayload);
            if (!l.send(sent, len, sent % 3 != 1))
                break;
            ++sent;
        }
        uint64_t value = 0;
        size_t len = 0;
        const uint64_t upto = round % 4 == 0 ? got_n + 1 : sent;   // now and then a batch behind
        while (got_n < upto && l.take(&value, &len)) {
            const size_t want = 1 + (got_n * 7) % (got_n % 4 == 0 ? 200 : kDuplexPayload);
            ASSERT_EQ(len, want) << "message " << got_n;
            if (len >= sizeof value) {
                ASSERT_EQ(value, got_n);
            }
            ++got_n;
        }
        if (round % 2 == 0)
            l.rx.flush_ack();
    }
    uint64_t value = 0;
    size_t len = 0;
    while (l.take(&value, &len))
        ++got_n;
    EXPECT_EQ(got_n, sent);
    EXPECT_GT(l.duplex_sent, 200u);
}

// The producer's half is free again only once the consumer says it took
// the message (with its own message or flush_ack); until then sends go by
// the ring, and a busy half is looked at again only every kBusySkips tries.
TEST(ScifDuplex, TheHalfIsBusyUntilTheConsumerTellsIt)
{
    Link l;
    const std::byte b[8] = {};
    const auto type = static_cast<ChunkType>(kFirstUserType);
    ASSERT_TRUE(l.tx.put(type, 7, {b, 8}, {}, 0));
    EXPECT_FALSE(l.tx.put(type, 7, {b, 8}, {}, 0));
    uint64_t value = 0;
    size_t len = 0;
    ASSERT_TRUE(l.take(&value, &len));
    EXPECT_FALSE(l.tx.put(type, 7, {b, 8}, {}, 0)) << "free before the consumer told";
    l.rx.flush_ack();
    int tries = 1;
    while (!l.tx.put(type, 7, {b, 8}, {}, 0) && tries <= static_cast<int>(Duplex::kBusySkips) + 1)
        ++tries;
    EXPECT_EQ(tries, static_cast<int>(Duplex::kBusySkips)) << "the skips after the refusals above";
    // The consumer's own message carries its ack: the producer's half is
    // free at once after the next take.
    ASSERT_TRUE(l.take(&value, &len));
    ASSERT_TRUE(l.rx.put(type, 7, {b, 8}, {}, 0));   // the other direction's half
    EXPECT_TRUE(l.tx.put(type, 7, {b, 8}, {}, 0));
}

// The peer's half is hostile input: a length past the half is taken as a
// pad (no payload handed out), and a message whose ring position is never
// reached stays back while the ring's messages still come.
TEST(ScifDuplex, AHostileHalfNeverSendsTheConsumerOutOfIt)
{
    Link l;
    DuplexHalf &h = l.line.half[0];
    h.meta = ring_detail::pack_meta(1000, static_cast<ChunkType>(kFirstUserType), 7);
    h.pos = 0;
    __atomic_store_n(&h.seq, ring_detail::seq_of(0), __ATOMIC_RELEASE);
    Chunk c;
    bool from_duplex = false;
    ASSERT_TRUE(peek_message(l.ring.consumer, l.rx, &c, &from_duplex));
    EXPECT_TRUE(from_duplex);
    EXPECT_EQ(c.type, ChunkType::pad);
    EXPECT_TRUE(c.payload.empty());
    l.rx.consume();

    h.meta = ring_detail::pack_meta(8, static_cast<ChunkType>(kFirstUserType), 7);
    h.pos = 1000;
    __atomic_store_n(&h.seq, ring_detail::seq_of(1), __ATOMIC_RELEASE);
    EXPECT_FALSE(peek_message(l.ring.consumer, l.rx, &c, &from_duplex));
    for (uint64_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(l.ring.send(i));
        uint64_t value = 0;
        size_t len = 0;
        ASSERT_TRUE(l.take(&value, &len));
        EXPECT_EQ(value, i);
    }
    EXPECT_FALSE(peek_message(l.ring.consumer, l.rx, &c, &from_duplex));
}
