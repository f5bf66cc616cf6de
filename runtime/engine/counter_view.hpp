// SPDX-License-Identifier: BSD-3-Clause
// A reader's view of a counter page (weft/counters.h) held in memory it
// did not write: another process's page mapped read-only (weft_top), or a
// copy gathered at the end of a job (the report). Header-only, so tools
// that link no libweft use it too. Every section is checked to lie inside
// the bytes before anything is read; counters are loaded relaxed, since
// their writer may be storing them meanwhile.
#pragma once

#include <weft/counters.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace weft::engine {

class CounterView {
public:
    // An invalid view (valid() false) when bytes are not a page this
    // reader understands: wrong magic or version, or a section outside it.
    explicit CounterView(std::span<const std::byte> bytes) : b_(bytes) {}

    bool valid() const
    {
        if (b_.size() < sizeof(weft_counters_header_t))
            return false;
        const weft_counters_header_t &x = h();
        return x.magic == WEFT_COUNTERS_MAGIC && x.version == WEFT_COUNTERS_VERSION && x.page_size <= b_.size() &&
               x.process_size >= sizeof(weft_process_counters_t) &&
               fits(x.process_offset, x.process_size, 1, x.page_size) &&
               x.peer_stride >= sizeof(weft_peer_counters_t) &&
               fits(x.peer_offset, x.peer_stride, x.peer_count, x.page_size) &&
               x.module_stride >= sizeof(weft_module_counters_t) &&
               fits(x.module_offset, x.module_stride, x.module_count, x.page_size);
    }
    const weft_counters_header_t &h() const { return *at<weft_counters_header_t>(0); }
    const weft_process_counters_t &process() const { return *at<weft_process_counters_t>(h().process_offset); }
    // r < h().peer_count, m < h().module_count.
    const weft_peer_counters_t &peer(uint64_t r) const
    {
        return *at<weft_peer_counters_t>(h().peer_offset + r * h().peer_stride);
    }
    const weft_module_counters_t &module(uint64_t m) const
    {
        return *at<weft_module_counters_t>(h().module_offset + m * h().module_stride);
    }
    // The name of module m, or "-" for no module (-1) or one outside the page.
    std::string module_name(int64_t m) const
    {
        if (m < 0 || static_cast<uint64_t>(m) >= h().module_count)
            return "-";
        return text(module(static_cast<uint64_t>(m)).name);
    }
    std::string job_id() const { return text(h().job_id); }

    template <class T>
    static T load(const T &v)
    {
        return __atomic_load_n(&v, __ATOMIC_RELAXED);
    }
    // A string of the page, which its writer may be changing: copied up to
    // its first NUL or its end.
    template <size_t N>
    static std::string text(const char (&s)[N])
    {
        return std::string(s, strnlen(s, N));
    }
    // Every protocol's messages or bytes of one direction added up.
    static uint64_t total_msgs(const weft_counters_traffic_t &t) { return sum(t.msgs); }
    static uint64_t total_bytes(const weft_counters_traffic_t &t) { return sum(t.bytes); }
    static uint64_t sum(const uint64_t (&v)[WEFT_PROTO_COUNT])
    {
        uint64_t n = 0;
        for (const uint64_t &x : v)
            n += load(x);
        return n;
    }

private:
    // count items of stride bytes from offset end by limit (no overflow:
    // the header may come from anywhere).
    static bool fits(uint64_t offset, uint64_t stride, uint64_t count, uint64_t limit)
    {
        return offset % 8 == 0 && offset <= limit && (count == 0 || stride <= (limit - offset) / count);
    }
    template <class T>
    const T *at(uint64_t off) const
    {
        return reinterpret_cast<const T *>(b_.data() + off);
    }
    std::span<const std::byte> b_;
};

} // namespace weft::engine
