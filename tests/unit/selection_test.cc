// SPDX-License-Identifier: BSD-3-Clause
// Framework selection over component records in every state a real
// repository produces (loaded or not, opened or not, available or not).
// The records are built here directly: selection reads records only, and
// the repository tests cover producing them from real DSOs.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "repository/repository.hpp"

using weft::repository::ComponentRecord;
using weft::repository::select;
using weft::repository::Selection;

namespace {

::testing::AssertionResult contains(const char *hexpr, const char *nexpr, const std::string &h,
                                    const std::string &n)
{
    if (h.find(n) != std::string::npos)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << hexpr << " does not contain " << nexpr << "\n  text: \""
                                         << h << "\"\n  missing: \"" << n << "\"";
}
#define EXPECT_CONTAINS(h, n) EXPECT_PRED_FORMAT2(contains, h, n)

class SelectionTest : public ::testing::Test {
protected:
    ComponentRecord *add(const std::string &name, const std::string &fw = "btl")
    {
        owned_.push_back(std::make_unique<ComponentRecord>());
        ComponentRecord *r = owned_.back().get();
        r->framework = fw;
        r->name = name;
        r->path = "/lib/weft/weft_" + fw + "_" + name + ".so";
        records_.push_back(r);
        return r;
    }
    // Loaded, opened, queried and available.
    ComponentRecord *usable(const std::string &name, int priority, const std::string &fw = "btl")
    {
        ComponentRecord *r = add(name, fw);
        r->loaded = r->opened = r->queried = true;
        r->query.size = sizeof r->query;
        r->query.available = 1;
        r->query.priority = priority;
        return r;
    }
    ComponentRecord *unavailable(const std::string &name, const char *reason)
    {
        ComponentRecord *r = usable(name, 0);
        r->query.available = 0;
        std::snprintf(r->query.reason, sizeof r->query.reason, "%s", reason);
        return r;
    }
    ComponentRecord *failed_load(const std::string &name, const std::string &why)
    {
        ComponentRecord *r = add(name);
        r->failure = why;
        return r;
    }

    weft::Result<Selection> run(std::string_view list, std::string_view require = "")
    {
        return select(records_, "btl", list, require);
    }
    static std::vector<std::string> names(const std::vector<ComponentRecord *> &v)
    {
        std::vector<std::string> out;
        for (auto *r : v)
            out.push_back(r->name);
        return out;
    }
    static std::string reason(const Selection &s, const std::string &name)
    {
        for (const auto &rj : s.rejected)
            if (rj.record->name == name)
                return rj.reason;
        return "<not rejected>";
    }

    // A typical host: self and tcp work, openib has no port, scif is broken.
    void typical()
    {
        usable("self", 100);
        usable("tcp", 20);
        unavailable("openib", "no active RDMA port");
        failed_load("scif", "file /lib/weft/weft_btl_scif.so: component ABI version mismatch");
    }

    std::vector<std::unique_ptr<ComponentRecord>> owned_;
    std::vector<ComponentRecord *> records_;
};

using Names = std::vector<std::string>;

} // namespace

TEST_F(SelectionTest, EmptyListSelectsEveryUsableComponent)
{
    typical();
    auto s = run("");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"self", "tcp"}));
    ASSERT_EQ(s.value().rejected.size(), 2u);
    EXPECT_EQ(reason(s.value(), "openib"), "not available: no active RDMA port");
    EXPECT_EQ(reason(s.value(), "scif"),
              "failed to load: file /lib/weft/weft_btl_scif.so: component ABI version mismatch");
    EXPECT_TRUE(s.value().warnings.empty());
}

TEST_F(SelectionTest, SortedByPriorityThenName)
{
    usable("alpha", 10);
    usable("gamma", 50);
    usable("beta", 50);
    usable("delta", 90);
    auto s = run("");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"delta", "beta", "gamma", "alpha"}));
}

TEST_F(SelectionTest, IncludeListTakesOnlyThose)
{
    typical();
    usable("extra", 50);
    auto s = run("self,tcp");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"self", "tcp"}));
    EXPECT_EQ(reason(s.value(), "extra"), "not listed in btl=self,tcp");
    EXPECT_EQ(reason(s.value(), "openib"), "not listed in btl=self,tcp");
}

TEST_F(SelectionTest, IncludedComponentThatCannotRunIsRejectedWithItsReason)
{
    typical();
    auto s = run("self,openib,scif");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"self"}));
    EXPECT_EQ(reason(s.value(), "openib"), "not available: no active RDMA port");
    EXPECT_CONTAINS(reason(s.value(), "scif"), "failed to load: ");
}

TEST_F(SelectionTest, UnknownNameInIncludeListIsAnErrorWithDidYouMean)
{
    usable("self", 100);
    usable("tcp", 20);
    auto s = run("slef");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), WEFT_ERR_NOT_FOUND);
    EXPECT_EQ(s.status().message(),
              "btl=slef: no btl component named 'slef' (did you mean 'self'?); available: self, tcp");
}

TEST_F(SelectionTest, NoSuggestionWhenNothingIsClose)
{
    usable("self", 100);
    usable("tcp", 20);
    auto s = run("tcp,infiniband");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().message(),
              "btl=tcp,infiniband: no btl component named 'infiniband'; available: self, tcp");
    // A one-letter name is not a typo of a three-letter one.
    auto x = run("x");
    ASSERT_FALSE(x.ok());
    EXPECT_EQ(x.status().message(), "btl=x: no btl component named 'x'; available: self, tcp");
}

