// SPDX-License-Identifier: BSD-3-Clause
// The framework context of a process: parameters, logging, help messages,
// the component repository and (lazily) the topology. One per process,
// because components reach it through the C host table.
//
// init() order: core parameters are registered; the environment and the
// command line are read; then the system file and the user files (whose list
// is itself a parameter); components are discovered and opened (they register
// their parameters); finally names nobody registered are warned about once,
// with a did-you-mean.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <weft/host.h>

#include "core/status.hpp"
#include "log/help.hpp"
#include "log/log.hpp"
#include "params/registry.hpp"
#include "repository/repository.hpp"
#include "topology/topology.hpp"

namespace weft {

struct FrameworkInfo {
    const char *name;         // "btl"
    const char *description;  // one line for weft_info
};
// Every framework this build knows, in display order.
const std::vector<FrameworkInfo> &known_frameworks();

struct InitOptions {
    std::vector<std::pair<std::string, std::string>> command_line; // --mca name value
    const char *const *envp = nullptr;   // nullptr: the process environment
    bool open_components = true;
    // This process speaks for the job (rank 0, weft_info): it warns about
    // unknown names after opening and about parameter files that could not
    // be read, so a job says each once.
    bool warn_unknown = true;
    log::Logger::Sink log_sink;          // where log lines go (default stderr); tests capture
    // Layers above the framework (the runtime) bring their own parameter
    // groups and parameters. They are registered with the core ones, before
    // values are applied and unknown names are judged; each extra group gets
    // <group>_base_verbose like a framework.
    std::vector<FrameworkInfo> extra_groups;
    std::vector<params::Definition> extra_params;
};

class Framework {
public:
    // Creates the process's framework. Errors (bad parameter values, a bad
    // line in a parameter file) come back as one Status listing them all.
    static Result<Framework *> init(const InitOptions &opts);
    static Framework *current();
    static void finalize();

    params::Registry &params() { return params_; }
    log::Logger &logger() { return logger_; }
    log::HelpCatalog &help() { return help_; }
    repository::Repository &repository() { return *repo_; }
    const weft_host_t *host() const;

    // Loads the topology on first use (topology_base_xml_file /
    // topology_base_binding apply): CPUs, caches, NUMA nodes, binding; I/O
    // devices only when an XML file describes them.
    Result<topology::Topology *> topology();
    // A topology that knows the I/O devices: topology() itself when it has
    // them (an XML file), else one discovered with devices on first use.
    Result<topology::Topology *> io_topology();

    // Where components were looked for, in order.
    const std::vector<std::string> &component_path() const { return component_path_; }
    bool running_from_build_tree() const { return build_tree_; }

    // Selection of a framework's components from its parameters.
    Result<repository::Selection> select(const std::string &framework);

    // InitOptions::warn_unknown: this process speaks for the job.
    bool speaks_for_job() const { return speaks_for_job_; }

    // Logs for the framework core itself ("mca").
    void warn(const std::string &msg) { logger_.write("mca", "base", WEFT_LOG_WARN, msg); }

private:
    Framework();
    Status setup(const InitOptions &opts);
    void register_core_params(const InitOptions &opts);
    std::vector<std::string> verbosity_groups() const;
    void apply_verbosity();
    void warn_unknown_names();
    void report_load_failures();

    params::Registry params_;
    log::Logger logger_;
    log::HelpCatalog help_;
    std::unique_ptr<repository::Repository> repo_;
    std::unique_ptr<topology::Topology> topology_;
    std::unique_ptr<topology::Topology> io_topology_;
    std::vector<std::string> component_path_;
    bool build_tree_ = false;
    bool speaks_for_job_ = true;
    std::vector<std::string> extra_groups_;
};

// Default paths, computed once: build tree when running uninstalled.
std::vector<std::string> default_component_path(bool build_tree);
std::vector<std::string> default_help_path(bool build_tree);
std::string system_param_file();   // $sysconfdir/weft-mca-params.conf
std::string user_param_file();     // $HOME/.weft/mca-params.conf

} // namespace weft
