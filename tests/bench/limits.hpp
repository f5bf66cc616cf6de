// SPDX-License-Identifier: BSD-3-Clause
// The machine's own limits, measured by weft_bench's ranks 0 and 1 in the
// same run and on the same cores as the benchmark (weft_bench --limits):
//
//   shm  latency, messages up to one cache line (64 B): two processes
//        bouncing one cache line through shared memory (no weft at all),
//        one-way. Nothing that hands a message over through memory between
//        these two cores can be faster.
//        bandwidth, messages of 4 KiB and up: single-core memcpy of the
//        message size on rank 0's core, in cache (the buffers are reused, as
//        the benchmark reuses its buffers). A copy-in/copy-out transport
//        moves each byte at least once.
//   tcp  latency: a ping-pong of the message size over a busy-polled
//        non-blocking loopback socket (TCP_NODELAY), one-way.
//        bandwidth: one busy-polled loopback stream of the message size,
//        measured like `bw` (windows of 64 messages, then a 1-byte ack).
//        One stream with default buffers: a baseline, not a bound.
//
// The methods are those of ../shared/bench/compare's `limits` peer; the code
// is this file's. Rank 0 and rank 1 call every member in the same order;
// rank 0 gets the values, rank 1 gets 0. Ranks above 1 must not call.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>

namespace bench {

class MachineLimits {
public:
    enum class Kind { SharedMemory, Tcp };

    // Agrees with the other rank on the limits of `kind` (both ranks must be
    // on one host); nullptr and `why` set when they cannot be measured.
    // iteration_cap > 0 caps every probe's iterations (tests of the output).
    static std::unique_ptr<MachineLimits> open(int me, Kind kind, int iteration_cap, std::string &why);
    ~MachineLimits();

    // The floor for a one-way latency of n bytes in us, or -1 where this
    // class has no limit at that size (0 on rank 1).
    double latency_us(size_t n);
    // The bound for a bandwidth of n-byte messages in MB/s, or -1.
    double bandwidth_mbs(size_t n);

    const char *describe_latency() const;
    const char *describe_bandwidth() const;

    MachineLimits(const MachineLimits &) = delete;
    MachineLimits &operator=(const MachineLimits &) = delete;

private:
    MachineLimits(int me, Kind kind, int iteration_cap) : me_(me), kind_(kind), iteration_cap_(iteration_cap) {}
    bool map_shared_line(std::string &why);
    bool connect_socket(std::string &why);

    double cache_line_one_way_us();
    double memcpy_mbs(size_t n) const;
    double socket_one_way_us(size_t n);
    double socket_stream_mbs(size_t n);

    int me_;
    Kind kind_;
    int iteration_cap_;
    struct SharedLine;
    SharedLine *line_ = nullptr;   // shm: the mapped page holding the bounced line
    int sock_ = -1;                // tcp: rank 0 <-> rank 1 over 127.0.0.1
    double cache_line_us_ = -1;    // measured once, used for every size <= 64 B
    std::map<size_t, double> lat_, bw_;
};

} // namespace bench
