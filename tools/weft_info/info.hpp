// SPDX-License-Identifier: BSD-3-Clause
// weft_info: what is collected (collect.cc) and how it is printed
// (render_pretty.cc, render_parsable.cc, render_json.cc). The three output
// forms print the same facts from one Report, so they cannot drift apart.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/framework.hpp"
#include "rte/explain.hpp"

namespace weft::info {

// What the command line asked for.
struct Options {
    enum class Format { Pretty, Parsable, Json };
    Format format = Format::Pretty;
    bool all = false;
    bool show_failed = false;
    bool topology = false;
    bool explain = false;          // --explain: transport choice per peer class
    int level = 1;                 // --level (1..9); --all makes it 9 unless --level is given
    bool level_given = false;
    std::vector<std::pair<std::string, std::string>> params;   // --param <group> <component>
    std::vector<std::pair<std::string, std::string>> mca;      // --mca <name> <value>
};

struct ParamFileFact {
    std::string kind;       // "system" or "user"
    std::string path;
    bool exists = false;
};

struct BuildFacts {
    std::string version;              // PACKAGE_VERSION
    std::string configure_args;       // WEFT_CONFIGURE_ARGS
    bool dlopen = true;               // WEFT_BUILD_DLOPEN
    std::string sanitizers;           // WEFT_SANITIZERS ("no" when none)
    std::vector<std::string> components_built;   // "btl/self", ...
    bool build_tree = false;          // running uninstalled
    struct Dir { std::string path; bool exists = false; };
    std::vector<Dir> component_path;
    std::vector<ParamFileFact> param_files;
};

struct ComponentFact {
    std::string framework;
    std::string name;
    std::string version;    // "1.0.0", empty when the struct could not be read
    std::string abi;        // "1.0", idem
    std::string path;       // file, or "(static)"
    bool ok = false;        // loaded and opened
    std::string failure;    // reason when !ok
    std::vector<std::string> notes;
};

// One group of parameters: <framework> <component|base>.
struct ParamGroup {
    std::string framework;  // "btl", "mca", "topology"
    std::string component;  // "self" or "base"
    const ComponentFact *component_fact = nullptr;   // null for "base"
    std::vector<const params::Param *> params;       // filtered by level, registration order
};

struct FrameworkFact {
    std::string name;
    std::string description;
    bool core = false;      // a framework-core group (mca, topology): no components
    bool known = true;      // false: only seen in a component file name
    std::vector<ComponentFact> components;
};

struct TopologyFacts {
    std::string source;
    std::string binding;
    bool bound = false;
    std::vector<int> numa_nodes;
    int packages = 0, numa_total = 0, cores = 0, pus = 0;
    std::vector<topology::Device> devices;
};

struct Report {
    // Sections to print.
    bool show_build = false;
    bool show_frameworks = false;
    bool show_params = false;
    bool show_failed = false;
    bool show_topology = false;
    int level = 1;

    BuildFacts build;
    std::vector<FrameworkFact> frameworks;   // core groups first, then known frameworks
    std::vector<ParamGroup> params;
    size_t params_above_level = 0;   // selected by --param but above --level
    std::vector<const ComponentFact *> failed;
    TopologyFacts topology;
};

// Fills the report from the initialized framework. Errors (a --param group
// that does not exist, a topology that cannot load) come back as a Status
// whose message is ready to print; code WEFT_ERR_NOT_FOUND for bad --param
// names.
Status collect(Framework &fw, const Options &opts, Report &report);

std::string render_pretty(const Report &r);
std::string render_parsable(const Report &r);
std::string render_json(const Report &r);
std::string render_explain(const rt::Explanation &ex, Options::Format format);

// Shared helpers.
std::string level_text(int level);          // "5 tuner/detail"
std::string one_line(const std::string &s); // newlines -> spaces
// "none=0" -> {"none", "0"}; Enum enumerators get their index.
std::vector<std::pair<std::string, std::string>> enumerators(const params::Param &p);

} // namespace weft::info
