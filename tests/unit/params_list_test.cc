// SPDX-License-Identifier: BSD-3-Clause
#include <arpa/inet.h>
#include <netinet/in.h>

#include <gtest/gtest.h>

#include "params/list.hpp"

using namespace weft::params;

namespace {
sockaddr_in v4(const char *a)
{
    sockaddr_in s{};
    s.sin_family = AF_INET;
    inet_pton(AF_INET, a, &s.sin_addr);
    return s;
}
sockaddr_in6 v6(const char *a)
{
    sockaddr_in6 s{};
    s.sin6_family = AF_INET6;
    inet_pton(AF_INET6, a, &s.sin6_addr);
    return s;
}
} // namespace

TEST(ParamsList, EmptySelectsEverything)
{
    auto l = parse_list("");
    ASSERT_TRUE(l.ok());
    EXPECT_TRUE(l.value().empty());
    EXPECT_TRUE(l.value().selects_name("anything"));
}

TEST(ParamsList, IncludeNamesWithWildcards)
{
    auto l = parse_list("self, tcp ,docker*");
    ASSERT_TRUE(l.ok()) << l.status().message();
    const auto &s = l.value();
    EXPECT_FALSE(s.exclude);
    EXPECT_TRUE(s.selects_name("self"));
    EXPECT_TRUE(s.selects_name("tcp"));
    EXPECT_TRUE(s.selects_name("docker0"));
    EXPECT_FALSE(s.selects_name("openib"));
    EXPECT_EQ(s.str(), "self,tcp,docker*");
}

TEST(ParamsList, CaretExcludesWholeList)
{
    auto l = parse_list("^openib,scif");
    ASSERT_TRUE(l.ok());
    EXPECT_TRUE(l.value().exclude);
    EXPECT_FALSE(l.value().selects_name("openib"));
    EXPECT_FALSE(l.value().selects_name("scif"));
    EXPECT_TRUE(l.value().selects_name("tcp"));
    EXPECT_EQ(l.value().str(), "^openib,scif");
}

TEST(ParamsList, CaretAnywhereElseIsAnErrorThatExplains)
{
    for (const char *bad : {"tcp,^openib", "^tcp,^openib", "a^b"}) {
        auto l = parse_list(bad);
        ASSERT_FALSE(l.ok()) << bad;
        EXPECT_EQ(l.status().code(), WEFT_ERR_BAD_VALUE);
        EXPECT_NE(l.status().message().find("first character"), std::string::npos)
            << l.status().message();
    }
    EXPECT_FALSE(parse_list("^").ok());
}

TEST(ParamsList, CidrMatchesV4AndV6)
{
    auto l = parse_list("10.1.0.0/16,fe80::/10,192.168.5.7");
    ASSERT_TRUE(l.ok()) << l.status().message();
    const auto &s = l.value();
    auto a = v4("10.1.200.3"), b = v4("10.2.0.1"), c = v4("192.168.5.7"), d = v4("192.168.5.8");
    auto e = v6("fe80::1"), f = v6("2001:db8::1");
    EXPECT_TRUE(s.contains_address(reinterpret_cast<sockaddr *>(&a)));
    EXPECT_FALSE(s.contains_address(reinterpret_cast<sockaddr *>(&b)));
    EXPECT_TRUE(s.contains_address(reinterpret_cast<sockaddr *>(&c)));
    EXPECT_FALSE(s.contains_address(reinterpret_cast<sockaddr *>(&d)));
    EXPECT_TRUE(s.contains_address(reinterpret_cast<sockaddr *>(&e)));
    EXPECT_FALSE(s.contains_address(reinterpret_cast<sockaddr *>(&f)));
}

TEST(ParamsList, OddPrefixLengths)
{
    auto l = parse_list("10.77.0.0/23");
    ASSERT_TRUE(l.ok());
    auto in = v4("10.77.1.255"), out = v4("10.77.2.0");
    EXPECT_TRUE(l.value().contains_address(reinterpret_cast<sockaddr *>(&in)));
    EXPECT_FALSE(l.value().contains_address(reinterpret_cast<sockaddr *>(&out)));
    auto all = parse_list("0.0.0.0/0");
    ASSERT_TRUE(all.ok());
    EXPECT_TRUE(all.value().contains_address(reinterpret_cast<sockaddr *>(&out)));
}

TEST(ParamsList, BadCidrsAreRejected)
{
    for (const char *bad : {"10.0.0.0/33", "fe80::/129", "10.0.0/8", "10.0.0.0/x", "eth0/24"}) {
        auto l = parse_list(bad);
        EXPECT_FALSE(l.ok()) << bad;
    }
}

TEST(ParamsList, DevicePort)
{
    auto l = parse_list("mlx5_0:1,mlx5_1");
    ASSERT_TRUE(l.ok()) << l.status().message();
    const auto &s = l.value();
    EXPECT_EQ(s.items[0].kind, ListItem::Kind::DevicePort);
    EXPECT_EQ(s.items[0].name, "mlx5_0");
    EXPECT_EQ(s.items[0].port, 1);
    EXPECT_TRUE(s.selects_device_port("mlx5_0", 1));
    EXPECT_FALSE(s.selects_device_port("mlx5_0", 2));
    EXPECT_TRUE(s.selects_device_port("mlx5_1", 2));   // bare device = every port
    EXPECT_FALSE(s.selects_device_port("mlx4_0", 1));
    EXPECT_FALSE(parse_list("mlx5_0:x").ok());
}

TEST(ParamsList, EmptyEntriesAndJunkAreErrors)
{
    EXPECT_FALSE(parse_list("a,,b").ok());
    EXPECT_FALSE(parse_list("a,").ok());
    EXPECT_FALSE(parse_list("eth 0").ok());
    EXPECT_FALSE(parse_list("eth0;rm").ok());
}

TEST(ParamsList, GlobMatch)
{
    EXPECT_TRUE(glob_match("docker*", "docker0"));
    EXPECT_TRUE(glob_match("br-*", "br-1234"));
    EXPECT_TRUE(glob_match("eth?", "eth1"));
    EXPECT_FALSE(glob_match("eth?", "eth10"));
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
    EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
}
