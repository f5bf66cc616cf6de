// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "params/registry.hpp"
#include "test_util.hpp"

using namespace weft::params;
using weft::test::TempDir;
using weft::Status;

namespace {

Definition def(const std::string &fw, const std::string &comp, const std::string &name, Type type,
               const std::string &dflt)
{
    Definition d;
    d.framework = fw;
    d.component = comp;
    d.name = name;
    d.type = type;
    d.default_text = dflt;
    d.help = "test parameter";
    return d;
}

Origin from(Source s)
{
    Origin o;
    o.source = s;
    return o;
}

} // namespace

TEST(ParamsRegistry, DefaultValueAndSource)
{
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "tcp", "links", Type::Int, "1")).ok());
    const Param *p = r.find("btl_tcp_links");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->as_int(), 1);
    EXPECT_EQ(p->origin().describe(), "default");
}

TEST(ParamsRegistry, PrecedenceAcrossEverySource)
{
    TempDir dir;
    std::string sys = dir.write("sys.conf", "btl_tcp_links = 2\n");
    std::string user = dir.write("user.conf", "# comment\n\nbtl_tcp_links = 3\n");
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "tcp", "links", Type::Int, "1")).ok());
    const Param *p = r.find("btl_tcp_links");

    ASSERT_TRUE(r.load_file(sys, Source::SystemFile).ok());
    EXPECT_EQ(p->as_int(), 2);
    EXPECT_EQ(p->origin().describe(), "file (" + sys + ":1)");

    ASSERT_TRUE(r.load_file(user, Source::UserFile).ok());
    EXPECT_EQ(p->as_int(), 3);
    EXPECT_EQ(p->origin().describe(), "file (" + user + ":3)");

    const char *env[] = {"PATH=/bin", "WEFT_MCA_btl_tcp_links=4", nullptr};
    r.load_environment(env);
    EXPECT_EQ(p->as_int(), 4);
    EXPECT_EQ(p->origin().describe(), "environment");

    ASSERT_TRUE(r.set("btl_tcp_links", "5", from(Source::CommandLine)).ok());
    EXPECT_EQ(p->as_int(), 5);
    EXPECT_EQ(p->origin().describe(), "command line");

    // A lower source arriving later does not override a higher one.
    ASSERT_TRUE(r.load_file(sys, Source::SystemFile).ok());
    EXPECT_EQ(p->as_int(), 5);
    EXPECT_TRUE(r.errors().empty());
}

TEST(ParamsRegistry, ValuesSetBeforeRegistrationWaitAndApply)
{
    Registry r;
    const char *env[] = {"WEFT_MCA_btl_tcp_eager_limit=64k", nullptr};
    r.load_environment(env);
    ASSERT_EQ(r.unknown_names().size(), 1u);
    ASSERT_TRUE(r.add(def("btl", "tcp", "eager_limit", Type::Size, "4k")).ok());
    EXPECT_EQ(r.find("btl_tcp_eager_limit")->as_size(), 65536u);
    EXPECT_EQ(r.find("btl_tcp_eager_limit")->origin().source, Source::Environment);
    EXPECT_TRUE(r.unknown_names().empty());
}

TEST(ParamsRegistry, UnknownNameGetsDidYouMean)
{
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "base", "verbose", Type::Int, "0")).ok());
    ASSERT_TRUE(r.add(def("btl", "tcp", "if_include", Type::List, "")).ok());
    const char *env[] = {"WEFT_MCA_btl_base_verbos=100", "WEFT_MCA_btl_tcp_if_inculde=eth0",
                         "WEFT_MCA_completely_unrelated=1", nullptr};
    r.load_environment(env);
    auto unknown = r.unknown_names();
    ASSERT_EQ(unknown.size(), 3u);
    // Sorted by name.
    EXPECT_EQ(unknown[0].name, "btl_base_verbos");
    EXPECT_EQ(unknown[0].suggestion, "btl_base_verbose");
    EXPECT_EQ(unknown[0].origin.source, Source::Environment);
    EXPECT_EQ(unknown[1].name, "btl_tcp_if_inculde");
    EXPECT_EQ(unknown[1].suggestion, "btl_tcp_if_include");
    EXPECT_EQ(unknown[2].name, "completely_unrelated");
    EXPECT_EQ(unknown[2].suggestion, "");
}

