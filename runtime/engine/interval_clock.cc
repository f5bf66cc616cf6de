// SPDX-License-Identifier: BSD-3-Clause
#include "engine/interval_clock.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace weft::engine {

bool IntervalClock::counter_usable()
{
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d) || !(d & (1u << 8)))
        return false;   // no invariant TSC (constant rate, running in every C- and P-state)
    // Invariant is not enough: the cores' counters must also be in step,
    // which the kernel checked if it keeps its own time with the TSC (a
    // VM under emulation, whose counter it distrusts, uses hpet instead).
    char source[32] = "";
    if (FILE *f = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r")) {
        if (!std::fgets(source, sizeof source, f))
            source[0] = '\0';
        std::fclose(f);
    }
    return std::strncmp(source, "tsc", 3) == 0 && (source[3] == '\n' || source[3] == '\0');
#else
    return false;
#endif
}

uint64_t IntervalClock::steady_ns()
{
    const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
}

IntervalClock::IntervalClock(bool use_counter) : use_counter_(use_counter) {}

uint64_t IntervalClock::now_ns_uncalibrated()
{
    if (!use_counter_)
        return steady_ns();
    const uint64_t ticks = read_counter();
    const uint64_t ns = steady_ns();
    if (ticks0_ == 0) {
        ticks0_ = ticks;
        ns0_ = ns;
    } else if (ticks > ticks0_ && ticks - ticks0_ >= kCalibrationTicks && ns > ns0_) {
        // From here on ns0_ + (ticks - ticks0_) * rate, which equals this
        // reading now: an interval begun before stays whole.
        ns_per_tick_ = static_cast<double>(ns - ns0_) / static_cast<double>(ticks - ticks0_);
        calibrated_ = true;
    }
    return ns;
}

} // namespace weft::engine
