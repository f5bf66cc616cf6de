#include "scif_ring.hpp"

#include <algorithm>

namespace weft::scif {

namespace {

// The seq value that publishes position pos: odd, so never the 0 a freed
// cell holds.
inline uint32_t seq_of(uint64_t pos) { return static_cast<uint32_t>(pos * 2 + 1); }

inline uint32_t *seq_word(std::byte *cell) { return reinterpret_cast<uint32_t *>(cell); }
inline uint32_t *meta_word(std::byte *cell) { return reinterpret_cast<uint32_t *>(cell + 4); }

// meta: bits 0-19 payload length, 20-23 type, 24-31 tag.
inline uint32_t pack_meta(uint32_t len, ChunkType type, uint8_t tag)
{
    return len | (static_cast<uint32_t>(type) & 0xf) << 20 | static_cast<uint32_t>(tag) << 24;
}

} // namespace

void ring_init(RingShared *ring, uint32_t cells)
{
    ring->magic = kRingMagic;
    ring->cells = cells;
}

// ---- producer ---------------------------------------------------------------

RingProducer::RingProducer(RingShared *ring)
    : r_(ring), cells_(ring->cell0), mask_(ring->cells - 1),
      max_chunk_(std::min<size_t>(size_t{ring->cells / 2} * kCell - kChunkHeader - kCell,
                                  kMaxChunkLen))
{
}

bool RingProducer::has_room(size_t len)
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

void RingProducer::pad_to_end()
{
    // In pieces a pad's length field can say; the consumer skips each.
    uint64_t left = mask_ + 1 - (tail_ & mask_);
    while (left > 0) {
        const uint64_t n = std::min<uint64_t>(left, kMaxPadCells);
        std::byte *cell = cells_ + (tail_ & mask_) * kCell;
        *meta_word(cell) = pack_meta(static_cast<uint32_t>(n * kCell - kChunkHeader), ChunkType::pad, 0);
        std::atomic_ref<uint32_t>(*seq_word(cell)).store(seq_of(tail_), std::memory_order_release);
        tail_ += n;
        left -= n;
    }
}

std::span<std::byte> RingProducer::reserve(size_t len)
{
    const uint32_t need = cells_for(len);
    uint64_t idx = tail_ & mask_;
    // Small messages keep to the ring's first kHotCells cells, which stay in
    // cache: past them, once the consumer has caught up, pad to the end and
    // go on from cell 0 (a 2 MiB ring walked end to end costs a cache miss
    // per message). A burst still uses the whole ring; while one lasts, the
    // consumer's head is looked at only every kHotRecheckCells.
    if (idx >= kHotCells && need <= idx && mask_ + 1 >= 4 * kHotCells && tail_ >= next_hot_check_) {
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
    return {cells_ + (tail_ & mask_) * kCell + kChunkHeader, len};
}

void RingProducer::publish(ChunkType type, uint8_t tag)
{
    std::byte *cell = cells_ + (pending_pos_ & mask_) * kCell;
    *meta_word(cell) = pack_meta(pending_len_, type, tag);
    std::atomic_ref<uint32_t>(*seq_word(cell))
        .store(seq_of(pending_pos_), std::memory_order_release);
    tail_ = pending_pos_ + cells_for(pending_len_);
}

bool RingProducer::consumer_sleeps() const
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return std::atomic_ref<uint32_t>(r_->consumer_waiting).load(std::memory_order_relaxed) != 0;
}

void RingProducer::mark_closed()
{
    std::atomic_ref<uint32_t>(r_->producer_closed).store(1, std::memory_order_release);
}

bool RingProducer::consumer_freed_since(uint64_t head) const
{
    return std::atomic_ref<uint64_t>(r_->head).load(std::memory_order_acquire) != head;
}

void RingProducer::set_waiting(bool on)
{
    std::atomic_ref<uint32_t>(r_->producer_waiting).store(on ? 1 : 0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool RingProducer::empty()
{
    head_cache_ = std::atomic_ref<uint64_t>(r_->head).load(std::memory_order_acquire);
    return head_cache_ == tail_;
}

// ---- consumer ---------------------------------------------------------------

RingConsumer::RingConsumer(RingShared *ring)
    : r_(ring), cells_(ring->cell0), mask_(ring->cells - 1)
{
}

bool RingConsumer::peek(Chunk *out)
{
    for (;;) {
        std::byte *cell = cells_ + (head_ & mask_) * kCell;
        if (std::atomic_ref<uint32_t>(*seq_word(cell)).load(std::memory_order_acquire) !=
            seq_of(head_))
            return false;
        const uint32_t meta = *meta_word(cell);
        const uint32_t len = meta & kMaxChunkLen;
        const auto type = static_cast<ChunkType>((meta >> 20) & 0xf);
        const uint64_t idx = head_ & mask_;
        // A header the producer could not have written (a corrupt or hostile
        // peer) must not send the consumer outside the ring.
        const uint32_t cells = cells_for(len);
        if (cells > mask_ + 1 - idx)
            return false;
        head_cells_ = cells;
        if (type == ChunkType::pad) {
            // Only a pad's first cell was written: the rest are still the
            // zeros every freed cell holds.
            head_cells_ = 1;
            pop();
            head_ += cells - 1;
            std::atomic_ref<uint64_t>(r_->head).store(head_, std::memory_order_release);
            continue;
        }
        out->type = type;
        out->tag = static_cast<uint8_t>(meta >> 24);
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

void RingConsumer::pop()
{
    for (uint32_t i = 0; i < head_cells_; ++i)
        *seq_word(cells_ + ((head_ + i) & mask_) * kCell) = 0;
    head_ += head_cells_;
    head_cells_ = 0;
    std::atomic_ref<uint64_t>(r_->head).store(head_, std::memory_order_release);
}

bool RingConsumer::producer_closed() const
{
    return std::atomic_ref<uint32_t>(r_->producer_closed).load(std::memory_order_acquire) != 0;
}

void RingConsumer::set_waiting(bool on)
{
    std::atomic_ref<uint32_t>(r_->consumer_waiting).store(on ? 1 : 0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool RingConsumer::producer_sleeps() const
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return std::atomic_ref<uint32_t>(r_->producer_waiting).load(std::memory_order_relaxed) != 0;
}

} // namespace weft::scif
