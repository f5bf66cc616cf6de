// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "log/help.hpp"
#include "test_util.hpp"

using weft::log::HelpArgs;
using weft::log::HelpCatalog;
using weft::log::substitute_args;
using weft::test::TempDir;

namespace {

const std::string kRule(74, '-');

const char *const kTcpCatalog = R"(# help for btl/tcp
# comments before the first topic are ignored

[no-nics]
No usable network interface on {host}.
Set btl_tcp_if_include to choose one.

[bad-port]
Port {port} of {device} is down.


[braces]
Use {{literal}} and }} here, {name} there.
)";

bool contains(const std::string &hay, const std::string &needle)
{
    return hay.find(needle) != std::string::npos;
}

// A catalog over one temporary directory with a capturing sink.
struct Fixture {
    TempDir dir;
    HelpCatalog help;
    std::vector<std::string> shown;
    Fixture()
    {
        dir.write("help-btl-tcp.txt", kTcpCatalog);
        help.set_search_path({dir.path()});
        help.set_sink([this](const std::string &s) { shown.push_back(s); });
    }
};

} // namespace

TEST(HelpRender, SubstitutesArguments)
{
    Fixture f;
    auto r = f.help.render("help-btl-tcp.txt", "no-nics", {{"host", "node7"}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r.value(), "No usable network interface on node7.\n"
                         "Set btl_tcp_if_include to choose one.");
}

TEST(HelpRender, TrailingBlankLinesAreTrimmed)
{
    Fixture f;
    auto r = f.help.render("help-btl-tcp.txt", "bad-port", {{"port", "1"}, {"device", "mlx5_0"}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r.value(), "Port 1 of mlx5_0 is down.");
}

TEST(HelpRender, UnknownArgumentStaysVisible)
{
    Fixture f;
    auto r = f.help.render("help-btl-tcp.txt", "bad-port", {{"port", "2"}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), "Port 2 of {device} is down.");
}

TEST(HelpRender, DoubledBracesAreLiteral)
{
    Fixture f;
    auto r = f.help.render("help-btl-tcp.txt", "braces", {{"name", "X"}, {"literal", "no"}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), "Use {literal} and } here, X there.");

    EXPECT_EQ(substitute_args("{{a}} {a} { } {} {a b} {", {{"a", "1"}}), "{a} 1 { } {} {a b} {");
    // A value is inserted as-is, not expanded again.
    EXPECT_EQ(substitute_args("{a}", {{"a", "{b}"}, {"b", "no"}}), "{b}");
}

TEST(HelpRender, MissingTopicNamesTopicFileAndAvailableTopics)
{
    Fixture f;
    auto r = f.help.render("help-btl-tcp.txt", "no-such-topic", {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), WEFT_ERR_NOT_FOUND);
    const std::string &m = r.status().message();
    EXPECT_TRUE(contains(m, "[no-such-topic]")) << m;
    EXPECT_TRUE(contains(m, f.dir.path() + "/help-btl-tcp.txt")) << m;
    EXPECT_TRUE(contains(m, "no-nics, bad-port, braces")) << m;
}

TEST(HelpRender, MissingFileNamesFileAndDirectoriesSearched)
{
    Fixture f;
    TempDir other;
    f.help.set_search_path({f.dir.path(), other.path()});
    auto r = f.help.render("help-btl-nope.txt", "x", {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), WEFT_ERR_NOT_FOUND);
    const std::string &m = r.status().message();
    EXPECT_TRUE(contains(m, "help-btl-nope.txt")) << m;
    EXPECT_TRUE(contains(m, f.dir.path())) << m;
    EXPECT_TRUE(contains(m, other.path())) << m;

    f.help.set_search_path({});
    auto empty = f.help.render("help-btl-tcp.txt", "no-nics", {});
    ASSERT_FALSE(empty.ok());
    EXPECT_TRUE(contains(empty.status().message(), "search path is empty"));
}

TEST(HelpRender, SearchDirectoriesInOrder)
{
    TempDir first, second;
    first.write("help-x.txt", "[t]\nfrom first\n");
    second.write("help-x.txt", "[t]\nfrom second\n[only-second]\nsecond only\n");
    second.write("help-y.txt", "[t]\ny from second\n");
    HelpCatalog help;

    help.set_search_path({first.path(), second.path()});
    EXPECT_EQ(help.render("help-x.txt", "t", {}).value(), "from first");
    // The first file found is the catalog; no merging with later ones.
    EXPECT_FALSE(help.render("help-x.txt", "only-second", {}).ok());
    EXPECT_EQ(help.render("help-y.txt", "t", {}).value(), "y from second");

    help.set_search_path({second.path(), first.path()});
    EXPECT_EQ(help.render("help-x.txt", "t", {}).value(), "from second");
}

TEST(HelpRender, SyntaxDetails)
{
    TempDir dir;
    dir.write("help-s.txt", "# comment\r\n\r\n[a]\r\n# not a comment inside a topic\r\n"
                            "[see below] is prose, not a topic\r\n\r\n[b]\r\n  indented\r\n");
    HelpCatalog help;
    help.set_search_path({dir.path()});
    EXPECT_EQ(help.render("help-s.txt", "a", {}).value(),
              "# not a comment inside a topic\n[see below] is prose, not a topic");
    EXPECT_EQ(help.render("help-s.txt", "b", {}).value(), "  indented");
    auto topics = help.topics("help-s.txt");
    ASSERT_TRUE(topics.ok());
    EXPECT_EQ(topics.value(), (std::vector<std::string>{"a", "b"}));
    EXPECT_TRUE(help.check("help-s.txt").ok()) << help.check("help-s.txt").message();
}

TEST(HelpRender, CheckReportsAuthoringMistakes)
{
    TempDir dir;
    dir.write("help-bad.txt", "stray text\n[a]\nlone { brace\n[a]\nagain\n[empty]\n\n");
    HelpCatalog help;
    help.set_search_path({dir.path()});
    weft::Status st = help.check("help-bad.txt");
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(contains(st.message(), "line 1: text before the first [topic]")) << st.message();
    EXPECT_TRUE(contains(st.message(), "line 3 in [a]: lone '{'")) << st.message();
    EXPECT_TRUE(contains(st.message(), "line 4: topic [a] repeats")) << st.message();
    EXPECT_TRUE(contains(st.message(), "[empty] has no text")) << st.message();
    // render() is lenient: the first [a] wins.
    EXPECT_EQ(help.render("help-bad.txt", "a", {}).value(), "lone { brace");
}

TEST(HelpShow, FramesTheRenderedText)
{
    Fixture f;
    f.help.show("help-btl-tcp.txt", "no-nics", {{"host", "node7"}});
    ASSERT_EQ(f.shown.size(), 1u);
    EXPECT_EQ(f.shown[0], kRule + "\nNo usable network interface on node7.\n"
                                  "Set btl_tcp_if_include to choose one.\n" + kRule);
}

TEST(HelpShow, IdenticalMessagesAreShownOnceAndSummarized)
{
    Fixture f;
    for (int i = 0; i < 3; ++i)
        f.help.show("help-btl-tcp.txt", "no-nics", {{"host", "node7"}});
    EXPECT_EQ(f.shown.size(), 1u);

    std::vector<std::string> summary = f.help.summarize_suppressed();
    ASSERT_EQ(summary.size(), 2u);
    EXPECT_TRUE(contains(summary[0], "2 more")) << summary[0];
    EXPECT_TRUE(contains(summary[0], "help-btl-tcp.txt / no-nics")) << summary[0];
    EXPECT_TRUE(contains(summary[0], "host=node7")) << summary[0];
    EXPECT_TRUE(contains(summary[1], "mca_base_help_aggregate=false")) << summary[1];

    // The counts are reset; the message stays "already shown".
    EXPECT_TRUE(f.help.summarize_suppressed().empty());
    f.help.show("help-btl-tcp.txt", "no-nics", {{"host", "node7"}});
    EXPECT_EQ(f.shown.size(), 1u);
    summary = f.help.summarize_suppressed();
    ASSERT_EQ(summary.size(), 2u);
    EXPECT_TRUE(contains(summary[0], "1 more identical help message ")) << summary[0];
}

TEST(HelpShow, DifferentArgumentsAreDifferentMessages)
{
    Fixture f;
    f.help.show("help-btl-tcp.txt", "bad-port", {{"port", "1"}, {"device", "mlx5_0"}});
    f.help.show("help-btl-tcp.txt", "bad-port", {{"port", "1"}, {"device", "mlx5_1"}});
    f.help.show("help-btl-tcp.txt", "bad-port", {{"port", "1"}, {"device", "mlx5_1"}});
    ASSERT_EQ(f.shown.size(), 2u);
    EXPECT_TRUE(contains(f.shown[0], "mlx5_0"));
    EXPECT_TRUE(contains(f.shown[1], "mlx5_1"));

    std::vector<std::string> summary = f.help.summarize_suppressed();
    ASSERT_EQ(summary.size(), 2u);   // one suppressed message + the hint
    EXPECT_TRUE(contains(summary[0], "1 more")) << summary[0];
    EXPECT_TRUE(contains(summary[0], "device=mlx5_1")) << summary[0];
}

TEST(HelpShow, ConcurrentIdenticalRequestsShowOnce)
{
    Fixture f;
    constexpr int kThreads = 4, kEach = 100;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&f] {
            for (int i = 0; i < kEach; ++i)
                f.help.show("help-btl-tcp.txt", "no-nics", {{"host", "node7"}});
        });
    for (auto &th : threads)
        th.join();
    EXPECT_EQ(f.shown.size(), 1u);
    std::vector<std::string> summary = f.help.summarize_suppressed();
    ASSERT_FALSE(summary.empty());
    EXPECT_TRUE(contains(summary[0], std::to_string(kThreads * kEach - 1) + " more"))
        << summary[0];
}

