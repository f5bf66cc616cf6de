// SPDX-License-Identifier: BSD-3-Clause
// The component repository against real component DSOs
// (tests/components/, built by `make check` into WEFT_TEST_COMPONENT_DIR).
// Each broken component must be kept as a failed record whose reason names
// the file and what was expected and found.
#include "weft_config.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <weft/btl.h>

#include "repository/repository.hpp"
#include "test_util.hpp"

using weft::repository::ComponentRecord;
using weft::repository::Repository;
using weft::test::TempDir;
namespace {

// Substring assertions that print both strings on failure (gmock's
// HasSubstr would need libgmock, which the unit binary does not link).
::testing::AssertionResult contains(const char *hexpr, const char *nexpr, const std::string &h,
                                    const std::string &n)
{
    if (h.find(n) != std::string::npos)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << hexpr << " does not contain " << nexpr << "\n  text: \""
                                         << h << "\"\n  missing: \"" << n << "\"";
}
::testing::AssertionResult lacks(const char *hexpr, const char *nexpr, const std::string &h,
                                 const std::string &n)
{
    if (h.find(n) == std::string::npos)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << hexpr << " contains " << nexpr << "\n  text: \"" << h
                                         << "\"";
}
#define EXPECT_CONTAINS(h, n) EXPECT_PRED_FORMAT2(contains, h, n)
#define EXPECT_LACKS(h, n) EXPECT_PRED_FORMAT2(lacks, h, n)

namespace fs = std::filesystem;

std::string component_dir() { return WEFT_TEST_COMPONENT_DIR; }
std::string dso(const std::string &name) { return component_dir() + "/weft_btl_" + name + ".so"; }

#ifdef WEFT_HAVE_DLOPEN
#define REQUIRE_DLOPEN()                                                                        \
    do {                                                                                        \
        if (!fs::exists(dso("good")))                                                           \
            GTEST_SKIP() << "test components not built in " << component_dir()                  \
                         << " (they are check_LTLIBRARIES: run `make check`)";                  \
    } while (0)
#else
#define REQUIRE_DLOPEN()                                                                        \
    GTEST_SKIP() << "weft was configured with --disable-dlopen: libltdl is not linked and "    \
                    "component files are never loaded"
#endif

// ---- a minimal host table, recording what components ask of it ------------
//
// The real table is filled by the framework core; here we only need to see
// that open() registered its parameter and that query() can read one.
struct HostCalls {
    struct Registered {
        std::string owner;   // framework/name from the owner's header
        std::string name;
        std::string default_value;
        weft_param_type_t type;
    };
    std::vector<Registered> registered;
    std::map<std::string, int64_t> ints;   // values param_get_int answers
};
HostCalls *g_calls = nullptr;

int stub_param_register(const weft_component_t *owner, const weft_param_def_t *def)
{
    g_calls->registered.push_back({std::string(owner->framework) + "/" + owner->name, def->name,
                                   def->default_value ? def->default_value : "", def->type});
    return WEFT_SUCCESS;
}
int stub_get_int(const char *name, int64_t *value)
{
    auto it = g_calls->ints.find(name);
    if (it == g_calls->ints.end())
        return WEFT_ERR_NOT_FOUND;
    *value = it->second;
    return WEFT_SUCCESS;
}
void stub_log(const weft_component_t *, int, const char *, ...) {}

class RepositoryTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        g_calls = &calls;
        host.size = sizeof host;
        host.param_register = stub_param_register;
        host.param_get_int = stub_get_int;
        host.log = stub_log;
        // Everything else answers "not found" / "no" (the test components
        // do not use it; the real components linked in statically may).
        // Captureless generic lambdas convert to the member's pointer type,
        // so a signature change in host.h does not break this stub.
        host.param_get_bool = [](auto...) { return int(WEFT_ERR_NOT_FOUND); };
        host.param_get_size = [](auto...) { return int(WEFT_ERR_NOT_FOUND); };
        host.param_get_double = [](auto...) { return int(WEFT_ERR_NOT_FOUND); };
        host.param_get_string = [](auto...) { return int(WEFT_ERR_NOT_FOUND); };
        host.log_enabled = [](auto...) { return 0; };
        host.show_help = [](auto...) {};
        host.list_selects = [](auto...) { return 1; };
        host.list_contains = [](auto...) { return 0; };
        host.param_is_set = [](auto...) { return 0; };
    }
    void TearDown() override { g_calls = nullptr; }

    // Loads one variant and checks the failure mentions the file.
    ComponentRecord &load_failing(Repository &repo, const std::string &name)
    {
        ComponentRecord &rec = repo.load_file(dso(name));
        EXPECT_FALSE(rec.loaded) << name;
        EXPECT_EQ(rec.component, nullptr) << name;
        EXPECT_EQ(rec.handle, nullptr) << name;
        EXPECT_CONTAINS(rec.failure, dso(name));
        EXPECT_EQ(rec.framework, "btl");
        EXPECT_EQ(rec.name, name);
        return rec;
    }

    // Is the file mapped in this process right now? (RTLD_NOLOAD finds an
    // already loaded object without loading it.)
    static bool resident(const std::string &path)
    {
        void *h = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        if (h)
            dlclose(h);
        return h != nullptr;
    }

    HostCalls calls;
    weft_host_t host{};
};

