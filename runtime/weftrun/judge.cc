#include "weftrun/judge.hpp"

#include <sys/wait.h>

#include "weftrun/signals.hpp"

namespace weftrun {

std::optional<Failure> judge_exit(int rank, const RankState &r)
{
    Failure f;
    f.rank = rank;
    if (WIFSIGNALED(r.wstatus)) {
        int sig = WTERMSIG(r.wstatus);
        f.exit_code = 128 + sig;
        f.severity = 0;
        f.what = "was killed by signal " + signal_text(sig);
        return f;
    }
    int code = WIFEXITED(r.wstatus) ? WEXITSTATUS(r.wstatus) : 1;
    if (code != 0) {
        f.exit_code = code;
        f.severity = 2;
        f.what = "exited with status " + std::to_string(code);
        if (!r.connected) f.what += " before connecting to PMIx";
        return f;
    }
    if (r.connected && !r.finalized) {
        // The others may be waiting for it in a collective forever.
        f.exit_code = 1;
        f.severity = 1;
        f.what = "exited without calling weft_finalize/PMIx_Finalize";
        return f;
    }
    return std::nullopt;
}

Failure abort_failure(int rank, int status, const std::string &msg)
{
    Failure f;
    f.rank = rank;
    // exit() keeps 8 bits; an abort must not turn into success by truncation.
    f.exit_code = status & 0xff;
    if (f.exit_code == 0 && status != 0) f.exit_code = 1;
    f.severity = 0;
    f.what = "called abort with status " + std::to_string(status) + (msg.empty() ? "" : ": " + msg);
    return f;
}

std::string banner(const Failure &f, pid_t pid, const std::string &host, int others)
{
    std::string b = "weftrun: rank " + std::to_string(f.rank) + " (pid " + std::to_string(pid) +
                    " on host " + host + ") " + f.what;
    if (others > 0)
        b += "; killing the other " + std::to_string(others) + (others == 1 ? " rank" : " ranks");
    return b + "\n";
}

} // namespace weftrun
