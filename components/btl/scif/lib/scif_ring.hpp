// SPDX-License-Identifier: BSD-3-Clause
// One direction of a SCIF connection: a single-producer/single-consumer ring
// of 64-byte cells in shared memory.
//
// A chunk is one or more consecutive cells. Its first cell starts with an
// 8-byte header {seq, meta}; the payload follows contiguously (continuation
// cells are all payload), so up to 56 bytes travel in one cell. The producer
// writes payload and meta, then publishes seq with a release store; the
// consumer polls the seq word of the cell at its head with an acquire load:
// no read-modify-write atomic anywhere on the data path. seq for position p
// is 2p+1 (never 0). Chunks never wrap: the producer pads to the end of the
// ring instead, so a payload is always one contiguous span the consumer can
// hand out without copying.
//
// The consumer never writes a cell. A store to a line it has just read
// would take the line from the producer's cache: on x86 the store waits for
// that in the store buffer, ahead of the reply the consumer sends next, and
// the producer fetches the line back when it comes round again (17 lines a
// 1 KiB message). So a freed cell keeps what the producer wrote: a chunk
// start's old seq, or payload. Before publishing a chunk, the producer makes
// sure the cell where the next chunk will start (the consumer polls it next)
// does not already hold the seq that would publish that position (payload
// that happens to look like it, or a start seq from 2^31/cells laps ago),
// and zeroes it in that rare case. It answers from its own record of what
// each cell's seq word holds (written_), and reads the shared cell only
// where payload may sit: a load from the consumer's side of the machine
// before each publish cost the 8-byte ping-pong 3-10%. The cell the
// consumer is about to poll stays as it is. That cell was freed or, at the
// ring's limit, is the consumer's unread head, whose seq is never the one
// looked for.
//
// Credits: the consumer publishes its head (cells consumed) in its own cache
// line; the producer reads it only when its cached copy says the ring is full.
// Sleeping: a side about to block sets its *_waiting flag, fences, and
// re-checks; the other side fences after publishing and, seeing the flag,
// sends a wake-up on the control socket (Endpoint::notify). seq_cst fences,
// not RMWs, make that handshake safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include <weft/component_util.hpp>