size_t count_named(const std::vector<ComponentRecord *> &v, const std::string &name)
{
    return std::count_if(v.begin(), v.end(), [&](auto *r) { return r->name == name; });
}

} // namespace

// ---- what needs no component files ----------------------------------------

TEST_F(RepositoryTest, MinimumStructSize)
{
    EXPECT_EQ(Repository::minimum_struct_size("btl"), sizeof(weft_btl_component_t));
    EXPECT_EQ(Repository::minimum_struct_size("nosuchfw"), sizeof(weft_component_t));
}

TEST_F(RepositoryTest, MissingDirectoriesAreSkippedSilently)
{
    Repository repo;
    repo.discover({"/nonexistent/weft/components", ""}, {"btl"});
    EXPECT_TRUE(repo.records().empty());
}

TEST_F(RepositoryTest, FileNameMustSplitIntoFrameworkAndComponent)
{
    TempDir t;
    Repository repo;
    ComponentRecord &two = repo.load_file(t.path() + "/weft_btl_two_parts.so");
    EXPECT_FALSE(two.loaded);
    EXPECT_EQ(two.framework, "btl");
    EXPECT_EQ(two.name, "two_parts");
    EXPECT_CONTAINS(two.failure, t.path() + "/weft_btl_two_parts.so");
    EXPECT_CONTAINS(two.failure, "component name 'two_parts' contains '_'");

    ComponentRecord &bare = repo.load_file(t.path() + "/weft_btl.so");
    EXPECT_FALSE(bare.loaded);
    EXPECT_CONTAINS(bare.failure, "does not have the form weft_<framework>_<component>.so");
}

TEST_F(RepositoryTest, AddStaticChecksAndRecordsLinkedInComponents)
{
    Repository repo;
    repo.add_static();
#ifdef WEFT_HAVE_DLOPEN
    // Components are DSOs in this build: nothing is linked in.
    EXPECT_TRUE(repo.records().empty());
#else
    ComponentRecord *self = repo.find("btl", "self");
    ASSERT_NE(self, nullptr) << "btl/self should be linked into libweft with --disable-dlopen";
    EXPECT_TRUE(self->loaded) << self->failure;
    EXPECT_EQ(self->path, "(static)");
    EXPECT_EQ(self->handle, nullptr);
    ASSERT_NE(self->component, nullptr);
    EXPECT_STREQ(self->component->name, "self");

    repo.open_all("btl", &host);
    EXPECT_TRUE(self->opened) << self->failure;
    EXPECT_TRUE(std::any_of(calls.registered.begin(), calls.registered.end(),
                            [](const auto &r) { return r.owner == "btl/self"; }));
    repo.query_all("btl", &host);
    EXPECT_TRUE(self->queried);
    EXPECT_TRUE(self->query.available);

    // Adding the table twice keeps one record.
    repo.add_static();
    EXPECT_EQ(count_named(repo.records("btl"), "self"), 1u);
#endif
}

