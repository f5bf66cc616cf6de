// SPDX-License-Identifier: BSD-3-Clause
// A monotonic nanosecond clock for timing intervals on the message paths
// (each rendezvous's time from match to last byte, counters.h rndv_ns).
//
// Why not steady_clock alone: each rendezvous read it twice, and on the
// 2-vCPU KVM guest those two reads were 5-7% of a 2-rank osu_bcast of
// 16-32 KiB (12 alternated jobs, 11/12 faster without them); under QEMU
// emulation without a paravirtual clock one read is a system call of
// about 0.8 us. Where the CPU has an invariant time-stamp counter, this
// clock reads the counter (one instruction) and scales it by a rate
// measured against steady_clock: until the counter has advanced
// kCalibrationTicks since the first reading, readings are steady_clock's
// own; the first reading after that fixes the rate, so that clock and
// counter agree there and intervals across the switch stay whole. With it
// the 16 KiB bcast took 0.96 of the time, 32 KiB 0.985 (10/12 faster).
// Elsewhere (no invariant counter, a kernel that keeps time otherwise,
// not x86-64) every reading is steady_clock's.
// Not thread-safe: one clock per owner, read under the owner's
// serialization (the engine's).
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace weft::engine {

class IntervalClock {
public:
    // Counter ticks before the rate is fixed: about 4-20 ms at 1-4 GHz,
    // over which two steady_clock readings' own error (well under a
    // microsecond) is below 1e-4 of the interval.
    static constexpr uint64_t kCalibrationTicks = uint64_t{1} << 24;

    // use_counter false: steady_clock only (tests; CPUs without an
    // invariant counter).
    explicit IntervalClock(bool use_counter = counter_usable());
    // Nanoseconds. Inline once calibrated: one counter read, a subtraction
    // and a multiplication (a call and a monotonic guard around them kept
    // half the saving away: 2-rank osu_bcast of 16 KiB, 12 jobs). A reading
    // may fall short of an earlier one on another core by the cores'
    // counter skew: intervals clamp at 0 (interval()).
    uint64_t now_ns()
    {
        if (calibrated_) [[likely]] {
            const auto since = static_cast<int64_t>(read_counter() - ticks0_);
            return ns0_ + (since > 0 ? static_cast<uint64_t>(static_cast<double>(since) * ns_per_tick_) : 0);
        }
        return now_ns_uncalibrated();
    }
    // later - earlier, or 0 where skew made it negative.
    static uint64_t interval(uint64_t earlier, uint64_t later)
    {
        return later > earlier ? later - earlier : 0;
    }
    // Whether readings come from the counter now (the rate is fixed).
    bool calibrated() const { return calibrated_; }
    // Whether this CPU has an invariant time-stamp counter (x86-64,
    // CPUID 0x80000007 EDX bit 8) that the kernel keeps time with (its
    // clocksource is tsc: the cores' counters are in step).
    static bool counter_usable();

private:
    static uint64_t read_counter()
    {
#if defined(__x86_64__)
        return __rdtsc();
#else
        return 0;
#endif
    }
    uint64_t now_ns_uncalibrated();
    static uint64_t steady_ns();
    bool use_counter_;
    bool calibrated_ = false;
    uint64_t ticks0_ = 0;       // the counter at the first reading
    uint64_t ns0_ = 0;          // steady_clock then
    double ns_per_tick_ = 0;    // fixed by calibration
};

} // namespace weft::engine
