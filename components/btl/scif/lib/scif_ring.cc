// SPDX-License-Identifier: BSD-3-Clause
#include "scif_ring.hpp"

#include <algorithm>
#include <new>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace weft::scif {

namespace {

// CPUID 0x80000001, ECX bit 8: PREFETCHW (AMD's 3DNowPrefetch, Intel since
// Broadwell); older CPUs may not decode it. Asked once per process: under a
// hypervisor CPUID traps, and every connection makes producers.
bool cpu_has_prefetchw()
{
    static const bool has = [] {
#if defined(__x86_64__) || defined(__i386__)
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        return __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) && ((ecx >> 8) & 1);
#else
        return false;
#endif
    }();
    return has;
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
                                  kMaxChunkLen)),
      plain_cells_(ring->cells >= 4 * kHotCells ? kHotCells : ring->cells),
      prefetchw_(cpu_has_prefetchw()),
      written_(static_cast<uint32_t *>(std::calloc(ring->cells, sizeof(uint32_t))))   // a fresh ring is zeroed
{
    if (!written_)
        throw std::bad_alloc();   // the endpoint's callers turn it into ENOMEM (no_throw)
}

void RingProducer::pad_to_end()
{
    // In pieces a pad's length field can say; the consumer skips each.
    uint64_t left = mask_ + 1 - (tail_ & mask_);
    while (left > 0) {
        const uint64_t n = std::min<uint64_t>(left, kMaxPadCells);
        std::byte *cell = cells_ + (tail_ & mask_) * kCell;
        // The next piece's start, or the next lap's cell 0.
        unpublish_lookalike(tail_ + n);
        written_[tail_ & mask_] = ring_detail::seq_of(tail_);
        *ring_detail::meta_word(cell) =
            ring_detail::pack_meta(static_cast<uint32_t>(n * kCell - kChunkHeader), ChunkType::pad, 0);
        std::atomic_ref<uint32_t>(*ring_detail::seq_word(cell))
            .store(ring_detail::seq_of(tail_), std::memory_order_release);
        tail_ += n;
        left -= n;
    }
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

void RingConsumer::set_waiting(bool on)
{
    std::atomic_ref<uint32_t>(r_->consumer_waiting).store(on ? 1 : 0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

} // namespace weft::scif