#ifndef WEFT_HAVE_DLOPEN
TEST_F(RepositoryTest, StaticBuildRecordsComponentFilesAsNotLoadable)
{
    TempDir t;
    t.write("weft_btl_good.so", "not loaded anyway");
    Repository repo;
    repo.discover({t.path()}, {"btl"});
    ComponentRecord *good = repo.find("btl", "good");
    ASSERT_NE(good, nullptr);
    EXPECT_FALSE(good->loaded);
    EXPECT_CONTAINS(good->failure, t.path() + "/weft_btl_good.so");
    EXPECT_CONTAINS(good->failure, "--disable-dlopen");
}
#endif

// ---- loading real DSOs -------------------------------------------------------

TEST_F(RepositoryTest, LoadsAGoodComponent)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = repo.load_file(dso("good"));
    EXPECT_TRUE(rec.loaded) << rec.failure;
    EXPECT_TRUE(rec.failure.empty());
    EXPECT_EQ(rec.framework, "btl");
    EXPECT_EQ(rec.name, "good");
    EXPECT_EQ(rec.path, dso("good"));
    EXPECT_NE(rec.handle, nullptr);
    ASSERT_NE(rec.component, nullptr);
    EXPECT_STREQ(rec.component->name, "good");
    EXPECT_EQ(rec.component->version.major, 1);
    EXPECT_EQ(rec.component->version.minor, 2);
    EXPECT_EQ(rec.component->version.patch, 3);
    EXPECT_TRUE(rec.notes.empty());
    EXPECT_FALSE(rec.opened);
    EXPECT_FALSE(rec.queried);

    EXPECT_EQ(repo.find("btl", "good"), &rec);
    EXPECT_EQ(repo.find("btl", "bad"), nullptr);
    EXPECT_EQ(repo.records().size(), 1u);
    EXPECT_EQ(repo.records("btl").size(), 1u);
    EXPECT_TRUE(repo.records("pml").empty());
}

TEST_F(RepositoryTest, LoadingTheSameComponentAgainReturnsTheFirstRecord)
{
    REQUIRE_DLOPEN();
    TempDir t;
    fs::copy_file(dso("good"), t.path() + "/weft_btl_good.so");
    Repository repo;
    ComponentRecord &first = repo.load_file(dso("good"));
    ComponentRecord &again = repo.load_file(t.path() + "/weft_btl_good.so");
    EXPECT_EQ(&first, &again);
    EXPECT_EQ(first.path, dso("good"));
    EXPECT_EQ(repo.records().size(), 1u);
    ASSERT_EQ(first.notes.size(), 1u);
    EXPECT_CONTAINS(first.notes[0], "ignored " + t.path() + "/weft_btl_good.so");
}

TEST_F(RepositoryTest, BadMagicNamesExpectedAndFound)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = load_failing(repo, "badmagic");
    EXPECT_CONTAINS(rec.failure, "bad component magic");
    EXPECT_CONTAINS(rec.failure, "expected 0x57454654434f4d50");
    EXPECT_CONTAINS(rec.failure, "found 0x0123456789abcdef");
}

TEST_F(RepositoryTest, AbiMajorMismatchNamesBothVersions)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = load_failing(repo, "badabi");
    EXPECT_CONTAINS(rec.failure, "ABI version mismatch");
    EXPECT_CONTAINS(rec.failure, "expected major " + std::to_string(WEFT_COMPONENT_ABI_MAJOR));
    EXPECT_CONTAINS(rec.failure, "found 99.0");
}

TEST_F(RepositoryTest, NewerAbiMinorLoadsWithANote)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = repo.load_file(dso("newminor"));
    EXPECT_TRUE(rec.loaded) << rec.failure;
    ASSERT_EQ(rec.notes.size(), 1u);
    EXPECT_CONTAINS(rec.notes[0], dso("newminor"));
    EXPECT_CONTAINS(rec.notes[0], "built for component ABI 1." +
                                        std::to_string(WEFT_COMPONENT_ABI_MINOR + 3));
}

