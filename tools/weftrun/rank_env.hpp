// SPDX-License-Identifier: BSD-3-Clause
// The environment every rank starts with: weftrun's own, plus --mca
// parameters (WEFT_MCA_<name>), -x variables and the WEFT_* job variables.
// PMIx adds its PMIX_* variables per rank later (PmixServer::setup_fork).
#pragma once

#include <string>
#include <vector>

#include "weftrun/options.hpp"

namespace weftrun {

struct JobEnv {
    std::string session_dir;    // WEFT_SESSION_DIR
    std::string topology_xml;   // WEFT_TOPOLOGY_XML
    int node_cores = 0;         // WEFT_NODE_CORES when > 0
};

// NAME=value strings, one per variable (later settings replace earlier
// ones). Warnings (an -x variable that is not set) go to warnings.
std::vector<std::string> build_rank_env(const Options &o, const JobEnv &job, char **base,
                                        std::vector<std::string> &warnings);

// A malloc'ed, NULL-terminated copy, as PMIx_server_setup_fork needs it
// (it reallocs the array, P10). Free with free_c_env. nullptr when out of memory.
char **make_c_env(const std::vector<std::string> &env);
void free_c_env(char **env);

} // namespace weftrun
