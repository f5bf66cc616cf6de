// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/judge.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>

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

bool is_dying(pid_t pid)
{
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    std::FILE *f = std::fopen(path, "re");
    if (!f) return false;   // reaped already: the caller's waitpid will say how it ended
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // "pid (comm) state ppid pgrp session tty_nr tpgid flags ...": comm may
    // hold spaces and parentheses, so fields count from the last ')'.
    const char *p = std::strrchr(buf, ')');
    if (!p) return false;
    char state = 0;
    unsigned long flags = 0;
    if (std::sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2) return false;
    constexpr unsigned long kPfExiting = 0x4;   // include/linux/sched.h
    return state == 'Z' || state == 'X' || (flags & kPfExiting) != 0;
}

const Failure &first_cause(const std::vector<Failure> &seen)
{
    return *std::min_element(seen.begin(), seen.end(), [](const Failure &a, const Failure &b) {
        return std::tuple(!a.prior, a.severity, a.order) < std::tuple(!b.prior, b.severity, b.order);
    });
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