TEST_F(RepositoryTest, StructTooSmallNamesBothSizes)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = load_failing(repo, "badsize");
    EXPECT_CONTAINS(rec.failure, "struct too small for framework btl");
    EXPECT_CONTAINS(rec.failure, "expected struct_size >= " + std::to_string(sizeof(weft_btl_component_t)));
    EXPECT_CONTAINS(rec.failure, "found " + std::to_string(sizeof(weft_component_t)));
}

TEST_F(RepositoryTest, ComponentNameMustMatchFileName)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = load_failing(repo, "wrongname");
    EXPECT_CONTAINS(rec.failure, "component name mismatch");
    EXPECT_CONTAINS(rec.failure, "expected 'wrongname'");
    EXPECT_CONTAINS(rec.failure, "found 'other'");
}

TEST_F(RepositoryTest, FrameworkMustMatchFileName)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = load_failing(repo, "wrongfw");
    EXPECT_CONTAINS(rec.failure, "framework mismatch");
    EXPECT_CONTAINS(rec.failure, "expected 'btl'");
    EXPECT_CONTAINS(rec.failure, "found 'pml'");
}

TEST_F(RepositoryTest, MissingSymbolSaysWhichSymbol)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = load_failing(repo, "nosym");
    EXPECT_EQ(rec.failure, "file " + dso("nosym") +
                               " does not export symbol weft_btl_nosym_component (not a weft "
                               "component, or built for another name)");
}

TEST_F(RepositoryTest, UndefinedDataSymbolIsTheReasonNotFileNotFound)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = load_failing(repo, "undefdata");
    EXPECT_CONTAINS(rec.failure, "undefined symbol: weft_test_data_nobody_defines");
    EXPECT_LACKS(rec.failure, "file not found");
}

TEST_F(RepositoryTest, UndefinedFunctionFailsAtLoadNotWhenCalled)
{
    // libltdl binds lazily; a component calling a function nobody defines
    // would load and then kill the process inside open(). The loader binds
    // eagerly, so the component is rejected with the symbol's name instead.
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = load_failing(repo, "undeffunc");
    EXPECT_CONTAINS(rec.failure, "undefined symbol: weft_test_function_nobody_defines");
    repo.open_all("btl", &host);   // must not reach the component
    EXPECT_FALSE(rec.opened);
}

TEST_F(RepositoryTest, MissingDependencyIsNamed)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = load_failing(repo, "needlib");
    EXPECT_CONTAINS(rec.failure, "libweft_test_absent.so");
    EXPECT_CONTAINS(rec.failure, "cannot open shared object file");
}

TEST_F(RepositoryTest, NotAnObjectFileGivesTheLoadersReason)
{
    REQUIRE_DLOPEN();
    TempDir t;
    const std::string path = t.write("weft_btl_text.so", "this is not an ELF file\n");
    Repository repo;
    ComponentRecord &rec = repo.load_file(path);
    EXPECT_FALSE(rec.loaded);
    EXPECT_CONTAINS(rec.failure, "cannot load file " + path);
    EXPECT_LACKS(rec.failure, "file not found");
}

TEST_F(RepositoryTest, MissingFile)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &rec = repo.load_file("/nonexistent/weft_btl_gone.so");
    EXPECT_FALSE(rec.loaded);
    EXPECT_CONTAINS(rec.failure, "/nonexistent/weft_btl_gone.so");
    EXPECT_CONTAINS(rec.failure, "No such file");
}

TEST_F(RepositoryTest, FailedComponentsAreClosedAndLoadedOnesStayForTheProcess)
{
    REQUIRE_DLOPEN();
    {
        Repository repo;
        load_failing(repo, "badabi");
        EXPECT_FALSE(resident(dso("badabi"))) << "a component that failed its checks stays mapped";
        ComponentRecord &good = repo.load_file(dso("good"));
        ASSERT_TRUE(good.loaded) << good.failure;
        EXPECT_TRUE(resident(dso("good")));
    }
    // Loaded components are never unmapped (RTLD_NODELETE; see
    // Repository::Library::keep_resident): a later Repository finds them
    // again without reloading, and their libraries' thread-local state
    // stays valid.
    EXPECT_TRUE(resident(dso("good"))) << "a loaded component was unmapped";
    Repository again;
    EXPECT_TRUE(again.load_file(dso("good")).loaded);
}

