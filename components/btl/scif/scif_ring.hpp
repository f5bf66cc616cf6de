// One direction of a SCIF connection: a single-producer/single-consumer ring
// of 64-byte cells in shared memory.
//
// A chunk is one or more consecutive cells. Its first cell starts with an
// 8-byte header {seq, meta}; the payload follows contiguously (continuation
// cells are all payload), so up to 56 bytes travel in one cell. The producer
// writes payload and meta, then publishes seq with a release store; the
// consumer polls the seq word of the cell at its head with an acquire load:
// no read-modify-write atomic anywhere on the data path. seq for position p
// is 2p+1 (never 0), and the consumer zeroes the seq word of every cell it
// frees, so a stale cell can never look published. Chunks never wrap: the
// producer pads to the end of the ring instead, so a payload is always one
// contiguous span the consumer can hand out without copying.
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
#include <span>

namespace weft::scif {

inline constexpr size_t kCell = 64;
inline constexpr size_t kChunkHeader = 8;
inline constexpr uint32_t kMaxChunkLen = (1u << 20) - 1;   // 20 bits of meta

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
inline constexpr uint32_t kRingMagic = 0x52494e32;   // "RIN2": the layout with line 2

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
    // Reserves a chunk of len bytes (len <= max_chunk(), has_room(len)
    // true) and returns its payload to fill; publish() makes it visible.
    std::span<std::byte> reserve(size_t len);
    void publish(ChunkType type, uint8_t tag);
    // After publishing: does the consumer sleep and need a wake-up?
    bool consumer_sleeps() const;
    void mark_closed();
    bool consumer_freed_since(uint64_t head) const;
    void set_waiting(bool on);
    bool empty();   // everything published has been consumed

private:
    void pad_to_end();

    RingShared *r_ = nullptr;
    std::byte *cells_ = nullptr;
    uint32_t mask_ = 0;
    size_t max_chunk_ = 0;
    uint64_t next_hot_check_ = 0;   // see reserve()
    uint64_t tail_ = 0;        // next cell to write
    uint64_t head_cache_ = 0;  // consumer's head as last read
    uint64_t pending_pos_ = 0; // the reserved chunk
    uint32_t pending_len_ = 0;
};

class RingConsumer {
public:
    RingConsumer() = default;
    explicit RingConsumer(RingShared *ring);
    // The chunk at the head, if published (pads are skipped).
    bool peek(Chunk *out);
    // Frees the chunk peek() returned.
    void pop();
    bool producer_closed() const;
    // Is something (a chunk or a pad) published at the head? One load: the
    // idle poll's question, answered without a call.
    bool ready() const
    {
        const auto *seq = reinterpret_cast<const uint32_t *>(cells_ + (head_ & mask_) * kCell);
        return __atomic_load_n(seq, __ATOMIC_ACQUIRE) == static_cast<uint32_t>(head_ * 2 + 1);
    }
    // Before blocking: announce it; then re-check peek() before sleeping.
    void set_waiting(bool on);
    // After consuming: does the producer sleep waiting for room?
    bool producer_sleeps() const;

private:
    RingShared *r_ = nullptr;
    std::byte *cells_ = nullptr;
    uint32_t mask_ = 0;
    uint64_t head_ = 0;
    uint32_t head_cells_ = 0;   // cells of the peeked chunk
};

// Initializes a ring header in fresh (zeroed) shared memory.
void ring_init(RingShared *ring, uint32_t cells);

} // namespace weft::scif