TEST(ParamsRegistry, UnknownNamesFromFilesKeepFileAndLine)
{
    TempDir dir;
    std::string f = dir.write("p.conf", "\nbtl_tcp_linx = 2\n");
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "tcp", "links", Type::Int, "1")).ok());
    ASSERT_TRUE(r.load_file(f, Source::UserFile).ok());
    auto unknown = r.unknown_names();
    ASSERT_EQ(unknown.size(), 1u);
    EXPECT_EQ(unknown[0].origin.describe(), "file (" + f + ":2)");
    EXPECT_EQ(unknown[0].suggestion, "btl_tcp_links");
}

TEST(ParamsRegistry, BadValueIsAnErrorListingWhatIsAccepted)
{
    Registry r;
    Definition e = def("btl", "tcp", "mode", Type::Enum, "auto");
    e.enumerators = {"auto", "poll", "epoll"};
    ASSERT_TRUE(r.add(e).ok());
    Status st = r.set("btl_tcp_mode", "select", from(Source::CommandLine));
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), WEFT_ERR_BAD_VALUE);
    EXPECT_NE(st.message().find("btl_tcp_mode"), std::string::npos);
    EXPECT_NE(st.message().find("auto, poll, epoll"), std::string::npos);
    EXPECT_NE(st.message().find("command line"), std::string::npos);
    // Nothing changed.
    EXPECT_EQ(r.find("btl_tcp_mode")->as_string(), "auto");
    // Enum matching ignores case and stores the canonical spelling.
    ASSERT_TRUE(r.set("btl_tcp_mode", "EPOLL", from(Source::Api)).ok());
    EXPECT_EQ(r.find("btl_tcp_mode")->as_string(), "epoll");
}

TEST(ParamsRegistry, BadPendingValueIsRecordedAndLowerSourceKept)
{
    Registry r;
    const char *env[] = {"WEFT_MCA_btl_tcp_links=many", nullptr};
    r.load_environment(env);
    ASSERT_TRUE(r.add(def("btl", "tcp", "links", Type::Int, "1")).ok());
    ASSERT_EQ(r.errors().size(), 1u);
    EXPECT_NE(r.errors()[0].message().find("WEFT_MCA_btl_tcp_links"), std::string::npos);
    EXPECT_NE(r.errors()[0].message().find("'many'"), std::string::npos);
    EXPECT_EQ(r.find("btl_tcp_links")->as_int(), 1);
    EXPECT_EQ(r.find("btl_tcp_links")->origin().source, Source::Default);
}

TEST(ParamsRegistry, IntWithNamedValues)
{
    Registry r;
    Definition v = def("btl", "base", "verbose", Type::Int, "warn");
    v.enumerators = {"none=0", "error=10", "warn=20", "info=40"};
    ASSERT_TRUE(r.add(v).ok());
    EXPECT_EQ(r.find("btl_base_verbose")->as_int(), 20);
    EXPECT_EQ(r.find("btl_base_verbose")->text(), "warn");
    ASSERT_TRUE(r.set("btl_base_verbose", "Info", from(Source::Api)).ok());
    EXPECT_EQ(r.find("btl_base_verbose")->as_int(), 40);
    ASSERT_TRUE(r.set("btl_base_verbose", "55", from(Source::Api)).ok());
    EXPECT_EQ(r.find("btl_base_verbose")->as_int(), 55);
    EXPECT_EQ(r.find("btl_base_verbose")->text(), "55");
    Status st = r.set("btl_base_verbose", "loud", from(Source::Api));
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("none, error, warn, info or an integer"), std::string::npos)
        << st.message();
}

