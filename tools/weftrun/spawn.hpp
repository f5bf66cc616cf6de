// SPDX-License-Identifier: BSD-3-Clause
// Starting one rank: fork, then in the child only async-signal-safe calls
// (the parent has the PMIx progress thread) up to execve.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>

#include "core/status.hpp"
#include "weftrun/placement.hpp"

namespace weftrun {

// Finds the program the way execvp would, before anything is set up, so a
// typo fails fast. Status code WEFT_ERR_NOT_FOUND (exit 127) or
// WEFT_ERR_BAD_PARAM (not executable, exit 126).
weft::Result<std::string> resolve_program(const std::string &name);

struct SpawnSpec {
    const char *path = nullptr;          // from resolve_program
    char *const *argv = nullptr;
    char *const *envp = nullptr;
    const RankPlacement *placement = nullptr;
    int stdout_fd = -1;                  // -1: inherit weftrun's
    int stderr_fd = -1;
    const sigset_t *child_mask = nullptr;  // the mask weftrun started with
};

// Returns the child's pid; it leads its own process group (pgid == pid).
weft::Result<pid_t> spawn_rank(const SpawnSpec &spec);

} // namespace weftrun
