// SPDX-License-Identifier: BSD-3-Clause
// weftrun's PMIx server: init, the job registration (the job-info keys of
// PMIX.md), per-rank client registration and fork environment, and the
// upcalls, which only post Events for the main loop.
#pragma once

#include <hwloc.h>

#include <string>

#include "core/status.hpp"
#include "weftrun/events.hpp"

namespace weftrun {

class PmixServer {
public:
    // Starts the library (and its progress thread, which inherits the
    // caller's signal mask: block signals first, P9). Upcalls post to queue,
    // which must outlive the server. debug logs each upcall on stderr.
    // topology (hwloc's, owned by the caller, alive until after finalize)
    // is handed to PMIx, which otherwise discovers the machine itself,
    // I/O devices included.
    static weft::Status init(const std::string &session_dir, EventQueue &queue, bool debug,
                             hwloc_topology_t topology);

    // Registers the job: nspace with n ranks, all on this host.
    static weft::Status register_job(const std::string &nspace, int n, const std::string &host);
    // Must happen before the rank's fork (P10).
    static weft::Status register_client(int rank);
    // Appends the PMIX_* variables to a malloc'ed, NULL-terminated env
    // (setup_fork may realloc it).
    static weft::Status setup_fork(int rank, char ***env);

    // Completions, called on the main thread for events from the queue.
    static void complete_fence(Event &e);
    static void complete_abort(Event &e);

    // Clean teardown after a normal end. Never after an abnormal end (P7).
    static void finalize();

private:
    static std::string nspace_;
};

} // namespace weftrun
