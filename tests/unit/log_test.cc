// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "log/log.hpp"

using weft::log::level_name;
using weft::log::Logger;
using weft::log::parse_verbosity;
using weft::log::verbosity_enumerators;

namespace {

// Installs a sink that collects lines.
struct Capture {
    std::vector<std::string> lines;
    explicit Capture(Logger &log)
    {
        log.set_sink([this](std::string_view l) { lines.emplace_back(l); });
    }
};

std::string expected_prefix()
{
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return "[" + std::string(host) + ":" + std::to_string(getpid()) + "] ";
}

} // namespace

TEST(LogVerbosity, ParsesNamesCaseInsensitively)
{
    EXPECT_EQ(parse_verbosity("none").value(), 0);
    EXPECT_EQ(parse_verbosity("error").value(), 10);
    EXPECT_EQ(parse_verbosity("Warn").value(), 20);
    EXPECT_EQ(parse_verbosity("INFO").value(), 40);
    EXPECT_EQ(parse_verbosity("debug").value(), 60);
    EXPECT_EQ(parse_verbosity("Trace").value(), 80);
    EXPECT_EQ(parse_verbosity("max").value(), 100);
}

TEST(LogVerbosity, ParsesNumbersInRange)
{
    EXPECT_EQ(parse_verbosity("0").value(), 0);
    EXPECT_EQ(parse_verbosity("55").value(), 55);
    EXPECT_EQ(parse_verbosity("100").value(), 100);
    EXPECT_EQ(parse_verbosity(" 30 ").value(), 30);
}

TEST(LogVerbosity, RejectsAnythingElseSayingWhatIsAccepted)
{
    auto r = parse_verbosity("loud");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), WEFT_ERR_BAD_VALUE);
    EXPECT_EQ(r.status().message(),
              "bad verbosity 'loud': accepted values are none, error, warn, info, debug, "
              "trace, max or a number 0..100");
    for (const char *bad : {"", "101", "-1", "1e2", "0x10", "20x", "warnings", "999999999999"})
        EXPECT_FALSE(parse_verbosity(bad).ok()) << bad;
}

TEST(LogVerbosity, EnumeratorsAndLevelNames)
{
    std::vector<std::string> want = {"none=0",   "error=10", "warn=20", "info=40",
                                     "debug=60", "trace=80", "max=100"};
    EXPECT_EQ(verbosity_enumerators(), want);
    EXPECT_STREQ(level_name(0), "none");
    EXPECT_STREQ(level_name(10), "error");
    EXPECT_STREQ(level_name(25), "warn");
    EXPECT_STREQ(level_name(59), "info");
    EXPECT_STREQ(level_name(60), "debug");
    EXPECT_STREQ(level_name(99), "trace");
    EXPECT_STREQ(level_name(100), "max");
    EXPECT_STREQ(level_name(250), "max");
    EXPECT_STREQ(level_name(-3), "none");
}

TEST(LogLogger, EnabledPerFramework)
{
    Logger log;
    // Default is warn.
    EXPECT_EQ(log.verbosity("btl"), WEFT_LOG_WARN);
    EXPECT_TRUE(log.enabled("btl", WEFT_LOG_ERROR));
    EXPECT_TRUE(log.enabled("btl", WEFT_LOG_WARN));
    EXPECT_FALSE(log.enabled("btl", WEFT_LOG_INFO));

    log.set_verbosity("btl", WEFT_LOG_DEBUG);
    log.set_verbosity("topology", WEFT_LOG_NONE);
    EXPECT_TRUE(log.enabled("btl", WEFT_LOG_DEBUG));
    EXPECT_FALSE(log.enabled("btl", WEFT_LOG_TRACE));
    EXPECT_FALSE(log.enabled("topology", WEFT_LOG_ERROR));
    EXPECT_FALSE(log.enabled("pml", WEFT_LOG_INFO));   // still the default

    // Level 0 is "none": never a message level, even at max verbosity.
    log.set_verbosity("btl", WEFT_LOG_MAX);
    EXPECT_FALSE(log.enabled("btl", 0));
    EXPECT_TRUE(log.enabled("btl", 100));

    log.set_default_verbosity(WEFT_LOG_INFO);
    EXPECT_TRUE(log.enabled("pml", WEFT_LOG_INFO));
    EXPECT_FALSE(log.enabled("topology", WEFT_LOG_ERROR));   // explicit setting wins
}

TEST(LogLogger, VerbosityIsClamped)
{
    Logger log;
    log.set_verbosity("btl", 500);
    EXPECT_EQ(log.verbosity("btl"), 100);
    log.set_verbosity("btl", -4);
    EXPECT_EQ(log.verbosity("btl"), 0);
}

TEST(LogLogger, WriteFormatsHostPidFrameworkComponentLevel)
{
    Logger log;
    Capture cap(log);
    EXPECT_EQ(log.prefix(), expected_prefix());

    log.write("btl", "tcp", WEFT_LOG_WARN, "no usable interface");
    log.write("btl", "", WEFT_LOG_ERROR, "nothing selected");
    log.write("mca", "base", WEFT_LOG_WARN, "hello");
    log.write("btl", "tcp", WEFT_LOG_INFO, "not shown at warn");

    ASSERT_EQ(cap.lines.size(), 3u);
    EXPECT_EQ(cap.lines[0], expected_prefix() + "btl/tcp warn: no usable interface");
    EXPECT_EQ(cap.lines[1], expected_prefix() + "btl error: nothing selected");
    EXPECT_EQ(cap.lines[2], expected_prefix() + "mca/base warn: hello");
}

TEST(LogLogger, LevelBetweenNamesUsesTheNameBelow)
{
    Logger log;
    Capture cap(log);
    log.set_verbosity("btl", 70);
    log.write("btl", "sm", 65, "x");
    ASSERT_EQ(cap.lines.size(), 1u);
    EXPECT_EQ(cap.lines[0], expected_prefix() + "btl/sm debug: x");
}

TEST(LogLogger, MultiLineMessagesGetThePrefixOnEveryLine)
{
    Logger log;
    Capture cap(log);
    log.write("btl", "tcp", WEFT_LOG_WARN, "first\nsecond\n\nfourth\n");
    std::string p = expected_prefix() + "btl/tcp warn: ";
    std::vector<std::string> want = {p + "first", p + "second", p, p + "fourth"};
    EXPECT_EQ(cap.lines, want);
}

TEST(LogLogger, ConcurrentWritersNeverSplitAMessage)
{
    Logger log;
    std::vector<std::string> lines;   // the sink is never called concurrently
    log.set_sink([&](std::string_view l) { lines.emplace_back(l); });
    constexpr int kThreads = 4, kEach = 200;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&log, t] {
            std::string msg = "thread " + std::to_string(t) + "\nsecond line";
            for (int i = 0; i < kEach; ++i)
                log.write("btl", "tcp", WEFT_LOG_WARN, msg);
        });
    for (auto &th : threads)
        th.join();
    ASSERT_EQ(lines.size(), static_cast<size_t>(2 * kThreads * kEach));
    for (size_t i = 0; i < lines.size(); i += 2) {
        EXPECT_NE(lines[i].find(": thread "), std::string::npos) << lines[i];
        EXPECT_NE(lines[i + 1].find(": second line"), std::string::npos) << lines[i + 1];
    }
}

TEST(LogLogger, DefaultSinkWritesToStderr)
{
    Logger log;
    log.set_sink({});   // back to the default
    testing::internal::CaptureStderr();
    log.write("btl", "self", WEFT_LOG_ERROR, "to stderr");
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err, expected_prefix() + "btl/self error: to stderr\n");
}