// ---- discovery ---------------------------------------------------------------

TEST_F(RepositoryTest, DiscoverFindsEveryComponentFile)
{
    REQUIRE_DLOPEN();
    Repository repo;
    repo.discover({component_dir()}, {"btl"});
    auto all = repo.records();
    for (const char *name : {"good", "badmagic", "badabi", "newminor", "badsize", "wrongname",
                             "wrongfw", "nosym", "undefdata", "undeffunc", "needlib", "openfail",
                             "unavail", "oldabi"})
        EXPECT_EQ(count_named(all, name), 1u) << name;
    // The helper library is not a component file name.
    for (auto *r : all)
        EXPECT_LACKS(r->path, "libweft_test_absent") << r->path;
    // Sorted within a directory: reproducible output for weft_info.
    EXPECT_TRUE(std::is_sorted(all.begin(), all.end(),
                               [](auto *a, auto *b) { return a->path < b->path; }));

    ComponentRecord *good = repo.find("btl", "good");
    ASSERT_NE(good, nullptr);
    EXPECT_TRUE(good->loaded) << good->failure;
    ComponentRecord *bad = repo.find("btl", "badabi");
    ASSERT_NE(bad, nullptr);
    EXPECT_FALSE(bad->loaded);
}

TEST_F(RepositoryTest, DiscoverFirstDirectoryWins)
{
    REQUIRE_DLOPEN();
    TempDir first;
    const std::string shadow = first.path() + "/weft_btl_good.so";
    fs::copy_file(dso("good"), shadow);
    Repository repo;
    repo.discover({"/nonexistent/dir", first.path(), component_dir()}, {"btl"});
    ComponentRecord *good = repo.find("btl", "good");
    ASSERT_NE(good, nullptr);
    EXPECT_EQ(good->path, shadow);
    EXPECT_TRUE(good->loaded) << good->failure;
    EXPECT_EQ(count_named(repo.records(), "good"), 1u);
    ASSERT_EQ(good->notes.size(), 1u);
    EXPECT_CONTAINS(good->notes[0], "ignored " + dso("good"));
    EXPECT_CONTAINS(good->notes[0], "already provided by " + shadow);
}

TEST_F(RepositoryTest, DiscoverRecordsBadNamesAndUnknownFrameworks)
{
    REQUIRE_DLOPEN();
    TempDir t;
    fs::copy_file(dso("good"), t.path() + "/weft_btl_two_parts.so");
    fs::copy_file(dso("good"), t.path() + "/weft_xyz_thing.so");
    t.write("README", "not a component\n");
    t.write("weft_btl_good.la", "# libtool archive, not loaded\n");
    fs::create_directory(t.path() + "/weft_btl_dir.so");
    Repository repo;
    repo.discover({t.path()}, {"btl"});
    auto all = repo.records();
    ASSERT_EQ(all.size(), 2u);

    ComponentRecord *two = repo.find("btl", "two_parts");
    ASSERT_NE(two, nullptr);
    EXPECT_FALSE(two->loaded);
    EXPECT_CONTAINS(two->failure, "contains '_'");

    ComponentRecord *xyz = repo.find("xyz", "thing");
    ASSERT_NE(xyz, nullptr);
    EXPECT_FALSE(xyz->loaded);
    EXPECT_CONTAINS(xyz->failure, t.path() + "/weft_xyz_thing.so");
    EXPECT_CONTAINS(xyz->failure, "unknown framework 'xyz' (this weft knows: btl)");
}

// ---- open and query ------------------------------------------------------------