TEST(HelpShow, AggregationCanBeTurnedOff)
{
    Fixture f;
    EXPECT_TRUE(f.help.aggregate());
    f.help.set_aggregate(false);
    for (int i = 0; i < 3; ++i)
        f.help.show("help-btl-tcp.txt", "no-nics", {{"host", "node7"}});
    EXPECT_EQ(f.shown.size(), 3u);
    EXPECT_TRUE(f.help.summarize_suppressed().empty());
}

TEST(HelpShow, RenderFailureStillShowsEverything)
{
    Fixture f;
    f.help.show("help-btl-tcp.txt", "gone", {{"device", "eth1"}, {"why", "line1\nline2"}});
    f.help.show("help-missing.txt", "t", {{"k", "v"}});
    ASSERT_EQ(f.shown.size(), 2u);
    const std::string &a = f.shown[0];
    EXPECT_EQ(a.rfind(kRule + "\n", 0), 0u) << a;
    EXPECT_TRUE(contains(a, "[gone]")) << a;
    EXPECT_TRUE(contains(a, "help-btl-tcp.txt")) << a;
    EXPECT_TRUE(contains(a, "device = eth1")) << a;
    EXPECT_TRUE(contains(a, "why = line1\n    line2")) << a;
    EXPECT_TRUE(contains(a, "available topics: no-nics, bad-port, braces")) << a;
    const std::string &b = f.shown[1];
    EXPECT_TRUE(contains(b, "help-missing.txt")) << b;
    EXPECT_TRUE(contains(b, "[t]")) << b;
    EXPECT_TRUE(contains(b, "k = v")) << b;
    EXPECT_TRUE(contains(b, f.dir.path())) << b;   // where it looked
}

