// SPDX-License-Identifier: BSD-3-Clause
// weft_info: gathers the facts of a Report from the framework.
#include "weft_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "weft_info/info.hpp"
#include "core/strings.hpp"
#include "rte/runtime.hpp"

namespace weft::info {
namespace {

using weft::str::split;
using weft::str::join;

// Groups of parameters that belong to the framework core, not to a component
// framework (they match kCoreGroups in framework/core/framework.cc).
const std::pair<const char *, const char *> kCoreGroups[] = {
    {"mca", "the component framework core: parameter files, component path, loading"},
    {"topology", "hardware topology (hwloc): binding, NUMA nodes, device locality"},
};

bool path_exists(const std::string &p)
{
    struct stat st;
    return !p.empty() && ::stat(p.c_str(), &st) == 0;
}

// ~ and ~/x as the framework reads mca_base_param_files.
std::string expand_home(const std::string &path)
{
    if (path != "~" && path.rfind("~/", 0) != 0)
        return path;
    const char *home = std::getenv("HOME");
    return std::string(home && *home ? home : "/") + path.substr(1);
}

std::string version_text(const weft_version_t &v)
{
    return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

ComponentFact component_fact(const repository::ComponentRecord &rec)
{
    ComponentFact c;
    c.framework = rec.framework;
    c.name = rec.name;
    c.path = rec.path;
    if (rec.component && rec.loaded) {
        c.version = version_text(rec.component->version);
        c.abi = std::to_string(rec.component->abi_major) + "." +
                std::to_string(rec.component->abi_minor);
    }
    c.ok = rec.loaded && rec.failure.empty();
    c.failure = rec.failure;
    if (!c.ok && c.failure.empty())
        c.failure = "not loaded (no reason recorded)";
    c.notes = rec.notes;
    return c;
}

std::string group_component(const params::Param &p)
{
    return p.def().component.empty() ? "base" : p.def().component;
}

// Nearest of `names` to `name`, for a did-you-mean.
std::string nearest(const std::string &name, const std::vector<std::string> &names)
{
    constexpr size_t kMaxEdits = 2;
    std::string best;
    size_t best_d = kMaxEdits + 1;
    for (const auto &n : names) {
        size_t d = params::edit_distance(name, n, kMaxEdits);
        if (d < best_d) {
            best_d = d;
            best = n;
        }
    }
    return best_d <= kMaxEdits && best_d * 2 < name.size() ? best : std::string();
}

} // namespace

std::string level_text(int level)
{
    static const char *const who[] = {"user", "tuner", "dev"};
    static const char *const what[] = {"basic", "detail", "all"};
    if (level < 1 || level > 9)
        return std::to_string(level);
    return std::to_string(level) + " " + who[(level - 1) / 3] + "/" + what[(level - 1) % 3];
}

std::string one_line(const std::string &s)
{
    std::string out = s;
    for (char &c : out)
        if (c == '\n' || c == '\r')
            c = ' ';
    return out;
}

std::vector<std::pair<std::string, std::string>> enumerators(const params::Param &p)
{
    std::vector<std::pair<std::string, std::string>> out;
    const auto &e = p.def().enumerators;
    for (size_t i = 0; i < e.size(); ++i) {
        if (p.type() == params::Type::Enum) {
            out.emplace_back(e[i], std::to_string(i));
        } else {
            auto eq = e[i].find('=');
            if (eq == std::string::npos)
                out.emplace_back(e[i], "");
            else
                out.emplace_back(e[i].substr(0, eq), e[i].substr(eq + 1));
        }
    }
    return out;
}

Status collect(Framework &fw, const Options &opts, Report &r)
{
    const bool selective = opts.show_failed || opts.topology || !opts.params.empty();
    r.show_build = opts.all || !selective;
    r.show_frameworks = opts.all || !selective;
    r.show_params = opts.all || !opts.params.empty();
    r.show_failed = opts.show_failed;
    r.show_topology = opts.topology;
    r.level = opts.level_given ? opts.level : (opts.all ? 9 : opts.level);

    // Build configuration and paths.
    BuildFacts &b = r.build;
    b.version = PACKAGE_VERSION;
    b.configure_args = WEFT_CONFIGURE_ARGS;
    b.dlopen = WEFT_BUILD_DLOPEN != 0;
    b.sanitizers = WEFT_SANITIZERS;
    if (b.sanitizers.empty())
        b.sanitizers = "no";
    b.components_built = split(WEFT_COMPONENTS_BUILT, ' ');
    b.build_tree = fw.running_from_build_tree();
    for (const auto &d : fw.component_path())
        b.component_path.push_back({d, path_exists(d)});
    b.param_files.push_back({"system", system_param_file(), path_exists(system_param_file())});
    if (const auto *pf = fw.params().find("mca_base_param_files"))
        for (const auto &f : split(pf->text(), ':')) {
            std::string path = expand_home(f);
            b.param_files.push_back({"user", path, path_exists(path)});
        }

    // Frameworks and their components: core groups, then every framework
    // this build knows, then frameworks only seen in file names.
    std::set<std::string> seen;
    for (const auto &[name, desc] : kCoreGroups) {
        FrameworkFact f;
        f.name = name;
        f.description = desc;
        f.core = true;
        seen.insert(name);
        r.frameworks.push_back(std::move(f));
    }
    for (const auto &g : rt::param_groups()) {
        FrameworkFact f;
        f.name = g.name;
        f.description = g.description;
        f.core = true;
        seen.insert(g.name);
        r.frameworks.push_back(std::move(f));
    }
    for (const auto &k : known_frameworks()) {
        FrameworkFact f;
        f.name = k.name;
        f.description = k.description;
        seen.insert(k.name);
        r.frameworks.push_back(std::move(f));
    }
    for (auto *rec : fw.repository().records()) {
        auto it = std::find_if(r.frameworks.begin(), r.frameworks.end(),
                               [&](const FrameworkFact &f) { return f.name == rec->framework; });
        if (it == r.frameworks.end()) {
            FrameworkFact f;
            f.name = rec->framework;
            f.known = false;
            f.description = "not a framework of this build";
            seen.insert(f.name);
            r.frameworks.push_back(std::move(f));
            it = r.frameworks.end() - 1;
        }
        it->components.push_back(component_fact(*rec));
    }
    // Parameters whose framework nobody listed (should not happen) still
    // get a home, so --all really is everything.
    for (const auto *p : fw.params().all())
        if (seen.insert(p->def().framework).second) {
            FrameworkFact f;
            f.name = p->def().framework;
            f.known = false;
            r.frameworks.push_back(std::move(f));
        }

    for (const auto &f : r.frameworks)
        for (const auto &c : f.components)
            if (!c.ok)
                r.failed.push_back(&c);

    // Parameter groups selected by --param (or all of them for --all).
    if (r.show_params) {
        std::vector<std::pair<std::string, std::string>> wanted = opts.params;
        if (opts.all)
            wanted = {{"all", "all"}};
        // Validate names first, with a did-you-mean.
        for (const auto &[g, c] : wanted) {
            std::vector<std::string> groups;
            for (const auto &f : r.frameworks)
                groups.push_back(f.name);
            const FrameworkFact *ff = nullptr;
            for (const auto &f : r.frameworks)
                if (f.name == g)
                    ff = &f;
            if (g != "all" && !ff) {
                std::string s = nearest(g, groups);
                return Status(WEFT_ERR_NOT_FOUND,
                              "--param: no framework or parameter group named '" + g + "'" +
                                  (s.empty() ? "" : " (did you mean " + s + "?)") +
                                  "; known: all, " + join(groups, ", "));
            }
            if (c == "all" || c == "base")
                continue;
            // Components, and the parameter groups of a framework that has
            // none loaded (the MPI layer's "mpi coll").
            std::vector<std::string> comps;
            auto known = [&](const std::string &name) {
                if (name == "base" || std::find(comps.begin(), comps.end(), name) != comps.end())
                    return;
                comps.push_back(name);
            };
            for (const auto &f : r.frameworks) {
                if (g != "all" && f.name != g)
                    continue;
                for (const auto &comp : f.components)
                    known(comp.name);
                for (const auto *p : fw.params().all())
                    if (p->def().framework == f.name)
                        known(group_component(*p));
            }
            const bool found = std::find(comps.begin(), comps.end(), c) != comps.end();
            if (!found) {
                std::string s = nearest(c, comps);
                return Status(WEFT_ERR_NOT_FOUND,
                              "--param " + g + ": no component named '" + c + "'" +
                                  (s.empty() ? "" : " (did you mean " + s + "?)") +
                                  "; known: all, base" + (comps.empty() ? "" : ", ") +
                                  join(comps, ", "));
            }
        }
        auto selected = [&](const std::string &g, const std::string &c) {
            for (const auto &[wg, wc] : wanted)
                if ((wg == "all" || wg == g) && (wc == "all" || wc == c))
                    return true;
            return false;
        };
        const auto all_params = fw.params().all();
        auto add_group = [&](const std::string &g, const std::string &c, const ComponentFact *cf) {
            if (!selected(g, c))
                return;
            ParamGroup pg;
            pg.framework = g;
            pg.component = c;
            pg.component_fact = cf;
            for (const auto *p : all_params)
                if (p->def().framework == g && group_component(*p) == c) {
                    if (p->def().level <= r.level)
                        pg.params.push_back(p);
                    else
                        ++r.params_above_level;
                }
            // The selection parameter (`btl` itself) leads its group, as
            // in ompi_info; the rest keep registration order.
            std::stable_partition(pg.params.begin(), pg.params.end(),
                                  [](const params::Param *p) { return p->def().name.empty(); });
            r.params.push_back(std::move(pg));
        };
        for (const auto &f : r.frameworks) {
            add_group(f.name, "base", nullptr);
            std::set<std::string> done{"base"};
            for (const auto &c : f.components)
                if (done.insert(c.name).second)
                    add_group(f.name, c.name, &c);
            // Parameters of a component without a record (defensive).
            for (const auto *p : all_params)
                if (p->def().framework == f.name && done.insert(group_component(*p)).second)
                    add_group(f.name, group_component(*p), nullptr);
        }
    }

    if (r.show_topology) {
        auto t = fw.io_topology();   // with the devices, which weft_info lists
        if (!t.ok())
            return Status(t.status().code(), "cannot load the topology: " + t.status().message());
        const topology::Topology &topo = *t.value();
        TopologyFacts &tf = r.topology;
        tf.source = topo.source();
        tf.binding = topo.binding();
        tf.bound = topo.bound();
        tf.numa_nodes = topo.numa_nodes();
        tf.packages = topo.num_packages();
        tf.numa_total = topo.num_numa_nodes();
        tf.cores = topo.num_cores();
        tf.pus = topo.num_pus();
        tf.devices = topo.devices();
    }
    return Status::success();
}

} // namespace weft::info