TEST(ParamsRegistry, DeprecatedSynonymWarnsOnceNamingTheReplacement)
{
    Registry r;
    Definition d = def("btl", "tcp", "if_include", Type::List, "");
    d.deprecated = {"btl_tcp_if_inc"};
    d.synonyms = {"btl_tcp_interfaces"};
    ASSERT_TRUE(r.add(d).ok());
    const char *env[] = {"WEFT_MCA_btl_tcp_if_inc=eth0", nullptr};
    r.load_environment(env);
    r.load_environment(env);
    auto w = r.take_warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("WEFT_MCA_btl_tcp_if_inc"), std::string::npos);
    EXPECT_NE(w[0].find("use btl_tcp_if_include"), std::string::npos);
    const Param *p = r.find("btl_tcp_if_include");
    EXPECT_EQ(p->text(), "eth0");
    EXPECT_EQ(p->origin().describe(), "environment as btl_tcp_if_inc");
    // A plain synonym sets silently, and find() answers to it.
    ASSERT_TRUE(r.set("btl_tcp_interfaces", "eth1", from(Source::CommandLine)).ok());
    EXPECT_EQ(p->text(), "eth1");
    EXPECT_EQ(r.find("btl_tcp_interfaces"), p);
    EXPECT_TRUE(r.take_warnings().empty());
}

TEST(ParamsRegistry, DeprecatedNameSetBeforeRegistrationAlsoWarns)
{
    Registry r;
    ASSERT_TRUE(r.set("old_name", "7", from(Source::CommandLine)).ok());
    Definition d = def("new", "base", "name", Type::Int, "0");
    d.deprecated = {"old_name"};
    ASSERT_TRUE(r.add(d).ok());
    EXPECT_EQ(r.find("new_base_name")->as_int(), 7);
    ASSERT_EQ(r.take_warnings().size(), 1u);
}

TEST(ParamsRegistry, FileSyntaxErrorsReportFileAndLineAndKeepReading)
{
    TempDir dir;
    std::string f = dir.write("bad.conf", "btl_tcp_links = 2\n"
                                          "this line has no equals sign\n"
                                          "= 3\n"
                                          "bad name! = 1\n"
                                          "btl_tcp_links = \"4\"\n"
                                          "btl_tcp_links = notanumber\n");
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "tcp", "links", Type::Int, "1")).ok());
    Status st = r.load_file(f, Source::UserFile);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(f + ":2:"), std::string::npos) << st.message();
    ASSERT_EQ(r.errors().size(), 4u);
    EXPECT_NE(r.errors()[1].message().find(f + ":3:"), std::string::npos);
    EXPECT_NE(r.errors()[2].message().find(f + ":4:"), std::string::npos);
    EXPECT_NE(r.errors()[3].message().find(f + ":6"), std::string::npos);
    // Line 5 (quoted) was applied; line 6 (bad) was rejected.
    EXPECT_EQ(r.find("btl_tcp_links")->as_int(), 4);
    EXPECT_EQ(r.find("btl_tcp_links")->origin().line, 5);
}

TEST(ParamsRegistry, MissingFileOrDirectoryReadsNothingAndIsLeftToTheCaller)
{
    TempDir dir;
    Registry r;
    Status missing = r.load_file("/nonexistent/weft/params.conf", Source::UserFile);
    EXPECT_EQ(missing.code(), WEFT_ERR_NOT_FOUND);
    EXPECT_NE(missing.message().find("/nonexistent/weft/params.conf: No such file or directory"),
              std::string::npos)
        << missing.message();
    Status directory = r.load_file(dir.path(), Source::UserFile);
    EXPECT_EQ(directory.code(), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(directory.message().find(dir.path() + ": Is a directory"), std::string::npos)
        << directory.message();
    // Whether that deserves a word is the caller's call (the default user
    // file is usually absent): neither is a parameter error.
    EXPECT_TRUE(r.errors().empty());
}

TEST(ParamsRegistry, OverlongLineIsSkippedWithoutStoppingTheFile)
{
    TempDir dir;
    const std::string name(70000, 'n');
    std::string f = dir.write("long.conf", name + " = 1\nbtl_tcp_links = 5\n");
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "tcp", "links", Type::Int, "1")).ok());
    Status st = r.load_file(f, Source::UserFile);
    EXPECT_EQ(st.code(), WEFT_ERR_BAD_VALUE);
    EXPECT_NE(st.message().find(f + ":1: the line is longer than 65536 bytes"), std::string::npos)
        << st.message().substr(0, 300);
    EXPECT_LT(st.message().size(), 400u);   // quotes at most the start of the line
    EXPECT_EQ(r.find("btl_tcp_links")->as_int(), 5);
    EXPECT_TRUE(r.unknown_names().empty());
}