TEST(HelpShow, DefaultSinkWritesToStderr)
{
    Fixture f;
    f.help.set_sink({});
    testing::internal::CaptureStderr();
    f.help.show("help-btl-tcp.txt", "bad-port", {{"port", "3"}, {"device", "eth0"}});
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err, kRule + "\nPort 3 of eth0 is down.\n" + kRule + "\n");
}

TEST(HelpMcaBase, RealCatalogParsesAndEveryTopicRenders)
{
    HelpCatalog help;
    help.set_search_path({std::string(WEFT_ABS_SRCDIR) + "/framework/log"});
    weft::Status st = help.check("help-mca-base.txt");
    EXPECT_TRUE(st.ok()) << st.message();

    struct Case {
        const char *topic;
        HelpArgs args;
    };
    const std::vector<Case> cases = {
        {"unknown-param",
         {{"name", "btl_tcp_if_inclde"},
          {"source", "command line"},
          {"suggestion", "Did you mean btl_tcp_if_include?"}}},
        {"deprecated-param",
         {{"old", "btl_tcp_if_inc"}, {"new", "btl_tcp_if_include"}, {"source", "environment"}}},
        {"bad-value",
         {{"name", "btl_base_verbose"},
          {"value", "loud"},
          {"source", "file (/etc/weft-mca-params.conf:3)"},
          {"accepted", "none, error, warn, info, debug, trace, max or a number 0..100"}}},
        {"file-syntax", {{"file", "/home/u/.weft/mca-params.conf"}, {"line", "7"}, {"text", "oops"}}},
        {"component-load-failed",
         {{"framework", "btl"},
          {"component", "openib"},
          {"path", "/usr/lib/weft/weft_btl_openib.so"},
          {"reason", "libibverbs.so.1: cannot open shared object file"}}},
        {"component-required",
         {{"framework", "btl"}, {"component", "tcp"}, {"reason", "no usable interface"}}},
        {"unknown-component",
         {{"framework", "btl"},
          {"name", "tpc"},
          {"suggestion", "Did you mean tcp?"},
          {"available", "self, sm, tcp"}}},
    };
    for (const Case &c : cases) {
        auto r = help.render("help-mca-base.txt", c.topic, c.args);
        ASSERT_TRUE(r.ok()) << c.topic << ": " << r.status().message();
        // Every argument is used and nothing is left unsubstituted.
        for (const auto &[name, value] : c.args)
            EXPECT_TRUE(contains(r.value(), value)) << c.topic << " lacks {" << name << "}";
        EXPECT_FALSE(contains(r.value(), "{")) << c.topic << ":\n" << r.value();
        EXPECT_FALSE(contains(r.value(), "}")) << c.topic << ":\n" << r.value();
    }
    auto unknown = help.render("help-mca-base.txt", "unknown-param", cases[0].args);
    EXPECT_TRUE(contains(unknown.value(), "mca_base_warn_unknown=false")) << unknown.value();
}
