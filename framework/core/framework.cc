// SPDX-License-Identifier: BSD-3-Clause
// The process's framework context (see framework.hpp for the init order).
#include "weft_config.h"

#include "core/framework.hpp"

#include <unistd.h>

#include <cstdlib>

#include <algorithm>
#include <sstream>
#include "core/strings.hpp"

extern char **environ;

namespace weft {

bool library_in_build_tree();               // paths.cc
std::string expand_home(const std::string &path); // paths.cc

namespace {

using str::split;
using str::join;

std::unique_ptr<Framework> g_framework;

params::Definition core_def(const char *fw, const char *comp, const char *name, params::Type type,
                            std::string dflt, int level, const char *help)
{
    params::Definition d;
    d.framework = fw;
    d.component = comp;
    d.name = name;
    d.type = type;
    d.default_text = std::move(dflt);
    d.level = level;
    d.help = help;
    return d;
}

// Groups of parameters that belong to the framework core rather than to a
// component framework; each gets <group>_base_verbose.
const char *const kCoreGroups[] = {"mca", "topology"};

} // namespace

const std::vector<FrameworkInfo> &known_frameworks()
{
    static const std::vector<FrameworkInfo> list = {
        {"btl", "byte transfer layer: transports that move bytes between processes"},
    };
    return list;
}

Framework::Framework() = default;

Framework *Framework::current() { return g_framework.get(); }

Result<Framework *> Framework::init(const InitOptions &opts)
{
    if (g_framework)
        return Status(WEFT_ERR_EXISTS, "weft framework already initialized in this process");
    g_framework.reset(new Framework());
    Status st = g_framework->setup(opts);
    if (!st.ok()) {
        finalize();
        return st;
    }
    return g_framework.get();
}

void Framework::finalize()
{
    if (!g_framework)
        return;
    Framework &fw = *g_framework;
    for (const auto &line : fw.help_.summarize_suppressed())
        fw.logger_.write("mca", "base", WEFT_LOG_WARN, line);
    for (auto *rec : fw.repo_->records())
        if (rec->opened && rec->component && rec->component->finalize)
            rec->component->finalize(fw.host());
    g_framework.reset();
}

void Framework::register_core_params(const InitOptions &opts)
{
    using params::Type;
    auto add = [this](params::Definition d) {
        Status st = params_.add(std::move(d));
        (void)st;   // core definitions are fixed; a failure is a programming error caught by tests
    };
    add(core_def("mca", "base", "component_path", Type::String,
                 join(default_component_path(build_tree_), ":"), WEFT_LEVEL_USER_ALL,
                 "Colon-separated directories searched for component DSOs "
                 "(weft_<framework>_<component>.so); the first directory that has a component "
                 "wins."));
    add(core_def("mca", "base", "param_files", Type::String, user_param_file(),
                 WEFT_LEVEL_USER_ALL,
                 "Colon-separated parameter files read after the system file "
                 "(weft-mca-params.conf in the sysconfdir); a later file overrides an earlier "
                 "one. Lines are 'name = value'."));
    add(core_def("mca", "base", "warn_unknown", Type::Bool, "true", WEFT_LEVEL_USER_DETAIL,
                 "Warn about WEFT_MCA_* variables, --mca names and file keys that no parameter "
                 "answers to, with the nearest registered name."));
    add(core_def("mca", "base", "help_aggregate", Type::Bool, "true", WEFT_LEVEL_USER_ALL,
                 "Show each identical help message once and count repeats; false shows every "
                 "one."));
    {
        auto d = core_def("mca", "base", "show_load_errors", Type::Enum, "requested",
                          WEFT_LEVEL_USER_DETAIL,
                          "Which component load failures to print: 'requested' (components "
                          "named in a selection or require list), 'all', or 'none'. weft_info "
                          "--show-failed always lists them.");
        d.enumerators = {"requested", "all", "none"};
        add(d);
    }
    add(core_def("topology", "base", "xml_file", Type::String, "", WEFT_LEVEL_USER_DETAIL,
                 "hwloc v2 XML topology to use instead of discovering this machine "
                 "(HWLOC_XMLFILE also works); tests use it to stand in for machines we lack."));
    add(core_def("topology", "base", "binding", Type::String, "", WEFT_LEVEL_DEV_BASIC,
                 "CPU set (an hwloc list such as 0-3) that stands in for this process's "
                 "binding; empty uses the real binding (or the whole machine with an XML "
                 "topology)."));

    for (const auto &g : verbosity_groups()) {
        auto d = core_def(g.c_str(), "base", "verbose", Type::Int, "warn", WEFT_LEVEL_TUNER_BASIC,
                          "Verbosity of this framework's messages: none, error, warn, info, "
                          "debug, trace, max or a number 0..100.");
        d.enumerators = log::verbosity_enumerators();
        add(d);
    }
    for (const auto &f : known_frameworks()) {
        std::string fw = f.name;
        auto sel = core_def(f.name, "", "", Type::List, "", WEFT_LEVEL_USER_BASIC, "");
        sel.help = "Which " + fw + " components may be used: a list (" + fw +
                   "=self,tcp) allows only those, a list starting with ^ (" + fw +
                   "=^openib) allows all but those; empty allows all.";
        add(sel);
        auto req = core_def(f.name, "base", "require", Type::List, "", WEFT_LEVEL_USER_DETAIL, "");
        req.help = "Components of " + fw + " that must be usable: if one cannot load, open or "
                   "run here, initialization fails with its reason instead of silently falling "
                   "back to another component.";
        add(req);
    }
    for (const auto &d : opts.extra_params)
        add(d);
}

// Every group with a <group>_base_verbose: the core's, the extra groups of
// the layers above, then the frameworks.
std::vector<std::string> Framework::verbosity_groups() const
{
    std::vector<std::string> groups(std::begin(kCoreGroups), std::end(kCoreGroups));
    groups.insert(groups.end(), extra_groups_.begin(), extra_groups_.end());
    for (const auto &f : known_frameworks())
        groups.push_back(f.name);
    return groups;
}

void Framework::apply_verbosity()
{
    for (const auto &g : verbosity_groups())
        if (const auto *p = params_.find(g + "_base_verbose"))
            logger_.set_verbosity(g, static_cast<int>(p->as_int()));
}

Status Framework::setup(const InitOptions &opts)
{
    build_tree_ = library_in_build_tree();
    speaks_for_job_ = opts.warn_unknown;
    if (opts.log_sink) {
        logger_.set_sink(opts.log_sink);
        help_.set_sink([sink = opts.log_sink](const std::string &text) { sink(text); });
    }
    repo_ = std::make_unique<repository::Repository>();
    for (const auto &g : opts.extra_groups)
        extra_groups_.push_back(g.name);
    register_core_params(opts);

    std::vector<Status> errors;
    params_.load_environment(opts.envp ? opts.envp : environ);
    for (const auto &[name, value] : opts.command_line) {
        params::Origin o;
        o.source = params::Source::CommandLine;
        if (Status st = params_.set(name, value, o); !st.ok())
            errors.push_back(st);
    }
    std::vector<std::string> unread_files;
    auto load = [&](const std::string &path, params::Source source) {
        Status st = params_.load_file(path, source);
        // The default files are optional: their absence is the usual case.
        const bool optional = path == system_param_file() || path == user_param_file();
        if (st.code() != WEFT_ERR_BAD_PARAM && (st.code() != WEFT_ERR_NOT_FOUND || optional))
            return;
        std::string why = st.message() + "; nothing was read from it";
        if (source == params::Source::UserFile)
            why += " (it is named in mca_base_param_files)";
        if (std::find(unread_files.begin(), unread_files.end(), why) == unread_files.end())
            unread_files.push_back(why);
    };
    load(system_param_file(), params::Source::SystemFile);
    for (const auto &f : split(params_.find("mca_base_param_files")->text(), ':'))
        load(expand_home(f), params::Source::UserFile);
    apply_verbosity();
    // Said by the process that speaks for the job, like unknown names.
    if (opts.warn_unknown)
        for (const auto &why : unread_files)
            warn(why);

    help_.set_search_path(default_help_path(build_tree_));
    help_.set_aggregate(params_.find("mca_base_help_aggregate")->as_bool());

    component_path_.clear();
    for (const auto &d : split(params_.find("mca_base_component_path")->text(), ':'))
        component_path_.push_back(expand_home(d));
    std::vector<std::string> fw_names;
    for (const auto &f : known_frameworks())
        fw_names.push_back(f.name);
#if WEFT_BUILD_DLOPEN
    repo_->discover(component_path_, fw_names);
#endif
    repo_->add_static();

    if (opts.open_components) {
        for (const auto &f : fw_names)
            repo_->open_all(f, host());
        apply_verbosity();
        report_load_failures();
    }

    for (const auto &w : params_.take_warnings())
        warn(w);
    if (opts.warn_unknown && params_.find("mca_base_warn_unknown")->as_bool())
        warn_unknown_names();

    errors.insert(errors.begin(), params_.errors().begin(), params_.errors().end());
    if (errors.empty())
        return Status::success();
    std::string msg = errors.size() == 1 ? "" : std::to_string(errors.size()) + " parameter errors:\n";
    for (size_t i = 0; i < errors.size(); ++i)
        msg += (i ? "\n" : "") + errors[i].message();
    return Status(errors.front().code(), msg);
}

// Components the user asked for (by selection or require list) that could
// not load get a message now; the others stay quiet and are listed by
// weft_info --show-failed, so an unused broken component never nags.
void Framework::report_load_failures()
{
    const std::string mode = params_.find("mca_base_show_load_errors")->as_string();
    if (mode == "none")
        return;
    for (auto *rec : repo_->records()) {
        if (rec->failure.empty())
            continue;
        bool asked = mode == "all";
        for (const std::string &list : {rec->framework, rec->framework + "_base_require"}) {
            const auto *p = params_.find(list);
            if (p && p->type() == params::Type::List && !p->as_list().exclude &&
                p->as_list().contains_name(rec->name))
                asked = true;
        }
        if (!asked)
            continue;
        help_.show("help-mca-base.txt", "component-load-failed",
                   {{"framework", rec->framework},
                    {"component", rec->name},
                    {"path", rec->path},
                    {"reason", rec->failure}});
    }
}

void Framework::warn_unknown_names()
{
    for (const auto &u : params_.unknown_names()) {
        std::string set_as =
            (u.origin.source == params::Source::Environment ? "WEFT_MCA_" : "") +
            params::shown_name(u.name);
        std::string msg = "unknown parameter " + set_as + " (" + u.origin.describe() + ")";
        // A parameter of a component that did not load is unknown for a
        // reason worth saying.
        for (auto *rec : repo_->records()) {
            std::string prefix = rec->framework + "_" + rec->name + "_";
            if (u.name.compare(0, prefix.size(), prefix) == 0 && !rec->opened) {
                msg += "; it may belong to " + rec->framework + "/" + rec->name +
                       ", which is not loaded: " + rec->failure;
                break;
            }
        }
        if (!u.suggestion.empty())
            msg += "; did you mean " + u.suggestion + "?";
        msg += " (set mca_base_warn_unknown=false to silence this warning)";
        warn(msg);
    }
}

Result<topology::Topology *> Framework::topology()
{
    if (topology_)
        return topology_.get();
    topology::LoadOptions lo;
    lo.xml_file = params_.find("topology_base_xml_file")->text();
    lo.binding = params_.find("topology_base_binding")->text();
    if (const char *exported = std::getenv("WEFT_TOPOLOGY_XML"))
        lo.launcher_xml = exported;
    // Cores and binding only; io_topology() discovers devices when a
    // component asks about one.
    lo.io_devices = false;
    auto t = topology::Topology::load(lo);
    if (!t.ok())
        return t.status();
    topology_ = std::move(t.value());
    return topology_.get();
}

Result<topology::Topology *> Framework::io_topology()
{
    auto t = topology();
    if (!t.ok() || t.value()->has_io_devices())
        return t;
    if (io_topology_)
        return io_topology_.get();
    topology::LoadOptions lo;
    lo.binding = params_.find("topology_base_binding")->text();
    auto io = topology::Topology::load(lo);
    if (!io.ok())
        return io.status();
    io_topology_ = std::move(io.value());
    return io_topology_.get();
}

Result<repository::Selection> Framework::select(const std::string &framework)
{
    const auto *include = params_.find(framework);
    const auto *require = params_.find(framework + "_base_require");
    if (!include || !require)
        return Status(WEFT_ERR_NOT_FOUND, "no framework named '" + framework + "'");
    repo_->query_all(framework, host());
    auto sel = repository::select(repo_->records(framework), framework, include->text(),
                                  require->text());
    if (sel.ok())
        for (const auto &w : sel.value().warnings)
            logger_.write(framework, "base", WEFT_LOG_WARN, w);
    return sel;
}

} // namespace weft