TEST(ParamsRegistry, LongUnknownNameGetsNoSuggestion)
{
    // Within the line limit but far longer than any parameter name: no
    // did-you-mean (which once built a full edit-distance matrix per
    // parameter, minutes and gigabytes for a 10 MiB name).
    TempDir dir;
    std::string name = "btl_tcp_links" + std::string(60000, 'x');
    std::string f = dir.write("long.conf", name + " = 1\n");
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "tcp", "links", Type::Int, "1")).ok());
    EXPECT_TRUE(r.load_file(f, Source::UserFile).ok());
    auto unknown = r.unknown_names();
    ASSERT_EQ(unknown.size(), 1u);
    EXPECT_EQ(unknown[0].name, name);
    EXPECT_EQ(unknown[0].suggestion, "");
    EXPECT_EQ(r.suggest(name), "");
    // A typo still gets one.
    EXPECT_EQ(r.suggest("btl_tcp_lniks"), "btl_tcp_links");
}

TEST(ParamsRegistry, BinaryGarbageFileDoesNotCrash)
{
    TempDir dir;
    std::string junk(4096, '\0');
    for (size_t i = 0; i < junk.size(); ++i)
        junk[i] = static_cast<char>((i * 131 + 7) % 256);
    std::string f = dir.write("junk.conf", junk);
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "tcp", "links", Type::Int, "1")).ok());
    r.load_file(f, Source::UserFile);
    EXPECT_EQ(r.find("btl_tcp_links")->as_int(), 1);
}

TEST(ParamsRegistry, BadDefinitionsAreRefused)
{
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "tcp", "links", Type::Int, "1")).ok());
    EXPECT_EQ(r.add(def("btl", "tcp", "links", Type::Int, "1")).code(), WEFT_ERR_EXISTS);
    EXPECT_FALSE(r.add(def("btl", "tcp", "x", Type::Int, "one")).ok());
    Definition lvl = def("btl", "tcp", "y", Type::Int, "1");
    lvl.level = 10;
    EXPECT_FALSE(r.add(lvl).ok());
    EXPECT_FALSE(r.add(def("btl", "tcp", "z", Type::Enum, "a")).ok());
    EXPECT_FALSE(r.add(def("btl", "tcp", "bad-name", Type::Int, "1")).ok());
}

TEST(ParamsRegistry, SelectionParameterHasTheFrameworkName)
{
    Registry r;
    ASSERT_TRUE(r.add(def("btl", "", "", Type::List, "")).ok());
    ASSERT_TRUE(r.set("btl", "^openib", from(Source::Environment)).ok());
    const Param *p = r.find("btl");
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->as_list().exclude);
    EXPECT_FALSE(r.set("btl", "tcp,^openib", from(Source::Environment)).ok());
}

TEST(ParamsRegistry, AllKeepsRegistrationOrderAndTypedValues)
{
    Registry r;
    ASSERT_TRUE(r.add(def("a", "base", "flag", Type::Bool, "yes")).ok());
    ASSERT_TRUE(r.add(def("a", "base", "ratio", Type::Double, "0.25")).ok());
    ASSERT_TRUE(r.add(def("a", "base", "name", Type::String, "  spaced  ")).ok());
    auto all = r.all();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0]->full_name(), "a_base_flag");
    EXPECT_TRUE(all[0]->as_bool());
    EXPECT_EQ(all[0]->text(), "true");
    EXPECT_DOUBLE_EQ(all[1]->as_double(), 0.25);
    EXPECT_EQ(all[1]->text(), "0.25");
    EXPECT_EQ(all[2]->as_string(), "spaced");
}
