// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "params/registry.hpp"

using namespace weft::params;

TEST(ParamsParse, BoolAcceptsCommonSpellings)
{
    for (const char *t : {"1", "true", "YES", "on", " y "})
        EXPECT_TRUE(parse_bool(t).value()) << t;
    for (const char *t : {"0", "false", "No", "off", "n"})
        EXPECT_FALSE(parse_bool(t).value()) << t;
    auto bad = parse_bool("maybe");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), WEFT_ERR_BAD_VALUE);
    EXPECT_NE(bad.status().message().find("true/false"), std::string::npos);
}

TEST(ParamsParse, IntDecimalHexNegativeAndErrors)
{
    EXPECT_EQ(parse_int("42").value(), 42);
    EXPECT_EQ(parse_int("-7").value(), -7);
    EXPECT_EQ(parse_int("0x10").value(), 16);
    EXPECT_FALSE(parse_int("12abc").ok());
    EXPECT_FALSE(parse_int("").ok());
    EXPECT_FALSE(parse_int("99999999999999999999999").ok());
}

TEST(ParamsParse, SizeSuffixesArePowersOf1024)
{
    EXPECT_EQ(parse_size("4096").value(), 4096u);
    EXPECT_EQ(parse_size("64k").value(), 65536u);
    EXPECT_EQ(parse_size("64K").value(), 65536u);
    EXPECT_EQ(parse_size("1M").value(), 1048576u);
    EXPECT_EQ(parse_size("1MiB").value(), 1048576u);
    EXPECT_EQ(parse_size("2G").value(), 2ull << 30);
    EXPECT_EQ(parse_size("1T").value(), 1ull << 40);
    EXPECT_EQ(parse_size("12B").value(), 12u);
    for (const char *bad : {"-1", "1X", "k", "", "1kk", "99999999999999999999T", "16777216T"}) {
        auto r = parse_size(bad);
        EXPECT_FALSE(r.ok()) << bad;
    }
    EXPECT_NE(parse_size("1X").status().message().find("64k"), std::string::npos);
}

TEST(ParamsParse, DoubleRejectsGarbageAndInfinity)
{
    EXPECT_DOUBLE_EQ(parse_double("0.5").value(), 0.5);
    EXPECT_DOUBLE_EQ(parse_double("1e-3").value(), 1e-3);
    EXPECT_FALSE(parse_double("fast").ok());
    EXPECT_FALSE(parse_double("inf").ok());
    EXPECT_FALSE(parse_double("1.5x").ok());
}

TEST(ParamsParse, EditDistanceCountsTranspositionAsOne)
{
    EXPECT_EQ(edit_distance("btl_base_verbose", "btl_base_verbose"), 0u);
    EXPECT_EQ(edit_distance("btl_base_verbos", "btl_base_verbose"), 1u);
    EXPECT_EQ(edit_distance("btl_tcp_if_inculde", "btl_tcp_if_include"), 1u);
    EXPECT_EQ(edit_distance("abc", "xyz"), 3u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
}

namespace {
// The textbook full-matrix optimal string alignment distance, to check the
// banded one against.
size_t reference_distance(const std::string &a, const std::string &b)
{
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                                d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}
} // namespace

TEST(ParamsParse, EditDistanceWithALimitAgreesWithTheFullMatrix)
{
    // Small alphabet so that matches, swaps and near misses are common.
    std::mt19937 rng(24);
    auto word = [&] {
        std::string w(rng() % 9, 'a');
        for (char &c : w)
            c = static_cast<char>('a' + rng() % 3);
        return w;
    };
    for (int round = 0; round < 20000; ++round) {
        const std::string a = word(), b = word();
        const size_t full = reference_distance(a, b);
        EXPECT_EQ(edit_distance(a, b), full) << a << " / " << b;
        for (size_t limit = 0; limit <= 4; ++limit)
            ASSERT_EQ(edit_distance(a, b, limit), std::min(full, limit + 1))
                << a << " / " << b << " limit " << limit;
    }
}

TEST(ParamsParse, EditDistanceOfAHugeNameIsBoundedByTheLimit)
{
    // A 10 MiB name against a parameter name, and two 1 MiB names one
    // swap apart: with a limit, neither needs a matrix of their lengths
    // (the full one would be terabytes).
    const std::string huge(10u << 20, 'x');
    EXPECT_EQ(edit_distance(huge, "btl_base_verbose", 3), 4u);
    std::string a(1u << 20, 'y'), b = a;
    a[1000] = 'p';
    a[1001] = 'q';
    b[1000] = 'q';
    b[1001] = 'p';
    EXPECT_EQ(edit_distance(a, b, 3), 1u);
    a[1u << 19] = 'z';
    EXPECT_EQ(edit_distance(a, b, 1), 2u);
}

TEST(ParamsParse, ShownNameCutsLongNames)
{
    EXPECT_EQ(shown_name("btl_tcp_links"), "btl_tcp_links");
    const std::string shown = shown_name(std::string(60000, 'n'));
    EXPECT_EQ(shown, std::string(kMaxSuggestLength, 'n') + "... (60000 characters)");
}

TEST(ParamsParse, OriginDescribesEverySource)
{
    Origin o;
    EXPECT_EQ(o.describe(), "default");
    o.source = Source::Environment;
    EXPECT_EQ(o.describe(), "environment");
    o.source = Source::CommandLine;
    EXPECT_EQ(o.describe(), "command line");
    o.source = Source::UserFile;
    o.file = "/home/u/.weft/mca-params.conf";
    o.line = 12;
    EXPECT_EQ(o.describe(), "file (/home/u/.weft/mca-params.conf:12)");
}
