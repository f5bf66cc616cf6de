// SPDX-License-Identifier: BSD-3-Clause
// Exit judgement: whether a rank's end fails the job, what the banner says
// and which exit status weftrun takes from it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace weftrun {

struct RankState {
    pid_t pid = -1;
    bool connected = false;   // PMIx client_connected seen
    bool finalized = false;   // PMIx client_finalized seen
    bool reaped = false;
    int wstatus = 0;          // from waitpid, valid when reaped
};

struct Failure {
    int rank = -1;
    int exit_code = 1;        // what weftrun exits with
    // Lower is more telling: within one batch of exits the crash beats a
    // survivor that exited 1 because its fence failed (P21).
    int severity = 0;
    std::string what;         // "exited with status 3", "was killed by signal 9 (Killed)"
    // Set when the verdict is drawn: another rank's abort named this one as
    // a failed peer, so this end came first and caused that abort.
    bool prior = false;
    int order = 0;            // the order failures were seen in
};

// nullopt: this end is fine (exit 0 after finalize, or exit 0 of a program
// that never used PMIx).
std::optional<Failure> judge_exit(int rank, const RankState &r);

Failure abort_failure(int rank, int status, const std::string &msg);

// True when the process has begun to exit (the kernel's PF_EXITING flag, or
// a zombie). A process closes its descriptors only in the kernel's exit
// path, after that flag is set, so a rank whose peer saw its connections
// close is dying by the time the peer can report the failure, and its end
// can be waited for.
bool is_dying(pid_t pid);

// The first cause among the failures seen in one verdict (not empty): a
// prior rank before the others, then the lower severity, then the one seen
// first (the order of deaths).
const Failure &first_cause(const std::vector<Failure> &seen);

// "weftrun: rank 1 (pid 42 on host h) exited with status 3; killing the other 3 ranks"
std::string banner(const Failure &f, pid_t pid, const std::string &host, int others);

} // namespace weftrun
