// SPDX-License-Identifier: BSD-3-Clause
// The process's counter page (layout: weft/counters.h): made by the
// engine, which counts messages, bytes and the unexpected queue into it;
// the runtime writes connection events into it and hands each btl module
// its block. The page is a memfd (no file anywhere; other processes map it
// through /proc/<pid>/fd/<n>), or private memory when the system has no
// memfd, so counting never has to ask whether there is a page.
//
// The count_* functions are the engine's hooks, one line at the point of
// each event. Inline and plain: each counter has one writer, so an
// increment is a load, an add and a store (no atomic read-modify-write);
// the message path pays a pointer load and two adds per message.
#pragma once

#include <weft/counters.h>
#include <weft/unique_fd.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace weft::engine {

class CounterPage {
public:
    CounterPage(uint32_t rank, uint32_t job_size, size_t modules, std::string_view job_id);
    ~CounterPage();
    CounterPage(const CounterPage &) = delete;
    CounterPage &operator=(const CounterPage &) = delete;

    weft_counters_header_t &header() { return *static_cast<weft_counters_header_t *>(base_); }
    const weft_counters_header_t &header() const { return *static_cast<const weft_counters_header_t *>(base_); }
    weft_process_counters_t &process() { return *at<weft_process_counters_t>(header().process_offset); }
    const weft_process_counters_t &process() const
    {
        return *const_cast<CounterPage *>(this)->at<weft_process_counters_t>(header().process_offset);
    }
    // rank < job size; module < the module count it was made with.
    weft_peer_counters_t &peer(uint32_t rank)
    {
        return *at<weft_peer_counters_t>(header().peer_offset + rank * header().peer_stride);
    }
    weft_module_counters_t &module(size_t i)
    {
        return *at<weft_module_counters_t>(header().module_offset + i * header().module_stride);
    }
    // The memfd, or -1 when the page is private memory (why_private says why).
    int fd() const { return fd_.get(); }
    const std::string &why_private() const { return why_private_; }
    std::span<const std::byte> bytes() const { return {static_cast<const std::byte *>(base_), size_}; }

private:
    template <class T>
    T *at(uint64_t offset)
    {
        return reinterpret_cast<T *>(static_cast<std::byte *>(base_) + offset);
    }

    void *base_ = nullptr;
    size_t size_ = 0;
    UniqueFd fd_;
    std::unique_ptr<std::byte[]> heap_;   // the last resort when nothing maps
    std::string why_private_;
};

// ---- the engine's hooks

inline void count_sent(weft_peer_counters_t *c, weft_counters_protocol proto, size_t bytes)
{
    ++c->sent.msgs[proto];
    c->sent.bytes[proto] += bytes;
}
inline void count_received(weft_peer_counters_t *c, weft_counters_protocol proto, size_t bytes)
{
    ++c->recv.msgs[proto];
    c->recv.bytes[proto] += bytes;
}
// A message from peer c went to the unexpected queue / left it.
inline void count_unexpected_in(weft_process_counters_t &p, weft_peer_counters_t &c)
{
    ++c.unexpected_msgs;
    ++p.unexpected_msgs;
    if (++p.unexpected_depth > p.unexpected_hwm)
        p.unexpected_hwm = p.unexpected_depth;
}
inline void count_unexpected_out(weft_process_counters_t &p) { --p.unexpected_depth; }

} // namespace weft::engine
