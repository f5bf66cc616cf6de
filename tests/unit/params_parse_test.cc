#include <gtest/gtest.h>

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