namespace weft::scif {

inline constexpr size_t kCell = 64;
inline constexpr size_t kChunkHeader = 8;
inline constexpr uint32_t kMaxChunkLen = (1u << 20) - 1;   // 20 bits of meta
// Payload that fits beside the header in one cell.
inline constexpr size_t kCellPayload = kCell - kChunkHeader;

// Chunk types (4 bits). Values from kFirstUserType on belong to the
// library's internal users (btl/scif frames its messages with them).
enum class ChunkType : uint8_t {
    pad = 0,      // filler to the end of the ring; skipped
    stream = 1,   // scif_send()/scif_recv() bytes
};
inline constexpr uint8_t kFirstUserType = 2;
// Cells one pad chunk may cover (its length must fit the 20-bit field).
inline constexpr uint32_t kMaxPadCells = (kMaxChunkLen + 1) / kCell;
// Small traffic stays in the first kHotCells cells of a large ring.
inline constexpr uint32_t kHotCells = 1024;
inline constexpr uint32_t kHotRecheckCells = 256;
inline constexpr uint8_t kMaxType = 15;
// Having published a chunk of up to kClaimMaxChunkCells cells, the producer
// claims the next kClaimAheadCells cells for writing (prefetchw). The
// consumer read them a lap ago, so a store to one would otherwise wait for
// the line to come back from the consumer's cache, one message after the
// other; claimed early, those trips overlap. Measured with weft_bench,
// claims on or off by the message's size within one job (7-8 jobs, the
// paired ratio against the same split with no claims): windowed message
// rate +10% at 8 B, +9-13% at 64 B, +21-23% at 200 B, +4-9% at 1 KiB, and
// ping-pong latency unchanged (within 2%). 8 or 16 cells gained less.
// Claiming before the copy gained more rate (+19% at 64 B) but made the
// ping-pong 4-7% slower: the claims then compete with the message's own
// stores, and the claimed line where the next chunk starts is the one the
// consumer polls. Larger chunks are left to the copy's own streaming.
inline constexpr uint32_t kClaimAheadCells = 4;
inline constexpr uint32_t kClaimMaxChunkCells = 32;
// A reserved chunk's own cells past its first are claimed before the copy
// into them. The copy alone stalls on each line's trip back from the
// consumer's cache once the store buffer fills; claimed together, the trips
// overlap. The first cell is left alone: the consumer may be polling it.
// Scratch measure (two processes on two vCPUs, one writing a message into
// a 64 KiB ring, the other reading it and answering; cycles until the
// writer's stores were visible, 3 runs of 100000): 512 B 648 -> 605,
// 1 KiB 1060 -> 640, 2 KiB 1390 -> 800, 4 KiB 1520 -> 1280, 8 KiB 2490
// -> 2090, 16 KiB 4220 -> 3860. In weft (osu-style loop of a 2-rank
// MPI_Send then barrier, the sender's time per send, 3 alternated jobs):
// 1 KiB 0.35 -> 0.26 us, 2 KiB 0.55 -> 0.31, 3 KiB 0.48 -> 0.40, but
// 4 KiB 0.54 -> 0.58: from 4 KiB glibc's memcpy is `rep movsb`, whose
// stores fetch their lines their own way, and claims ahead of it cost
// (weft_bench with claims up to 16 KiB chunks, 5 alternated jobs: 4 KiB
// latency 1.02x, though 4 KiB bandwidth 1.17x). So only chunks below that
// claim.
inline constexpr uint32_t kClaimOwnMaxCells = 64;

struct alignas(kCell) RingShared {
    // Line 0: written by the producer only.
    uint32_t magic;
    uint32_t cells;            // power of two, set when the segment is made
    uint32_t producer_closed;  // the producer's side closed its endpoint
    uint32_t producer_waiting; // the producer sleeps until space is freed
    alignas(kCell) uint64_t head;     // line 1: by the consumer only: cells consumed
    // Line 2, apart from head: the producer reads this after every publish,
    // and a line the consumer writes on every pop would cost that read a
    // cross-core miss per message; this one changes only around sleeps.
    alignas(kCell) uint32_t consumer_waiting;   // the consumer sleeps until data arrives
    alignas(kCell) std::byte cell0[1];  // cells follow from here
};
inline constexpr size_t kRingHeaderBytes = offsetof(RingShared, cell0);
// "RIN4": a DuplexShared line follows the segment's SideShared pair, and
// small messages may go through it (a peer that never reads it must not meet
// this one). "RIN3" added line 2 and a consumer that never writes cells.
inline constexpr uint32_t kRingMagic = 0x52494e34;

// Bytes of shared memory one ring of `cells` cells needs.
inline constexpr size_t ring_bytes(uint32_t cells) { return kRingHeaderBytes + size_t{cells} * kCell; }
// Cells a chunk of len payload bytes occupies.
inline constexpr uint32_t cells_for(size_t len)
{
    return static_cast<uint32_t>((kChunkHeader + len + kCell - 1) / kCell);
}

// A chunk the consumer sees.
struct Chunk {
    ChunkType type;
    uint8_t tag;     // user types: the user's byte (btl: am id); stream: 0
    std::span<const std::byte> payload;
};

namespace ring_detail {

// The seq value that publishes position pos: odd, so never the 0 of a fresh
// ring or of a cell the producer unpublished.
inline uint32_t seq_of(uint64_t pos) { return static_cast<uint32_t>(pos * 2 + 1); }

inline uint32_t *seq_word(std::byte *cell) { return reinterpret_cast<uint32_t *>(cell); }

// In RingProducer::written_: the cell's first word is payload (even, so
// never a seq).
inline constexpr uint32_t kPayloadWord = 2;
inline uint32_t *meta_word(std::byte *cell) { return reinterpret_cast<uint32_t *>(cell + 4); }

// meta: bits 0-19 payload length, 20-23 type, 24-31 tag.
inline uint32_t pack_meta(uint32_t len, ChunkType type, uint8_t tag)
{
    return len | (static_cast<uint32_t>(type) & 0xf) << 20 | static_cast<uint32_t>(tag) << 24;
}
inline uint32_t meta_len(uint32_t meta) { return meta & kMaxChunkLen; }
inline ChunkType meta_type(uint32_t meta) { return static_cast<ChunkType>((meta >> 20) & 0xf); }
inline uint8_t meta_tag(uint32_t meta) { return static_cast<uint8_t>(meta >> 24); }

} // namespace ring_detail

class RingProducer {
public:
    RingProducer() = default;
    // Attaches to a ring in shared memory whose header is already set up.
    explicit RingProducer(RingShared *ring);
    // Largest payload one chunk may carry (half the ring, so it always fits
    // after padding once the ring drains).
    size_t max_chunk() const { return max_chunk_; }
    // Room for a chunk of len bytes now? Re-reads the consumer's head only
    // when the cached one says no.
    bool has_room(size_t len);
    // Room now for count chunks of up to len bytes each, written one after
    // the other? An upper bound: each takes len's cells, plus one pad to the
    // ring's end, or, where reserve() would first send an empty ring back
    // to cell 0 (the hot region), the cells below the current one.
    bool has_room_for(size_t count, size_t len);
    // Reserves a chunk of len bytes (len <= max_chunk(), has_room(len)
    // true) and returns its payload to fill; publish() makes it visible.
    // continues: the chunk continues a message whose earlier chunks the
    // consumer may be reading (a fragment after the first), so the ring is
    // not looked at for emptiness there (see the hot region below).
    std::span<std::byte> reserve(size_t len, bool continues = false);
    void publish(ChunkType type, uint8_t tag);
    // The small message's path: a chunk of one cell (a.size() + b.size() <=
    // kCellPayload) holding a then b, written and published at once. false,
    // with nothing written, when the next cell is not a plain one to take
    // (no room known, or at the hot region's end or the ring's): then
    // has_room/reserve/publish, which look at the consumer's head and pad.
    bool put_cell(ChunkType type, uint8_t tag, std::span<const std::byte> a, std::span<const std::byte> b);
    // After publishing: does the consumer sleep and need a wake-up?
    bool consumer_sleeps() const
    {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        return std::atomic_ref<uint32_t>(r_->consumer_waiting).load(std::memory_order_relaxed) != 0;
    }
    void mark_closed();
    bool consumer_freed_since(uint64_t head) const;
    // The position (cells) the next chunk will be at or after.
    uint64_t position() const { return tail_; }
    // Cells before this position are claimed for writing (see
    // kClaimAheadCells).
    uint64_t claimed() const { return claimed_; }
    void set_waiting(bool on);
    bool empty();   // everything published has been consumed

private:
    void pad_to_end();
    // After a publish: claims for writing the cells after position end, up
    // to kClaimAheadCells of them, that are not claimed yet and that the
    // consumer is done with (by the cached head).
    void claim_ahead(uint64_t end);
    // Claims for writing the cells in [from, to) that are not claimed yet
    // (claim_ahead's, and a reserved chunk's own before its copy).
    void claim(uint64_t from, uint64_t to);
    // Makes sure the cell of position pos does not look published before
    // this producer publishes it (see the top of this file).
    void unpublish_lookalike(uint64_t pos);
    // written_ of a chunk's cells past its first: payload, whatever it holds.
    static void mark_payload(uint32_t *word, uint32_t count);

