// SPDX-License-Identifier: BSD-3-Clause
// engine::IntervalClock: the clock of rndv_ns. Its intervals must be
// steady_clock's (within the counter rate's calibration error), across the
// switch from steady_clock to the counter too, and never negative.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "engine/interval_clock.hpp"

namespace {

using weft::engine::IntervalClock;

uint64_t steady_ns()
{
    const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
}

// An interval of the clock bracketed by steady_clock readings: steady_clock
// read before and after each of the clock's two readings, so that a
// preemption anywhere widens the bracket instead of failing the test.
struct Bracketed {
    uint64_t interval;        // the clock's
    uint64_t shortest;        // steady_clock's least possible interval
    uint64_t longest;         // and its greatest
};

template <class Between>
Bracketed measure(IntervalClock &clock, Between &&between)
{
    const uint64_t s0 = steady_ns();
    const uint64_t a = clock.now_ns();
    const uint64_t s1 = steady_ns();
    between();
    const uint64_t s2 = steady_ns();
    const uint64_t b = clock.now_ns();
    const uint64_t s3 = steady_ns();
    return {IntervalClock::interval(a, b), s2 - s1, s3 - s0};
}

// Spins, reading the clock, until steady_clock has advanced ns.
void spin_for(IntervalClock &clock, uint64_t ns)
{
    const uint64_t end = steady_ns() + ns;
    while (steady_ns() < end)
        (void)clock.now_ns();
}

void expect_within(const Bracketed &m, double rate_error, const char *what)
{
    const double slack = rate_error * static_cast<double>(m.longest);
    EXPECT_GE(static_cast<double>(m.interval), static_cast<double>(m.shortest) - slack) << what;
    EXPECT_LE(static_cast<double>(m.interval), static_cast<double>(m.longest) + slack) << what;
}

// Two cores' counters a few ticks apart can make a later reading the
// smaller: such an interval is 0, not 2^64 less a few.
TEST(IntervalClock, AnIntervalThatSkewMadeNegativeIsZero)
{
    EXPECT_EQ(IntervalClock::interval(1000, 1500), 500u);
    EXPECT_EQ(IntervalClock::interval(1500, 1000), 0u);
    EXPECT_EQ(IntervalClock::interval(7, 7), 0u);
}

TEST(IntervalClock, WithoutTheCounterItIsSteadyClock)
{
    IntervalClock clock(false);
    const Bracketed m = measure(clock, [&] { spin_for(clock, 2'000'000); });
    expect_within(m, 0, "steady_clock only");
    EXPECT_FALSE(clock.calibrated());
}

TEST(IntervalClock, IntervalsAcrossCalibrationAndAfterItAreSteadyClocks)
{
    if (!IntervalClock::counter_usable())
        GTEST_SKIP() << "no invariant time-stamp counter the kernel keeps time with: "
                        "the clock is steady_clock (tested above)";
    IntervalClock clock;
    // An interval that begins before the rate is fixed and ends after it:
    // the counter advances kCalibrationTicks in 4-20 ms at 1-4 GHz; the
    // spin goes on (5 s at most) until the clock says it switched.
    const Bracketed across = measure(clock, [&] {
        const uint64_t give_up = steady_ns() + 5'000'000'000ull;
        while (!clock.calibrated() && steady_ns() < give_up)
            spin_for(clock, 1'000'000);
    });
    ASSERT_TRUE(clock.calibrated()) << "the counter did not advance 2^24 ticks in 5 s of steady_clock";
    expect_within(across, 1e-3, "an interval across the switch to the counter");
    // Intervals on the counter alone, short and longer.
    for (uint64_t ns : {100'000ull, 20'000'000ull}) {
        const Bracketed m = measure(clock, [&] { spin_for(clock, ns); });
        expect_within(m, 1e-3, "an interval on the counter");
    }
}

} // namespace