TEST_F(RepositoryTest, OpenAllCallsOpenOnceAndRecordsFailures)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &good = repo.load_file(dso("good"));
    ComponentRecord &openfail = repo.load_file(dso("openfail"));
    ComponentRecord &badabi = repo.load_file(dso("badabi"));
    ASSERT_TRUE(good.loaded) << good.failure;
    ASSERT_TRUE(openfail.loaded) << openfail.failure;

    repo.open_all("pml", &host);   // another framework: nothing happens
    EXPECT_TRUE(calls.registered.empty());

    repo.open_all("btl", &host);
    EXPECT_TRUE(good.opened);
    EXPECT_TRUE(good.failure.empty());
    ASSERT_EQ(calls.registered.size(), 1u);
    EXPECT_EQ(calls.registered[0].owner, "btl/good");
    EXPECT_EQ(calls.registered[0].name, "priority");
    EXPECT_EQ(calls.registered[0].default_value, "50");
    EXPECT_EQ(calls.registered[0].type, WEFT_PARAM_INT);

    EXPECT_FALSE(openfail.opened);
    EXPECT_EQ(openfail.failure, std::string("open() failed: ") +
                                    weft_status_string(WEFT_ERR_NOT_AVAILABLE));
    EXPECT_FALSE(badabi.opened);
    EXPECT_CONTAINS(badabi.failure, "ABI version mismatch");

    repo.open_all("btl", &host);   // once: no second registration
    EXPECT_EQ(calls.registered.size(), 1u);
}

TEST_F(RepositoryTest, QueryAllStoresTheAnswer)
{
    REQUIRE_DLOPEN();
    Repository repo;
    ComponentRecord &good = repo.load_file(dso("good"));
    ComponentRecord &unavail = repo.load_file(dso("unavail"));
    ComponentRecord &openfail = repo.load_file(dso("openfail"));
    calls.ints["btl_good_priority"] = 70;

    repo.query_all("btl", &host);   // nothing opened yet: nothing queried
    EXPECT_FALSE(good.queried);

    repo.open_all("btl", &host);
    repo.query_all("btl", &host);
    EXPECT_TRUE(good.queried);
    EXPECT_EQ(good.query.size, sizeof(weft_query_result_t));
    EXPECT_TRUE(good.query.available);
    EXPECT_EQ(good.query.priority, 70);
    EXPECT_STREQ(good.query.reason, "test component good");

    EXPECT_TRUE(unavail.queried);
    EXPECT_FALSE(unavail.query.available);
    EXPECT_STREQ(unavail.query.reason, "no test device on this host");

    EXPECT_FALSE(openfail.queried);
}

TEST_F(RepositoryTest, DiscoverOpenQuerySelect)
{
    REQUIRE_DLOPEN();
    Repository repo;
    repo.discover({component_dir()}, {"btl"});
    repo.open_all("btl", &host);
    repo.query_all("btl", &host);
    auto sel = weft::repository::select(repo.records(), "btl", "", "");
    ASSERT_TRUE(sel.ok()) << sel.status().message();
    std::vector<std::string> names;
    for (auto *r : sel.value().selected)
        names.push_back(r->name);
    // oldabi: the loopback of btl_abi_test.cc, available everywhere.
    EXPECT_EQ(names, (std::vector<std::string>{"good", "newminor", "oldabi"}));

    std::map<std::string, std::string> why;
    for (const auto &rj : sel.value().rejected)
        why[rj.record->name] = rj.reason;
    EXPECT_CONTAINS(why["badabi"], "failed to load: file " + dso("badabi"));
    EXPECT_EQ(why["openfail"], std::string("open() failed: ") +
                                   weft_status_string(WEFT_ERR_NOT_AVAILABLE));
    EXPECT_EQ(why["unavail"], "not available: no test device on this host");

    auto req = weft::repository::select(repo.records(), "btl", "", "unavail");
    ASSERT_FALSE(req.ok());
    EXPECT_EQ(req.status().message(),
              "btl/unavail is required by btl_base_require but not usable: not available: no "
              "test device on this host. Remove it from btl_base_require to allow falling back.");
}