    RingShared *r_ = nullptr;
    std::byte *cells_ = nullptr;
    uint32_t mask_ = 0;
    size_t max_chunk_ = 0;
    uint64_t next_hot_check_ = 0;   // see reserve()
    // put_cell takes cells below this index: kHotCells where reserve()
    // keeps small traffic there, else the whole ring.
    uint64_t plain_cells_ = 0;
    uint64_t tail_ = 0;        // next cell to write
    uint64_t head_cache_ = 0;  // consumer's head as last read
    uint64_t claimed_ = 0;     // cells before this position are claimed (claim_ahead)
    bool prefetchw_ = false;   // the CPU has PREFETCHW (else a plain prefetch)
    uint64_t pending_pos_ = 0; // the reserved chunk
    uint32_t pending_len_ = 0;
    // Per cell, what its seq word holds: the seq published there, 0, or
    // kPayloadWord. Private memory: the lookalike check of every publish
    // reads it instead of the shared cell. calloc'd, not a vector: a 2 MiB
    // ring's 128 KiB were zero-filled up front, 32 page faults (about 95 us
    // on the 2-vCPU VM, on each side of every new connection); fresh pages
    // from calloc are zero already and fault in as the ring is used (small
    // traffic stays in the first of them).
    struct FreeDelete {
        void operator()(uint32_t *p) const { std::free(p); }
    };
    std::unique_ptr<uint32_t[], FreeDelete> written_;
};

class RingConsumer {
public:
    RingConsumer() = default;
    explicit RingConsumer(RingShared *ring);
    // The chunk at the head, if published (pads are skipped).
    bool peek(Chunk *out);
    // Frees the chunk peek() returned and tells the producer.
    void pop();
    // Frees the chunk peek() returned without telling the producer yet: a
    // batch of chunks is freed this way, then publish_head() returns all
    // their credits in one store (a store per message would pull the line
    // the producer reads into the consumer's cache once per message).
    void consume();
    void publish_head() { std::atomic_ref<uint64_t>(r_->head).store(head_, std::memory_order_release); }
    bool producer_closed() const
    {
        return std::atomic_ref<uint32_t>(r_->producer_closed).load(std::memory_order_acquire) != 0;
    }
    // Is something (a chunk or a pad) published at the head? One load: the
    // idle poll's question, answered without a call.
    bool ready() const
    {
        const auto *seq = ring_detail::seq_word(cells_ + (head_ & mask_) * kCell);
        return __atomic_load_n(seq, __ATOMIC_ACQUIRE) == ring_detail::seq_of(head_);
    }
    // Before blocking: announce it; then re-check peek() before sleeping.
    void set_waiting(bool on);
    // The ring position (cells) of the head: after peek(), the chunk's.
    uint64_t position() const { return head_; }
    // After consuming: does the producer sleep waiting for room?
    bool producer_sleeps() const
    {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        return std::atomic_ref<uint32_t>(r_->producer_waiting).load(std::memory_order_relaxed) != 0;
    }

private:
    RingShared *r_ = nullptr;
    std::byte *cells_ = nullptr;
    uint32_t mask_ = 0;
    uint64_t head_ = 0;
    uint32_t head_cells_ = 0;   // cells of the peeked chunk
};

// ---- the data path, inline: one call per message less on each side ---------

inline bool RingProducer::has_room(size_t len)
{
    const uint32_t need = cells_for(len);
    const uint64_t idx = tail_ & mask_;
    const uint64_t to_end = mask_ + 1 - idx;
    const uint64_t total = need > to_end ? to_end + need : need;   // padding first
    if (tail_ + total - head_cache_ <= mask_ + 1)
        return true;
    head_cache_ = std::atomic_ref<uint64_t>(r_->head).load(std::memory_order_acquire);
    return tail_ + total - head_cache_ <= mask_ + 1;
}

inline bool RingProducer::has_room_for(size_t count, size_t len)
{
    const uint64_t per = cells_for(len), need = (count + 1) * per;
    if (need > mask_ + 1)
        return false;
    if (tail_ + need - head_cache_ > mask_ + 1) {
        head_cache_ = std::atomic_ref<uint64_t>(r_->head).load(std::memory_order_acquire);
        if (tail_ + need - head_cache_ > mask_ + 1)
            return false;
    }
    // reserve()'s test: an empty ring past the hot region is padded to its
    // end first, which leaves the cells below idx until the consumer moves.
    const uint64_t idx = tail_ & mask_;
    if (idx >= kHotCells && per <= idx && mask_ + 1 >= 4 * kHotCells && tail_ >= next_hot_check_) {
        head_cache_ = std::atomic_ref<uint64_t>(r_->head).load(std::memory_order_acquire);
        if (head_cache_ == tail_)
            return count * per <= idx;
    }
    return true;
}

inline std::span<std::byte> RingProducer::reserve(size_t len, bool continues)
{
    const uint32_t need = cells_for(len);
    uint64_t idx = tail_ & mask_;
    // Small messages keep to the ring's first kHotCells cells, which stay in
    // cache: past them, once the consumer has caught up, pad to the end and
    // go on from cell 0 (a 2 MiB ring walked end to end costs a cache miss
    // per message). A burst still uses the whole ring; while one lasts, the
    // consumer's head is looked at only every kHotRecheckCells. Only where
    // a message starts: at a later fragment of a streamed message the
    // consumer is still reading the earlier ones, and a look there put the
    // next one off past the next message's start, again and again, so that
    // streamed messages walked the whole ring (16 ranks on a 16-core host,
    // each through 15 rings of 2 MiB: osu_alltoall of 8 KiB blocks took
    // 58.1 us, 44.6 with the look at message starts only; MPICH 39.5; 4
    // jobs each). btl/scif says which chunks continue a message of small
    // fragments; those of 16 KiB fragments are looked at each time.
    if (!continues && idx >= kHotCells && need <= idx && mask_ + 1 >= 4 * kHotCells &&
        tail_ >= next_hot_check_) {
        head_cache_ = std::atomic_ref<uint64_t>(r_->head).load(std::memory_order_acquire);
        if (head_cache_ == tail_) {
            pad_to_end();
            idx = 0;
        } else {
            next_hot_check_ = tail_ + kHotRecheckCells;
        }
    }
    const uint64_t to_end = mask_ + 1 - idx;
    if (need > to_end)
        pad_to_end();   // so the chunk stays contiguous
    pending_pos_ = tail_;
    pending_len_ = static_cast<uint32_t>(len);
    if (need > 1 && need <= kClaimOwnMaxCells)
        claim(tail_ + 1, tail_ + need);   // its own cells past the first
    return {cells_ + (tail_ & mask_) * kCell + kChunkHeader, len};
}

inline void RingProducer::claim(uint64_t from, uint64_t to)
{
    if (from < claimed_)
        from = claimed_;
    claimed_ = to > claimed_ ? to : claimed_;
    // The instruction's choice out of the loop: it runs on every small
    // message (callgrind: 2 instructions a line).
#if defined(__x86_64__) || defined(__i386__)
    if (prefetchw_) {
        for (; from < to; ++from)
            asm volatile("prefetchw %0" : : "m"(cells_[(from & mask_) * kCell]));
        return;
    }
#endif
    for (; from < to; ++from)
        __builtin_prefetch(cells_ + (from & mask_) * kCell, 1);
}

inline void RingProducer::claim_ahead(uint64_t end)
{
    uint64_t upto = end + kClaimAheadCells;
    // Past head + cells sit chunks the consumer has not read yet.
    if (upto > head_cache_ + mask_ + 1)
        upto = head_cache_ + mask_ + 1;
    claim(end, upto);
}

inline void RingProducer::unpublish_lookalike(uint64_t pos)
{
    uint32_t &word = written_[pos & mask_];
    const uint32_t seq = ring_detail::seq_of(pos);
    if (word != seq && word != ring_detail::kPayloadWord) [[likely]]
        return;
    // Both accesses relaxed: the release store of the publish that follows
    // orders them.
    std::atomic_ref<uint32_t> shared(*ring_detail::seq_word(cells_ + (pos & mask_) * kCell));
    if (shared.load(std::memory_order_relaxed) == seq) {
        shared.store(0, std::memory_order_relaxed);
        word = 0;
    }
}

inline void RingProducer::mark_payload(uint32_t *word, uint32_t count)
{
    // Four words per 16-byte store: a loop of single words cost 4-5
    // instructions a cell (71 a 1 KiB message, callgrind).
    static constexpr uint32_t kFour[4] = {ring_detail::kPayloadWord, ring_detail::kPayloadWord,
                                          ring_detail::kPayloadWord, ring_detail::kPayloadWord};
    uint32_t *const end = word + count;
    for (; end - word >= 4; word += 4)
        std::memcpy(word, kFour, sizeof kFour);
    for (; word < end; ++word)
        *word = ring_detail::kPayloadWord;
}

inline void RingProducer::publish(ChunkType type, uint8_t tag)
{
    const uint64_t idx = pending_pos_ & mask_;
    std::byte *cell = cells_ + idx * kCell;
    const uint32_t cells = cells_for(pending_len_);
    const uint64_t next = pending_pos_ + cells;
    unpublish_lookalike(next);
    const uint32_t seq = ring_detail::seq_of(pending_pos_);
    written_[idx] = seq;
    mark_payload(written_.get() + idx + 1, cells - 1);   // a chunk never wraps
    *ring_detail::meta_word(cell) = ring_detail::pack_meta(pending_len_, type, tag);
    std::atomic_ref<uint32_t>(*ring_detail::seq_word(cell)).store(seq, std::memory_order_release);
    tail_ = next;
    if (cells <= kClaimMaxChunkCells)
        claim_ahead(next);
}

inline bool RingProducer::put_cell(ChunkType type, uint8_t tag, std::span<const std::byte> a,
                                   std::span<const std::byte> b)
{
    const uint64_t idx = tail_ & mask_;
    // Room for one cell by the cached head (tail_ + 1 - head_cache_ <= cells).
    if (idx >= plain_cells_ || tail_ - head_cache_ > mask_) [[unlikely]]
        return false;
    std::byte *cell = cells_ + idx * kCell;
    weft::cutil::copy_bytes(cell + kChunkHeader, a.data(), a.size());
    weft::cutil::copy_bytes(cell + kChunkHeader + a.size(), b.data(), b.size());
    unpublish_lookalike(tail_ + 1);
    const uint32_t seq = ring_detail::seq_of(tail_);
    written_[idx] = seq;
    *ring_detail::meta_word(cell) =
        ring_detail::pack_meta(static_cast<uint32_t>(a.size() + b.size()), type, tag);
    std::atomic_ref<uint32_t>(*ring_detail::seq_word(cell)).store(seq, std::memory_order_release);
    ++tail_;
    claim_ahead(tail_);
    return true;
}

inline bool RingConsumer::peek(Chunk *out)
{
    for (;;) {
        std::byte *cell = cells_ + (head_ & mask_) * kCell;
        if (std::atomic_ref<uint32_t>(*ring_detail::seq_word(cell)).load(std::memory_order_acquire) !=
            ring_detail::seq_of(head_))
            return false;
        const uint32_t meta = *ring_detail::meta_word(cell);
        const uint32_t len = ring_detail::meta_len(meta);
        const ChunkType type = ring_detail::meta_type(meta);
        const uint64_t idx = head_ & mask_;
        // A header the producer could not have written (a corrupt or hostile
        // peer) must not send the consumer outside the ring.
        const uint32_t cells = cells_for(len);
        if (cells > mask_ + 1 - idx)
            return false;
        head_cells_ = cells;
        if (type == ChunkType::pad) {
            // Only a pad's first cell was written; the rest are skipped.
            head_ += cells;
            publish_head();
            continue;
        }
        out->type = type;
        out->tag = ring_detail::meta_tag(meta);
        out->payload = {cell + kChunkHeader, len};
        // The payload's lines sit in the producer's cache. Asking for all of
        // them before the copy that follows overlaps their transfers, where
        // the copy alone would pull a few lines at a time.
        if (cells > 2)
            for (uint32_t c = 1; c < cells; ++c)
                __builtin_prefetch(cell + size_t{c} * kCell, 0, 3);
        return true;
    }
}

inline void RingConsumer::consume()
{
    // Nothing is written to the cells (see the top of this file).
    head_ += head_cells_;
    head_cells_ = 0;
}

inline void RingConsumer::pop()
{
    consume();
    publish_head();
}

// ---- the duplex line ----------------------------------------------------------
// One cache line per connection that both sides write, each its own half:
// the place of a small message (payload up to kDuplexPayload bytes) when
// the half is free. A ping-pong through two lines (a ring cell each way)
// costs two transfers per message: the reader's miss, then the writer's
// upgrade of a line the other side holds. Through one line the reader's
// miss brings the line it answers in (as in the cache-line ping-pong floor):
// measured on the 2-vCPU VM, 2 lines 2-3x one line.
//
// Order with the ring: a duplex message carries the ring position (cells)
// the producer had reached when it sent it, and goes before any ring chunk
// at or past that position. Its half is free again when the consumer's
// ack (messages taken, in the consumer's half) catches up; the consumer
// writes its ack with its own next message, or when it finds nothing to
// read (flush_ack).
inline constexpr size_t kDuplexPayload = 16;
struct DuplexHalf {
    uint32_t seq;    // seq_of(n) publishes the n-th message (n from 0)
    uint32_t meta;   // as a chunk's: length, type, tag
    uint32_t pos;    // the producer's ring position (low 32 bits) at the send
    uint32_t ack;    // messages of the other side's this side has taken
    std::byte payload[kDuplexPayload];
};
struct alignas(kCell) DuplexShared {
    DuplexHalf half[2];   // [0]: the connector's, [1]: the acceptor's
};
static_assert(sizeof(DuplexShared) == kCell, "one cache line");

class Duplex {
public:
    Duplex() = default;
    Duplex(DuplexShared *line, bool connector)
        : mine_(&line->half[connector ? 0 : 1]), theirs_(&line->half[connector ? 1 : 0])
    {
    }
    // Producer: a then b as one message, if they fit and our half is free
    // (as far as the consumer's ack says). ring_pos: the ring producer's
    // position now. After a refusal for a busy half, the next kBusySkips
    // tries are refused without looking (a streaming sender would otherwise
    // pull the line from the consumer on every message).
    bool put(ChunkType type, uint8_t tag, std::span<const std::byte> a, std::span<const std::byte> b,
             uint64_t ring_pos);
    // Consumer: is a message published and not yet taken? One load.
    bool ready() const
    {
        return __atomic_load_n(&theirs_->seq, __ATOMIC_ACQUIRE) == ring_detail::seq_of(taken_);
    }
    // The message, if published, and the ring position it goes before. A
    // length out of bounds (a broken or hostile peer) makes it a pad: taken
    // without delivery. Its fields are read once.
    bool peek(Chunk *out, uint32_t *pos);
    // Takes the message peek() returned. The producer learns of it with our
    // next put() or flush_ack(), not now: a store here would take the line
    // from the producer, which polls it for our answer, and the answer's
    // store would have to take it back (measured: lat 8 0.19 -> 0.22 us).
    void consume() { ++taken_; }
    // Messages consumed so far.
    uint32_t taken() const { return taken_; }
    // Tells the producer what was taken, if it has not been told (an idle
    // consumer's step: a producer finds its half busy until then and uses
    // the ring).
    void flush_ack()
    {
        if (told_ != taken_) {
            told_ = taken_;
            __atomic_store_n(&mine_->ack, taken_, __ATOMIC_RELEASE);
        }
    }
    static constexpr uint32_t kBusySkips = 16;

private:
    DuplexHalf *mine_ = nullptr;
    DuplexHalf *theirs_ = nullptr;
    uint32_t sent_ = 0;    // messages put
    uint32_t acked_ = 0;   // the consumer's ack as last read
    uint32_t skips_ = 0;   // refusals left before looking at the ack again
    uint32_t taken_ = 0;   // messages consumed
    uint32_t told_ = 0;    // taken_ as the producer was last told
};

inline bool Duplex::put(ChunkType type, uint8_t tag, std::span<const std::byte> a, std::span<const std::byte> b,
                        uint64_t ring_pos)
{
    // Each bound apart (the sum of two sizes could wrap).
    if (a.size() > kDuplexPayload || b.size() > kDuplexPayload - a.size() || !mine_)
        return false;
    const size_t len = a.size() + b.size();
    if (acked_ != sent_) {
        if (skips_ > 0) {
            --skips_;
            return false;
        }
        acked_ = __atomic_load_n(&theirs_->ack, __ATOMIC_ACQUIRE);
        if (acked_ != sent_) {
            skips_ = kBusySkips;
            return false;
        }
    }
    // The checks above keep both copies in the half. A sanitizer build's
    // GCC loses them and warns that copy_bytes' 17-32 byte branch could
    // write past it; that branch is unreachable here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    weft::cutil::copy_bytes(mine_->payload, a.data(), a.size());
    weft::cutil::copy_bytes(mine_->payload + a.size(), b.data(), b.size());
#pragma GCC diagnostic pop
    mine_->meta = ring_detail::pack_meta(static_cast<uint32_t>(len), type, tag);
    mine_->pos = static_cast<uint32_t>(ring_pos);
    // The ack rides in the line we write anyway. The other side reads it
    // without looking at seq, so it is a release store of its own (a plain
    // mov on x86): our reads of its half come before it reuses that half.
    told_ = taken_;
    __atomic_store_n(&mine_->ack, taken_, __ATOMIC_RELEASE);
    __atomic_store_n(&mine_->seq, ring_detail::seq_of(sent_), __ATOMIC_RELEASE);
    ++sent_;
    return true;
}

inline bool Duplex::peek(Chunk *out, uint32_t *pos)
{
    if (!theirs_ || !ready())
        return false;
    const uint32_t meta = __atomic_load_n(&theirs_->meta, __ATOMIC_RELAXED);
    *pos = __atomic_load_n(&theirs_->pos, __ATOMIC_RELAXED);
    const uint32_t len = ring_detail::meta_len(meta);
    if (len > kDuplexPayload) {
        out->type = ChunkType::pad;
        out->tag = 0;
        out->payload = {};
        return true;
    }
    out->type = ring_detail::meta_type(meta);
    out->tag = ring_detail::meta_tag(meta);
    out->payload = {theirs_->payload, len};
    return true;
}

// The next message of a connection in the order sent, from the ring or the
// duplex line (*from_duplex says which: consume it there; a pad from the
// duplex line is taken without delivery). A duplex message goes before the
// ring chunk at or past its position; with the ring empty, only if nothing
// went into the ring before it (a position never reached keeps it back; the
// ring's messages still come).
inline bool peek_message(RingConsumer &rx, Duplex &duplex, Chunk *out, bool *from_duplex)
{
    *from_duplex = false;
    bool ring = rx.peek(out);
    Chunk d;
    uint32_t pos = 0;
    if (!duplex.peek(&d, &pos))
        return ring;
    if (!ring) {
        if (pos == static_cast<uint32_t>(rx.position())) {
            *out = d;
            *from_duplex = true;
            return true;
        }
        // Ring chunks published before the duplex message are visible now,
        // if the first look came too early for them.
        if (!(ring = rx.peek(out)))
            return false;
    }
    if (static_cast<int32_t>(pos - static_cast<uint32_t>(rx.position())) <= 0) {
        *out = d;
        *from_duplex = true;
    }
    return true;
}

// Initializes a ring header in fresh (zeroed) shared memory.
void ring_init(RingShared *ring, uint32_t cells);

} // namespace weft::scif