TEST_F(SelectionTest, ExcludeListTakesAllButThose)
{
    typical();
    auto s = run("^tcp");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"self"}));
    EXPECT_EQ(reason(s.value(), "tcp"), "excluded by btl=^tcp");
    // Exclusion is the reason that matters, even for a broken component.
    auto t = run("^scif,openib");
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(reason(t.value(), "scif"), "excluded by btl=^scif,openib");
    EXPECT_EQ(reason(t.value(), "openib"), "excluded by btl=^scif,openib");
}

TEST_F(SelectionTest, UnknownNameInExcludeListIsOnlyAWarning)
{
    typical();
    auto s = run("^opnib");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"self", "tcp"}));
    ASSERT_EQ(s.value().warnings.size(), 1u);
    EXPECT_EQ(s.value().warnings[0],
              "btl=^opnib: no btl component named 'opnib' (did you mean 'openib'?); available: "
              "openib, scif, self, tcp; ignoring it");
}

TEST_F(SelectionTest, WildcardsMatchComponentNames)
{
    typical();
    usable("sm", 60);
    auto s = run("s*");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"self", "sm"}));
    auto none = run("q*");
    ASSERT_FALSE(none.ok());
    EXPECT_CONTAINS(none.status().message(), "no btl component named 'q*'");
}

TEST_F(SelectionTest, OpenFailureAndMissingStepsAreReasons)
{
    ComponentRecord *r = add("broken");
    r->loaded = true;
    r->failure = "open() failed: not available here";
    ComponentRecord *n = add("unopened");
    n->loaded = true;
    ComponentRecord *q = add("unqueried");
    q->loaded = q->opened = true;
    usable("self", 100);
    auto s = run("");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"self"}));
    EXPECT_EQ(reason(s.value(), "broken"), "open() failed: not available here");
    EXPECT_EQ(reason(s.value(), "unopened"), "not opened");
    EXPECT_EQ(reason(s.value(), "unqueried"), "not queried");
}

TEST_F(SelectionTest, OtherFrameworksAreIgnored)
{
    usable("self", 100);
    usable("ob1", 10, "pml");
    auto s = run("");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"self"}));
    EXPECT_TRUE(s.value().rejected.empty());
    // ...and are not names this framework knows.
    auto t = run("ob1");
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().message(), "btl=ob1: no btl component named 'ob1'; available: self");
}

TEST_F(SelectionTest, ListSyntaxErrorsNameTheParameter)
{
    typical();
    auto caret = run("self,^tcp");
    ASSERT_FALSE(caret.ok());
    EXPECT_EQ(caret.status().code(), WEFT_ERR_BAD_VALUE);
    EXPECT_EQ(caret.status().message().rfind("btl=self,^tcp: ", 0), 0u) << caret.status().message();

    auto cidr = run("10.0.0.0/8");
    ASSERT_FALSE(cidr.ok());
    EXPECT_CONTAINS(cidr.status().message(), "btl=10.0.0.0/8: '10.0.0.0/8' is not a component name");
}

// ---- <fw>_base_require ----

TEST_F(SelectionTest, RequireSatisfied)
{
    typical();
    auto s = run("", "self,tcp");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(names(s.value().selected), (Names{"self", "tcp"}));
}

TEST_F(SelectionTest, RequiredComponentThatCannotRunIsAnError)
{
    typical();
    auto s = run("", "openib");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), WEFT_ERR_NOT_AVAILABLE);
    EXPECT_EQ(s.status().message(),
              "btl/openib is required by btl_base_require but not usable: not available: no "
              "active RDMA port. Remove it from btl_base_require to allow falling back.");
}

TEST_F(SelectionTest, RequiredComponentThatFailedToLoadGivesTheLoadFailure)
{
    typical();
    auto s = run("", "scif");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().message(),
              "btl/scif is required by btl_base_require but not usable: failed to load: file "
              "/lib/weft/weft_btl_scif.so: component ABI version mismatch. Remove it from "
              "btl_base_require to allow falling back.");
}

TEST_F(SelectionTest, RequiredButExcludedSaysBothWaysOut)
{
    typical();
    auto s = run("^tcp", "tcp");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().message(),
              "btl/tcp is required by btl_base_require but not usable: excluded by btl=^tcp. Add "
              "it to btl= (or remove the exclusion), or remove it from btl_base_require to allow "
              "falling back.");
}

TEST_F(SelectionTest, UnknownRequiredNameIsAnErrorWithDidYouMean)
{
    typical();
    auto s = run("", "opnib");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), WEFT_ERR_NOT_FOUND);
    EXPECT_EQ(s.status().message(),
              "btl_base_require=opnib: no btl component named 'opnib' (did you mean 'openib'?); "
              "available: openib, scif, self, tcp");
}

TEST_F(SelectionTest, EveryRequireProblemIsReportedAtOnce)
{
    typical();
    auto s = run("", "openib,tpc,self");
    ASSERT_FALSE(s.ok());
    const std::string &m = s.status().message();
    EXPECT_CONTAINS(m, "btl/openib is required by btl_base_require but not usable");
    EXPECT_CONTAINS(m, "\nbtl_base_require=openib,tpc,self: no btl component named 'tpc' (did you "
                       "mean 'tcp'?)");
    EXPECT_EQ(s.status().code(), WEFT_ERR_NOT_AVAILABLE);   // the first problem's
}

TEST_F(SelectionTest, RequireTakesPlainNamesOnly)
{
    typical();
    auto caret = run("", "^tcp");
    ASSERT_FALSE(caret.ok());
    EXPECT_CONTAINS(caret.status().message(), "btl_base_require=^tcp: '^' is not accepted here");
    auto pattern = run("", "t*");
    ASSERT_FALSE(pattern.ok());
    EXPECT_CONTAINS(pattern.status().message(), "'t*' is a pattern");
}
