// SPDX-License-Identifier: BSD-3-Clause
// Where things are: component and help directories (build tree when running
// uninstalled, install dirs otherwise) and the parameter files.
#include <dlfcn.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/framework.hpp"

namespace weft {
namespace {

std::string home_dir()
{
    if (const char *h = std::getenv("HOME"); h && *h)
        return h;
    if (const passwd *pw = getpwuid(getuid()); pw && pw->pw_dir)
        return pw->pw_dir;
    return "/";
}

std::string canonical_or_same(const std::string &p)
{
    std::error_code ec;
    auto c = std::filesystem::weakly_canonical(p, ec);
    return ec ? p : c.string();
}

} // namespace

// True when libweft itself was loaded from the build tree: then components
// and help files are taken from the tree, so tests run without installing.
bool library_in_build_tree()
{
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&library_in_build_tree), &info) == 0 || !info.dli_fname)
        return false;
    std::string self = canonical_or_same(info.dli_fname);
    std::string tree = canonical_or_same(WEFT_ABS_BUILDDIR);
    return self.compare(0, tree.size() + 1, tree + "/") == 0;
}

std::vector<std::string> default_component_path(bool build_tree)
{
    std::vector<std::string> dirs;
    dirs.push_back(build_tree ? std::string(WEFT_ABS_BUILDDIR) + "/components/.modules"
                              : std::string(WEFT_PKGLIBDIR));
    dirs.push_back(home_dir() + "/.weft/components");
    return dirs;
}

std::vector<std::string> default_help_path(bool build_tree)
{
    if (!build_tree)
        return {WEFT_PKGDATADIR};
    std::vector<std::string> dirs{std::string(WEFT_ABS_SRCDIR) + "/framework/log"};
    std::error_code ec;
    std::vector<std::string> comps;
    for (const auto &fw :
         std::filesystem::directory_iterator(std::string(WEFT_ABS_SRCDIR) + "/components", ec))
        if (fw.is_directory())
            for (const auto &c : std::filesystem::directory_iterator(fw.path(), ec))
                if (c.is_directory())
                    comps.push_back(c.path().string());
    std::sort(comps.begin(), comps.end());
    dirs.insert(dirs.end(), comps.begin(), comps.end());
    return dirs;
}

std::string system_param_file() { return std::string(WEFT_SYSCONFDIR) + "/weft-mca-params.conf"; }

std::string user_param_file() { return home_dir() + "/.weft/mca-params.conf"; }

std::string expand_home(const std::string &path)
{
    if (path == "~" || path.rfind("~/", 0) == 0)
        return home_dir() + path.substr(1);
    return path;
}

} // namespace weft
