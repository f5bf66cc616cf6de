// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/stack_traces.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "weftrun/spawn.hpp"

extern char **environ;

namespace weftrun {

void describe_live_ranks(const std::vector<RankState> &ranks, unsigned fences, const SayFn &say)
{
    // Only fences that reach weftrun's fence upcall are counted: the PMIx
    // server completes a fence among the ranks of one host by itself.
    say("fences completed through weftrun: " + std::to_string(fences) +
        " (a fence among the ranks of one host completes inside the PMIx server and is not counted); "
        "ranks still running:");
    for (size_t i = 0; i < ranks.size(); ++i) {
        const RankState &r = ranks[i];
        if (r.pid <= 0 || r.reaped) continue;
        const char *state = r.finalized ? "called PMIx_Finalize and has not exited"
                            : r.connected ? "connected to PMIx, not finalized"
                                          : "never connected to PMIx";
        say("  rank " + std::to_string(i) + " (pid " + std::to_string(r.pid) + "): " + state);
    }
}

namespace {

// Waits for pid up to `limit`; kills it past that. Returns its wait status,
// or -1 when it had to be killed.
int wait_bounded(pid_t pid, std::chrono::seconds limit)
{
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
        int ws = 0;
        const pid_t got = waitpid(pid, &ws, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR)) return got == pid ? ws : -1;
        if (std::chrono::steady_clock::now() >= until) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
            return -1;
        }
        const timespec tick{0, 10 * 1000 * 1000};   // a tool's wait, not a data path
        nanosleep(&tick, nullptr);
    }
}

} // namespace

void print_stack_traces(const std::vector<RankState> &ranks, int per_rank_s, const SayFn &say)
{
    auto gdb = resolve_program("gdb");
    if (!gdb.ok()) {
        say("--get-stack-traces: gdb is not installed (apt-get install gdb); no stacks");
        return;
    }
    // What SIGCHLD & co. were blocked for the signalfd must not stay blocked in gdb.
    sigset_t none;
    sigemptyset(&none);
    for (size_t i = 0; i < ranks.size(); ++i) {
        const RankState &r = ranks[i];
        if (r.pid <= 0 || r.reaped) continue;
        const std::string pid = std::to_string(r.pid);
        say("stack traces of rank " + std::to_string(i) + " (pid " + pid + "), by gdb:");
        // debuginfod off: a batch run must not reach for the network or ask.
        const char *argv[] = {"gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off",
                              "-ex", "set pagination off", "-ex", "thread apply all bt",
                              "-p", pid.c_str(), nullptr};
        SpawnSpec spec;
        spec.path = gdb.value().c_str();
        spec.argv = const_cast<char *const *>(argv);
        spec.envp = environ;
        spec.stdout_fd = STDERR_FILENO;
        spec.stderr_fd = STDERR_FILENO;
        spec.child_mask = &none;
        auto child = spawn_rank(spec);
        if (!child.ok()) {
            say("--get-stack-traces: " + child.status().message());
            return;
        }
        const int ws = wait_bounded(child.value(), std::chrono::seconds(per_rank_s));
        if (ws < 0)
            say("gdb took longer than " + std::to_string(per_rank_s) + " s on rank " + std::to_string(i) +
                " and was killed");
        else if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
            say("gdb could not read rank " + std::to_string(i) +
                " (ptrace refused? kernel.yama.ptrace_scope must be 0, or run as root)");
    }
}

} // namespace weftrun
